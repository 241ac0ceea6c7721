"""hooks/codecache.py: baton's modules served from one compiled file, never stale, never in the way.

Each test copies the plugin's code to a temporary folder and starts fresh interpreters on it, as
the bootstrap in hooks.json does: install the cache, import, then save.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict

import pytest

from hooks import codecache
from tests.hooks.hookkit import commands_for

REPO = Path(__file__).resolve().parents[2]
# what a hook does with the cache, then what the test wants to know about the modules it got
SCRIPT = """
import json, sys
root = sys.argv[1]
sys.path.insert(0, root)
from hooks import codecache
cache = codecache.install(root)
import store.gate.enforce, store.base.text, store.shell
mods = {name: sys.modules[name] for name in ("store.gate.enforce", "store.base.text", "store.shell")}
print(json.dumps({
    "loaders": {name: type(m.__loader__).__name__ for name, m in mods.items()},
    "files": {name: m.__file__ for name, m in mods.items()},
    "path": list(store.shell.__path__),
    "package": store.gate.enforce.__package__,
    "mark": getattr(store.base.text, "MARK", None),
}))
cache.save()
"""


@pytest.fixture
def root(tmp_path: Path) -> Path:
    dest = tmp_path / "plugin"
    for part in ("hooks", "store"):
        shutil.copytree(REPO / part, dest / part, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def run(root: Path, **env: str) -> Dict[str, Any]:
    full = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    out = subprocess.run([sys.executable, "-S", "-c", SCRIPT, str(root)], env={**full, **env}, capture_output=True,
                         text=True, check=True, timeout=60)
    assert out.stderr == ""
    return json.loads(out.stdout)


def cache_file(root: Path) -> Path:
    return Path(codecache.file_for(str(root)))


def test_the_second_process_gets_its_modules_from_the_file(root: Path) -> None:
    first = run(root)
    assert set(first["loaders"].values()) == {"SourceFileLoader"}
    assert cache_file(root).is_file()
    second = run(root)
    assert set(second["loaders"].values()) == {"Cache"}
    # the same module attributes as the usual import gives
    assert second["files"] == first["files"] == {
        "store.gate.enforce": str(root / "store" / "gate" / "enforce.py"),
        "store.base.text": str(root / "store" / "base" / "text.py"),
        "store.shell": str(root / "store" / "shell" / "__init__.py")}
    assert second["path"] == first["path"] == [str(root / "store" / "shell")]
    assert second["package"] == "store.gate"


def test_a_changed_source_is_imported_as_it_is_now(root: Path) -> None:
    run(root)
    assert run(root)["loaders"]["store.base.text"] == "Cache"
    text = root / "store" / "base" / "text.py"
    text.write_text(text.read_text() + "\nMARK = 7\n")  # a new size
    changed = run(root)
    assert (changed["mark"], changed["loaders"]["store.base.text"]) == (7, "SourceFileLoader")
    again = run(root)
    assert (again["mark"], again["loaders"]["store.base.text"]) == (7, "Cache")  # the file caught up

    before = text.stat()
    text.write_text(text.read_text().replace("MARK = 7", "MARK = 8"))  # the same size, one nanosecond later
    os.utime(text, ns=(before.st_atime_ns, before.st_mtime_ns + 1))
    assert text.stat().st_size == before.st_size
    # not served from the file; (Python's own .pyc, checked to the second, may still be the old code)
    assert run(root)["loaders"]["store.base.text"] == "SourceFileLoader"
    assert (run(root)["mark"], run(root)["loaders"]["store.base.text"]) == (8, "Cache")  # compiled from the source


def test_a_damaged_file_is_ignored_and_replaced(root: Path) -> None:
    run(root)
    path = cache_file(root)
    good = path.read_bytes()
    for damage in (good[: len(good) // 2], b"", b"\xff" * 40, good[:8] + b"garbage" + good[15:]):
        path.write_bytes(damage)
        assert set(run(root)["loaders"].values()) == {"SourceFileLoader"}
        assert set(run(root)["loaders"].values()) == {"Cache"}


def test_nothing_is_written_when_bytecode_writing_is_off(root: Path) -> None:
    run(root, PYTHONDONTWRITEBYTECODE="1")
    assert not cache_file(root).exists()


def test_the_file_follows_pythons_bytecode_prefix_outside_the_hooks(root: Path, tmp_path: Path) -> None:
    """For a program that keeps the prefix (not the hooks: their bootstrap switches it off, see
    tests/hooks/test_hook_persistence.py) the file is where Python puts a ``.pyc``."""
    prefix = tmp_path / "prefix"
    run(root, PYTHONPYCACHEPREFIX=str(prefix))
    assert not cache_file(root).exists()
    assert list(prefix.rglob("baton-modules.*.bin"))
    assert set(run(root, PYTHONPYCACHEPREFIX=str(prefix))["loaders"].values()) == {"Cache"}


def test_a_folder_that_cannot_be_written_only_means_a_slower_start(root: Path) -> None:
    (root / "hooks" / "__pycache__").write_text("a file where the folder would go")  # even root cannot write there
    assert set(run(root)["loaders"].values()) == {"SourceFileLoader"}
    assert set(run(root)["loaders"].values()) == {"SourceFileLoader"}


def test_a_file_from_another_python_is_not_used(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run(root)
    path = cache_file(root)
    entries = codecache.read(str(path))
    assert entries
    monkeypatch.setattr(codecache, "cache_key", lambda: ("baton-modules", codecache.VERSION, "another Python", 0))
    codecache.write(str(path), entries)
    monkeypatch.undo()
    assert codecache.read(str(path)) == {}
    assert set(run(root)["loaders"].values()) == {"SourceFileLoader"}
    assert set(run(root)["loaders"].values()) == {"Cache"}


def test_the_hook_command_answers_the_same_from_the_file(root: Path, tmp_path: Path) -> None:
    """The bootstrap in hooks.json installs the cache: a gate answer is the same on every run."""
    project = tmp_path / "project"
    project.mkdir()
    payload = {"session_id": "s", "transcript_path": "", "cwd": str(project), "hook_event_name": "PreToolUse",
               "tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "t1"}
    (entry,) = commands_for(root / "hooks" / "hooks.json", "PreToolUse", payload, str(tmp_path))
    args = ["-S", "-c", *[a.replace("${CLAUDE_PLUGIN_ROOT}", str(root)) for a in entry["args"][2:]]]  # sh's python3
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(CLAUDE_PROJECT_DIR=str(project), HOME=str(tmp_path))
    answers = [subprocess.run([sys.executable, *args], input=json.dumps(payload), env=env, cwd=project,
                              capture_output=True, text=True, timeout=60) for _ in range(3)]
    assert [(a.returncode, a.stdout, a.stderr) for a in answers] == [(0, "", "")] * 3
    assert cache_file(root).is_file()
