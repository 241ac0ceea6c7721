"""Escapes through what the sandbox shares with the machine, executed for real (issue 29, items 6 and 7,
and the fallback's network gap): a helper process outside listening on a unix socket in the home
folder (a stand-in for ssh-agent, docker or tmux) or on an abstract socket, which runs whatever it
is sent; a hard link from inside a step's writes to a file outside them; a host an ``allow_hosts``
rule forbids, reached by a program. Each call goes through baton's PreToolUse hook, then runs as
Claude Code would run it (``tests/gate/execution.py``), then PostToolUse; the helper's log and the
files are compared before and after. Ordinary work that looks alike keeps working: a command's own
sockets, the host's network in a ``network: host`` step, a hard link inside the writes.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List

import gatemodes
import pytest
from execution import ask_baton, hook_env, make_template, run_bash, set_mode, snapshot, tell_baton

OPEN = {"steps": [{"id": "a"}, "b"]}
RESTRICTED = {"steps": [{"id": "a", "writes": ["src/**"]}, "b"]}
ALLOWLIST = {"steps": ["a", "b"], "rules": [{"id": "egress", "allow_hosts": ["pypi.org"], "reason": "pypi only"}]}
HELPER = r'''
import os, socket, subprocess, sys, threading
log, paths = sys.argv[1], sys.argv[2:]
def serve(srv):
    while True:
        conn, _ = srv.accept()
        data = conn.recv(65536).decode()
        with open(log, "a") as f:
            f.write(data + "\n")
        subprocess.run(["sh", "-c", data])  # what an agent or daemon does with a request: act on it
        conn.close()
for path in paths:
    srv = socket.socket(socket.AF_UNIX) if path.startswith(("/", "@")) else socket.socket()
    if path.startswith("@"):
        srv.bind("\0" + path[1:])
    elif path.startswith("/"):
        srv.bind(path)
    else:
        srv.bind(("127.0.0.1", int(path)))
    srv.listen(8)
    threading.Thread(target=serve, args=(srv,), daemon=True).start()
print("ready", flush=True)
sys.stdin.read()
'''
SEND = ("python3 -c 'import socket, sys; a = sys.argv[1]; s = socket.socket(socket.AF_UNIX if not a.isdigit() "
        "else socket.AF_INET); s.connect(\"\\0\" + a[1:] if a[0] == \"@\" else a if not a.isdigit() else "
        "(\"127.0.0.1\", int(a))); s.sendall(sys.argv[2].encode()); s.close(); print(\"sent\")' {target} '{payload}'")


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    gatemodes.sandboxed_here(tmp_path_factory.mktemp("probe-home"))
    return make_template(tmp_path_factory.mktemp("escape-template"))


@pytest.fixture
def base(template: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "b"
    subprocess.run(["cp", "-a", str(template), str(copy)], check=True)
    return copy


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


MARKER = ": baton-escape-marker"  # a shell no-op: the helper runs it too


def send(target: str, data: str) -> None:
    """What SEND does, from the test (outside any sandbox)."""
    family = socket.AF_INET if target.isdigit() else socket.AF_UNIX
    address: Any = ("127.0.0.1", int(target)) if target.isdigit() else \
        "\0" + target[1:] if target.startswith("@") else target
    with socket.socket(family) as s:
        s.connect(address)
        s.sendall(data.encode())


class Helper:
    def __init__(self, proc: subprocess.Popen[str], log: Path, where: List[str]) -> None:
        self.proc, self.log, self.where, self.markers = proc, log, where, 0

    def lines(self) -> List[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []

    def received(self) -> List[str]:
        """What the helper was sent so far: a marker sent from here now is waited for on each socket,
        which takes its connections in order, one at a time, so whatever reached it earlier is in
        the log by then (a fixed wait lost a request still in flight on a busy machine)."""
        for target in self.where:
            self.markers += 1
            marker = f"{MARKER} {self.markers}"
            send(target, marker)
            deadline = time.monotonic() + 30
            while marker not in self.lines():
                assert time.monotonic() < deadline, f"the helper never logged {marker!r}: {self.lines()}"
                time.sleep(0.02)
        return [line for line in self.lines() if not line.startswith(MARKER)]


@pytest.fixture
def helper(base: Path, request: pytest.FixtureRequest) -> Iterator[Any]:
    started: List[Helper] = []

    def start(*where: str) -> Helper:
        log = base / "outside" / "helper.log"
        proc = subprocess.Popen([sys.executable, "-c", HELPER, str(log), *where], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True, cwd=base)
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        started.append(Helper(proc, log, list(where)))
        return started[-1]

    yield start
    for one in started:
        one.proc.kill()
        one.proc.wait()


def call(base: Path, plan: Dict[str, Any], command: str, mode: str = "sandboxed") -> Dict[str, Any]:
    """One Bash call through baton's hooks and run as Claude Code would; the environment put back after."""
    saved = dict(os.environ)
    try:
        (base / "project/.baton/plan.json").write_text(json.dumps(plan))
        set_mode(base, mode)
        hook_env(base)
        tool_use_id = f"toolu_escape_{time.monotonic_ns()}"
        answer = ask_baton(base, command, tool_use_id) or {}
        decision = str(answer.get("permissionDecision") or "")
        ran = "" if decision == "deny" else str((answer.get("updatedInput") or {}).get("command") or command)
        code, out, err = run_bash(base, ran, tool_use_id) if ran else (-1, "", "")
        notes = tell_baton(base, ran, tool_use_id, code, out + err) if ran else ""
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return {"decision": decision, "sandboxed": bool(ran) and ran != command, "code": code, "out": out, "err": err,
            "notes": notes, "reason": str(answer.get("permissionDecisionReason") or "")}


