"""Tokens of a bash command (made by ``store.shell.lex.tokenize``) and GNU-style option parsing of words.

Tokens: ``Word``, ``Op`` (control operators and newlines), ``Redir`` (a redirection with its
target word and, for ``<<``, its heredoc body) and ``Arith`` (a ``(( ... ))`` command). A word
keeps its parts, so literal text can be told from expansions, and the tokens of every command
or process substitution in it (``Word.subs``). ``Builder`` and ``Place`` are the lexer's working
state; ``getopt`` and ``computed`` read a command's arguments. Static analysis only: nothing runs.
"""

from __future__ import annotations

from store.base import chars

LITERAL = ("lit", "qlit", "brace")
SPECIAL_PARAMS = frozenset("@*#?$!-")  # $@ $* $# $? $$ $! $-  # part kinds whose text is the word's own text
_KEEP_START = frozenset(("if", "then", "else", "elif", "do", "while", "until", "{", "!", "time"))
_HEX = frozenset("0123456789abcdefABCDEF")
_OCTAL = frozenset("01234567")
_HEX_DIGITS = {"x": 2, "u": 4, "U": 8}  # the most hex digits each escape takes
_ESCAPES = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


class Word:
    """One shell word: ``parts`` are ``(kind, text)`` with kind in lit (unquoted text), qlit (quoted
    text), brace, glob, tilde, var, sub, psub, arith; ``subs`` the tokens of its substitutions."""

    __slots__ = ("parts", "subs", "raw", "text", "_literal", "split")

    def __init__(self, parts: list[tuple[str, str]], subs: list[list[Token]], raw: str, split: bool = False) -> None:
        self.parts = parts
        self.subs = subs
        self.raw = raw
        self.split = split  # an unquoted expansion or glob: bash may turn it into several words
        self.text = "".join(text for _, text in parts)  # after quote removal, expansions as written
        literal = all(kind in LITERAL for kind, _ in parts) and not self.braced()
        self._literal = self.text if literal else None

    def literal(self) -> str | None:
        """The word's value if it has no expansion (a lone ``{`` or ``}`` is literal), else None."""
        return self._literal

    def endswith(self, suffix: str) -> bool:
        """The word ends in literal text ending with ``suffix`` (whatever expands before it)."""
        return bool(self.parts) and self.parts[-1][0] in LITERAL and self.parts[-1][1].endswith(suffix)

    def braced(self) -> bool:
        """Brace expansion applies: an unquoted ``{`` ... ``}`` with a comma or ".." between."""
        inner = None
        for kind, text in self.parts:
            if kind == "brace" and text == "{":
                inner = ""
            elif kind == "brace" and inner is not None and ("," in inner or ".." in inner):
                return True
            elif inner is not None:
                inner += text
        return False

    def bare(self) -> str | None:
        """The text if the word is wholly unquoted literal text (a reserved word can be), else None."""
        return self.text if all(kind in ("lit", "brace") for kind, _ in self.parts) else None

    def quoted(self) -> bool:
        return any(kind == "qlit" for kind, _ in self.parts)

    def tail(self, skip: int) -> Word | None:
        """The word without its first ``skip`` characters, if they are literal text, else None."""
        parts = list(self.parts)
        while parts and skip and parts[0][0] in LITERAL:
            kind, text = parts[0]
            if len(text) > skip:
                parts[0] = (kind, text[skip:])
                skip = 0
            else:
                parts.pop(0)
                skip -= len(text)
        return None if skip else Word(parts, self.subs, "".join(text for _, text in parts), self.split)


class Op:
    __slots__ = ("op",)

    def __init__(self, op: str) -> None:
        self.op = op


class Redir:
    """``fd`` ``op`` ``target``, e.g. ``2>`` ``/dev/null``; ``body`` is a heredoc's text."""

    __slots__ = ("op", "fd", "target", "body")

    def __init__(self, op: str, fd: str, target: Word | None) -> None:
        self.op = op
        self.fd = fd
        self.target = target
        self.body: Word | None = None


class Arith:
    __slots__ = ("raw", "subs")

    def __init__(self, raw: str, subs: list[list[Token]]) -> None:
        self.raw = raw
        self.subs = subs


TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Union

    Token = Union[Word, Op, Redir, Arith]


def ansi_c(body: str) -> str:
    """The text of ANSI-C quoting ``$'...'`` with its backslash escapes decoded: ``\\xHH``,
    ``\\uHHHH``, ``\\UHHHHHHHH``, ``\\NNN`` (octal), ``\\cX`` (control-X), ``\\n`` and the like;
    any other escaped character stands for itself, and a final lone backslash or ``\\c`` stays."""
    out: list[str] = []
    i, n = 0, len(body)
    while i < n:
        k = body.find("\\", i)
        if k < 0 or k == n - 1:
            out.append(body[i:])
            break
        out.append(body[i:k])
        c = body[k + 1]
        if c in _HEX_DIGITS:
            end = k + 2
            while end < min(n, k + 2 + _HEX_DIGITS[c]) and body[end] in _HEX:
                end += 1
            if end > k + 2:
                out.append(chr(min(int(body[k + 2 : end], 16), 0x10FFFF)))
                i = end
                continue
        elif c in _OCTAL:
            end = k + 2
            while end < min(n, k + 4) and body[end] in _OCTAL:
                end += 1
            out.append(chr(int(body[k + 1 : end], 8) & 0xFF))
            i = end
            continue
        elif c == "c":
            out.append(chr(ord(body[k + 2]) & 0x1F) if k + 2 < n else "\\c")  # bash keeps a final \c
            i = k + 3
            continue
        out.append(_ESCAPES.get(c, c))
        i = k + 2
    return "".join(out)


