"""Garbage on stdin never crashes a hook (exit 0, no output or documented JSON), and the gate
never lets a write through on it: a Write whose fields are garbage, or any Bash command from a
grammar of write forms aimed at ``.baton/``, is denied under every kind of step."""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List

import hookkit
import pytest
from conftest import Hook, JobDir, Payloads
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from hooks import adapter

EVENTS = sorted(adapter.MODULES)
PLANS: Dict[str, Any] = {
    "seed": {"steps": ["a", "b"]},
    "restricted": {"limits": {"calls_without_record": 2}, "protect": ["secrets/**"],
                   "steps": [{"id": "build", "writes": ["src/**"], "bash": ["make *"]}, "b"]},
    "waiting": {"steps": [{"id": "design", "approval": True}, "b"]},
}
FAILED_GATE = "baton's gate could not check this call"

scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=40)
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=12), inner, max_size=4), max_leaves=16)
FIELDS = ["session_id", "transcript_path", "cwd", "hook_event_name", "prompt_id", "permission_mode", "effort",
          "tool_name", "tool_input", "tool_use_id", "tool_response", "error", "prompt", "source", "agent_id",
          "stop_hook_active", "last_assistant_message", "is_interrupt", "duration_ms"]


def objects(event: str) -> st.SearchStrategy[Dict[str, Any]]:
    """JSON objects shaped a little like a payload: known keys with random values, random keys."""
    keys = st.sampled_from(FIELDS) | st.text(max_size=12)
    return st.dictionaries(keys, json_values, max_size=10).map(lambda d: {**d, "hook_event_name": event})


def check_garbage_answer(event: str, result: hookkit.Result) -> None:
    if event == "PreToolUse":
        assert result.denied, "the gate let garbage through"
    else:
        assert result.out == "", result.out


@pytest.mark.parametrize("event", EVENTS)
@settings(max_examples=60)
@given(raw=st.binary(max_size=300))
def test_random_bytes(event: str, raw: bytes, inproc: Hook, job: JobDir) -> None:
    job.plan(PLANS["seed"])
    assume(not _is_payload(raw, event))
    check_garbage_answer(event, inproc(event, raw))


def _is_payload(raw: bytes, event: str) -> bool:
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return False
    return isinstance(data, dict) and data.get("hook_event_name") == event


@pytest.mark.parametrize("event", EVENTS)
@settings(max_examples=60)
@given(value=json_values)
def test_random_json_values(event: str, value: Any, inproc: Hook, job: JobDir) -> None:
    job.plan(PLANS["seed"])
    assume(not (isinstance(value, dict) and value.get("hook_event_name") == event))
    check_garbage_answer(event, inproc(event, json.dumps(value)))


