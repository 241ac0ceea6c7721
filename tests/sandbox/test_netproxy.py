"""A network allowlist, run for real: the command has no network of its own, and reaches only the
allowed hosts through baton's proxy (HTTP and CONNECT); a program that ignores the proxy, or asks for
another host, gets nothing. The allowlist comes from the step's ``sandbox.network`` and from the
plan's ``allow_hosts`` rules: a host must be allowed by each of them."""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import threading
from pathlib import Path
from typing import Any, Dict, Iterator, Tuple

import gatemodes
import pytest

from store.sandbox import netproxy, rewrite


@pytest.mark.parametrize("host, ok", [("pypi.org", True), ("PyPI.org.", True), ("files.pypi.org", False),
                                      ("api.github.com", True), ("github.com", False), ("evil.com", False),
                                      ("[::1]", True), ("::2", False)])
def test_allowed_hosts(host: str, ok: bool) -> None:
    assert netproxy.allowed(host, ("pypi.org,*.github.com,[::1]",)) is ok


@pytest.mark.parametrize("host, ok", [("api.github.com", True), ("uploads.github.com", False), ("pypi.org", False)])
def test_a_host_must_be_allowed_by_every_group(host: str, ok: bool) -> None:
    """The step's own allowlist and each allow_hosts rule: the strictest wins."""
    assert netproxy.allowed(host, ("pypi.org,*.github.com", "api.github.com")) is ok
    assert netproxy.allowed(host, ()) is False


def test_the_plan_sets_the_groups() -> None:
    from store.gate.enforce import network_for
    from store.plan.plan import parse_text

    def network(plan: Dict[str, Any], read_only: bool = False) -> Any:
        parsed = parse_text(json.dumps({**plan, "steps": ["a"]}), "plan.json")
        return network_for(parsed, parsed.sandbox, read_only)

    rule = {"id": "egress", "allow_hosts": ["api.github.com", "*.example.com"], "reason": "r"}
    assert network({}) == "host"
    assert network({"rules": [rule]}) == (("api.github.com", "*.example.com"),)
    assert network({"rules": [rule], "sandbox": {"network": {"allow_hosts": ["pypi.org"]}}}) == (
        ("pypi.org",), ("api.github.com", "*.example.com"))
    assert network({"rules": [rule], "sandbox": {"network": "none"}}) == "none"
    assert network({"sandbox": {"network": {"allow_hosts": ["pypi.org"]}}}) == (("pypi.org",),)
    assert network({"rules": [rule]}, read_only=True) == "none"


def test_proxy_requests_are_read_for_their_target() -> None:
    assert netproxy.target_of(b"CONNECT pypi.org:443 HTTP/1.1\r\n\r\n") == ("CONNECT", "pypi.org", 443, b"")
    assert netproxy.target_of(b"GET http://h:8080/a?b HTTP/1.1\r\n\r\n") == ("GET", "h", 8080, b"GET /a?b HTTP/1.1")
    assert netproxy.target_of(b"GET /relative HTTP/1.1\r\n\r\n") is None


class Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - the http.server interface
        body = b"HELLO-FROM-HOST"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[int]:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hello)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield httpd.server_address[1]
    httpd.shutdown()
    httpd.server_close()


STEP_ALLOWS = {"sandbox": {"network": {"allow_hosts": ["localhost"]}}, "steps": ["a"]}
RULE_ALLOWS = {"rules": [{"id": "egress", "allow_hosts": ["localhost"], "reason": "only here"}], "steps": ["a"]}


