"""The person's permission rules, applied by baton to the model's ORIGINAL Bash command.

Once baton hands Claude Code a rewritten (sandboxed) command, Claude Code matches its rules against
the rewrite: an allow rule stops matching, and a deny rule is silently skipped when the hook also
says allow (both seen in 2.1.328). So baton decides itself, the way Claude Code would on the
original: a deny rule matching any simple command denies; an ask rule asks; otherwise the call is
allowed when every simple command is allowed by a rule, read-only, or (acceptEdits) a file command
inside the project; anything else asks. A command baton cannot read through (a substitution, a
variable, ``eval``, a function definition) is never allowed by a rule, and is denied when a denied
program's name appears anywhere in it.
"""

from __future__ import annotations

import os

from store.base import wild
from store.shell import simple_commands

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable, List, Optional, Sequence, Tuple

    from store.sandbox.claude_settings import PersonRules
    from store.shell import Parsed, Simple

    Also = Callable[[List[str]], Optional[str]]

WRAPPERS = frozenset(("sudo", "command", "builtin", "exec", "nohup", "time", "setsid", "stdbuf", "nice", "env",
                      "timeout", "xargs"))
READ_ONLY = frozenset((
    "ls", "cat", "head", "tail", "wc", "pwd", "echo", "true", "false", "id", "whoami", "uname", "basename",
    "dirname", "realpath", "readlink", "stat", "file", "du", "df", "tree", "cut", "tr", "nl", "od", "diff",
    "cmp", "comm", "md5sum", "sha1sum", "sha256sum", "sha512sum", "cksum", "which", "printenv", "seq", "jq",
    "column", "fold", "fmt", "expand", "unexpand", "rev", "tac", "paste", "join", "strings", "nproc", "free",
    "uptime", "grep", "egrep", "fgrep", "sort", "uniq", "find", "rg", "git"))
GIT_READ = frozenset(("status", "diff", "log", "show", "rev-parse", "ls-files", "blame", "describe", "shortlog",
                      "grep", "ls-tree", "cat-file", "rev-list", "merge-base", "show-ref", "whatchanged"))
# options that make a read-only program run code or write a file
UNSAFE_OPTIONS = {
    "sort": ("-o", "--output", "--compress-program"), "rg": ("--pre", "--pre-glob", "--hostname-bin"),
    "find": ("-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"),
    "git": ("-c", "--config-env", "--exec-path", "--upload-pack", "--output", "-o", "--ext-diff", "--textconv"),
    "diff": ("--to-file",), "grep": (), "tree": ("-o",), "du": (), "file": ("-C", "--compile", "-m", "--magic-file"),
}
ACCEPT_EDITS = frozenset(("mkdir", "touch", "rm", "rmdir", "mv", "cp", "sed"))


def rule_matches(pattern: str, text: str) -> bool:
    """Claude Code's forms: '' (all), ``cmd`` (exact), ``prefix:*`` (a prefix up to a word), globs with ``*``."""
    if pattern == "":
        return True
    if pattern.endswith(":*"):
        prefix = pattern[:-2].strip()
        return text == prefix or text.startswith(prefix + " ")
    if "*" in pattern:
        return wild.fnmatchcase(text, pattern) or (pattern.endswith(" *") and text == pattern[:-2])
    return text == pattern


def _bare(simple: Simple) -> List[str]:
    """The simple command's text, and again with wrappers and their options taken off, program by basename."""
    words = [w or "" for w in simple.words]
    texts = [simple.text]
    while words and _wrapper(os.path.basename(words[0])):
        words = words[1:]
        while words and (words[0].startswith("-") or "=" in words[0] or _duration(words[0])):
            words = words[1:]
        texts.append(" ".join(words))
    if words and "/" in words[0]:
        texts.append(" ".join([os.path.basename(words[0]), *words[1:]]))
    return texts


def _wrapper(name: str) -> bool:
    """A program that runs the command after it (as ``^(?:sudo|...)$`` matched: a final newline may follow)."""
    return name in WRAPPERS or (name.endswith("\n") and name[:-1] in WRAPPERS)


def _duration(word: str) -> bool:
    """``[0-9.]+[smhd]?``, as ``timeout`` and ``sleep`` take it."""
    digits = word[:-1] if word[-1:] in ("s", "m", "h", "d") else word
    return bool(digits) and all(c in "0123456789." for c in digits)


class Verdict:
    """``decision`` is deny, ask or allow; ``by_rule`` when an ask comes from one of the person's ask rules."""

    def __init__(self, decision: str, why: str, by_rule: bool = False) -> None:
        self.decision, self.why, self.by_rule = decision, why, by_rule


