"""Durable file primitives: atomic replace, whole-line append, the lock, and life without fcntl."""

from __future__ import annotations

import os
import subprocess
import sys
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
with durable.locked(Path(sys.argv[2])):
    Path(sys.argv[3]).write_text("held")
    time.sleep(1.0)
"""


@pytest.mark.skipif(not durable.HAVE_LOCKS, reason="no fcntl here: the lock is a no-op by design")
def test_the_lock_excludes_another_process(tmp_path: Path) -> None:
    script, lock, held = tmp_path / "holder.py", tmp_path / "lock", tmp_path / "held"
    script.write_text(HOLDER)
    proc = subprocess.Popen([sys.executable, str(script), str(REPO), str(lock), str(held)])
    try:
        deadline = time.monotonic() + 30
        while not held.exists():
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.005)
        start = time.monotonic()
        with durable.locked(lock):
            waited = time.monotonic() - start
    finally:
        proc.wait(timeout=30)
    assert waited > 0.5


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
