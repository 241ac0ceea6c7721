"""PreToolUse on Bash: a table of write forms and harmless commands, each with the decision it
must get under a step restricted to ``src/**`` and under an unrestricted (seed) step, in both gate
modes: sandboxed (a command that passes comes back rewritten to run in the sandbox) and the
fallback (the static gate alone decides)."""

from __future__ import annotations

from typing import Dict, List, NamedTuple, Tuple

import pytest
from conftest import Hook, JobDir, Payloads
from hookkit import sandbox_original

PLANS: Dict[str, Dict[str, object]] = {
    "restricted": {"steps": [{"id": "build", "writes": ["src/**"]}, "later"]},
    "unrestricted": {"steps": ["build", "later"]},
}

A = "allow"
# cause -> phrases the deny reason must hold (any one of the alternatives in a tuple)
WHY: Dict[str, List[Tuple[str, ...]]] = {
    "state": [("baton denied this command",), ("inside .baton/", "baton's own files"), ("baton record",)],
    "key": [("baton denied this command",), ("approval key",)],
    "writes": [("baton denied this command: step build may write only src/**",),
               ("outside them", "cannot tell what it writes"), ("add a `bash` pattern",)],
    "approve": [("baton denied `baton approve`: only a person approves a step",), ("/baton:approve",)],
    "init": [("baton denied `baton init`: this job already has a plan",), ("Ask them",)],
    "unknown": [("not a command the agent may run",), ("brief, status, log, record",)],
}
S, K, W, AP, IN = "state", "key", "writes", "approve", "init"
OP = "opaque"  # what it writes cannot be told: refused by the fallback in a restricted step, sandboxed otherwise
TMP = "tmp"  # the job's scratch /tmp: any step's own in the sandbox, outside the step's writes in the fallback


class Case(NamedTuple):
    command: str
    restricted: str
    unrestricted: str


