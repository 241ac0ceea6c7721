"""What the hook tests share: payload fixtures, the output checker, the two ways to run a hook.

A hook runs either in this process (``hooks.adapter.run``, answer serialised as ``main`` does) or
as Claude Code would start it: the ``[command, *args]`` that ``hooks/hooks.json`` gives for the
event, from a copy of the plugin in a folder named ``relay-copy``, with the payload on stdin and
``CLAUDE_PROJECT_DIR``/``CLAUDE_CODE_SESSION_ID``/``CLAUDE_PLUGIN_ROOT`` in the environment.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Set, Union

from hooks import adapter

FIXTURES = Path(__file__).resolve().parent / "fixtures"
PROJECT_MARK = "/path/to/project"
HOME_MARK = "/path/to/home"
SESSION = "ad35365a-1c2e-4f7b-9a51-0d6b8e2f4c13"
TOOL_EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure")

# Documented output keys per event (claude-code-host.md section 4): top level, then hookSpecificOutput.
TOP_KEYS: Dict[str, Set[str]] = {
    "SessionStart": {"hookSpecificOutput", "systemMessage"},
    "PreToolUse": {"hookSpecificOutput"},
    "PostToolUse": {"hookSpecificOutput", "systemMessage"},
    "PostToolUseFailure": {"hookSpecificOutput", "systemMessage"},
    "Stop": {"hookSpecificOutput", "systemMessage"},
    "UserPromptSubmit": {"continue", "stopReason", "hookSpecificOutput"},
    "SessionEnd": set(),
    "StopFailure": set(),
}
SPECIFIC_KEYS: Dict[str, Set[str]] = {
    "SessionStart": {"hookEventName", "additionalContext"},
    "PreToolUse": {"hookEventName", "permissionDecision", "permissionDecisionReason", "additionalContext",
                   "updatedInput"},
    "PostToolUse": {"hookEventName", "additionalContext"},
    "PostToolUseFailure": {"hookEventName", "additionalContext"},
    "UserPromptSubmit": {"hookEventName", "additionalContext"},
    "Stop": {"hookEventName", "additionalContext"},
}
REQUIRED_SPECIFIC: Dict[str, Set[str]] = {
    "SessionStart": {"hookEventName", "additionalContext"},
    "PreToolUse": {"hookEventName", "permissionDecision", "permissionDecisionReason"},
    "PostToolUse": {"hookEventName", "additionalContext"},
    "PostToolUseFailure": {"hookEventName", "additionalContext"},
    "UserPromptSubmit": {"hookEventName", "additionalContext"},
    "Stop": {"hookEventName", "additionalContext"},
}

Payload = Dict[str, Any]


def load(name: str, project: Path, home: Path, **changes: Any) -> Payload:
    """The recorded payload ``fixtures/<name>.json`` with the placeholders made real."""
    text = (FIXTURES / f"{name}.json").read_text(encoding="utf-8")
    text = text.replace(PROJECT_MARK, str(project)).replace(HOME_MARK, str(home))
    data: Payload = json.loads(text)
    data.update(changes)
    return data


def fixture_names() -> List[str]:
    return sorted(p.stem for p in FIXTURES.glob("*.json"))


def event_of(name: str) -> str:
    """``pre_tool_use_write`` -> ``PreToolUse``, from the fixture file itself."""
    data = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    return str(data["hook_event_name"])


def check_output(event: str, stdout: str, payload: Any = None) -> Optional[Dict[str, Any]]:
    """Assert ``stdout`` is empty or one JSON object with only the keys documented for ``event``
    and the right ``hookEventName``; return the object (``None`` when empty). ``payload`` (the
    call's JSON, when known) lets a PreToolUse rewrite be checked against the call it answers."""
    if stdout == "":
        return None
    answer = json.loads(stdout)
    assert isinstance(answer, dict), stdout
    assert set(answer) <= TOP_KEYS[event], f"undocumented keys for {event}: {set(answer) - TOP_KEYS[event]}"
    if "continue" in answer or "stopReason" in answer:  # a prompt answered by baton: stopped, no model call
        assert answer.get("continue") is False and isinstance(answer.get("stopReason"), str), answer
        assert answer["stopReason"].startswith("baton"), answer
        assert "hookSpecificOutput" not in answer, answer
    if "systemMessage" in answer:  # shown to the person, never to the model: an alert, or a store it cannot write
        message = answer["systemMessage"]
        assert isinstance(message, str) and message.startswith(("baton alert: ", "baton cannot write ")), answer
    specific = answer.get("hookSpecificOutput")
    if event in SPECIFIC_KEYS and event != "UserPromptSubmit" and set(answer) != {"systemMessage"}:
        assert isinstance(specific, dict), answer
    if specific is not None:
        assert isinstance(specific, dict), answer
        assert specific.get("hookEventName") == event, answer
        assert set(specific) <= SPECIFIC_KEYS[event], f"undocumented keys: {set(specific) - SPECIFIC_KEYS[event]}"
        assert REQUIRED_SPECIFIC[event] <= set(specific), answer
        for key in ("additionalContext", "permissionDecisionReason"):
            if key in specific:
                assert isinstance(specific[key], str) and specific[key].strip(), answer
        if event == "PreToolUse":
            check_pre_tool_use(specific, payload if isinstance(payload, dict) else None)
    return answer


def check_pre_tool_use(specific: Mapping[str, Any], payload: Optional[Mapping[str, Any]] = None) -> None:
    """The PreToolUse answers baton gives, and no other. ``deny`` or ``defer`` alone. ``allow`` or ``ask`` only
    with ``updatedInput`` (without it baton would skip or take over the person's prompt; alone,
    Claude Code would check its rules on the rewrite), only for Bash, and holding the call's own
    input with its command replaced by one of the sandbox's two forms: the original command run in
    bubblewrap (:func:`store.sandbox.rewrite.sandboxed`, rebuilt here from its parts and compared
    whole) or a plain ``baton`` invocation by absolute paths (:func:`store.gate.baton_calls.launcher`).
    With ``payload``, the rewrite must hold exactly the call's command and fields."""
    decision = specific["permissionDecision"]
    assert decision in ("deny", "ask", "allow", "defer"), specific
    reason = str(specific["permissionDecisionReason"])
    if decision in ("deny", "defer"):  # defer: a call parked until a person's approval (store.gate.parking)
        assert reason.startswith("baton"), specific
        assert "updatedInput" not in specific, specific
        return
    # what a person is asked about leads with the model's command, in plain words (no shell internals)
    assert reason.startswith("`") and "__baton" not in reason and "bwrap" not in reason, specific
    new = specific.get("updatedInput")
    assert isinstance(new, dict) and isinstance(new.get("command"), str), specific
    original = sandbox_original(new["command"]) or launcher_original(new["command"])
    assert original is not None, f"not a form the sandbox emits: {new['command'][:300]!r}"
    if payload is None:
        return
    assert payload.get("tool_name") == "Bash", f"a rewrite of {payload.get('tool_name')}"
    old = payload.get("tool_input") or {}
    assert {k: v for k, v in new.items() if k != "command"} == {k: v for k, v in old.items() if k != "command"}, (
        "the rewrite changed the call's other fields", new, old)
    assert original == old.get("command") or _same_baton_call(original, str(old.get("command"))), (original, old)
    assert reason.startswith(f"`{str(old.get('command'))[:40]}"), (reason, old)
    # short enough for a person to read: at most two lines and 300 characters beyond the command
    assert new["command"].count("\n") <= str(old.get("command")).count("\n") + 2, new["command"]
    assert len(new["command"]) <= len(str(old.get("command"))) + 300, new["command"]


def sandbox_original(line: str) -> Optional[str]:
    """The model's command inside ``line`` when ``line`` is exactly what ``rewrite.sandboxed`` makes
    of it (a script under ``.baton/run/``), and the script it sources is exactly what
    ``rewrite.script`` makes: bwrap, baton's proxy, scope or broker started by absolute path, the
    launcher of the job's /tmp (``store/sandbox/scratch.py``) before the scope, the proxy or bwrap."""
    import shlex

    from store.sandbox import rewrite

    original = rewrite.original_of(line)
    found = re.fullmatch(r"\. '(/[^']*/\.baton/run/[^/']+)\.sh' 9<<'\w+'", line.partition("\n")[0])
    if found is None or line != rewrite.sandboxed(original, found.group(1) + ".sh"):
        return None
    base = found.group(1)
    try:
        text = Path(base + ".sh").read_text()
    except OSError:
        return None
    launched = re.search(r"__baton_snapshot=\$__baton_s (.*?) --args 7 --chdir ", text)
    if launched is None:
        return None
    launch = shlex.split(launched.group(1))
    rest = launch
    if rest[1:4] == ["-I", "-S", rest[3] if len(rest) > 3 else ""] and rest[3].endswith("/store/gate/broker.py"):
        if rest[4:6] != [base + ".broker", "--"] or not os.path.isabs(rest[0]):
            return None
        rest = rest[6:]
    after = _after_scratch(rest)  # the job's /tmp is mounted first, then the proxy or bwrap starts
    if after is None:
        return None
    if len(after) > 4 and after[1:3] == ["-I", "-S"] and after[3].endswith("/store/sandbox/landlock_scope.py"):
        if not os.path.isabs(after[0]):  # the abstract-socket scope (host network), before bwrap
            return None
        after = after[4:]
    if not after or not os.path.isabs(after[0]):
        return None
    if len(after) > 1 and not (after[1:4] == ["-I", "-S", after[3]] and after[3].endswith("/store/sandbox/netproxy.py")
                               and after[-1] == "--"):
        return None
    return original if text == rewrite.script(launch, base + ".args", base + ".started") else None


def _after_scratch(launch: List[str]) -> Optional[List[str]]:
    """What follows the overlay launcher of the job's /tmp (``store/sandbox/scratch.py [--scope] LOWER UPPER
    WORK VIEW ... --``), when ``launch`` starts with it; ``None`` when it starts with it wrongly."""
    if len(launch) < 4 or launch[1:3] != ["-I", "-S"] or not launch[3].endswith("/store/sandbox/scratch.py"):
        return launch
    if "--" not in launch:
        return None
    at = launch.index("--")
    layers = launch[5:at] if launch[4:5] == ["--scope"] else launch[4:at]  # --scope: it puts on the socket scope too
    if not layers or len(layers) % 4 or any(layers[i] not in ("/tmp", "/var/tmp") for i in range(0, len(layers), 4)):
        return None
    return launch[at + 1:] if all(os.path.isabs(w) for w in layers) else None


def launcher_original(line: str) -> Optional[str]:
    """``baton ARGS`` when ``line`` is ``baton_calls.launcher(ARGS)``: this Python's absolute path,
    ``-I -S``, a plugin's ``bin/baton``; only ``baton once`` gets an environment (its sandbox)."""
    import shlex

    from store.sandbox import rewrite

    try:
        words = shlex.split(line)
    except ValueError:
        return None
    env = {}
    while words and re.fullmatch(r"[A-Z_]+=.*", words[0]):
        name, _, value = words.pop(0).partition("=")
        env[name] = value
    if len(words) < 4 or words[1:3] != ["-I", "-S"] or not words[3].endswith("/bin/baton"):
        return None
    args = words[4:]
    if env and (set(env) != {"BATON_ONCE_PREFIX"} or args[:1] != ["once"]
                or not re.search(r"/\.baton/run/[^/]+\.args$", env["BATON_ONCE_PREFIX"])):
        return None
    if line != " ".join([*(f"{k}={rewrite.quote(v)}" for k, v in env.items()),
                         *(rewrite.quote(w) for w in words)]) or not os.path.isabs(words[0]):
        return None
    return "baton " + " ".join(rewrite.quote(a) for a in args)


def _same_baton_call(rewritten: str, original: str) -> bool:
    from store.gate import baton_calls

    args = baton_calls.invocation(original)
    return args is not None and baton_calls.invocation(rewritten) == args


@dataclass(frozen=True)
class Result:
    """One hook call: exit code, stdout, stderr and the checked answer (``None``: no output)."""

    code: int
    out: str
    err: str
    answer: Optional[Dict[str, Any]]

    @property
    def reason(self) -> str:
        """The deny reason (PreToolUse), what a prompt stopped with (UserPromptSubmit), or why the
        Stop hook sends the model back (Stop), else ''."""
        if self.answer is None:
            return ""
        specific = self.answer.get("hookSpecificOutput") or {}
        if self.answer.get("continue") is False:
            return str(self.answer.get("stopReason") or "")
        if specific.get("hookEventName") == "Stop":
            return str(specific.get("additionalContext") or "")
        return str(specific.get("permissionDecisionReason") or "")

    @property
    def stopped(self) -> bool:
        """A prompt baton answered itself: it stops there, with no model call."""
        return (self.answer or {}).get("continue") is False

    @property
    def context(self) -> str:
        if self.answer is None:
            return ""
        return str((self.answer.get("hookSpecificOutput") or {}).get("additionalContext") or "")

    @property
    def denied(self) -> bool:
        specific = (self.answer or {}).get("hookSpecificOutput") or {}
        return specific.get("permissionDecision") == "deny"

    @property
    def decision(self) -> str:
        """deny, ask or allow; '' when the hook said nothing (Claude Code's own flow goes on)."""
        return str(((self.answer or {}).get("hookSpecificOutput") or {}).get("permissionDecision") or "")

    @property
    def command(self) -> str:
        """The command Claude Code runs: the rewritten one when the hook gave one ('' otherwise)."""
        specific = (self.answer or {}).get("hookSpecificOutput") or {}
        return str((specific.get("updatedInput") or {}).get("command") or "")


def runs_after(result: Result, original: str) -> Optional[str]:
    """What Claude Code runs after this PreToolUse answer to a Bash call: nothing on deny, the
    rewritten command on ``updatedInput``, the original otherwise."""
    if result.denied:
        return None
    return result.command or original


def encode(payload: Union[Payload, bytes, str]) -> bytes:
    if isinstance(payload, bytes):
        return payload
    if isinstance(payload, str):
        return payload.encode("utf-8")
    return json.dumps(payload).encode("utf-8")


def run_in_process(event: str, payload: Union[Payload, bytes, str]) -> Result:
    """``hooks.adapter.run`` in this process (its environment is ``os.environ``)."""
    answer = adapter.run(event, encode(payload))
    out = "" if answer is None else json.dumps(answer)
    return Result(0, out, "", check_output(event, out, payload))


def _matches(matcher: Optional[str], name: str) -> bool:
    """Claude Code's matcher rule (host doc 6.3): empty or ``*`` matches all; a plain
    ``A|B`` list matches exact names; anything else is an unanchored regex search."""
    if not matcher or matcher == "*":
        return True
    if re.fullmatch(r"[A-Za-z0-9_| ]+", matcher):
        return name in [m.strip() for m in matcher.split("|")]
    return re.search(matcher, name) is not None


def _if_allows(rule: Optional[str], payload: Mapping[str, Any], home: str) -> bool:
    """The ``if`` permission-rule filter, for the ``Read(<glob>)`` rules baton uses."""
    if not rule:
        return True
    match = re.fullmatch(r"(\w+)\((.*)\)", rule)
    assert match, rule
    tool, pattern = match.groups()
    if payload.get("tool_name") != tool:
        return False
    path = str((payload.get("tool_input") or {}).get("file_path", ""))
    pattern = home + pattern[1:] if pattern.startswith("~") else pattern
    return fnmatch.fnmatchcase(path, pattern) or fnmatch.fnmatchcase(path, pattern.replace("**/", ""))


def commands_for(hooks_json: Path, event: str, payload: Mapping[str, Any], home: str) -> List[Dict[str, Any]]:
    """The command hook entries Claude Code would start for ``payload``, per ``hooks_json``."""
    config = json.loads(hooks_json.read_text(encoding="utf-8"))
    tool = payload.get("tool_name") if event in TOOL_EVENTS else None
    found = []
    for group in config["hooks"].get(event, []):
        if tool is not None and not _matches(group.get("matcher"), str(tool)):
            continue
        for entry in group["hooks"]:
            if tool is not None and not _if_allows(entry.get("if"), payload, home):
                continue
            found.append(entry)
    return found


def launch(entry: Mapping[str, Any], root: Path, stdin: bytes, env: Mapping[str, str], cwd: Path) -> Result:
    """Start one hooks.json entry exactly as written: ``[command, *args]``, placeholders substituted."""
    argv = [str(entry["command"])] + [str(a).replace("${CLAUDE_PLUGIN_ROOT}", str(root)) for a in entry["args"]]
    proc = subprocess.run(argv, input=stdin, capture_output=True, env=dict(env), cwd=str(cwd),
                          timeout=float(entry.get("timeout", 60)) + 20)
    out, err = proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8", "replace")
    return Result(proc.returncode, out, err, None)


def hook_env(base: Mapping[str, str], project: Path, root: Path, data: Path, session: str,
             path_prefix: str) -> Dict[str, str]:
    env = {k: v for k, v in base.items() if k != "PYTHONDONTWRITEBYTECODE"}  # as users run hooks: hooks/codecache.py on
    env.update(CLAUDE_PROJECT_DIR=str(project), CLAUDE_CODE_SESSION_ID=session, CLAUDE_PLUGIN_ROOT=str(root),
               CLAUDE_PLUGIN_DATA=str(data), CLAUDECODE="1", CLAUDE_CODE_ENTRYPOINT="sdk-cli",
               PATH=path_prefix + os.pathsep + base.get("PATH", ""))
    return env
