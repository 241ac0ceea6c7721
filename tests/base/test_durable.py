"""Durable file primitives: atomic replace, whole-line append, the lock, and life without fcntl."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, List

import pytest

from store.base import durable

if TYPE_CHECKING:
    from conftest import Baton, Sandbox

REPO = Path(__file__).resolve().parents[2]


def test_atomic_write_replaces_the_file_and_leaves_no_temp(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    path.write_bytes(b"old")
    durable.atomic_write(path, b"new")
    durable.atomic_write(tmp_path / "fresh.json", b"fresh", sync=False)
    assert path.read_bytes() == b"new" and (tmp_path / "fresh.json").read_bytes() == b"fresh"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fresh.json", "state.json"]


def test_atomic_write_failure_keeps_the_old_file_and_the_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "state.json"
    path.write_bytes(b"old")

    def refuse(src: Any, dst: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError, match="No space left"):
        durable.atomic_write(path, b"new")
    assert path.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["state.json"]


def test_append_line_writes_the_whole_line_in_one_call(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "steps.jsonl"
    calls: List[bytes] = []
    real = os.write

    def watching(fd: int, data: Any) -> int:
        calls.append(bytes(data))
        return real(fd, data)

    monkeypatch.setattr(os, "write", watching)
    line = b'{"seq":1}' * 1000 + b"\n"
    assert durable.append_line(path, line) == len(line)
    assert durable.append_line(path, b"two\n", sync=False) == len(line) + 4
    assert calls == [line, b"two\n"]
    assert path.read_bytes() == line + b"two\n"


def test_append_line_finishes_a_short_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "steps.jsonl"
    real = os.write
    monkeypatch.setattr(os, "write", lambda fd, data: real(fd, bytes(data)[:3]))
    durable.append_line(path, b"0123456789\n")
    assert path.read_bytes() == b"0123456789\n"


HOLDER = """
import sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from store.base import durable
held, release, released = (Path(sys.argv[3] + suffix) for suffix in ("", ".release", ".released"))
with durable.locked(Path(sys.argv[2])):
    held.write_text("held")
    deadline = time.monotonic() + 60
    while not release.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    released.write_text("released")  # the last thing before the lock goes
"""


@pytest.mark.skipif(not durable.HAVE_LOCKS, reason="no fcntl here: the lock is a no-op by design")
def test_the_lock_excludes_another_process(tmp_path: Path) -> None:
    """The holder keeps the lock until told to let go, not for a while: a thread asking for it meanwhile
    is still waiting, and gets it only after the holder said it lets go (no timing to lose on a busy
    machine)."""
    script, lock, held = tmp_path / "holder.py", tmp_path / "lock", tmp_path / "held"
    release, released = tmp_path / "held.release", tmp_path / "held.released"
    script.write_text(HOLDER)
    proc = subprocess.Popen([sys.executable, str(script), str(REPO), str(lock), str(held)])
    seen: List[bool] = []

    def take() -> None:
        with durable.locked(lock):
            seen.append(released.exists())

    try:
        deadline = time.monotonic() + 30
        while not held.exists():
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.005)
        taker = threading.Thread(target=take, daemon=True)
        taker.start()
        taker.join(0.5)
        assert taker.is_alive() and seen == [], "the lock was taken while another process held it"
        release.touch()
        taker.join(30)
    finally:
        release.touch()
        proc.wait(timeout=30)
    assert seen == [True]


NO_FCNTL = """
import runpy, sys
sys.modules["fcntl"] = None  # every "import fcntl" now raises ImportError, as on Windows
root, script = sys.argv[1], sys.argv[2]
sys.path.insert(0, root)
from store.base import durable
if durable.HAVE_LOCKS or "fcntl" in dir(durable) and durable.fcntl is not None:
    sys.exit("fcntl was imported after all")
sys.argv = sys.argv[2:]
runpy.run_path(script, run_name="__main__")
"""


def test_everything_works_single_writer_without_fcntl(
        baton: Baton, sandbox: Sandbox, tmp_path: Path, plugin_copy: Path) -> None:
    wrapper = tmp_path / "no_fcntl.py"
    wrapper.write_text(NO_FCNTL)

    def run(*args: str) -> Any:
        result = baton(str(plugin_copy), str(plugin_copy / "bin" / "baton"), *args, script=wrapper)
        assert "Traceback" not in result.err
        return result

    assert run("init", "a", "b").code == 0
    assert run("record", "a", "running", "no locks here").out == "recorded a running (attempt 1, #1); NEXT: a\n"
    assert run("record", "a", "done").out == "recorded a done (attempt 1, #2); NEXT: b\n"
    brief = run("brief")
    assert (brief.code, brief.err) == (0, "")
    assert brief.out.splitlines() == ["PLAN: a, b", "DONE: a", "NEXT: b", "LAST: a done"]
    verify = run("verify")
    assert verify.code == 0 and verify.out.startswith("ok: 2 records, chain intact")
    status = run("status").out
    assert status.splitlines()[0].endswith("  1/2 steps") and "since the first of 2 records" in status
    assert len(run("log").out.splitlines()) == 2
    assert (sandbox.state / "steps.jsonl").read_bytes().count(b"\n") == 2
