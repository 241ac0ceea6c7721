"""Bash's grammar over the lexer's tokens, for the scan: lists, pipelines, compound commands.

``Walker(result, tokens).run(cwds)`` hands every simple command to ``result.simple`` with the
directories that may be current when it runs, and returns those in effect after the tokens ran
(after success, after failure). A cd in a subshell, a pipeline or a background job does not leak;
after one that may have failed, both directories stay possible; in a loop, later rounds start in
an unknown directory (None), and a loop body is read again when its first round defined a
function (a command in it may call that function in the next round). ``result.cond`` counts the
branches, loops and subshells being read: a function defined there may not exist afterwards.
"""

from __future__ import annotations

from store.shell.words import Arith, Op, Redir, Word

TYPE_CHECKING = False
if TYPE_CHECKING:
    from store.shell.contract import Cwds, Flow, Token
    from store.shell.contract import Runner as Result

MAX_NEST = 60  # compound commands inside one another
MAX_CWDS = 16  # directories followed at once
_BRANCHES = frozenset(("if", "while", "until", "for", "select", "case"))  # bodies that may not run
_CLOSERS = frozenset((")", ";;", ";&", ";;&", "then", "do", "done", "fi", "elif", "else", "esac", "}"))


def union(*groups: Cwds) -> Cwds:
    """The directories in any of ``groups``; past MAX_CWDS of them, just "unknown" (None)."""
    out = tuple(dict.fromkeys(cwd for group in groups for cwd in group))
    return out if len(out) <= MAX_CWDS else (None,)


