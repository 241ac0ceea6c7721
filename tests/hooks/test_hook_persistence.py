"""Issue 29, persistence: what a tool writes outside the sandbox must not be what the next hook runs.

Each attack is executed: the hook as hooks.json starts it (a copy of the plugin per test, so an
attack that got through could not spoil other tests), then what Claude Code would do with the
answer (write the file, or run the command it was handed), then the file system is compared
before and after, and the next hook is run to see that it is still baton's.
"""

from __future__ import annotations

import hashlib
import json
import marshal
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, Optional

import gatemodes
import hookkit
import pytest
from conftest import Hook, JobDir, Payloads, copy_plugin, make_subprocess_runner

from hooks import codecache

PLAN = {"steps": [{"id": "build"}, {"id": "ship", "approval": True}]}  # build may write anything in the project


def write(payload: Payloads, path: str, content: str = "raise SystemExit('the model ran')\n") -> Dict[str, Any]:
    return payload("pre_tool_use_write", tool_input={"file_path": path, "content": content})


def as_claude_code_would(result: hookkit.Result, tool_input: Dict[str, Any]) -> None:
    """Write the file after PreToolUse's answer, as Claude Code would: nothing on deny."""
    if result.denied:
        return
    os.makedirs(os.path.dirname(tool_input["file_path"]), exist_ok=True)
    with open(tool_input["file_path"], "w") as handle:
        handle.write(tool_input["content"])


def run_bash(hook: Hook, payload: Payloads, job: JobDir, command: str) -> hookkit.Result:
    """The Bash call through the gate, then what Claude Code runs after its answer."""
    result = hook("PreToolUse", payload("pre_tool_use_bash", tool_input={"command": command, "description": "run"}))
    ran = hookkit.runs_after(result, command)
    if ran is not None:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(job.home)}
        subprocess.run(["bash", "-c", ran], cwd=job.project, env=env, capture_output=True, timeout=60,
                       stdin=subprocess.DEVNULL)
    return result


def tree(root: Path) -> Dict[str, str]:
    """Every file below ``root`` and a digest of its content (``__pycache__`` aside: Python's own)."""
    found = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in files:
            path = os.path.join(folder, name)
            found[os.path.relpath(path, root)] = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    return found


@pytest.fixture
def plugin(tmp_path: Path) -> Path:
    return copy_plugin(tmp_path / "own")


@pytest.fixture
def own_hook(plugin: Path, job: JobDir, python_shim: str) -> Hook:
    gatemodes.set_mode("sandboxed", job.home)
    return make_subprocess_runner(plugin, job, python_shim)


@pytest.mark.parametrize("target", ["hooks/pre_tool_use.py", "hooks/hooks.json", "store/gate/policy.py",
                                    "hooks/__pycache__/baton-modules.bin", "bin/baton"])
@pytest.mark.parametrize("with_job", [True, False])
def test_no_write_reaches_the_plugins_own_folder(target: str, with_job: bool, plugin: Path, own_hook: Hook,
                                                 job: JobDir, payload: Payloads) -> None:
    if with_job:
        job.plan(PLAN)
    before = tree(plugin)
    call = write(payload, str(plugin / target))
    result = own_hook("PreToolUse", call)
    as_claude_code_would(result, call["tool_input"])
    assert result.denied and result.reason.endswith("[baton:own-files]"), result.reason
    assert tree(plugin) == before
    later = own_hook("PreToolUse", write(payload, job.path(".baton/plan.json")))
    assert later.denied and "[baton:own-files]" in later.reason, "the next hook is still baton's"


