"""The lexer that makes the tokens of ``store.shell.words``: reads bash's quoting, expansions, operators
and heredocs; where its small constructs end is read by ``spans``."""

from __future__ import annotations

from store.base import chars
from store.shell import spans
from store.shell.words import Arith, Builder, Op, Place, Redir, Word, ansi_c

TYPE_CHECKING = False
if TYPE_CHECKING:
    from store.shell.words import Token

MAX_NEST = 12
_OPS = (";;&", ";;", ";&", "&&", "||", "|&", ";", "&", "|", "(", ")")
_REDIRS = ("&>>", "<<<", "<<-", "&>", "<<", "<>", "<&", ">>", ">|", ">&", "<", ">")
_OPERATOR_START = frozenset(";&|()<>0123456789{")
# what ends a run of plain text: unquoted in a word, in double quotes, in a heredoc's body
_PLAIN_STOPS = frozenset(" \t\n;&|()<>\\'\"$`*?[{}~")
_DQ_STOPS = frozenset('"\\$`')
_DOC_STOPS = frozenset("\\$`")


def tokenize(text: str) -> tuple[list[Token], list[str]]:
    """The tokens of ``text`` and the problems met reading it (unterminated quotes, missing
    redirection targets, nesting too deep); no problems when it read cleanly. The lists are the
    caller's; the tokens in them are shared with other readers of the same text: never change one."""
    found = _LAST.get(text)
    if found is None:
        lexer = _Lexer(text, 0)
        found = (lexer.tokens(False), lexer.problems)
        _LAST.clear()
        _LAST[text] = found
    return list(found[0]), list(found[1])


# The last text read: one gate call reads the command for its effects (scan) and for its words
# (simple), and each reader gets the same tokens from one pass of the lexer.
_LAST: dict[str, tuple[list[Token], list[str]]] = {}


