"""The real interactive TUI, driven through tmux: a person types `/bri`, picks `/baton:brief`.

The CLI runs in a tmux server of its own (`-L` socket name unique to the test) from a launcher
script holding the driver's environment. `$HOME/.claude.json` holds what a person's first start
leaves (`accept_terminal`): onboarding done, the project trusted, the environment's API key
accepted and the auto-mode nudge seen, so no box opens over the prompt to take the keys a test
types. The screen is polled with a deadline; `submit` presses Enter only once the typed text is
on the input line.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from .driver import Claude
from .fakeapi import FakeAPI
from .jobstate import baton

WIDTH, HEIGHT = 160, 50
PROMPT = "\u276f"  # the input line's marker; capture-pane drops the trailing space


class Tmux:
    """One detached tmux session on a private server."""

    def __init__(self, name: str) -> None:
        self.server = name
        self.target = "baton"
        self.socket: Path | None = None

    def __call__(self, *args: str) -> str:
        done = subprocess.run(["tmux", "-L", self.server, *args], capture_output=True, text=True, timeout=10)
        assert done.returncode == 0, f"tmux {' '.join(args)}: {done.stderr}"
        return done.stdout

    def start(self, cwd: Path, launcher: Path) -> None:
        self("new-session", "-d", "-s", self.target, "-x", str(WIDTH), "-y", str(HEIGHT), "-c", str(cwd), str(launcher))
        self.socket = Path(self("display-message", "-p", "#{socket_path}").strip())

    def screen(self) -> str:
        return self("capture-pane", "-p", "-t", self.target)

    def keys(self, *keys: str, literal: bool = False) -> None:
        self("send-keys", "-t", self.target, *(["-l"] if literal else []), *keys)

    def wait_for(self, seen: Callable[[str], bool], what: str, timeout: float = 30) -> str:
        """Poll the screen until `seen(screen)`; fail with the last screen after `timeout`."""
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if seen(screen):
                return screen
            if time.monotonic() > deadline:
                pytest.fail(f"never saw {what} within {timeout}s; the screen was:\n{screen}")
            time.sleep(0.1)

    def settled(self, seen: Callable[[str], bool], what: str, timeout: float = 30, still: float = 1.0) -> str:
        """Like `wait_for`, then until the screen has not changed for `still` seconds: a box the TUI is
        still drawing may not take keys yet (a key sent too early is lost)."""
        screen = self.wait_for(seen, what, timeout)
        deadline = time.monotonic() + timeout
        quiet_since = time.monotonic()
        while time.monotonic() - quiet_since < still:
            time.sleep(0.1)
            now = self.screen()
            if now != screen:
                screen, quiet_since = now, time.monotonic()
            if time.monotonic() > deadline:
                pytest.fail(f"{what} never stopped changing within {timeout}s; the screen was:\n{screen}")
        assert seen(screen), f"{what} went away while it settled; the screen was:\n{screen}"
        return screen

    def kill(self) -> None:
        """Stop the server (and the CLI in it) and remove its socket file, which tmux leaves."""
        subprocess.run(["tmux", "-L", self.server, "kill-server"], capture_output=True, timeout=10)
        if self.socket is not None:
            self.socket.unlink(missing_ok=True)


def launcher(claude: Claude, plugin: Path, path: Path) -> Path:
    """A script starting the CLI with exactly the driver's environment (and tmux's TERM)."""
    env = {k: v for k, v in claude.env().items() if k != "TERM"}
    assignments = " ".join(shlex.quote(f"{k}={v}") for k, v in env.items())
    argv = shlex.join([str(claude.exe), "--plugin-dir", str(plugin)])
    path.write_text(f'#!/bin/sh\nexec env -i TERM="$TERM" {assignments} {argv}\n')
    path.chmod(0o755)
    return path


@pytest.fixture
def tmux(claude: Claude) -> Iterator[Tmux]:
    session = Tmux(f"baton-e2e-{claude.tag}")
    try:
        yield session
    finally:
        session.kill()


def test_typing_bri_offers_baton_brief_and_running_it_shows_the_brief(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path, tmp_path: Path, tmux: Tmux
) -> None:
    for args in (("init", "a", "b", "c", "d"), ("record", "a", "done", "by hand")):
        made = baton(plugin_copy, project, claude.home, *args)
        assert made.returncode == 0, made.stderr
    start_tui(claude, project, plugin_copy, tmp_path, tmux)

    tmux.keys("/bri", literal=True)
    menu = tmux.wait_for(lambda s: "/baton:brief" in s, "/baton:brief in the completion menu")
    assert "Show the job's brief" in menu  # the command's description, shown beside it
    tmux.keys("Enter")
    screen = tmux.wait_for(lambda s: "NEXT: b" in s, "the brief")

    lines = [line.strip() for line in screen.splitlines()]
    assert {"PLAN: a, b, c, d", "DONE: a", "NEXT: b", "LAST: a done by hand"} <= set(lines)
    assert "\u25cf Operation stopped by hook: baton brief:" in lines, screen  # what the person sees, exactly
    assert "blocked by hook" not in screen
    assert fake_api.requests_main() == []  # answered by baton's hook, not by the model


def accept_terminal(claude: Claude, project: Path) -> None:
    """What a person's first interactive `claude` in the project leaves in ~/.claude.json: onboarding
    done, the project trusted, the environment's API key ("test", the driver's) accepted, and the
    one-time "Make auto mode your default permission mode?" nudge seen. The CLI opens that nudge
    (when user settings name a defaultMode other than auto) or the API key question over the prompt,
    some time after the prompt is drawn; either takes the keys a test types next."""
    (claude.home / ".claude.json").write_text(json.dumps({
        "hasCompletedOnboarding": True, "hasSeenAutoDefaultNudge": True,
        "customApiKeyResponses": {"approved": ["test"], "rejected": []},
        "projects": {str(project): {"hasTrustDialogAccepted": True}}}))


def empty_prompt(screen: str) -> bool:
    return PROMPT in [line.strip() for line in screen.splitlines()]


def start_tui(claude: Claude, project: Path, plugin: Path, tmp_path: Path, tmux: Tmux) -> None:
    """The TUI started with `accept_terminal`'s settings, once its empty prompt has stopped changing
    (a key typed while the CLI still draws its start is lost)."""
    accept_terminal(claude, project)
    tmux.start(project, launcher(claude, plugin, tmp_path / "launch.sh"))
    screen = tmux.settled(empty_prompt, "an empty prompt", timeout=60, still=1.5)
    assert "Do you want to use this API key?" not in screen and "Make auto mode" not in screen, screen


def submit(tmux: Tmux, typed: str) -> None:
    """Type `typed` on the input line and press Enter once it shows there whole (an Enter that
    arrives before the text submits a part of it, or nothing)."""
    tmux.keys(typed, literal=True)
    shown = f"{PROMPT} {' '.join(typed.split())}"  # the space after the marker may be a no-break one
    tmux.wait_for(lambda s: any(" ".join(line.split()) == shown for line in s.splitlines()),
                  f"{typed!r} on the input line")
    tmux.keys("Enter")


def clear_input(tmux: Tmux, typed: str) -> None:
    tmux.keys("Escape")
    tmux.keys(*["BSpace"] * len(typed))
    tmux.wait_for(empty_prompt, "an empty prompt")


def test_the_bare_brief_and_record_complete_are_listed_and_answer_in_the_terminal(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path, tmp_path: Path, tmux: Tmux
) -> None:
    for args in (("init", "a", "b", "c", "--commands"), ("record", "a", "done", "by hand")):
        made = baton(plugin_copy, project, claude.home, *args)
        assert made.returncode == 0, made.stderr
    start_tui(claude, project, plugin_copy, tmp_path, tmux)

    tmux.keys("/bri", literal=True)
    menu = tmux.wait_for(lambda s: "/brief " in s, "/brief in the completion menu")
    assert "Show the job's brief (PLAN / DONE / NEXT / LAST)" in menu and "/baton:brief" in menu
    clear_input(tmux, "/bri")
    tmux.keys("/rec", literal=True)
    menu = tmux.wait_for(lambda s: "/record " in s, "/record in the completion menu")
    assert "Record a step's outcome in the job's ledger" in menu
    clear_input(tmux, "/rec")

    submit(tmux, "/help")  # not "/help" anywhere: the menu a typed "/" opens lists it before "help" is in
    screen = tmux.settled(lambda s: "to switch" in s, "the help")
    for _ in range(4):  # the help's tabs: General, Commands, Custom commands; one Right per drawn tab
        if "Browse custom commands" in screen:
            break
        tmux.keys("Right")
        before = screen
        screen = tmux.settled(lambda s: s != before, "the help's next tab")  # noqa: B023 - used at once
    listed = [line.strip() for line in tmux.wait_for(lambda s: "Browse custom commands" in s, "custom commands")
              .splitlines()]
    assert "Browse custom commands" in listed, listed
    at = next(i for i, line in enumerate(listed) if line.endswith("/brief"))
    assert listed[at + 1].startswith("Show the job's brief") and listed[at + 2] == "/record"
    assert listed[at + 3].startswith("Record a step's outcome in the job's ledger")
    tmux.keys("Escape")
    tmux.wait_for(empty_prompt, "the help closed")

    tmux.keys("/brief", literal=True)
    tmux.wait_for(lambda s: "/brief " in s, "the menu")
    tmux.keys("Enter")
    screen = tmux.wait_for(lambda s: "NEXT: b" in s, "the brief")
    lines = [line.strip() for line in screen.splitlines()]
    assert "\u25cf Operation stopped by hook: baton brief:" in lines, screen
    assert {"PLAN: a, b, c", "DONE: a", "NEXT: b", "LAST: a done by hand"} <= set(lines)
    assert "UserPromptSubmit operation blocked by hook:" not in screen
    assert fake_api.requests_main() == []  # answered by baton's hook, not by the model