CASES: List[Case] = [
    # redirections
    Case("echo x > .baton/plan.json", S, S),
    Case("echo x >> .baton/steps.jsonl", S, S),
    Case("echo x >| .baton/state.json", S, S),
    Case("echo x &> .baton/out.log", S, S),
    Case("ls 2> .baton/err.log", S, S),
    Case("echo x 1>.baton/plan.json", S, S),
    Case("echo x > ./.baton//plan.json", S, S),
    Case('echo x > "$PWD/.baton/plan.json"', S, S),
    Case("echo '{}' > .BATON/plan.json", S, S),
    Case("echo x > src/../.baton/plan.json", S, S),
    Case("echo x > src/cfg/plan.json", S, S),  # src/cfg -> ../.baton
    Case("exec 3>.baton/steps.jsonl", S, S),
    Case("echo x > ~/.config/baton/approval.key", K, K),
    Case("echo x > src/out.txt", A, A),
    Case("echo x >> src/out.txt", A, A),
    Case("echo x > docs/out.txt", W, A),
    Case("echo x > /tmp/baton-test-out.txt", TMP, A),
    # tee, sed -i
    Case("echo x | tee .baton/steps.jsonl", S, S),
    Case("echo x | tee -a .baton/steps.jsonl > /dev/null", S, S),
    Case("echo x | tee src/log.txt", A, A),
    Case("sed -i 's/a/b/' .baton/plan.json", S, S),
    Case("sed -i.bak -e 's/\"a\"/\"b\"/' .baton/plan.json", S, S),
    Case("sed -i 's/a/b/' src/a.py", A, A),
    Case("sed 's/a/b/' .baton/plan.json", A, A),
    # cp, mv, rm, truncate, dd, touch, ln
    Case("cp /tmp/plan.json .baton/plan.json", S, S),
    Case("cp -r src .baton/", S, S),
    Case("cp src/a.py src/b.py", A, A),
    Case("cp src/a.py docs/b.py", W, A),
    Case("mv .baton/steps.jsonl /tmp/steps.jsonl", S, S),
    Case("mv src/a.py src/c.py", A, A),
    Case("rm -rf .baton", S, S),
    Case("rm .baton/steps.jsonl", S, S),
    Case("rm -f src/a.py", A, A),
    Case("truncate -s 0 .baton/steps.jsonl", S, S),
    Case("dd if=/dev/zero of=.baton/steps.jsonl bs=1 count=1", S, S),
    Case("touch .baton/plan.json", S, S),
    Case("ln -sf /tmp/x .baton/plan.json", S, S),
    Case("ln .baton/steps.jsonl src/notes.txt", S, S),  # a hard link would make src/ a door into the ledger
    Case("cp -l .baton/steps.jsonl src/notes.txt", S, S),
    Case("ln -s ../.baton src/cfg2 && echo x > src/cfg2/plan.json", S, S),
    # interpreters and inline code
    Case("python3 -c \"open('.baton/plan.json', 'w').write('{}')\"", S, S),
    Case("python3 -c 'print(1)'", OP, A),
    Case("perl -i -pe 's/a/b/' .baton/plan.json", S, S),
    Case("node -e \"require('fs').writeFileSync('.baton/x', '')\"", S, S),
    # heredocs
    Case("cat <<'EOF' > .baton/plan.json\n{\"steps\": [\"a\"]}\nEOF", S, S),
    Case("cat > .baton/plan.json <<EOF\n{}\nEOF", S, S),
    Case("cat <<EOF > src/gen.py\nx = 1\nEOF", A, A),
    # cd
    Case("cd .baton && echo x > plan.json", S, S),
    Case("cd .baton; rm -f steps.jsonl", S, S),
    Case("(cd .baton && truncate -s0 steps.jsonl)", S, S),
    Case("cd src && echo x > out.txt", A, A),
    Case("cd /tmp && echo x > out.txt", TMP, A),
    # shells, eval, variables, substitutions
    Case("bash -c 'echo x > .baton/plan.json'", S, S),
    Case('sh -c "rm -rf .baton"', S, S),
    Case('eval "echo x > .baton/plan.json"', S, S),
    Case('f=.baton/plan.json; echo x > "$f"', S, S),
    Case("echo x > $(echo .baton)/plan.json", S, S),
    Case("find .baton -name '*.json' -delete", S, S),
    # harmless: must pass everywhere
    Case("echo hi >&2", A, A),
    Case("echo out; echo err >&2", A, A),
    Case("grep -rn TODO src 2>/dev/null", A, A),
    Case("echo hi > /dev/null", A, A),
    Case("ls", A, A),
    Case("ls -la .baton", A, A),
    Case("cat .baton/plan.json", A, A),
    Case("git status", A, A),
    Case("git diff --stat", A, A),
    Case("git log --oneline -5", A, A),
    Case("pwd && wc -l src/a.py", A, A),
    Case("baton brief", A, A),
    Case("baton status", A, A),
    Case("baton log -n 5", A, A),
    Case('baton record a done "x > y"', A, A),
    Case('baton record build done "wrote src/x; tests pass"', A, A),
    # baton itself
    Case("baton approve build", AP, AP),
    Case("baton approve", AP, AP),
    Case("echo ok && baton approve build", AP, AP),
    Case("baton init --force x y", IN, IN),
    Case("baton init a b", IN, IN),
    Case("baton frobnicate", "unknown", "unknown"),
    # the approval key, read or copied
    Case("cat ~/.config/baton/approval.key", K, K),
    Case("cp $HOME/.config/baton/approval.key /tmp/k", K, K),
]


def build_tree(job: JobDir) -> None:
    (job.project / "src").mkdir(exist_ok=True)
    (job.project / "src" / "a.py").write_text("a = 1\n")
    if not (job.project / "src" / "cfg").is_symlink():
        (job.project / "src" / "cfg").symlink_to("../.baton")


