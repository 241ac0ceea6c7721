"""What of a side effect is kept in the ledger (which is often committed): its command and output
tails with values that look like secrets masked, such as tokens after ``Authorization:`` or
``token=``, well-known token prefixes, and the password in ``-u user:password``. A heuristic:
pass secrets through the environment, never as arguments."""

from __future__ import annotations

import re
import shlex

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import List, Sequence

MASK = "***"
NAMED = re.compile(r"(?i)((?:authorization|bearer|token|secret|passw(?:or)?d|api[-_]?key|access[-_]?key|"
                   r"private[-_]?key|session[-_]?id|cookie)[\w-]*\"?\s*[:=]\s*\"?(?:bearer\s+|basic\s+|token\s+)?)"
                   r"[^\s\"'&,;]+")
PREFIXED = re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{16,}|github_pat_\w{20,}|sk-[A-Za-z0-9_-]{16,}|"
                      r"xox[abprs]-[A-Za-z0-9-]{10,}|AKIA[A-Z0-9]{16}|eyJ[\w-]{10,}\.[\w-]{10,}\.[\w-]{10,})")
USER_FLAGS = ("-u", "--user", "--password", "--token", "--api-key")


def text(value: str) -> str:
    """``value`` with secret-looking values masked."""
    return PREFIXED.sub(MASK, NAMED.sub(lambda m: m.group(1) + MASK, value))


def command(argv: Sequence[str]) -> str:
    """The command as one shell-quoted line, secret-looking values masked."""
    shown: List[str] = []
    for index, word in enumerate(argv):
        before = argv[index - 1] if index else ""
        if before in USER_FLAGS:
            word = word.split(":", 1)[0] + ":" + MASK if ":" in word and before in ("-u", "--user") else MASK
        shown.append(text(word))
    return shlex.join(shown)
