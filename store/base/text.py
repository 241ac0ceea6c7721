"""Making untrusted text safe for one line of a brief: no control characters, bounded length."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import List, Sequence



def one_line(text: str, limit: int) -> str:
    """``text`` with every control, format, surrogate or line/paragraph separator replaced by a space,
    whitespace runs collapsed, and cut to ``limit`` characters (with an ellipsis)."""
    if text.isprintable():  # no control, format, surrogate or separator character: nothing to replace
        if "  " not in text and text[:1] != " " and text[-1:] != " ":  # and no space to collapse
            return text if len(text) <= limit else text[: max(limit - 1, 0)] + "\u2026"
        cleaned = text
    elif text.isascii():
        cleaned = "".join(" " if c < " " or c == "\x7f" else c for c in text)
    else:
        from unicodedata import category

        cleaned = "".join(" " if category(c) in ("Cc", "Cf", "Cs", "Zl", "Zp") else c for c in text)
    cleaned = " ".join(cleaned.split())
    return cleaned if len(cleaned) <= limit else cleaned[: max(limit - 1, 0)] + "\u2026"


def join_within(names: Sequence[str], budget: int) -> str:
    """Comma-join as many of ``names`` as fit in ``budget`` characters, from the end backwards."""
    picked: List[str] = []
    used = 0
    for name in reversed(names):
        extra = len(name) + (2 if picked else 0)
        if used + extra > budget:
            break
        picked.append(name)
        used += extra
    return ", ".join(reversed(picked))