def run_sandboxed(tmp_path: Path, command: str, plan: Dict[str, Any] = STEP_ALLOWS) -> Tuple[int, str]:
    """``command`` through baton's PreToolUse hook and Claude Code's way of running Bash."""
    from hooks import adapter

    project, home = tmp_path / "project", tmp_path / "home"
    (project / ".baton").mkdir(parents=True, exist_ok=True)
    (home / ".cache").mkdir(parents=True, exist_ok=True)
    (project / ".baton" / "plan.json").write_text(json.dumps(plan))
    gatemodes.sandboxed_here(home)
    os.environ.update(HOME=str(home), CLAUDE_PROJECT_DIR=str(project), BATON_FSYNC="0")
    payload = {"session_id": "s", "cwd": str(project), "hook_event_name": "PreToolUse", "tool_name": "Bash",
               "permission_mode": "bypassPermissions", "tool_use_id": "toolu_net",
               "tool_input": {"command": command}}
    answer = (adapter.run("PreToolUse", json.dumps(payload).encode()) or {})["hookSpecificOutput"]
    line = answer["updatedInput"]["command"]
    prefix = (project / ".baton" / "run" / "toolu_net.args").read_bytes() if "BATON_ONCE_PREFIX" in line else b""
    script = project / ".baton" / "run" / "toolu_net.sh"
    shown = script.read_text() if script.exists() else line  # the script the rewritten line sources
    assert "netproxy.py" in shown or b"netproxy.py" in prefix  # baton once: its command's prefix
    proc = subprocess.run(["/bin/bash", "-c", f"eval {rewrite.quote(line)}"], cwd=project, capture_output=True,
                          text=True, timeout=60, env={**os.environ, "HOME": str(home)})
    return proc.returncode, proc.stdout + proc.stderr


FETCH = "python3 -c 'import urllib.request, sys; print(urllib.request.urlopen(sys.argv[1], timeout=10).read())' "


def test_an_allowed_host_is_reached_through_the_proxy(tmp_path: Path, server: int) -> None:
    code, out = run_sandboxed(tmp_path, FETCH + f"http://localhost:{server}/")
    assert code == 0 and "HELLO-FROM-HOST" in out, out


def test_another_host_is_refused_by_the_proxy(tmp_path: Path, server: int) -> None:
    code, out = run_sandboxed(tmp_path, FETCH + f"http://127.0.0.1:{server}/")
    assert code != 0 and "403" in out, out


def test_a_program_that_ignores_the_proxy_has_no_network(tmp_path: Path, server: int) -> None:
    code, out = run_sandboxed(tmp_path, f"echo > /dev/tcp/127.0.0.1/{server} && echo connected")
    assert code != 0 and "connected" not in out, out


# a program that connects by itself, to a destination no reading of the command can see
SCRIPT = ("import urllib.request\n"
          "url = open('url.txt').read().strip()\n"
          "print(urllib.request.urlopen(url, timeout=10).read())\n")


@pytest.mark.parametrize("host, ok", [("localhost", True), ("127.0.0.1", False)])
def test_an_allow_hosts_rule_is_the_sandboxs_allowlist(tmp_path: Path, server: int, host: str, ok: bool) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "fetch.py").write_text(SCRIPT)
    (project / "url.txt").write_text(f"http://{host}:{server}/\n")
    code, out = run_sandboxed(tmp_path, "python3 fetch.py", RULE_ALLOWS)
    assert (code == 0 and "HELLO-FROM-HOST" in out) if ok else (code != 0 and "403" in out), out


def test_under_an_allow_hosts_rule_nothing_else_has_network(tmp_path: Path, server: int) -> None:
    code, out = run_sandboxed(tmp_path, f"echo > /dev/tcp/127.0.0.1/{server} && echo connected",
                              {**RULE_ALLOWS, "rules": [{**RULE_ALLOWS["rules"][0],  # type: ignore[index]
                                                         "allow_hosts": ["localhost", "127.0.0.1"]}]})
    assert code != 0 and "connected" not in out, out


@pytest.mark.parametrize("host, ok", [("localhost", True), ("127.0.0.1", False)])
def test_the_command_baton_once_runs_gets_the_same_allowlist(tmp_path: Path, server: int, host: str,
                                                             ok: bool) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "fetch.py").write_text(SCRIPT)
    (project / "url.txt").write_text(f"http://{host}:{server}/\n")
    code, out = run_sandboxed(tmp_path, f"baton once fetch-{host} -- python3 fetch.py", RULE_ALLOWS)
    assert (code == 0 and "HELLO-FROM-HOST" in out) if ok else (code != 0 and "403" in out), out
