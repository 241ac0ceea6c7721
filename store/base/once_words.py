"""How ``baton once``'s words split into its own and the command it runs, in one place: the CLI
runs that command, and the gate and the shell scanner judge it, so all three must agree on where
it starts: ``KEY [--id-from X | --id-json X] [--reuse-key] [--] CMD...``. ``--settle`` and
``--help`` (a first word with a dash) run nothing. KEY comes first and never starts with a dash,
so a computed first word cannot turn into an option that moves the start of CMD."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional, Sequence

VALUED = ("--id-from", "--id-json")  # options followed by their value
FLAGS = ("--reuse-key",)


def command_start(words: Sequence[Optional[str]]) -> Optional[int]:
    """Where CMD starts in ``words`` (what follows ``once``), or ``None`` when they run nothing.
    ``None`` in ``words`` is a word known only when the shell runs: as KEY it is a key (the CLI
    refuses a key with a dash); after KEY it ends the options, so CMD starts at a computed word
    and whoever judges CMD finds it computed."""
    key = words[0] if words else ""
    if key == "" or (key is not None and key.startswith("-")):
        return None
    at = 1
    while at < len(words):
        if words[at] in FLAGS:
            at += 1
        elif words[at] in VALUED and at + 1 < len(words):
            at += 2
        else:
            break
    if at < len(words) and words[at] == "--":
        at += 1
    return at if at < len(words) else None
