"""Side effects that happen once: ``baton once KEY -- CMD`` looks KEY up, records an intent,
runs CMD and records its result, so a resumed job replays a stored result instead of acting twice.
"""
