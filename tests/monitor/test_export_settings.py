"""Where the export's ``OTEL_*`` settings come from: baton's telemetry file, this process's
environment, or Claude Code's (its launch environment through ``/proc``, only for an ancestor
process, overridden by its settings' ``env``), one place at a time, never mixed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Dict

import pytest

from store.base.errors import BatonError
from store.monitor import claude_env, export_settings, launch
from store.monitor.export_settings import CARRIED, NOTHING, find, parse
from store.state.location import Layout

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    where = tmp_path / "home"
    where.mkdir()
    monkeypatch.setattr(claude_env, "MANAGED", {sys.platform: str(tmp_path / "managed-settings.json")})
    return where


def env_of(home: Path, **extra: str) -> Dict[str, str]:
    return {"HOME": str(home), "PATH": os.environ.get("PATH", ""), **extra}


def settings_file(home: Path, text: str, mode: int = 0o600) -> Path:
    path = home / ".config" / "baton" / "telemetry.env"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(mode)
    return path


def test_the_file_holds_otel_lines_as_a_shell_would_export_them() -> None:
    text = textwrap.dedent("""\
        # baton's collector
        export OTEL_EXPORTER_OTLP_ENDPOINT="https://otel.example:4318"

        OTEL_EXPORTER_OTLP_HEADERS='Authorization=Bearer%20abc,x-team=relay'
          OTEL_EXPORTER_OTLP_LOGS_HEADERS = x-signal=logs
        OTEL_SERVICE_NAME=
        """)
    assert parse(text, "f") == {"OTEL_EXPORTER_OTLP_ENDPOINT": "https://otel.example:4318",
                                "OTEL_EXPORTER_OTLP_HEADERS": "Authorization=Bearer%20abc,x-team=relay",
                                "OTEL_EXPORTER_OTLP_LOGS_HEADERS": "x-signal=logs", "OTEL_SERVICE_NAME": ""}


@pytest.mark.parametrize("line, says", [
    ("OTEL_EXPORTER_OTLP_ENDPOINT", "line 2: expected NAME=value"),
    ("BATON_TELEMETRY=1", "line 2: BATON_TELEMETRY is not an OpenTelemetry variable"),
    ("otel_exporter_otlp_endpoint=http://x", "is not an OpenTelemetry variable"),
    ("PATH=/tmp/evil", "PATH is not an OpenTelemetry variable"),
    ("OTEL-ENDPOINT=x", "expected NAME=value"),
    ("=x", "expected NAME=value"),
])
def test_a_line_that_is_not_an_otel_setting_is_refused_with_its_place(line: str, says: str) -> None:
    with pytest.raises(BatonError) as caught:
        parse(f"# ok\n{line}\n", "/h/.config/baton/telemetry.env")
    assert caught.value.message.startswith("/h/.config/baton/telemetry.env line 2: ")
    assert says in caught.value.message


def test_a_file_others_may_write_is_refused(home: Path) -> None:
    path = settings_file(home, "OTEL_EXPORTER_OTLP_ENDPOINT=http://a\n", mode=0o622)
    with pytest.raises(BatonError, match="may be written by others.*chmod 600"):
        find(env_of(home), str(home))
    path.chmod(0o644)  # readable by others is the person's choice
    assert find(env_of(home), str(home)).values == {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a"}


def test_a_broken_file_is_an_error_never_a_reason_to_send_elsewhere(home: Path) -> None:
    settings_file(home, "OTEL_EXPORTER_OTLP_ENDPOINT http://a\n")
    with pytest.raises(BatonError, match="line 1"):
        find(env_of(home, OTEL_EXPORTER_OTLP_ENDPOINT="http://elsewhere"), str(home))
    (home / ".config/baton/telemetry.env").write_bytes(b"OTEL_X=\xff\n")
    with pytest.raises(BatonError, match="not UTF-8"):
        find(env_of(home), str(home))


def test_the_file_wins_whole_and_places_are_never_mixed(home: Path) -> None:
    path = settings_file(home, "OTEL_EXPORTER_OTLP_ENDPOINT=http://batons-collector:4318\n")
    mine = env_of(home, OTEL_EXPORTER_OTLP_ENDPOINT="http://other:4318",
                  OTEL_EXPORTER_OTLP_HEADERS="authorization=Bearer%20for-other")
    found = find(mine, str(home))
    assert found.values == {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://batons-collector:4318"}
    assert found.source == str(path)  # the other collector's token does not go to baton's collector
    path.unlink()
    found = find(mine, str(home))
    assert found.values == {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://other:4318",
                            "OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer%20for-other"}
    assert found.source == "this process's environment"


def test_xdg_config_home_moves_the_file(home: Path, tmp_path: Path) -> None:
    other = tmp_path / "xdg"
    (other / "baton").mkdir(parents=True)
    (other / "baton" / "telemetry.env").write_text("OTEL_SERVICE_NAME=svc\n")
    (other / "baton" / "telemetry.env").chmod(0o600)
    assert find(env_of(home, XDG_CONFIG_HOME=str(other)), str(home)).values == {"OTEL_SERVICE_NAME": "svc"}


def test_claude_code_settings_env_merges_as_claude_code_merges_it(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text(json.dumps({"env": {
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://user", "OTEL_SERVICE_NAME": "user", "FOO": "not otel",
        "OTEL_EXPORTER_OTLP_TIMEOUT": 2500, "OTEL_SDK_DISABLED": True}}))
    (project / ".claude" / "settings.json").write_text(json.dumps({"env": {"OTEL_SERVICE_NAME": "project"}}))
    (project / ".claude" / "settings.local.json").write_text(json.dumps({"env": {"OTEL_RESOURCE_ATTRIBUTES": "a=b"}}))
    (tmp_path / "managed-settings.json").write_text(json.dumps({"env": {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://org"}}))
    found = find(env_of(home), str(project))
    assert found.values == {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://org", "OTEL_SERVICE_NAME": "project",
                            "OTEL_RESOURCE_ATTRIBUTES": "a=b", "OTEL_EXPORTER_OTLP_TIMEOUT": "2500"}
    assert found.source.startswith("Claude Code's environment: the env of ")
    assert str(home / ".claude" / "settings.json") in found.source and "managed-settings.json" in found.source
    # CLAUDE_PROJECT_DIR (a hook's) names the project Claude Code runs in, wherever baton looks from
    assert find(env_of(home, CLAUDE_PROJECT_DIR=str(project)), str(tmp_path)).values["OTEL_SERVICE_NAME"] == "project"
    (home / ".claude" / "settings.json").write_text("{broken")
    assert "OTEL_EXPORTER_OTLP_TIMEOUT" not in find(env_of(home), str(project)).values


def test_nothing_set_anywhere_gives_the_defaults(home: Path) -> None:
    assert find(env_of(home), str(home)) == export_settings.Settings({}, NOTHING)


def test_a_carried_choice_is_final(home: Path) -> None:
    """A sender started by a hook uses what the hook found, even nothing, and says where it came from."""
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text(json.dumps({"env": {"OTEL_SERVICE_NAME": "later"}}))
    found = find(env_of(home, **{CARRIED: NOTHING}), str(home))
    assert found.values == {} and found.source == NOTHING
    found = find(env_of(home, OTEL_SERVICE_NAME="svc", **{CARRIED: "Claude Code's environment: x"}), str(home))
    assert found.values == {"OTEL_SERVICE_NAME": "svc"} and found.source == "Claude Code's environment: x"
    carried = export_settings.carry({"OTEL_STALE": "1", "PATH": "/bin"}, found)
    assert carried == {"PATH": "/bin", "OTEL_SERVICE_NAME": "svc", CARRIED: "Claude Code's environment: x"}


CHILD = textwrap.dedent("""\
    import json, os, sys
    sys.path.insert(0, sys.argv[1])
    from store.monitor.export_settings import find
    found = find(os.environ, sys.argv[2])
    print(json.dumps([found.values, found.source]))
    """)


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="Claude Code's launch environment is read from /proc")
def test_the_launch_environment_is_read_from_an_ancestor_only(home: Path, tmp_path: Path) -> None:
    """A parent started with OTEL_* (as Claude Code is by the person's shell) whose child, as a hook,
    has none: the child reads the parent's through CLAUDE_PID. The same CLAUDE_PID naming a process
    that is not an ancestor reads nothing."""
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    parent = ("import os, subprocess, sys\n"
              "env = {k: v for k, v in os.environ.items() if not k.startswith('OTEL_')}\n"
              "env['CLAUDE_PID'] = sys.argv[4] if len(sys.argv) > 4 else str(os.getpid())\n"
              "sys.exit(subprocess.run([sys.executable, *sys.argv[1:4]], env=env).returncode)\n")
    launch_env = env_of(home, OTEL_EXPORTER_OTLP_ENDPOINT="http://from-the-shell:4318",
                        OTEL_EXPORTER_OTLP_HEADERS="authorization=Bearer%20t", UNRELATED="x")
    args = [sys.executable, "-c", parent, str(script), str(REPO), str(tmp_path)]
    out = subprocess.run(args, env=launch_env, capture_output=True, text=True, check=True).stdout
    values, source = json.loads(out)
    assert values == {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://from-the-shell:4318",
                      "OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer%20t"}
    assert "was started with" in source

    stranger = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], env=launch_env)
    try:
        out = subprocess.run(args + [str(stranger.pid)], env=launch_env, capture_output=True, text=True,
                             check=True).stdout
    finally:
        stranger.kill()
        stranger.wait()
    assert json.loads(out) == [{}, NOTHING]


def test_a_hook_with_a_broken_file_starts_no_sender_and_says_why(home: Path, tmp_path: Path) -> None:
    settings_file(home, "OTEL_ENDPOINT\n")
    state = tmp_path / "project" / ".baton"
    state.mkdir(parents=True)
    layout = Layout(state, tmp_path / "project")
    assert launch.kick(layout, env_of(home, BATON_TELEMETRY="1")) is False
    saved = json.loads((state / "monitor" / "telemetry.json").read_text())
    assert "telemetry.env line 1: expected NAME=value" in saved["error"]
    settings_file(home, "OTEL_SDK_DISABLED=true\n")
    assert launch.sender_env(layout, env_of(home, BATON_TELEMETRY="1")) is None
    settings_file(home, "OTEL_SERVICE_NAME=svc\n")
    carried = launch.sender_env(layout, env_of(home, BATON_TELEMETRY="1"))
    assert carried is not None and carried["OTEL_SERVICE_NAME"] == "svc" and carried[CARRIED].endswith("telemetry.env")