class Walker:
    """Reads a token list as bash's grammar, following which directories may be in effect."""

    def __init__(self, result: Result, toks: list[Token]) -> None:
        self.result = result
        self.toks = toks
        self.k = 0

    def peek(self) -> Token | None:
        return self.toks[self.k] if self.k < len(self.toks) else None

    def at(self, *names: str) -> bool:
        tok = self.peek()
        return (isinstance(tok, Op) and tok.op in names) or (isinstance(tok, Word) and tok.bare() in names)

    def expect(self, name: str) -> None:
        if self.at(name):
            self.k += 1
        else:
            self.result.note(f"cannot parse: missing '{name}'")

    def newlines(self) -> None:
        while self.at("\n"):
            self.k += 1

    def run(self, cwds: Cwds) -> Flow:
        flow = self.list(cwds)
        while self.k < len(self.toks):
            tok = self.toks[self.k]
            self.result.note(f"cannot parse: unexpected '{tok.op if isinstance(tok, Op) else getattr(tok, 'raw', '')}'")
            self.k += 1
            flow = self.list(union(*flow))
        return flow

    def list(self, cwds: Cwds) -> Flow:
        """Commands separated by ; & or newlines, up to a closing token (``fi``, ``)``, ...)."""
        flow, cur = (cwds, cwds), cwds
        while True:
            self.newlines()
            if self.peek() is None or self.at(*_CLOSERS):
                return flow
            mark = self.result.defined()
            flow = self.and_or(cur)
            if self.at("&"):  # a background job runs in a subshell
                flow = cur, cur
                self.result.uncertain(mark)
            if self.at(";", "&"):
                self.k += 1
            elif not (self.peek() is None or self.at("\n", *_CLOSERS)):
                self.result.note("cannot parse: a command continues after its end")
            cur = union(*flow)

    def and_or(self, cwds: Cwds) -> Flow:
        succ, fail = self.pipeline(cwds)
        while self.at("&&", "||"):
            both = self.at("&&")
            self.k += 1
            self.newlines()
            self.result.cond += 1
            try:
                if both:
                    succ, more = self.pipeline(succ)
                    fail = union(fail, more)
                else:
                    more, fail = self.pipeline(fail)
                    succ = union(succ, more)
            finally:
                self.result.cond -= 1
        return succ, fail

    def pipeline(self, cwds: Cwds) -> Flow:
        negate = False
        while self.at("!", "time"):
            negate ^= self.at("!")
            self.k += 1
            if self.at("-p"):
                self.k += 1
        mark = self.result.defined()
        flow = self.command(cwds)
        if self.at("|", "|&"):
            self.result.uncertain(mark)
        while self.at("|", "|&"):  # every part of a pipeline runs in a subshell
            self.k += 1
            self.newlines()
            self.result.cond += 1
            self.command(cwds)
            self.result.cond -= 1
            flow = cwds, cwds
        return (flow[1], flow[0]) if negate else flow

    def command(self, cwds: Cwds) -> Flow:
        if self.result.nest >= MAX_NEST:
            self.result.unknown("commands nested too deep")
            self.k = len(self.toks)
            return cwds, cwds
        self.result.nest += 1
        tok = self.peek()
        branch = isinstance(tok, Op) or (isinstance(tok, Word) and tok.bare() in _BRANCHES)
        self.result.cond += branch
        try:
            return self.compound(cwds)
        finally:
            self.result.nest -= 1
            self.result.cond -= branch

    def compound(self, cwds: Cwds) -> Flow:
        tok = self.peek()
        bare = tok.bare() if isinstance(tok, Word) else None
        nxt = self.toks[self.k + 1 : self.k + 3]
        if isinstance(tok, Word) and len(nxt) == 2 and all(isinstance(t, Op) for t in nxt):
            if [t.op for t in nxt if isinstance(t, Op)] == ["(", ")"]:
                return self.function(cwds)
        if isinstance(tok, Arith):
            self.k += 1
            self.result.arith(tok, cwds)
            flow = cwds, cwds
        elif isinstance(tok, Op) and tok.op == "(":
            self.k += 1
            self.list(cwds)
            self.expect(")")
            flow = cwds, cwds
        elif isinstance(tok, Op):
            self.k += 1
            self.result.note(f"cannot parse: unexpected '{tok.op}'")
            return cwds, cwds
        elif bare in _COMPOUND:
            flow = _COMPOUND[bare](self, cwds)
        else:
            return self.simple(cwds)
        while isinstance(tok := self.peek(), Redir):
            self.result.redirect(tok, cwds)
            self.k += 1
        return flow

    def simple(self, cwds: Cwds) -> Flow:
        words: list[Word] = []
        redirs: list[Redir] = []
        while isinstance(tok := self.peek(), (Word, Redir)):
            if isinstance(tok, Word):
                words.append(tok)
            else:
                redirs.append(tok)
            self.k += 1
        return self.result.simple(words, redirs, cwds)

    def function(self, cwds: Cwds) -> Flow:
        """``name () body`` or ``function name [()] body``: kept, and analysed at each call."""
        self.k += 1 if self.at("function") else 0
        name = self.peek()
        self.k += 1
        if self.at("("):
            self.k += 2
        self.newlines()
        start = self.k
        dry = Walker(self.result.dry(), self.toks)
        dry.result.nest = self.result.nest
        dry.k = start
        dry.command(cwds)
        self.k = max(dry.k, start + 1)
        if isinstance(name, Word):
            self.result.define(name.text, self.toks[start : self.k])
        return cwds, cwds

    def group(self, cwds: Cwds) -> Flow:
        self.k += 1
        flow = self.list(cwds)
        self.expect("}")
        return flow

    def if_(self, cwds: Cwds) -> Flow:
        self.k += 1
        ends: list[Cwds] = []
        rest = cwds
        while True:
            cond, rest = self.list(rest)
            self.expect("then")
            ends.extend(self.list(cond))
            if not self.at("elif"):
                break
            self.k += 1
        if self.at("else"):
            self.k += 1
            ends.extend(self.list(rest))
        else:
            ends.append(rest)
        self.expect("fi")
        return union(*ends), union(*ends)

    def loop(self, cwds: Cwds) -> Flow:
        """while/until/for/select: the body may run any number of times."""
        start = self.k
        defined = sum(len(bodies) for bodies in self.result.functions.values())
        after = self.loop_once(cwds)
        again = sum(len(bodies) for bodies in self.result.functions.values()) != defined
        if after != cwds or again:  # a cd in the body: later rounds start anywhere; or a new function
            self.k = start
            after = self.loop_once(union(after, (None,)) if after != cwds else after)
        return after, after

    def loop_once(self, cwds: Cwds) -> Cwds:
        keyword = self.toks[self.k]
        self.k += 1
        ends = [cwds]
        if isinstance(keyword, Word) and keyword.bare() in ("while", "until"):
            succ, fail = self.list(cwds)
            ends += [succ, fail]
            cwds = succ if keyword.bare() == "while" else fail
        else:
            self.loop_words(cwds)
        self.expect("do")
        ends.extend(self.list(cwds))
        self.expect("done")
        return union(*ends)

    def loop_words(self, cwds: Cwds) -> None:
        tok = self.peek()
        self.k += 1
        if isinstance(tok, Arith):
            self.result.arith(tok, cwds)
        elif isinstance(tok, Word):
            self.result.assign(tok.text)
            self.newlines()
            if self.at("in"):
                self.k += 1
                while isinstance(word := self.peek(), Word):
                    self.result.subs(word, cwds)
                    self.k += 1
        if self.at(";", "\n"):
            self.k += 1
        self.newlines()

    def case(self, cwds: Cwds) -> Flow:
        self.k += 1
        if isinstance(tok := self.peek(), Word):
            self.result.subs(tok, cwds)
            self.k += 1
        self.newlines()
        self.expect("in")
        ends = [cwds]
        while self.peek() is not None and not self.at("esac"):
            start = self.k
            self.k += 1 if self.at("(") else 0
            while isinstance(tok := self.peek(), Word) or self.at("|"):
                if isinstance(tok, Word):
                    self.result.subs(tok, cwds)
                self.k += 1
            self.expect(")")
            ends.extend(self.list(cwds))
            self.k += 1 if self.at(";;", ";&", ";;&") else 0
            self.newlines()
            if self.k == start:
                break
        self.expect("esac")
        return union(*ends), union(*ends)

    def test(self, cwds: Cwds) -> Flow:
        """``[[ ... ]]``: operators inside are comparisons, never redirections."""
        self.k += 1
        self.result.commands.append("[[")
        words = []
        while (tok := self.peek()) is not None and not self.at("]]"):
            word = tok.target if isinstance(tok, Redir) else tok
            if isinstance(word, Word):
                words.append(word)
            self.k += 1
        self.result.condition(words, cwds)
        self.expect("]]")
        return cwds, cwds


_COMPOUND = {"{": Walker.group, "if": Walker.if_, "while": Walker.loop, "until": Walker.loop, "for": Walker.loop,
             "select": Walker.loop, "case": Walker.case, "[[": Walker.test, "function": Walker.function}
