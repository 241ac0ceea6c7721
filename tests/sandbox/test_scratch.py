"""The job's /tmp, by running the launcher (store/sandbox/scratch.py) before bubblewrap as the rewritten
command does: the host's files are there, what a command writes, deletes or renames there lands in
the job's upper layer and the host's /tmp is unchanged; a mount below /tmp (locked in a user
namespace) leaves a private /tmp for that call and says so; a run's work folder is removed whole."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List

import pytest

from store.sandbox import bwrap_args, landlock_scope, probe, scratch

BWRAP = probe.find_bwrap() or ""
ROOT = os.getuid() == 0
OTHER_PYTHON = "/usr/bin/python3"  # for another user: the test's own interpreter may lie in root's home
pytestmark = pytest.mark.skipif(not BWRAP, reason="bubblewrap is not installed (dev/test installs it)")


def host(tmp_path: Path) -> Path:
    """A folder of the host's /tmp (pytest's tmp_path is one) with a file, a folder and a program."""
    seen = tmp_path / "host"
    (seen / "venv" / "bin").mkdir(parents=True)
    (seen / "data.txt").write_text("host data\n")
    (seen / "gone.txt").write_text("still here\n")
    tool = seen / "venv" / "bin" / "tool"
    tool.write_text("#!/bin/sh\necho tool ran\n")
    tool.chmod(0o755)
    return seen


def launch(tmp_path: Path, script: str, prefix: List[str] = (), python: str = "",
           scope: bool = False) -> subprocess.CompletedProcess:
    job = tmp_path / "job"
    layers = scratch.layers(str(job), "run1")
    scratch.prepare(layers)
    if prefix:  # another user runs it: the job's folders are theirs
        subprocess.run(["chown", "-R", "65534:65534", str(job)], check=True)
    argv = [*prefix, *scratch.launcher(layers, python, scope), BWRAP, "--unshare-user", "--die-with-parent",
            "--ro-bind", "/", "/", *scratch.binds(layers), "--", "/bin/sh", "-c", script]
    return subprocess.run(argv, capture_output=True, text=True, timeout=30)


def files(root: Path) -> Dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


def test_the_hosts_tmp_is_seen_and_left_as_it_was(tmp_path: Path) -> None:
    seen = host(tmp_path)
    before = files(seen)
    script = (f"cat {seen}/data.txt && {seen}/venv/bin/tool && echo edited >> {seen}/data.txt && rm {seen}/gone.txt "
              f"&& mv {seen}/venv {seen}/venv2 && echo new > {seen}/new.txt && ls {seen}")
    run = launch(tmp_path, script)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["host", "data", "tool", "ran", "data.txt", "new.txt", "venv2"]
    assert files(seen) == before and not (seen / "new.txt").exists()
    upper = tmp_path / "job" / "tmp" / seen.relative_to("/tmp")
    assert (upper / "new.txt").read_text() == "new\n" and "edited" in (upper / "data.txt").read_text()


def test_the_next_run_finds_what_the_last_one_wrote(tmp_path: Path) -> None:
    seen = host(tmp_path)
    assert launch(tmp_path, f"echo kept > {seen}/new.txt && rm {seen}/gone.txt").returncode == 0
    again = launch(tmp_path, f"cat {seen}/new.txt; ls {seen}")
    assert again.stdout.split() == ["kept", "data.txt", "new.txt", "venv"] and (seen / "gone.txt").exists()


@pytest.mark.skipif(not ROOT or not shutil.which("unshare"), reason="mounting below /tmp needs root")
def test_root_sees_the_host_through_a_mount_below_tmp(tmp_path: Path) -> None:
    seen = host(tmp_path)
    (seen / "mnt").mkdir()
    inner = " ".join(scratch_command(tmp_path, f"cat {seen}/data.txt; echo new > {seen}/new.txt"))
    run = subprocess.run(["unshare", "-m", "sh", "-c", f"mount --make-rprivate / && mount -t tmpfs t {seen}/mnt && "
                          f"{inner}"], capture_output=True, text=True, timeout=30)
    assert run.returncode == 0 and run.stdout == "host data\n", run.stderr
    assert not (seen / "new.txt").exists()


@pytest.mark.skipif(not ROOT or not os.path.exists(OTHER_PYTHON) or not shutil.which("setpriv"),
                    reason="running as another user needs root")
def test_a_mount_below_tmp_leaves_another_user_a_private_tmp_for_the_call() -> None:
    base = Path(tempfile.mkdtemp(prefix="baton-scratch-"))  # pytest's folders are root's alone (0700)
    try:
        base.chmod(0o755)
        seen = host(base)
        (seen / "mnt").mkdir()
        user = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"]
        inner = " ".join(scratch_command(base, f"cat {seen}/data.txt; echo new > /tmp/new.txt && cat /tmp/new.txt",
                                         user))
        run = subprocess.run(["unshare", "-m", "sh", "-c", f"mount --make-rprivate / && mount -t tmpfs t {seen}/mnt "
                              f"&& {inner}"], capture_output=True, text=True, timeout=30)
        assert run.returncode == 0 and run.stdout == "new\n", run.stderr  # a /tmp of the job's own for this call
        assert "/tmp in this call is the job's own, without the host's files" in run.stderr and "No such" in run.stderr
        assert (base / "job" / "tmp" / "new.txt").exists() and not Path("/tmp/new.txt").exists()
        plain = launch(base, f"cat {seen}/data.txt", user, OTHER_PYTHON)  # no mount below /tmp: the overlay
        assert plain.returncode == 0 and plain.stdout == "host data\n" and plain.stderr == "", plain.stderr
    finally:
        shutil.rmtree(base, ignore_errors=True)


def scratch_command(tmp_path: Path, script: str, prefix: List[str] = ()) -> List[str]:
    """The launcher's argv as one shell line (for a test that mounts something first)."""
    from store.sandbox.rewrite import quote

    job = tmp_path / "job"
    layers = scratch.layers(str(job), "run1")
    scratch.prepare(layers)
    if prefix:
        subprocess.run(["chown", "-R", "65534:65534", str(job)], check=True)
    python = OTHER_PYTHON if prefix else sys.executable
    argv = [*prefix, *scratch.launcher(layers, python), BWRAP, "--unshare-user", "--die-with-parent",
            "--ro-bind", "/", "/", *scratch.binds(layers), "--", "/bin/sh", "-c", script]
    return [quote(a) for a in argv]


