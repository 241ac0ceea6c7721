"""What the fault tests share: hooks started as hooks.json starts them, a full disk and a read-only
folder made for real (a tmpfs and a read-only bind mount, as root; a chmod otherwise)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, Iterator, Mapping, Optional

import pytest

REPO = Path(__file__).resolve().parents[2]
HOOKS = json.loads((REPO / "hooks" / "hooks.json").read_text())["hooks"]
SESSION = "fault-session-0000"


def hook(event: str, payload: Mapping[str, Any], project: Path, env: Optional[Mapping[str, str]] = None,
         matcher_tool: str = "") -> Optional[Dict[str, Any]]:
    """Run the first hooks.json entry for ``event`` (for tool events, the group whose matcher names
    ``matcher_tool``) as Claude Code does; return its JSON answer (``None``: no output). It must
    exit 0 and write nothing on stderr."""
    groups = HOOKS[event]
    if matcher_tool:
        groups = [g for g in groups if matcher_tool in str(g.get("matcher", "")).split("|")]
    entry = groups[0]["hooks"][0]
    # hooks.json: /bin/sh -c LAUNCH <bootstrap> ROOT EVENT, which runs python3 -S -c <bootstrap> ROOT EVENT
    args = ["-S", "-c", *[str(a).replace("${CLAUDE_PLUGIN_ROOT}", str(REPO)) for a in entry["args"][2:]]]
    full = {**(env or os.environ), "CLAUDE_PROJECT_DIR": str(project), "CLAUDE_PLUGIN_ROOT": str(REPO),
            "CLAUDE_CODE_SESSION_ID": str(payload.get("session_id", SESSION))}
    body = {"session_id": SESSION, "transcript_path": "", "cwd": str(project), "hook_event_name": event, **payload}
    done = subprocess.run([sys.executable, *args], input=json.dumps(body).encode(), capture_output=True,
                          cwd=str(project), env=full, timeout=60)
    assert done.returncode == 0 and done.stderr == b"", (done.returncode, done.stderr)
    return json.loads(done.stdout) if done.stdout else None


def context(answer: Optional[Mapping[str, Any]]) -> str:
    return str(((answer or {}).get("hookSpecificOutput") or {}).get("additionalContext", ""))


def can_mount() -> bool:
    return os.geteuid() == 0 and shutil.which("mount") is not None


def _run(*argv: str) -> None:
    subprocess.run(list(argv), check=True, capture_output=True)


@contextlib.contextmanager
def small_disk(folder: Path, size: str = "256k") -> Iterator[Path]:
    """A tmpfs of ``size`` mounted on ``folder`` for the block (root only), unmounted after."""
    if not can_mount():
        pytest.skip("a full disk is made with a small tmpfs, which needs root (CI runs as root)")
    folder.mkdir(parents=True, exist_ok=True)
    try:
        _run("mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(folder))
    except subprocess.CalledProcessError as exc:
        pytest.skip(f"cannot mount a tmpfs here: {exc.stderr.decode(errors='replace').strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)


def fill(disk: Path) -> None:
    """Fill the file system holding ``disk`` to the last byte."""
    fd = os.open(str(disk / "filler"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        for size in (4096, 1):
            try:
                while True:
                    os.write(fd, b"\0" * size)
            except OSError:
                pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """``folder`` read-only for the block: a read-only bind mount as root, a chmod otherwise."""
    if can_mount():
        _run("mount", "--bind", str(folder), str(folder))
        try:
            _run("mount", "-o", "remount,bind,ro", str(folder))
            yield
        finally:
            subprocess.run(["umount", "-l", str(folder)], capture_output=True)
        return
    modes = {p: p.stat().st_mode for p in [folder, *folder.rglob("*")]}
    for path in modes:
        path.chmod(0o555 if path.is_dir() else 0o444)
    try:
        yield
    finally:
        for path, mode in modes.items():
            path.chmod(mode)