def outside_changes(base: Path, before: Dict[str, Any]) -> List[str]:
    after = snapshot(base)
    return sorted(rel for rel in set(before) | set(after) if rel.startswith(("outside/", "home/.ssh"))
                  and before.get(rel) != after.get(rel) and rel != "outside/helper.log")


@pytest.mark.parametrize("where", ["home", "abstract"])
def test_a_helper_outside_gets_nothing_from_a_sandboxed_command(where: str, base: Path, helper: Any) -> None:
    target = str(base / "home/.ssh/agent.sock") if where == "home" else f"@baton-escape-{os.getpid()}-{time.time_ns()}"
    if where == "home":
        (base / "home/.ssh").mkdir()
    listening = helper(target)
    pwned = base / "outside" / "pwned.txt"
    before = snapshot(base)
    result = call(base, OPEN, SEND.format(target=target, payload=f"echo pwn > {pwned}"))
    assert result["sandboxed"], result
    assert listening.received() == [], (result, "the helper outside ran what the sandbox sent")
    assert not pwned.exists() and outside_changes(base, before) == [], result
    assert listening.proc.poll() is None  # the helper is still there: it was hidden, not killed


def test_in_the_fallback_a_helper_outside_is_reachable_a_known_gap(base: Path, helper: Any) -> None:
    (base / "home/.ssh").mkdir()
    target = str(base / "home/.ssh/agent.sock")
    listening = helper(target)
    result = call(base, OPEN, SEND.format(target=target, payload="true"), mode="fallback")
    assert not result["sandboxed"] and listening.received() == ["true"], result


def test_a_commands_own_sockets_and_the_hosts_network_still_work(base: Path, helper: Any) -> None:
    port = str(free_port())
    listening = helper(port)  # a service on the host's loopback: a network: host step reaches it
    own = ("python3 -c 'import os, socket, tempfile\n"
           "os.chdir(tempfile.mkdtemp())  # the jobs /tmp: a short name, as paths past ~100 bytes fail\n"
           "for name in (\"s\", \"\\0own-abstract-%d\" % os.getpid()):\n"
           "    srv = socket.socket(socket.AF_UNIX); srv.bind(name); srv.listen(1)\n"
           "    c = socket.socket(socket.AF_UNIX); c.connect(name); c.sendall(b\"x\"); assert srv.accept()[0].recv(1)\n"
           "print(\"own sockets ok\")' && " + SEND.format(target=port, payload="hello"))
    result = call(base, OPEN, own)
    assert result["sandboxed"] and result["code"] == 0, (result["err"], result)
    assert "own sockets ok" in result["out"] and "sent" in result["out"], result
    assert listening.received() == ["hello"]


def test_a_program_reaches_no_host_allow_hosts_forbids_in_the_sandbox_but_does_in_the_fallback(
        base: Path, helper: Any) -> None:
    port = str(free_port())
    listening = helper(port)  # stands for a forbidden host: only pypi.org is allowed
    script = base / "project" / "tools" / "ping.py"  # a program: the gate cannot see where it connects
    script.write_text(f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=5).sendall(b'true')\n")
    sandboxed = call(base, ALLOWLIST, "python3 tools/ping.py")
    assert sandboxed["sandboxed"] and sandboxed["code"] != 0 and listening.received() == [], sandboxed
    fallback = call(base, ALLOWLIST, "python3 tools/ping.py", mode="fallback")
    assert fallback["decision"] != "deny" and listening.received() == ["true"], fallback  # listed as a known gap


def test_a_hard_link_out_of_the_writes_is_read_only_in_a_later_step(base: Path) -> None:
    project = base / "project"
    made = call(base, OPEN, "ln README.md src/x && ln src/main.py src/twin.py")  # a step that writes everything
    assert made["code"] == 0, made
    readme = (project / "README.md").read_bytes()
    # a program writes through the names (the gate refuses a command that names a linked file itself)
    writer = "python3 -c 'import sys; [open(sys.argv[i], \"a\").write(sys.argv[i + 1]) for i in (1, 3)]' "
    result = call(base, RESTRICTED, writer + "src/twin$(echo .py) 'more' src/$(echo x) 'pwn'")
    assert result["sandboxed"], result
    assert (project / "README.md").read_bytes() == readme, result  # written through src/x before the fix
    assert (project / "src/main.py").read_text().endswith("more"), result  # both names in the writes: writable
    assert "src/x" in result["reason"] and "hard-linked" in result["reason"], result["reason"]




PROGRAM_WRITE = "python3 -c 'import sys; open(sys.argv[1], \"a\").write(\"pwn\")' src/$(echo x)"


@pytest.mark.parametrize("command", ["echo pwn >> src/x", PROGRAM_WRITE])
def test_in_the_fallback_a_write_through_a_hard_link_is_refused(command: str, base: Path) -> None:
    assert call(base, OPEN, "ln README.md src/x", mode="fallback")["code"] == 0
    readme = (base / "project/README.md").read_bytes()
    result = call(base, RESTRICTED, command, mode="fallback")
    assert result["decision"] == "deny" and (base / "project/README.md").read_bytes() == readme, result