def _head(pattern: str) -> str:
    word = pattern.split()[0] if pattern.split() else ""
    word = word[:-2] if word.endswith(":*") else word
    return "" if "*" in word or "?" in word else word


def _named(head: str, command: str) -> bool:
    import re  # only for a command baton cannot read through

    plain = re.sub(r"[\\'\"]", "", command)
    return bool(head) and re.search(r"(?<![\w.-])" + re.escape(head) + r"(?![\w.-])", plain) is not None


def _hits(pattern: str, parsed: Parsed, command: str) -> bool:
    if any(rule_matches(pattern, text) for simple in parsed.commands for text in _bare(simple)):
        return True
    return bool(parsed.opaque) and (pattern == "" or _named(_head(pattern), command))


def _inside(word: str, cwd: str, project: str, home: str) -> bool:
    if word == "~" or word.startswith("~/"):
        word = home + word[1:]
    real = os.path.realpath(os.path.join(cwd, word))
    return real == project or real.startswith(project.rstrip("/") + "/") or real == "/dev/null"


def _paths_inside(words: Sequence[str], cwd: str, project: str, home: str) -> bool:
    return all(w.startswith("-") or ("/" not in w and not w.startswith("~") and w not in ("..", "."))
               or _inside(w, cwd, project, home) for w in words)


def _read_only(words: Sequence[str], cwd: str, project: str, home: str) -> bool:
    program, args = words[0], list(words[1:])
    if program == "cd":
        return len(args) <= 1 and _paths_inside(args, cwd, project, home)
    if program not in READ_ONLY:
        return False
    unsafe = UNSAFE_OPTIONS.get(program, ())
    if any(a == o or a.startswith(o + "=") or (o.startswith("--") and a.startswith(o)) for a in args for o in unsafe):
        return False
    if program == "git" and (not args or args[0] not in GIT_READ):
        return False
    if program == "uniq" and len([a for a in args if not a.startswith("-")]) > 1:
        return False  # `uniq IN OUT` writes OUT
    return _paths_inside(args, cwd, project, home)


def _allowed(simple: Simple, mode: str, person: PersonRules, where: Tuple[str, str, str],
             also: Optional[Also] = None) -> Optional[str]:
    for pattern, source in person.rules["allow"]:
        if not simple.assigns and rule_matches(pattern, simple.text):
            return f"your allow rule Bash({pattern}) ({source} settings)"
    if simple.assigns or any(w is None for w in simple.words):
        return None
    words = [w or "" for w in simple.words]
    if _read_only(words, *where):
        return "a read-only command"
    if also is not None and words[0] == "baton":
        found = also(words[1:])
        if found:
            return found
    if mode == "acceptEdits" and words[0] in ACCEPT_EDITS and words[0] != "sed" \
            and _paths_inside(words[1:], *where):
        return "a file command inside the project (acceptEdits)"
    return None


def judge(command: str, mode: str, person: PersonRules, cwd: str, project: str, home: str,
          also: Optional[Also] = None) -> Verdict:
    """What Claude Code would decide for ``command`` under the person's rules and permission ``mode``.
    ``also``: given the words after ``baton`` of a plain ``baton`` call, why it needs no prompt
    (``None``: it does), so baton's own calls count as allowed inside a chain as they do alone."""
    parsed = simple_commands(command)
    for pattern, source in person.rules["deny"]:
        if _hits(pattern, parsed, command):
            return Verdict("deny", f"it matches your Claude Code deny rule Bash({pattern}) ({source} settings)")
    for pattern, source in person.rules["ask"]:
        if _hits(pattern, parsed, command):
            return Verdict("ask", f"it matches your ask rule Bash({pattern}) ({source} settings)", by_rule=True)
    if mode == "bypassPermissions":
        return Verdict("allow", "bypassPermissions mode")
    for pattern, source in person.rules["allow"]:
        if pattern == "":  # `Bash` alone: every command, read through or not
            return Verdict("allow", f"your allow rule Bash ({source} settings)")
    where = (cwd, os.path.realpath(project), home)
    reasons = [] if parsed.opaque else [_allowed(s, mode, person, where, also) for s in parsed.commands]
    writes_ok = all(t is not None and _inside(t, *where) for t in parsed.redirects) and \
        (mode == "acceptEdits" or all(t == "/dev/null" for t in parsed.redirects))
    if parsed.commands and reasons and all(reasons) and writes_ok:
        return Verdict("allow", "; ".join(sorted(set(str(r) for r in reasons))))
    if mode == "plan":
        return Verdict("deny", "plan mode: only read-only commands run until the plan is accepted")
    why = parsed.opaque[0] if parsed.opaque else "not covered by your allow rules"
    return Verdict("deny" if mode == "dontAsk" else "ask", why)