def check(denied: bool, reason: str, want: str, command: str, sandboxed: bool = False) -> None:
    if want in (OP, TMP):
        want = A if sandboxed else W
    if want == A:
        assert not denied, f"{command!r} was refused: {reason}"
        return
    assert denied, f"{command!r} was let through (expected {want})"
    for alternatives in WHY[want]:
        assert any(a in reason for a in alternatives), f"{alternatives} not in: {reason}"


def bash(payload: Payloads, command: str) -> Dict[str, object]:
    return payload("pre_tool_use_bash", tool_input={"command": command, "description": "run"})


@pytest.mark.parametrize("plan", sorted(PLANS))
@pytest.mark.parametrize("case", CASES, ids=[c.command for c in CASES])
def test_bash_table(case: Case, plan: str, hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan(PLANS[plan])
    build_tree(job)
    result = hook("PreToolUse", bash(payload, case.command))
    want = case.restricted if plan == "restricted" else case.unrestricted
    check(result.denied, result.reason, want, case.command, hook.sandboxed)
    if not result.denied and hook.sandboxed:  # it runs, and it runs confined (or, for baton, by absolute path)
        assert result.decision in ("ask", "allow") and result.command != case.command, result
        assert sandbox_original(result.command) or "bin/baton" in result.command, result.command
    elif not result.denied:  # the fallback leaves the prompts to Claude Code, but for baton's own commands
        assert result.decision == "" or "bin/baton" in result.command, result


@pytest.mark.parametrize("command", ["baton init a b", "baton brief", "ls"])
def test_without_a_plan_bash_is_not_gated(command: str, hook: Hook, job: JobDir, payload: Payloads) -> None:
    assert hook("PreToolUse", bash(payload, command)).out == ""


@pytest.mark.parametrize("command", ["echo x > .baton/plan.json", "rm -rf .baton", "baton approve a",
                                     "cat ~/.config/baton/approval.key"])
def test_without_a_plan_baton_files_are_still_protected(command: str, hook: Hook, job: JobDir,
                                                        payload: Payloads) -> None:
    assert hook("PreToolUse", bash(payload, command)).denied


def test_a_bash_pattern_lets_a_restricted_step_run_its_tool(hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan({"steps": [{"id": "build", "writes": ["src/**"], "bash": ["make *", "npm run build*"]}]})
    assert not hook("PreToolUse", bash(payload, "make all")).denied
    assert not hook("PreToolUse", bash(payload, "npm  run   build -- --prod")).denied  # whitespace collapsed
    chained = hook("PreToolUse", bash(payload, "make all; curl -o x http://example.invalid"))
    assert chained.denied, "a pattern must not let a chained command through"
    assert "may write only src/**" in chained.reason and "add a `bash` pattern" in chained.reason
    assert hook("PreToolUse", bash(payload, "make all > .baton/plan.json")).denied


@pytest.mark.parametrize("tool_input", [{}, {"command": None}, {"command": 5}, {"command": "ls\x00-la"},
                                        {"cmd": "ls"}], ids=["missing", "null", "number", "nul", "wrong key"])
def test_bash_without_a_command_string_is_denied(tool_input: Dict[str, object], hook: Hook, job: JobDir,
                                                 payload: Payloads) -> None:
    job.plan(PLANS["unrestricted"])
    result = hook("PreToolUse", payload("pre_tool_use_bash", tool_input=tool_input))
    assert result.denied and "no command string" in result.reason


def test_the_reason_names_the_write_and_the_way_out(inproc: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan(PLANS["restricted"])
    build_tree(job)
    reason = inproc("PreToolUse", bash(payload, "cp src/a.py docs/b.py")).reason
    assert "docs/b.py" in reason and "outside them" in reason
    assert "Write/Edit inside those paths" in reason
    reason = inproc("PreToolUse", bash(payload, "echo x > .baton/steps.jsonl")).reason
    assert ".baton/steps.jsonl" in reason and "baton record STEP STATUS NOTE" in reason