@pytest.mark.parametrize("event", EVENTS)
@pytest.mark.parametrize("wrong", ["", "pretooluse", "PostToolBatch", "Stop ", None, 3])
def test_a_wrong_event_name(event: str, wrong: Any, inproc: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan(PLANS["seed"])
    data = payload("pre_tool_use_write", hook_event_name=wrong)
    result = inproc(event, data)
    check_garbage_answer(event, result)
    if event == "PreToolUse":
        assert "expected a PreToolUse payload" in result.reason


@pytest.mark.parametrize("plan", sorted(PLANS))
@pytest.mark.parametrize("event", EVENTS)
@settings(max_examples=50)
@given(data=st.data())
def test_objects_with_random_fields_never_crash_a_hook(event: str, plan: str, data: st.DataObject, inproc: Hook,
                                                       job: JobDir) -> None:
    """Well-formed JSON with the right event name and random fields: a documented answer, and no
    internal failure when the fields the hook needs have the right types."""
    job.plan(PLANS[plan])
    body = data.draw(objects(event))
    result = inproc(event, body)  # checks the answer's shape
    tool_ok = isinstance(body.get("tool_name"), str) and isinstance(body.get("tool_input"), dict)
    if event == "PreToolUse" and tool_ok:
        assert FAILED_GATE not in result.reason, result.reason
    if event == "PreToolUse" and not tool_ok:
        assert result.denied
    if event != "PreToolUse":
        assert not job.layout.errors.exists(), job.layout.errors.read_text()


def test_huge_strings(inproc: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan(PLANS["restricted"])
    big = "x" * 3_000_000
    write = payload("pre_tool_use_write", tool_input={"file_path": job.path(".baton/" + big), "content": big})
    assert inproc("PreToolUse", write).denied
    bash = payload("pre_tool_use_bash", tool_input={"command": "echo " + big + " > .baton/plan.json"})
    assert inproc("PreToolUse", bash).denied
    for event, name in (("PostToolUse", "post_tool_use_bash"), ("PostToolUseFailure", "post_tool_use_failure_bash"),
                        ("Stop", "stop"), ("SessionStart", "session_start_startup")):
        data = payload(name, last_assistant_message=big, error=big, tool_input={"command": big}, session_id=big[:100])
        result = inproc(event, data)
        assert len(result.out) < 4000
    line = job.layout.events.read_text().splitlines()[-1]
    assert len(line) < 1000


GARBAGE_STDIN = {
    "empty": b"",
    "bad json": b"{bad json",
    "array": b"[]",
    "null": b"null",
    "not utf-8": b"\xff\xfe{}",
    "nested": b"[" * 100_000 + b"]" * 100_000,
    "over 8 MB": b'{"hook_event_name": "PreToolUse", "x": "' + b"y" * (9 * 1024 * 1024) + b'"}',
}


@pytest.mark.parametrize("event", EVENTS)
@pytest.mark.parametrize("name", sorted(GARBAGE_STDIN))
def test_garbage_through_the_real_command(event: str, name: str, subproc: Hook, job: JobDir) -> None:
    job.plan(PLANS["restricted"])
    result = subproc(event, GARBAGE_STDIN[name])
    check_garbage_answer(event, result)


# --- the gate never lets a write to .baton through ------------------------------------------

NOT_A_PATH = st.one_of(st.none(), st.integers(), st.booleans(), st.floats(), st.lists(st.text(max_size=5)),
                       st.dictionaries(st.text(max_size=5), st.text(max_size=5)), st.just(""),
                       st.text(" \t\n", min_size=1, max_size=4),
                       st.text(max_size=20).map(lambda s: s + "\x00" + ".baton"))


@st.composite
def baton_targets(draw: Any, project: str) -> str:
    """Paths that land in .baton/ (absolute, as Claude Code sends them), spelled many ways."""
    name = draw(st.sampled_from(["plan.json", "steps.jsonl", "state.json", "counters.json", "x", "", "new/deep.txt"]))
    folder = draw(st.sampled_from([".baton", ".BATON", ".Baton", "\uff0ebaton", ".\uff42aton", "src/../.baton",
                                   "./.baton", ".baton/.", "src/cfg", ".baton/../.baton"]))
    slash = draw(st.sampled_from(["/", "//", "/./"]))
    return f"{project}{slash}{folder}/{name}".rstrip("/")


@pytest.mark.parametrize("plan", sorted(PLANS))
@settings(max_examples=150)
@given(data=st.data())
def test_a_write_with_garbage_fields_is_denied(plan: str, data: st.DataObject, inproc: Hook, job: JobDir,
                                               payload: Payloads) -> None:
    job.plan(PLANS[plan])
    (job.project / "src").mkdir(exist_ok=True)
    if not (job.project / "src" / "cfg").is_symlink():
        (job.project / "src" / "cfg").symlink_to("../.baton")
    tool = data.draw(st.sampled_from(["Write", "Edit", "NotebookEdit"]))
    key = "notebook_path" if tool == "NotebookEdit" else "file_path"
    target = data.draw(NOT_A_PATH | baton_targets(str(job.project)))
    extra = data.draw(st.dictionaries(st.sampled_from(["content", "old_string", "new_string", "replace_all", "x"]),
                                      json_values, max_size=3))
    body = payload("pre_tool_use_write", tool_name=tool, tool_input={**extra, key: target})
    for field in data.draw(st.lists(st.sampled_from(["session_id", "transcript_path", "permission_mode", "effort",
                                                     "tool_use_id", "prompt_id", "agent_id"]), max_size=4)):
        body[field] = data.draw(json_values)
    if data.draw(st.booleans()):
        del body["cwd"]
    result = inproc("PreToolUse", body)
    assert result.denied, f"{tool} {target!r} was let through"


def _quoted(draw: Any, path: str) -> str:
    style = draw(st.sampled_from(["plain", "single", "double", "escaped"]))
    if style == "single" and "$" not in path:  # '$PWD/...' is a literal folder named $PWD
        return f"'{path}'"
    if style == "double":
        return f'"{path}"'
    if style == "escaped":
        return path.replace(".", "\\.", 1)
    return path


@st.composite
def baton_writes(draw: Any) -> str:
    """A Bash command, from a grammar of write forms, that writes somewhere under .baton/."""
    name = draw(st.sampled_from(["plan.json", "steps.jsonl", "state.json", "x.txt"]))
    folder = draw(st.sampled_from([".baton", "./.baton", ".BATON", "src/../.baton", "$PWD/.baton", "${PWD}/.baton",
                                   "src/cfg"]))
    target = _quoted(draw, f"{folder}/{name}")
    form = draw(st.sampled_from([
        "echo x > {t}", "echo x >> {t}", "echo x >| {t}", "echo x &> {t}", "ls 2> {t}", "printf '%s' x 1> {t}",
        "echo x | tee {t}", "echo x | tee -a {t}", "sed -i s/a/b/ {t}", "cp /etc/hostname {t}", "mv {t} /tmp/gone",
        "rm -f {t}", "rm -rf {t}", "truncate -s 0 {t}", "dd if=/dev/zero of={t}", "touch {t}", "ln -sf /tmp/x {t}",
        "python3 -c \"open('{u}', 'w').write('x')\"", "bash -c 'echo x > {u}'", "sh -c \"rm -f {u}\"",
        "cat > {t} <<'EOF'\n{{}}\nEOF", "cat <<EOF > {t}\nx\nEOF", "eval 'echo x > {u}'",
        "cd .baton && echo x > {n}", "cd .baton; rm -f {n}", "(cd .baton && truncate -s0 {n})",
        "exec 3> {t}", "find .baton -name '{n}' -delete", "chmod 000 {t}",
    ]))
    if "python3 -c" in form and folder == "src/cfg":
        folder = ".baton"  # code run by an interpreter is only refused when its text names .baton
    command = form.format(t=target, u=f"{folder}/{name}".replace("${PWD}", ".").replace("$PWD", "."), n=name)
    prefix: str = draw(st.sampled_from(["", "true && ", "ls; ", "FOO=1 ", "cd . && ", "{ ", "if true; then "]))
    closer = {"{ ": "; }", "if true; then ": "; fi"}
    suffix: str = closer.get(prefix) or draw(st.sampled_from(["", " 2>/dev/null", " || true", " &", "; ls"]))
    return prefix + str(command) + suffix


@pytest.mark.parametrize("plan", sorted(PLANS))
@settings(max_examples=200)
@given(command=baton_writes())
def test_bash_writes_aimed_at_baton_are_denied(plan: str, command: str, inproc: Hook, job: JobDir,
                                               payload: Payloads) -> None:
    job.plan(PLANS[plan])
    (job.project / "src").mkdir(exist_ok=True)
    if not (job.project / "src" / "cfg").is_symlink():
        (job.project / "src" / "cfg").symlink_to("../.baton")
    result = inproc("PreToolUse", payload("pre_tool_use_bash", tool_input={"command": command}))
    assert result.denied, f"{command!r} was let through"
    assert FAILED_GATE not in result.reason


def test_the_grammar_reaches_every_form() -> None:
    """The property above is only as strong as its grammar: make sure examples vary."""
    seen: List[str] = []

    @settings(max_examples=300, database=None)
    @given(command=baton_writes())
    def collect(command: str) -> None:
        seen.append(command)

    collect()
    assert len(set(seen)) > 200
    for needle in ("tee", "sed -i", "<<", "bash -c", "cd .baton", "dd if", ">|", "&>"):
        assert any(needle in c for c in seen), needle
    assert os.sep == "/"