class Builder:
    """Collects the parts and substitutions of a word as the lexer reads it."""

    def __init__(self) -> None:
        self.parts: list[tuple[str, str]] = []
        self.subs: list[list[Token]] = []
        self.split = False

    def add(self, kind: str, text: str) -> None:
        if self.parts and self.parts[-1][0] == kind and kind in ("lit", "qlit"):
            self.parts[-1] = (kind, self.parts[-1][1] + text)
        else:
            self.parts.append((kind, text))


class Place:
    """Where the lexer stands: tokens so far, heredocs awaiting their body, open parentheses and
    ``case``s (in a substitution, ``)`` may end a pattern), and whether a command starts here."""

    def __init__(self) -> None:
        self.out: list[Token] = []
        self.pending: list[Redir] = []
        self.depth = self.case = 0
        self.start = self.arith = True

    def newline(self, really: bool) -> None:
        if really:
            self.out.append(Op("\n"))
            self.start = self.arith = True

    def add(self, tok: Token) -> None:
        self.out.append(tok)
        if isinstance(tok, Op):
            self.depth += {"(": 1, ")": -1 if self.depth else 0}.get(tok.op, 0)
            self.start = self.arith = tok.op != ")"
        elif isinstance(tok, Word):
            bare = tok.bare()
            if self.start and bare in ("case", "esac"):
                self.case = max(self.case + (1 if bare == "case" else -1), 0)
            self.arith = self.start and (bare == "for" or bare in _KEEP_START)
            self.start = self.start and bare in _KEEP_START
        else:
            self.start = self.arith = False
            if isinstance(tok, Redir) and tok.op in ("<<", "<<-"):
                self.pending.append(tok)


def lit(text: str) -> Word:
    """A word of quoted literal text."""
    return Word([("qlit", text)], [], text)


def computed(args: list[Word]) -> Word | None:
    """The first argument (before ``--``) whose expansion could start with "-" and be read as an option."""
    for word in args:
        text = word.literal()
        if text == "--":
            return None
        if text is None and not _option_safe(word):
            return word
    return None


def _option_safe(word: Word) -> bool:
    """The word's expansion cannot start with "-": a literal head that does not, or an absolute path."""
    for kind, text in word.parts:
        if kind not in LITERAL:
            return kind in ("tilde", "found", "psub") or text in ("$HOME", "${HOME}", "$PWD", "${PWD}")
        if text:
            return not text.startswith("-")
    return True


def getopt(args: list[Word], shorts: str = "", longs: tuple[str, ...] = (), stop: bool = False,
           optional: str = "") -> tuple[list[tuple[str, Word | None]], list[Word]]:
    """GNU-style ``(options, operands)``. Letters in ``shorts`` take a value (attached or next word),
    letters in ``optional`` take the rest of their cluster; ``longs`` are names, "name=" taking a value
    (a unique prefix is accepted, as getopt does). ``stop``: options end at the first operand."""
    opts: list[tuple[str, Word | None]] = []
    ops: list[Word] = []
    k = 0
    while k < len(args):
        word, text = args[k], args[k].literal()
        k += 1
        if text == "--":
            return opts, ops + args[k:]
        if text is None or text == "-" or not text.startswith("-"):
            ops.append(word)
            if stop:
                return opts, ops + args[k:]
        elif text.startswith("--"):
            name, eq, _ = text[2:].partition("=")
            full = next((n for n in longs if n.rstrip("=") == name), None) or next(
                (n for n in longs if n.startswith(name)), name)
            value = word.tail(len(name) + 3) if eq else None
            if not eq and full.endswith("=") and k < len(args):
                value, k = args[k], k + 1
            opts.append(("--" + full.rstrip("="), value))
        else:
            k = _cluster(word, text, args, k, shorts + optional, optional, opts)
    return opts, ops


def _cluster(word: Word, text: str, args: list[Word], k: int, valued: str, optional: str,
             opts: list[tuple[str, Word | None]]) -> int:
    for pos in range(1, len(text)):
        if text[pos] in valued:
            value = word.tail(pos + 1) if pos + 1 < len(text) else None
            if value is None and text[pos] not in optional and k < len(args):
                value, k = args[k], k + 1
            opts.append(("-" + text[pos], value))
            return k
        opts.append(("-" + text[pos], None))
    return k


def is_baton(word: Word) -> bool:
    """``baton``, ``bin/baton`` or any path ending in /bin/baton (``$CLAUDE_PLUGIN_ROOT/bin/baton`` too)."""
    return word.text in ("baton", "bin/baton") or word.endswith("/bin/baton")


def param_name_end(text: str, i: int) -> int:
    """Where a parameter's name at ``i`` ends (``i`` when none): ``[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-]``."""
    end = chars.name_end(text, i)
    if end == i:
        end = chars.span(text, i, chars.DIGITS)
    if end == i and text[i : i + 1] in SPECIAL_PARAMS:
        end = i + 1
    return end