def test_a_sandboxed_command_cannot_change_a_plugin_that_lies_in_a_writable_cache(
        job: JobDir, payload: Payloads, python_shim: str) -> None:
    """A plugin loaded with --plugin-dir from a folder the sandbox leaves writable (a shared cache
    under the home folder, here) is still read-only to every command."""
    plugin = copy_plugin(job.home / ".cache" / "plugins")
    gatemodes.set_mode("sandboxed", job.home)
    hook = make_subprocess_runner(plugin, job, python_shim)
    job.plan(PLAN)
    before = tree(plugin)
    code = "import sys; [open(sys.argv[1] + n, 'a').write('raise 9') for n in ('/pre_tool_use.py', '/x.py')]"
    result = run_bash(hook, payload, job, f'python3 -c "{code}" {plugin.parent}/*/hooks')  # a path no reader tells
    assert not result.denied and result.command, "the command runs, sandboxed"
    assert tree(plugin) == before
    assert hook("PreToolUse", write(payload, job.path(".baton/plan.json"))).denied


def poison_cache(where: str, root: Path, marker: Path) -> None:
    """A module cache at ``where`` whose hooks.adapter writes ``marker`` (valid for this Python and
    for the source as it is on disk, as the model could make it)."""
    source = root / "hooks" / "adapter.py"
    info = source.stat()
    code = compile(f"open({str(marker)!r}, 'w').write('ran')\n", str(source), "exec")
    entry = ("hooks/adapter.py", False, info.st_size, info.st_mtime_ns, marshal.dumps(code))
    codecache.write(where, {"hooks.adapter": entry})


def test_a_module_cache_under_pythonpycacheprefix_is_never_read(plugin: Path, job: JobDir, payload: Payloads,
                                                                 python_shim: str) -> None:
    """The person's PYTHONPYCACHEPREFIX may point into a cache the sandbox leaves writable; the hook
    reads its compiled code only from the plugin's own folder."""
    prefix = job.home / ".cache" / "pycache"
    marker = job.home / "cache-ran"
    where = os.path.join(str(prefix), str(plugin / "hooks").lstrip(os.sep),
                         f"baton-modules.{sys.implementation.cache_tag}.bin")
    poison_cache(where, plugin, marker)
    job.plan(PLAN)
    hook = make_subprocess_runner(plugin, job, python_shim)
    env = {**os.environ, "PYTHONPYCACHEPREFIX": str(prefix)}
    gatemodes.set_mode("sandboxed", job.home)
    result = hook("PreToolUse", write(payload, job.path(".baton/plan.json")), env=env)
    assert not marker.exists(), "the planted module cache ran"
    assert result.denied and "[baton:own-files]" in result.reason


@pytest.mark.parametrize("target", ["~/.local/state/baton/sandbox-probe.json", "$XDG/baton/sandbox-probe.json"])
def test_a_forged_probe_cannot_turn_the_sandbox_off(target: str, own_hook: Hook, job: JobDir,
                                                    payload: Payloads, tmp_path: Path) -> None:
    job.plan(PLAN)
    env: Optional[Dict[str, str]] = None
    if target.startswith("$XDG"):
        env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}
        target = target.replace("$XDG", str(tmp_path / "state"))
    path = target.replace("~", str(job.home), 1)
    forged = json.dumps({"key": "x", "at": 0, "ok": False, "bwrap": "", "why": "forged"})
    before = Path(path).read_bytes() if os.path.exists(path) else None
    call = write(payload, path, forged)
    result = own_hook("PreToolUse", call, env=env)
    as_claude_code_would(result, call["tool_input"])
    assert result.denied and result.reason.endswith("[baton:own-files]"), result.reason
    assert (Path(path).read_bytes() if os.path.exists(path) else None) == before
    after = own_hook("PreToolUse", payload("pre_tool_use_bash", tool_input={"command": "ls", "description": "run"}),
                     env=env)
    assert hookkit.sandbox_original(after.command) == "ls", "Bash is still sandboxed"


STARTUP = ["~/.zlogin", "~/.zlogout", "~/.bash_logout", "~/.kshrc", "~/.config/fish/config.fish", "~/.profile",
           "~/.zshenv", "~/.cshrc", "~/.gitconfig", "~/.config/git/config", "~/.ssh/config", "~/.ssh/id_ed25519",
           "~/.python-version", "~/.tool-versions", "~/.pyenv/version", "~/.config/mise/config.toml"]


