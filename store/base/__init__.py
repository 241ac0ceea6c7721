"""The bottom layer: the one error type, value classes, one-line text, durable file primitives.

Nothing here knows about jobs, plans or Claude Code; every other part may import it.
"""
