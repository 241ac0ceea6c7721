"""What a Bash command may write, read statically: :func:`analyse` is the package's one public face.

``analyse(command, cwd, home)`` returns a :class:`store.shell.scan.Scan`: the files the command
may write, why its effect cannot be told when it cannot, the ``baton`` invocations in it, and
whether it is read-only. Everything else in the package is the machinery behind that answer
(``lex`` and ``words`` read the text, ``grammar`` walks bash's grammar, ``commands``,
``programs`` and ``writers`` know what programs do). It imports nothing from the rest of baton.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from store.shell.report import Scan


def analyse(command: str, cwd: str, home: str) -> Scan:
    """What ``command`` may write when bash runs it in ``cwd`` with $HOME ``home``; never raises."""
    from store.shell.scan import scan  # imported on first use: most hook calls never read a command

    return scan(command, cwd, home)
