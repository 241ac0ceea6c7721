"""Which unix sockets the sandbox covers (store/sandbox/sockets.py) and when the abstract-socket scope
starts (store/sandbox/landlock_scope.py); the escapes themselves run for real in tests/gate/test_escapes.py."""

from __future__ import annotations

import socket
from pathlib import Path

from store.sandbox import landlock_scope as scope
from store.sandbox import sockets


def test_the_kernels_table_gives_pathname_sockets_and_skips_abstract_ones(tmp_path: Path) -> None:
    table = tmp_path / "unix"
    table.write_text("Num       RefCount Protocol Flags    Type St Inode Path\n"
                     "0000: 00000002 00000000 00010000 0001 01 1 /run/a.sock\n"
                     "0000: 00000002 00000000 00010000 0001 01 2 @abstract\n"
                     "0000: 00000002 00000000 00000000 0001 03 3\n"
                     "0000: 00000002 00000000 00010000 0001 01 4 /home/u/with space.sock\n")
    assert sockets.listed(str(table)) == {"/run/a.sock", "/home/u/with space.sock"}
    assert sockets.listed(str(tmp_path / "missing")) == set()


def test_the_environment_names_agent_docker_and_tmux_sockets() -> None:
    env = {"SSH_AUTH_SOCK": "/h/.ssh/agent.sock", "DOCKER_HOST": "unix:///h/docker.sock",
           "DBUS_SESSION_BUS_ADDRESS": "unix:path=/h/bus,guid=1;unix:abstract=/tmp/x", "TMUX": "/h/tmux/default,12,0",
           "XDG_RUNTIME_DIR": "/r", "WAYLAND_DISPLAY": "wayland-0", "DOCKER_HOST_OTHER": "/not/read"}
    assert sockets.named(env) == {"/h/.ssh/agent.sock", "/h/docker.sock", "/h/bus", "/h/tmux/default",
                                  "/r/wayland-0"}


def test_only_real_sockets_outside_the_job_and_visible_in_the_sandbox_are_covered(tmp_path: Path) -> None:
    made = []
    for rel in ("home/agent.sock", "project/own.sock", "job/tmp/s"):
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(path))
        made.append(server)
    (tmp_path / "home/plain").write_text("not a socket")
    candidates = [str(tmp_path / r) for r in ("home/agent.sock", "project/own.sock", "job/tmp/s", "home/plain",
                                              "home/gone.sock")]
    try:
        found = sockets.hidden(candidates, [str(tmp_path / "project"), str(tmp_path / "job")], [str(tmp_path)])
        assert found == [str((tmp_path / "home/agent.sock").resolve())]
        # under a folder the sandbox replaces (the host's /tmp) and not shown again: nothing to cover
        assert sockets.hidden(candidates, [str(tmp_path / "project")], []) == ([] if str(tmp_path).startswith(
            ("/tmp/", "/var/tmp/")) else found)
    finally:
        for server in made:
            server.close()
    assert sockets.cover(["/a", "/b"]) == ["--ro-bind", "/dev/null", "/a", "--ro-bind", "/dev/null", "/b"]


def test_the_scope_starts_only_for_host_network_on_a_kernel_that_has_it() -> None:
    assert scope.kernel("6.18.44-fc-v1147") == (6, 18) and scope.kernel("6.8.0-45-generic") == (6, 8)
    assert scope.kernel("5.15.0") == (5, 15) and scope.kernel("garbage") == (0, 0)
    assert not scope.wanted("none") and not scope.wanted((("pypi.org",),))
    assert scope.wanted("host") == (scope.kernel(__import__("os").uname().release) >= scope.FIRST_KERNEL)


def test_a_socket_no_capability_could_reach_needs_no_cover(tmp_path: Path) -> None:
    folder = tmp_path / "locked"
    folder.mkdir()
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(folder / "s"))
    try:
        assert sockets.reachable(str(folder / "s"))
        folder.chmod(0o600)  # not searchable by mode bits: bwrap could not even make the mount point there
        assert not sockets.reachable(str(folder / "s"))
        assert sockets.hidden([str(folder / "s")], [], []) == []
    finally:
        folder.chmod(0o700)
        server.close()
