"""A network allowlist, run for real: the command has no network of its own, and reaches only the
allowed hosts through baton's proxy (HTTP and CONNECT); a program that ignores the proxy, or asks for
another host, gets nothing."""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import threading
from pathlib import Path
from typing import Iterator, Tuple

import gatemodes
import pytest

from store.gate import netproxy, rewrite


@pytest.mark.parametrize("host, ok", [("pypi.org", True), ("PyPI.org.", True), ("files.pypi.org", False),
                                      ("api.github.com", True), ("github.com", False), ("evil.com", False)])
def test_allowed_hosts(host: str, ok: bool) -> None:
    assert netproxy.allowed(host, ("pypi.org", "*.github.com")) is ok


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


def run_sandboxed(tmp_path: Path, command: str) -> Tuple[int, str]:
    """``command`` through baton's PreToolUse hook and Claude Code's way of running Bash."""
    from hooks import adapter

    project, home = tmp_path / "project", tmp_path / "home"
    (project / ".baton").mkdir(parents=True, exist_ok=True)
    (home / ".cache").mkdir(parents=True, exist_ok=True)
    plan = {"sandbox": {"network": {"allow_hosts": ["localhost"]}}, "steps": ["a"]}
    (project / ".baton" / "plan.json").write_text(json.dumps(plan))
    gatemodes.sandboxed_here(home)
    os.environ.update(HOME=str(home), CLAUDE_PROJECT_DIR=str(project), BATON_FSYNC="0")
    payload = {"session_id": "s", "cwd": str(project), "hook_event_name": "PreToolUse", "tool_name": "Bash",
               "permission_mode": "bypassPermissions", "tool_use_id": "toolu_net",
               "tool_input": {"command": command}}
    answer = (adapter.run("PreToolUse", json.dumps(payload).encode()) or {})["hookSpecificOutput"]
    line = answer["updatedInput"]["command"]
    assert "netproxy.py" in line
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
