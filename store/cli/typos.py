"""The nearest valid word for a mistyped one, as the CLI says it: ``baton stauts`` -> "unknown
command 'stauts'; did you mean 'status'?", the same way an unknown step name is answered."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import List, Optional, Sequence

CUTOFF = 0.6  # difflib's own default: 'stauts' and 'status' score 0.67, 'status' and 'verify' 0.17


def nearest(word: str, choices: Sequence[str]) -> Optional[str]:
    """The valid word closest to ``word`` (case aside), or ``None`` when none is close."""
    import difflib

    lowered = {choice.lower(): choice for choice in choices}
    found = difflib.get_close_matches(word.lower(), list(lowered), n=1, cutoff=CUTOFF)
    return lowered[found[0]] if found else None


def hint(word: str, choices: Sequence[str]) -> str:
    """``"did you mean 'x'? "`` or nothing."""
    close = nearest(word, choices)
    return f"did you mean {close!r}? " if close else ""


def unknown(what: str, word: str, choices: Sequence[str]) -> str:
    """``unknown command 'stauts'; did you mean 'status'? (one of: ...)``"""
    close = nearest(word, choices)
    guess = f"; did you mean {close!r}?" if close else ""
    return f"unknown {what} {word!r}{guess} (one of: {', '.join(choices)})"


def unrecognized(words: Sequence[str], options: Sequence[str], prog: str) -> str:
    """The words argparse left over: each long option gets the nearest of ``options`` (compared
    without the dashes, which every one shares; ``--help`` and ``--version`` are never guessed)."""
    names = {o[2:]: o for o in options if o.startswith("--") and o not in ("--help", "--version")}
    said: List[str] = []
    for word in words:
        name = word.split("=", 1)[0]
        close = nearest(name[2:], list(names)) if name.startswith("--") else None
        said.append(f"{word!r} (did you mean {names[close]!r}?)" if close else repr(word))
    return f"unrecognized argument{'s' if len(said) > 1 else ''} for `{prog}`: {', '.join(said)} (see `{prog} --help`)"