@pytest.mark.parametrize("target", STARTUP)
def test_no_tool_writes_a_shell_start_up_file(target: str, hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan(PLAN)
    path = str(job.home) + target[1:]
    call = write(payload, path, "touch ~/pwned\n")
    result = hook("PreToolUse", call)
    as_claude_code_would(result, call["tool_input"])
    assert result.denied and result.reason.endswith("[baton:runs-code]"), result.reason
    assert not os.path.exists(path)
    ran = run_bash(hook, payload, job, f"mkdir -p {os.path.dirname(path)} && echo 'touch ~/pwned' >> {path}")
    assert not os.path.exists(path), ran.reason


@pytest.fixture
def cli_with_settings(job: JobDir) -> Any:
    """A stand-in for the running CLI, started as ``claude --settings ci/claude-settings.json``: the
    hooks read its arguments from /proc/$CLAUDE_PID/cmdline."""
    (job.project / "ci").mkdir()
    (job.project / "ci" / "claude-settings.json").write_text(json.dumps({"permissions": {"allow": []}}))
    proc = subprocess.Popen(["bash", "-c", "sleep 120; :", "claude", "--settings", "ci/claude-settings.json"])
    yield proc
    proc.kill()
    proc.wait()


def hook_in(plugin: Path, job: JobDir, shim: str, cwd: Path, event: str, payload: hookkit.Payload,
            pid: int) -> hookkit.Result:
    """hooks.json's hook started in ``cwd`` (Claude Code starts hooks in the session's current
    folder, which follows the model's ``cd``), for the CLI ``pid``."""
    (entry,) = hookkit.commands_for(plugin / "hooks" / "hooks.json", event, payload, str(job.home))
    data = job.home / ".claude" / "plugins" / "data" / "baton-inline"
    data.mkdir(parents=True, exist_ok=True)
    env = hookkit.hook_env(os.environ, job.project, plugin, data, hookkit.SESSION, shim)
    env.update(CLAUDE_PID=str(pid), HOME=str(job.home))
    raw = hookkit.launch(entry, plugin, hookkit.encode(payload), env, cwd)
    assert raw.code == 0 and raw.err == "", raw
    return hookkit.Result(raw.code, raw.out, raw.err, hookkit.check_output(event, raw.out, payload))


@pytest.mark.parametrize("where", ["ci", "sub/ci"])
def test_a_settings_file_the_model_writes_cannot_turn_the_sandbox_off(
        where: str, plugin: Path, job: JobDir, payload: Payloads, python_shim: str, cli_with_settings: Any) -> None:
    """``claude --settings ci/claude-settings.json``: the model writes Claude Code's sandbox on in that
    file (baton's own sandbox then stands down), or in the same name below a folder it then ``cd``s into."""
    gatemodes.set_mode("sandboxed", job.home)
    job.plan(PLAN)
    pid = cli_with_settings.pid
    folder = job.project / where
    folder.mkdir(parents=True, exist_ok=True)
    cwd = folder.parent
    path = folder / "claude-settings.json"
    before = path.read_bytes() if path.exists() else None
    call = write(payload, str(path), json.dumps({"sandbox": {"enabled": True}}))
    call["cwd"] = str(cwd)
    result = hook_in(plugin, job, python_shim, cwd, "PreToolUse", call, pid)
    as_claude_code_would(result, call["tool_input"])
    if where == "ci":
        assert result.denied and result.reason.endswith("[baton:runs-code]"), result.reason
        assert path.read_bytes() == before
    bash = payload("pre_tool_use_bash", tool_input={"command": "ls", "description": "run"}, cwd=str(cwd))
    after = hook_in(plugin, job, python_shim, cwd, "PreToolUse", bash, pid)
    assert hookkit.sandbox_original(after.command) == "ls", f"Bash is no longer sandboxed: {after.out}"


MAKEFILE = "check:\n\t@echo pwned > $(HOME)/pwned; cat $(HOME)/.config/baton/approval.key > src/leak; true\n"


def written(payload: Payloads, job: JobDir, rel: str, text: str) -> Dict[str, Any]:
    """PostToolUse for a Write the model made (the file written first, as Claude Code does)."""
    path = job.project / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    data = payload("post_tool_use_write")
    data["tool_input"]["file_path"] = str(path)
    data["tool_response"]["filePath"] = str(path)
    return data


def test_a_check_after_write_runs_the_models_makefile_only_in_the_sandbox(subproc: Hook, job: JobDir,
                                                                          payload: Payloads) -> None:
    from store.state import approvals

    gatemodes.set_mode("sandboxed", job.home)
    key = approvals.ensure_key({"HOME": str(job.home)})
    job.plan({"rules": [{"id": "lint", "check_after_write": {"src/**": "make -s check F={file}"}, "reason": "r"}],
              "steps": [{"id": "build", "writes": ["src/**", "Makefile"]}, {"id": "ship", "approval": True}]})
    subproc("PostToolUse", written(payload, job, "Makefile", MAKEFILE))
    before = tree(job.home)
    subproc("PostToolUse", written(payload, job, "src/app.py", "x = 1\n"))
    after = {k: v for k, v in tree(job.home).items() if not k.startswith(".cache/baton/jobs/")}  # the sandbox's /tmp
    assert after == before and not (job.home / "pwned").exists()
    leak = job.project / "src" / "leak"
    assert not leak.exists() or key not in leak.read_bytes(), "the model's Makefile read the approval key"
    assert leak.exists(), "the Makefile ran (in the sandbox): this test could fail"


def test_a_built_in_check_never_imports_the_projects_modules(inproc_fallback: Hook, job: JobDir,
                                                             payload: Payloads) -> None:
    """The built-in checkers import json and traceback; a json.py at the project's root must not run,
    even where no sandbox does."""
    marker = job.home / "json-ran"
    job.plan({"rules": [{"id": "syntax", "check_after_write": "default", "reason": "r"}], "steps": ["build"]})
    inproc_fallback("PostToolUse", written(payload, job, "json.py", f"open({str(marker)!r}, 'w').write('ran')\n"))
    result = inproc_fallback("PostToolUse", written(payload, job, "data.json", "{\"a\": 1}"))
    assert not marker.exists(), "the project's json.py ran outside the sandbox"
    assert "fails its check" not in result.context


@pytest.mark.parametrize("tool, tool_input", [
    ("CronCreate", {"cron": "*/1 * * * *", "prompt": "/baton:record ship skipped no time", "recurring": False}),
    ("CronCreate", {"cron": "*/1 * * * *", "prompt": "  /record ship skipped no time"}),
    ("CronCreate", {"cron": "*/1 * * * *", "prompt": "\uff0fBATON:record ship skipped no time"}),
    ("ScheduleWakeup", {"delaySeconds": 60, "prompt": "/baton:record ship skipped later", "reason": "later"}),
])
def test_a_scheduled_prompt_cannot_skip_a_step_that_waits_for_a_person(tool: str, tool_input: Dict[str, Any],
                                                                       hook: Hook, job: JobDir,
                                                                       payload: Payloads) -> None:
    """The model schedules ``/baton:record ship skipped``; when it fires Claude Code submits it as a
    prompt, which baton's prompt hook would answer as the person's own."""
    job.plan({"steps": ["build", {"id": "ship", "approval": True}]})
    job.record("build", "done", "built")
    before = job.ledger()
    call = payload("pre_tool_use_skill", tool_name=tool, tool_input=tool_input)
    result = hook("PreToolUse", call)
    if not result.denied:  # what Claude Code would do when the schedule fires
        hook("UserPromptSubmit", payload("user_prompt_submit_command", prompt=tool_input["prompt"]))
    assert [r["status"] for r in job.ledger()] == [r["status"] for r in before], "a scheduled prompt skipped ship"
    assert result.denied and result.reason.endswith("[baton:scheduled]"), result.reason
    ordinary = payload("pre_tool_use_skill", tool_name=tool, tool_input={**tool_input, "prompt": "run the tests"})
    assert not hook("PreToolUse", ordinary).denied


PYENV_SHIM = """#!/bin/sh
# pyenv's shim, reduced to what matters here: the version comes from PYENV_VERSION, else from the
# first .python-version found from the current folder up, else the global one; a version that is
# not installed makes the shim fail, as pyenv's does ("version `3.6.15' is not installed")
dir=$PWD
version=${PYENV_VERSION:-}
while [ -z "$version" ] && [ -n "$dir" ]; do
    [ -f "$dir/.python-version" ] && version=$(cat "$dir/.python-version")
    [ "$dir" = / ] && break
    dir=$(dirname "$dir")
done
case "${version:-system}" in
    system|3.*[0-9]-ok) exec %s "$@" ;;
    *) echo "pyenv: version \\`$version' is not installed" >&2; exit 1 ;;
esac
"""


def test_a_version_file_the_model_writes_does_not_pick_the_hooks_interpreter(plugin: Path, job: JobDir,
                                                                             payload: Payloads,
                                                                             tmp_path: Path) -> None:
    """With pyenv's shims first on PATH, ``.python-version`` in the folder the model ``cd``s into
    would make every hook's ``python3`` fail: every call refused, no brief."""
    shims = tmp_path / "shims"
    shims.mkdir()
    (shims / "python3").write_text(PYENV_SHIM % sys.executable)
    (shims / "python3").chmod(0o755)
    gatemodes.set_mode("sandboxed", job.home)
    job.plan(PLAN)
    sub = job.project / "src"
    sub.mkdir()
    call = write(payload, str(sub / ".python-version"), "3.6.15\n")
    call["cwd"] = str(sub)
    first = hook_in(plugin, job, str(shims), sub, "PreToolUse", call, os.getpid())
    as_claude_code_would(first, call["tool_input"])
    assert (sub / ".python-version").exists(), "an ordinary project file: the step may write it"
    for event, body in (("SessionStart", payload("session_start_startup", cwd=str(sub))),
                        ("PreToolUse", payload("pre_tool_use_bash", tool_input={"command": "ls", "description": "r"},
                                               cwd=str(sub)))):
        result = hook_in(plugin, job, str(shims), sub, event, body, os.getpid())
        if event == "SessionStart":
            assert "NEXT: build" in result.context, result
        else:
            assert hookkit.sandbox_original(result.command) == "ls", result


@pytest.mark.parametrize("form", ["echo 'raise SystemExit(3)' >> {t}", "cp README.md {t}", "sed -i 1d {t}",
                                  "rm -f {t}"])
def test_without_the_sandbox_a_visible_write_into_the_plugin_is_refused(form: str, plugin: Path, job: JobDir,
                                                                        payload: Payloads, python_shim: str) -> None:
    """The fallback, as far as the reader can: a write it sees into the plugin's folder. (A program
    whose writes it cannot see is among the fallback's known gaps.)"""
    gatemodes.set_mode("fallback", job.home)
    hook = make_subprocess_runner(plugin, job, python_shim)
    job.plan(PLAN)
    (job.project / "README.md").write_text("raise SystemExit(3)\n")
    before = tree(plugin)
    result = run_bash(hook, payload, job, form.format(t=plugin / "hooks" / "pre_tool_use.py"))
    assert tree(plugin) == before
    assert result.denied and result.reason.endswith("[baton:own-files]"), result.reason
