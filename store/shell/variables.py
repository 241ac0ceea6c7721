"""Which values a command evaluates as code: bash's arithmetic, array subscripts and indirection.

An arithmetic context (``(( ))``, ``$(( ))``, ``let``, ``[[ -eq ]]``, an array subscript, a
substring offset, a ``declare -i`` variable) evaluates a variable's value as an expression, and a
subscript inside that value runs its command substitutions; ``${!name}``, ``printf -v``, ``read``
and ``test -v`` use a value as a variable name, subscript included. ``Variables`` records every
assignment a command makes and every place a value is evaluated; :meth:`Variables.verdicts`, at
the end of a scan, names each evaluation of a value the command itself may have set to code. A
variable the command never assigns holds what Claude Code's shell inherited, which the model
cannot set (each Bash call starts a fresh shell), so evaluating it is safe.
"""

from __future__ import annotations

from store.base import chars
from store.shell.words import LITERAL, param_name_end

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable, Dict, Iterable, List, Optional, Set

    from store.shell.words import Word

NUMBER = "0"  # the value of an assignment whose result is a number ($(( )), let, ${#x})
# what an arithmetic value may hold and stay plain arithmetic (no $, quotes, brackets or backquotes)
_SAFE_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_ \t+-*/%<>=!&|^~?:,().#")
# set by the shell from data the command controls (the last argument, read input, cd targets...)
ALWAYS = frozenset(
    "_ REPLY MAPFILE OPTARG BASH_REMATCH BASH_COMMAND BASH_ARGV BASH_ARGC BASH_EXECUTION_STRING PWD OLDPWD "
    "FUNCNAME BASH_SOURCE READLINE_LINE COMP_LINE COMP_WORDS COPROC @ *".split()
)


def word_value(word: Word) -> Optional[str]:
    """What an assigned word holds when that is known: its literal text, with a number for each
    arithmetic part (``$(( ))``, ``${#x}``); None when it depends on the run."""
    out = []
    for kind, text in word.parts:
        if kind in LITERAL:
            out.append(text)
        elif kind == "arith" or (kind == "var" and text.startswith("${#") and "[" not in text):
            out.append(NUMBER)
        else:
            return None
    return "".join(out)


def identifiers(text: str) -> Set[str]:
    """The names an arithmetic expression may read: every identifier, and ``$1``/``$@`` as "1"/"@"."""
    names: Set[str] = set()
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in chars.NAME_START:
            end = chars.name_end(text, i)
            names.add(text[i:end])
            i = end
            continue
        if c == "$":  # $1 ${10} $@ ${*}: \$\{?([0-9]+|[@*])
            k = i + 2 if text.startswith("{", i + 1) else i + 1
            end = chars.span(text, k, chars.DIGITS)
            if end == k and text[k : k + 1] in ("@", "*"):
                end = k + 1
            if end > k:
                names.add(text[k:end])
                i = end
                continue
        i += 1
    return names


def subscript(name: str) -> Optional[str]:
    """The subscript of ``a[SUB]`` (evaluated when the name is used), or None when there is none."""
    start = name.find("[")
    return name[start + 1 : name.rfind("]") if name.endswith("]") else len(name)] if start >= 0 else None