def test_a_runs_work_folder_is_removed_whole(tmp_path: Path) -> None:
    seen = host(tmp_path)
    assert launch(tmp_path, f"echo x > {seen}/a").returncode == 0
    work = tmp_path / "job" / "work" / "run1"
    assert (work / "tmp" / "work").is_dir() and (work / "tmp" / "work").stat().st_mode & 0o777 == 0
    scratch.release(str(work))
    assert not work.exists() and (tmp_path / "job" / "tmp").is_dir()


# connects to the abstract socket named by its argument: "reached", or "refused" when the scope forbids it
REACH = (f"{os.path.realpath(sys.executable)} -c 'import socket, sys\nc = socket.socket(socket.AF_UNIX)\ntry:\n"
         "    c.connect(\"\\0\" + sys.argv[1])\nexcept OSError:\n    print(\"refused\")\n"
         "else:\n    print(\"reached\")' ")


@pytest.mark.skipif(not landlock_scope.wanted("host"), reason="no Landlock scopes before Linux 6.12")
def test_the_abstract_socket_scope_runs_in_the_launchers_own_process(tmp_path: Path) -> None:
    """Where the job's /tmp is mounted first, the scope is put on by that launcher (``--scope``), not by a
    second Python between it and bwrap; the command inside still reaches no abstract socket outside."""
    layers = scratch.layers(str(tmp_path / "job"), "run1")
    built = bwrap_args.Built([], [], [], None, [], layers)  # type: ignore[arg-type]
    argv = built.launch([*landlock_scope.launch(), BWRAP])
    assert argv == [*scratch.launcher(layers, scope=True), BWRAP] and "--scope" in argv
    assert sum(a.endswith(".py") for a in argv) == 1 and landlock_scope.__file__ not in argv
    alone = bwrap_args.Built([], [], [], None, [], [])  # type: ignore[arg-type]
    assert alone.launch([*landlock_scope.launch(), BWRAP]) == [*landlock_scope.launch(), BWRAP], \
        "without the job's /tmp the scope is still a program of its own"
    name = f"baton-scope-{os.getpid()}"
    server = socket.socket(socket.AF_UNIX)
    server.bind("\0" + name)
    server.listen(4)
    try:
        plain = launch(tmp_path, REACH + name)
        assert plain.returncode == 0 and plain.stdout == "reached\n", plain.stderr
        scoped = launch(tmp_path, REACH + name, scope=True)
        assert scoped.returncode == 0 and scoped.stdout == "refused\n", scoped.stderr
        assert landlock_scope.REFUSED not in scoped.stderr, scoped.stderr
    finally:
        server.close()