class _Lexer:
    def __init__(self, text: str, nest: int) -> None:
        self.s = text
        self.n = len(text)
        self.i = 0
        self.nest = nest
        self.misses = 0
        self.problems: list[str] = []

    def problem(self, what: str) -> None:
        if what not in self.problems:
            self.problems.append(what)

    def tokens(self, stop: bool) -> list[Token]:
        """Tokens up to the end, or (``stop``) up to the ``)`` closing a substitution."""
        at = Place()
        while True:
            self.blanks()
            if self.i >= self.n or (stop and self.s[self.i] == ")" and not at.depth and not at.case):
                if stop and self.i >= self.n:
                    self.problem("unterminated $(")
                if at.pending and self.i < self.n:
                    self.problem("heredoc inside a substitution without a body")
                    at.pending.clear()
                self.bodies(at.pending)
                return at.out
            c = self.s[self.i]
            if c in "#\n":
                end = self.s.find("\n", self.i) if c == "#" else self.i
                self.i = self.n if end < 0 else end + (c == "\n")
                at.newline(c == "\n")
                self.bodies(at.pending if c == "\n" else [])
                continue
            tok: Token | None = self.arith_command() if at.arith and self.s.startswith("((", self.i) else None
            if tok is None and c in _OPERATOR_START:
                tok = self.redirection() or self.operator()
            at.add(tok or self.word())

    def blanks(self) -> None:
        while self.i < self.n:
            if self.s[self.i] in " \t":
                self.i += 1
            elif self.s.startswith("\\\n", self.i):
                self.i += 2
            else:
                return

    def operator(self) -> Op | None:
        for op in _OPS:
            if self.s.startswith(op, self.i):
                self.i += len(op)
                return Op(op)
        return None

    def redirection(self) -> Redir | None:
        fd_start, j = self.i, spans.fd_end(self.s, self.i)
        op = next((o for o in _REDIRS if self.s.startswith(o, j)), "")
        if not op or (op in ("<", ">") and self.s.startswith("(", j + 1)):
            return None
        self.i = j + len(op)
        self.blanks()
        target = None
        if self.i < self.n and (self.s[self.i] not in "\n;&|()<>" or self.s.startswith(("<(", ">("), self.i)):
            target = self.word()
        else:
            self.problem(f"redirection {op} without a target")
        return Redir(op, self.s[fd_start:j], target)

    def arith_command(self) -> Arith | None:
        end = self.arith_end(self.i + 2)
        if end < 0:
            return None
        raw = self.s[self.i + 2 : end - 2]
        self.i = end
        return Arith(raw, self.doc_word(raw).subs)

    def arith_end(self, j: int) -> int:
        """The index just after the ``))`` closing arithmetic that starts at ``j``, or -1 (also once
        too many tries failed: then ``((`` reads as two parentheses, which only adds to what is found)."""
        if self.misses > 32:
            return -1
        depth = 0
        self.misses += 1
        for k in range(j, self.n):
            c = self.s[k]
            if c == "(":
                depth += 1
            elif c == ")" and depth:
                depth -= 1
            elif c == ")" and self.s.startswith("))", k):
                self.misses -= 1
                return k + 2
            elif c == ")":
                return -1
        return -1

    def bracket_end(self, j: int) -> int:
        """The index just after the ``]`` closing ``$[`` at ``j``, or -1 (also after too many misses)."""
        if self.misses > 32:
            return -1
        self.misses += 1
        depth = 0
        for k in range(j, self.n):
            if self.s[k] == "[":
                depth += 1
            elif self.s[k] == "]" and depth:
                depth -= 1
            elif self.s[k] == "]":
                self.misses -= 1
                return k + 1
        return -1

    def word(self) -> Word:
        b = Builder()
        start = self.i
        while self.i < self.n:
            c = self.s[self.i]
            end = chars.span_not(self.s, self.i, _PLAIN_STOPS)
            if end > self.i:
                b.add("lit", self.s[self.i : end])
                self.i = end
            elif c == "(" and spans.array_start(self.s, start, self.i):
                self.array(b)
            elif c in " \t\n;&|()" or (c in "<>" and not self.s.startswith("(", self.i + 1)):
                break
            elif c in "<>":
                self.substitution(b, 2, "psub")
            else:
                self.special(b, c, start)
        if self.i == start:  # never stall
            b.add("lit", self.s[self.i : self.i + 1])
            self.i += 1
        return Word(b.parts, b.subs, self.s[start : self.i], b.split)

    def array(self, b: Builder) -> None:
        """``name=( words )``: the words are data, but their substitutions run."""
        inner = Builder()
        self.substitution(inner, 1, "lit")
        for kind, text in inner.parts:
            b.add(kind, text)
        for toks in inner.subs:
            b.subs.extend(sub for tok in toks if isinstance(tok, Word) for sub in tok.subs)

    def special(self, b: Builder, c: str, start: int) -> None:
        before = len(b.parts)
        splitting = c in "`*?[" or (c == "$" and self.s[self.i + 1 : self.i + 2] not in ("'", '"'))
        self.unquoted(b, c, start)
        if splitting and any(kind in ("var", "sub", "arith", "glob") for kind, _ in b.parts[before:]):
            b.split = True

    def unquoted(self, b: Builder, c: str, start: int) -> None:
        if c == "\\":
            nxt = self.s[self.i + 1 : self.i + 2]
            if nxt != "\n":
                b.add("qlit", nxt or "\\")
            self.i += 2
        elif c == "'":
            end = self.s.find("'", self.i + 1)
            if end < 0:
                self.problem("unterminated single quote")
                end = self.n
            b.add("qlit", self.s[self.i + 1 : end])
            self.i = end + 1
        elif c == '"':
            self.i += 1
            self.double(b, '"')
        elif c == "$":
            self.dollar(b, False)
        elif c == "`":
            self.backtick(b)
        elif c == "~" and (self.i == start or spans.tilde_in_assignment(self.s, start, self.i)):
            end = spans.tilde_end(self.s, self.i)
            b.add("tilde" if end > 0 else "lit", self.s[self.i : end] if end > 0 else "~")
            self.i = end if end > 0 else self.i + 1
        else:
            glob = c in "*?" or (c == "[" and spans.bracket(self.s, self.i))
            b.add("glob" if glob else "brace" if c in "{}" else "lit", c)
            self.i += 1

    def double(self, b: Builder, stop: str) -> None:
        """Text in double quotes up to ``stop`` (or, for a heredoc body, ``stop == ""``, the end)."""
        stops = _DQ_STOPS if stop else _DOC_STOPS
        while self.i < self.n:
            c = self.s[self.i]
            if stop and c == stop:
                self.i += 1
                return
            end = chars.span_not(self.s, self.i, stops)
            if end > self.i:
                b.add("qlit", self.s[self.i : end])
                self.i = end
            elif c == "\\":
                nxt = self.s[self.i + 1 : self.i + 2]
                escapable = nxt in ("$", "`", "\\", "\n") or (nxt == '"' and stop)
                if nxt != "\n":
                    b.add("qlit", nxt if escapable else "\\" + nxt)
                self.i += 2
            elif c == "$":
                self.dollar(b, True)
            else:
                self.backtick(b)
        if stop:
            self.problem("unterminated double quote")

    def dollar(self, b: Builder, quoted: bool) -> None:
        s, i = self.s, self.i
        nxt = s[i + 1 : i + 2]
        if nxt == "'" and not quoted:
            end = i + 2
            while end < self.n and s[end] != "'":
                end += 2 if s[end] == "\\" else 1
            if end >= self.n:
                self.problem("unterminated $' quote")
            b.add("qlit", ansi_c(s[i + 2 : end]))
            self.i = end + 1
        elif nxt == '"' and not quoted:
            self.i = i + 2
            self.double(b, '"')
        elif s.startswith("$((", i) and (end := self.arith_end(i + 3)) > 0:
            b.add("arith", s[i:end])
            b.subs.extend(self.doc_word(s[i + 3 : end - 2]).subs)
            self.i = end
        elif nxt == "[" and (end := self.bracket_end(i + 2)) > 0:  # $[ ]: old arithmetic syntax
            b.add("arith", s[i:end])
            b.subs.extend(self.doc_word(s[i + 2 : end - 1]).subs)
            self.i = end
        elif nxt == "(":
            self.substitution(b, 2, "sub")
        elif nxt == "{":
            self.parameter(b)
        else:
            end = spans.dollar_name_end(s, i + 1)
            b.add("var" if end > i + 1 else "qlit" if quoted else "lit", s[i:end] if end > i + 1 else "$")
            self.i = end

    def substitution(self, b: Builder, skip: int, kind: str) -> None:
        start = self.i
        self.i += skip
        if self.nest >= MAX_NEST:
            self.problem("substitutions nested too deep")
            self.i = self.n
            return
        self.nest += 1
        toks = self.tokens(True)
        self.nest -= 1
        self.i = min(self.i + 1, self.n)
        b.add(kind, self.s[start : self.i])
        b.subs.append(toks)

    def parameter(self, b: Builder) -> None:
        depth, j = 0, self.i + 1
        while j < self.n:
            c = self.s[j]
            if c == "\\":
                j += 1
            elif c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if not depth:
                    break
            j += 1
        if j >= self.n:
            self.problem("unterminated ${")
        inner = self.s[self.i + 2 : j]
        b.add("var", self.s[self.i : j + 1])
        if not spans.plain_parameter(inner):
            b.subs.extend(self.doc_word(inner).subs)
        self.i = j + 1

    def backtick(self, b: Builder) -> None:
        j = self.i + 1
        while j < self.n and self.s[j] != "`":
            j += 2 if self.s[j] == "\\" else 1
        if j >= self.n:
            self.problem("unterminated backquote")
        inner = spans.unescape_backticks(self.s[self.i + 1 : j])
        b.add("sub", self.s[self.i : j + 1])
        b.subs.append(self.child(inner).tokens(False))
        self.i = j + 1

    def child(self, text: str) -> _Lexer:
        lexer = _Lexer(text, self.nest + 1)
        if self.nest >= MAX_NEST:
            self.problem("substitutions nested too deep")
            lexer.n = 0
        lexer.problems = self.problems
        return lexer

    def doc_word(self, text: str) -> Word:
        """``text`` read as a heredoc body: only ``$``, backquotes and backslashes are special."""
        lexer = self.child(text)
        b = Builder()
        lexer.double(b, "")
        return Word(b.parts, b.subs, text)

    def bodies(self, pending: list[Redir]) -> None:
        for redir in pending:
            delim = redir.target.text if redir.target else ""
            lines = []
            while self.i < self.n:
                end = self.s.find("\n", self.i)
                end = self.n if end < 0 else end
                line = self.s[self.i : end]
                self.i = min(end + 1, self.n)
                if (line.lstrip("\t") if redir.op == "<<-" else line) == delim:
                    break
                lines.append(line)
            body = "\n".join(lines)
            quoted = redir.target is None or redir.target.quoted()
            redir.body = Word([("qlit", body)], [], body) if quoted else self.doc_word(body)
        pending.clear()