class Variables:
    """Assignments and evaluations seen in one command (across its nested code)."""

    def __init__(self) -> None:
        self.values: Dict[str, List[Optional[str]]] = {}
        self.evaluated: List[tuple[str, str]] = []  # (name, where)
        self.integers: Set[str] = set()
        self.arrays: Set[str] = set()
        self.compound: List[tuple[str, str]] = []  # (name, where): a declare value that may be "( ... )"
        self.code: List[str] = []  # evaluations that run code whatever the values

    def assign(self, name: str, value: Optional[str]) -> None:
        """``name`` may be given ``value`` (None: not known statically)."""
        self.values.setdefault(name, []).append(value)

    def evaluate(self, names: Iterable[str], where: str) -> None:
        """The values of ``names`` are evaluated as arithmetic (or used as variable names)."""
        self.evaluated.extend((name, where) for name in names)

    def expression(self, text: str, where: str, expanded: bool = True) -> None:
        """``text`` is evaluated as arithmetic. ``expanded``: its ``$( )`` were run before (their
        output lands in the expression); otherwise (a quoted word) a ``$`` or backquote is code."""
        if "$(" in text or "`" in text or (not expanded and "$" in text and "[" in text):
            self.code.append(f"{where} evaluates {'command output' if expanded else 'quoted code'} as arithmetic")
        self.evaluate(identifiers(text), where)

    def name_use(self, text: str, where: str) -> None:
        """``text`` (literal) is used as a variable name: its subscript, if any, is evaluated."""
        inner = subscript(text)
        if inner is not None:
            self.expression(inner, where, expanded=False)

    def parameter(self, text: str, assign: Callable[[str, Optional[str]], None]) -> None:
        """``${...}``: indirection, ``@P``, subscripts, substring offsets and ``:=`` defaults."""
        inner = text[2:-1]
        if inner.startswith("!"):
            end = param_name_end(inner, 1)
            rest = inner[end:] if end > 1 else ""
            if end > 1 and rest not in ("*", "@", "[@]", "[*]"):
                self.evaluate([inner[1:end]], "${!name}")
            inner = inner[1:]
        end = param_name_end(inner, 0)
        if end == 0:
            return
        name, rest = inner[:end], inner[end:]
        if rest.startswith("["):
            end = rest.find("]")
            self.expression(rest[1 : end if end > 0 else len(rest)], f"the subscript of {name}")
            rest = rest[end + 1 :] if end > 0 else ""
        if rest.startswith("@P"):
            self.evaluate([name], "${name@P}")
        elif rest.startswith(":") and rest[1:2] not in ("-", "=", "?", "+"):
            self.expression(rest[1:], "a substring offset")
        elif "$((" in rest or "$[" in rest or "${" in rest:
            self.evaluate(identifiers(rest), "an expansion inside ${...}")
        if rest.startswith((":=", "=")):
            value = rest[2:] if rest.startswith(":=") else rest[1:]
            assign(name, None if "$" in value or "`" in value else value)

    def arith_word(self, word: Word, where: str) -> None:
        """``word`` is expanded, then evaluated as arithmetic (``let``, ``[[ -eq ]]``, ``declare -i``)."""
        literal = "".join(text for kind, text in word.parts if kind in LITERAL)
        self.expression(literal, where, expanded=False)
        self._expanded(word, where)

    def name_word(self, word: Word, where: str) -> None:
        """``word`` is expanded, then used as a variable name (``printf -v``, ``read``, ``test -v``)."""
        text = word.literal()
        if text is not None:
            self.name_use(text, where)
        else:
            self._expanded(word, where)

    def _expanded(self, word: Word, where: str) -> None:
        for kind, text in word.parts:
            if kind == "var":
                self.evaluate(identifiers(text) if text.startswith("${") else [text[1:]], where)
            elif kind in ("sub", "psub", "found", "input"):
                self.code.append(f"{where} evaluates a value only known at run time")

    def tainted(self) -> Set[str]:
        """Names whose value the command may have set to something that runs code when evaluated."""
        bad = set(ALWAYS)
        pending = {name: values for name, values in self.values.items() if name not in bad}
        changed = True
        while changed:
            changed = False
            for name, values in list(pending.items()):
                if any(v is None or not _safe(v) or identifiers(v) & bad for v in values):
                    bad.add(name)
                    del pending[name]
                    changed = True
        return bad

    def verdicts(self) -> List[str]:
        """Why the command's effect cannot be told from its text, one reason per evaluation."""
        out = list(self.code)
        bad = self.tainted()
        for name in self.integers:
            for value in self.values.get(name, ()):
                if value is None or identifiers(value) & bad or not _safe(value):
                    out.append(f"{name} is declared -i, so assigning it evaluates its value as arithmetic")
                    break
        for name, where in self.evaluated:
            if name in bad or name.isdigit():
                shown = f"${name}" if name in ("@", "*") or name.isdigit() else name
                out.append(f"{where} evaluates {shown}, whose value this command sets (a subscript in it runs code)")
        out.extend(f"{where}: {name} may be an array, so a value in parentheses is evaluated as code"
                   for name, where in self.compound if name in self.arrays)
        return list(dict.fromkeys(out))


def _safe(value: str) -> bool:
    """``value`` is plain arithmetic text: ``[A-Za-z0-9_ \\t+\\-*/%<>=!&|^~?:,().#]*\\Z``."""
    return all(c in _SAFE_CHARS for c in value)
