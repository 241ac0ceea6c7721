"""Where bash's small constructs end, read without ``re``, for the lexer: a redirection's descriptor, a
tilde prefix, the name after ``$``, a glob's ``[``...``]``, an array assignment's start; and a backquoted
command's text. Each function names the regular expression it stands for, and
``tests/shell/test_no_regex.py`` checks it against that expression.
"""

from __future__ import annotations

from store.base import chars
from store.shell.words import SPECIAL_PARAMS, param_name_end

_BRACKET_STOPS = frozenset(" \t\n;&|()<>")
_USER_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._+-")
_AFTER_TILDE = frozenset("/ \t\n;&|()<>:")
_BACKTICK_ESCAPES = frozenset("$`\\")


def fd_end(s: str, i: int) -> int:
    """Where a redirection's descriptor (``2>``, ``{fd}>``) ends, or ``i``:
    ``(?:[0-9]+|\\{[A-Za-z_][A-Za-z0-9_]*\\})(?=[<>])``."""
    end = chars.span(s, i, chars.DIGITS)
    if end == i and s.startswith("{", i):
        name = chars.name_end(s, i + 1)
        end = name + 1 if name > i + 1 and s.startswith("}", name) else i
    return end if end > i and s[end : end + 1] in ("<", ">") else i


def tilde_end(s: str, i: int) -> int:
    """Where ``~`` or ``~user`` at ``i`` ends when it expands (a ``/``, ``:``, blank, operator or the
    end follows), else -1: ``~[A-Za-z0-9._+-]*(?=[/ \\t\\n;&|()<>:]|\\Z)``."""
    end = chars.span(s, i + 1, _USER_CHARS)
    return end if end == len(s) or s[end] in _AFTER_TILDE else -1


def dollar_name_end(s: str, i: int) -> int:
    """Where the name after a ``$`` at ``i - 1`` ends (``i`` when none): a name, or one digit or
    special character (``$1``, ``$@``): ``[A-Za-z_][A-Za-z0-9_]*|[0-9]|[@*#?$!-]``."""
    end = chars.name_end(s, i)
    if end == i and i < len(s) and (s[i] in chars.DIGITS or s[i] in SPECIAL_PARAMS):
        end = i + 1
    return end


def plain_parameter(inner: str) -> bool:
    """``${inner}`` only names a parameter (nothing in it expands):
    ``(?:[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-])\\Z``."""
    return bool(inner) and param_name_end(inner, 0) == len(inner)


def bracket(s: str, i: int) -> bool:
    """The ``[`` at ``i`` opens a glob's set: ``\\[[^ \\t\\n;&|()<>]*\\]`` matches there."""
    return "]" in s[i + 1 : chars.span_not(s, i + 1, _BRACKET_STOPS)]


def array_start(s: str, start: int, end: int) -> bool:
    """``s[start:end]`` is ``name=`` or ``name[sub]+=`` and so on, before an array's ``(``:
    ``[A-Za-z_][A-Za-z0-9_]*(?:\\[[^\\]]*\\])?\\+?=`` matching all of it."""
    found = chars.assignment(s, start, end)
    return found is not None and found[2] == end


def tilde_in_assignment(s: str, start: int, end: int) -> bool:
    """A ``~`` at ``end`` expands in an assignment's value, first or after a ``:``:
    ``[A-Za-z_][A-Za-z0-9_]*\\+?=(?:.*:)?\\Z`` over ``s[start:end]``."""
    k = chars.name_end(s, start, end)
    if k == start:
        return False
    if s.startswith("+", k, end):
        k += 1
    if not s.startswith("=", k, end):
        return False
    value = s[k + 1 : end]
    return value == "" or (value.endswith(":") and "\n" not in value)


def unescape_backticks(text: str) -> str:
    """The text of a backquoted command: a backslash before ``$``, a backquote or a backslash is dropped."""
    if "\\" not in text:
        return text
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c == "\\" and i + 1 < n and text[i + 1] in _BACKTICK_ESCAPES:
            out.append(text[i + 1])
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)
