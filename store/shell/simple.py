"""The simple commands a Bash command line holds, their words after quote removal, and what hides them.

Read with baton's own shell lexer (``store.shell.lex``): separators, subshells, groups and keywords
split a line into simple commands; the bodies of substitutions are read as commands too. Anything
that makes the words unknowable before the command runs (a variable, a substitution, arithmetic,
a function definition, a heredoc that expands, ``eval`` and the like) is listed in ``opaque``.
"""

from __future__ import annotations

from store.base import chars

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Dict, List, Optional, Sequence

    from store.shell.contract import Token
    from store.shell.words import Redir

SEPARATORS = frozenset((";", "&", "&&", "||", "|", "|&", "\n", "(", ")", ";;", ";&", ";;&"))
KEYWORDS = frozenset(("if", "then", "else", "elif", "fi", "do", "done", "while", "until", "{", "}", "!", "time"))
OPAQUE_STARTS = frozenset(("for", "case", "select", "function", "coproc", "[[", "eval", "exec", "source", ".",
                           "sh", "bash", "zsh", "dash", "ksh", "env", "command", "builtin", "xargs", "sudo",
                           "nice", "nohup", "timeout", "setsid", "stdbuf", "trap", "jobs", "compgen", "mapfile",
                           "readarray", "declare", "typeset", "export", "local", "let", "alias", "unset", "set",
                           "shopt", "enable", "hash", "printf", "test", "["))
class Simple:
    """One simple command: its words after quote removal (``None`` for a word that is not literal)."""

    def __init__(self, words: List[Optional[str]], raws: List[str], assigns: bool) -> None:
        self.words, self.raws, self.assigns = words, raws, assigns

    @property
    def text(self) -> str:
        return " ".join(w if w is not None else r for w, r in zip(self.words, self.raws))


class Parsed:
    def __init__(self) -> None:
        self.commands: List[Simple] = []
        self.opaque: List[str] = []
        self.redirects: List[Optional[str]] = []  # targets of writing redirections (None: not literal)


WRITE_REDIRS = (">", ">>", ">|", "&>", "&>>", "<>", ">&")


def _words(toks: Sequence[Token], into: Parsed, depth: int = 0) -> None:
    from store.shell.words import Arith, Op, Redir, Word

    words: List[Optional[str]] = []
    raws: List[str] = []
    assigns = False

    def flush() -> None:
        nonlocal words, raws, assigns
        while words and words[0] in KEYWORDS and raws[0] == words[0]:
            words, raws = words[1:], raws[1:]
        if words:
            into.commands.append(Simple(words, raws, assigns))
            if words[0] in OPAQUE_STARTS or words[0] is None:
                into.opaque.append(f"runs {raws[0]}")
        words, raws, assigns = [], [], False

    for i, tok in enumerate(toks):
        if isinstance(tok, Op):
            if tok.op == "(" and words and i + 1 < len(toks) and isinstance(toks[i + 1], Op):
                into.opaque.append("defines a function")
            flush()
        elif isinstance(tok, Arith):
            into.opaque.append("uses arithmetic")
            for sub in tok.subs:
                _words(sub, into, depth + 1)
        elif isinstance(tok, Redir):
            _redirect(tok, into, depth)
        elif isinstance(tok, Word):
            value = tok.literal()
            for sub in tok.subs:
                into.opaque.append("uses a substitution")
                _words(sub, into, depth + 1)
            if not words and value is not None and _assignment(value):
                assigns = True
                continue
            if value is None and not tok.subs:
                into.opaque.append(f"uses {tok.raw[:40]}")
            words.append(value)
            raws.append(tok.raw)
    flush()


def _redirect(tok: Redir, into: Parsed, depth: int) -> None:
    op, target, body = tok.op, tok.target, tok.body
    for word in (target, body):
        for sub in word.subs if word is not None else []:
            into.opaque.append("uses a substitution")
            _words(sub, into, depth + 1)
    if body is not None and body.literal() is None:
        into.opaque.append("expands a heredoc")
    if op in WRITE_REDIRS and not (op == ">&" and target is not None and (target.literal() or "").isdigit()):
        into.redirects.append(target.literal() if target is not None else None)


_LAST: Dict[str, Parsed] = {}  # the last command parsed: one gate call reads it up to three times


def parse(command: str) -> Parsed:
    """The command's simple commands, redirections and what makes it unreadable. The result is
    shared with later calls for the same command: read it, never change it."""
    found = _LAST.get(command)
    if found is not None:
        return found
    from store.shell.lex import tokenize

    toks, problems = tokenize(command)
    found = Parsed()
    found.opaque += problems
    _words(toks, found)
    _LAST.clear()
    _LAST[command] = found
    return found


def _assignment(value: str) -> bool:
    """``value`` starts as ``NAME=``, ``NAME+=`` or ``NAME[...]=`` does (the subscript up to any ``]``
    on its first line that ``=`` or ``+=`` follows): ``[A-Za-z_][A-Za-z0-9_]*(?:\\[.*\\])?\\+?=``."""
    k = chars.name_end(value)
    if k == 0:
        return False
    ends = [k]
    if value.startswith("[", k):
        line = value.find("\n", k)
        ends += [c + 1 for c in range(k + 1, line if line >= 0 else len(value)) if value[c] == "]"]
    return any(value.startswith(("=", "+="), e) for e in ends)
