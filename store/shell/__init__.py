"""What a Bash command may write, read statically: :func:`analyse` and :func:`simple_commands` are the
package's public face, and nothing outside it imports the modules behind them.

``analyse(command, cwd, home)`` returns a :class:`Scan`: the files the command may write, why its
effect cannot be told when it cannot, the ``baton`` invocations in it, and whether it is read-only;
each simple command it resolved is an :class:`Invocation`. ``simple_commands(command)`` returns the
:class:`Parsed` words of each simple command after quote removal (a :class:`Simple`), for matching a
person's permission rules and a program's options. Everything else in the package is the machinery
behind those answers (``lex`` and ``words`` read the text, ``grammar`` walks bash's grammar,
``known``, ``programs`` and ``writers`` know what programs do, ``simple`` splits a line into simple
commands). It imports nothing from the rest of baton but ``store.base``.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from store.shell.findings import Invocation as Invocation
    from store.shell.findings import Scan as Scan
    from store.shell.simple import Parsed as Parsed
    from store.shell.simple import Simple as Simple


def analyse(command: str, cwd: str, home: str) -> Scan:
    """What ``command`` may write when bash runs it in ``cwd`` with $HOME ``home``; never raises."""
    from store.shell.scan import scan  # imported on first use: most hook calls never read a command

    return scan(command, cwd, home)


def simple_commands(command: str) -> Parsed:
    """The simple commands ``command`` holds, its writing redirections and what makes its words
    unknowable before it runs. The result is shared with later calls for the same command: read it,
    never change it."""
    from store.shell.simple import parse

    return parse(command)
