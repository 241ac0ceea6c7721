"""Watching a running job: tool outcomes and alerts, job limits, and the Stop loop.

Built on ``store.state``; reads Bash commands through ``store.shell`` and paths through
``store.base.paths``.
"""
