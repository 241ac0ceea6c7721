"""What a Bash command may write, read statically: ``analyse(command, cwd, home)`` -> ``Scan``.

The package's one public face is :func:`store.shell.scan.scan` (re-exported here lazily as
``analyse``); everything else in it is the machinery behind that answer. It imports nothing
from the rest of baton.
"""
