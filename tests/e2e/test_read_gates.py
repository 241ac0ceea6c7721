"""Read of baton's secrets, through the real CLI, wherever the person keeps them: the approval key and
the telemetry settings (which hold the collector's credentials) under ``~/.config/baton/`` and under
an ``XDG_CONFIG_HOME`` set in the shell that starts Claude Code. Read is gated only for these paths
(hooks.json's ``if`` filters); each Read is refused and the secret never reaches the model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .driver import Claude
from .fakeapi import FakeAPI, text, tool_use
from .jobstate import gate_denied, results_by_id, write_plan

SECRET = "KEY-TEXT-51c2e0"
HEADERS = "OTEL_EXPORTER_OTLP_HEADERS=authorization=Bearer TOKEN-9d04b7"


@pytest.mark.parametrize("where", ["home", "xdg"])
def test_reads_of_the_key_and_the_telemetry_settings_are_refused(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path, tmp_path: Path, where: str
) -> None:
    write_plan(project, {"steps": ["a", "b"]})
    config = claude.home / ".config" if where == "home" else tmp_path / "elsewhere" / "config"
    folder = config / "baton"
    folder.mkdir(parents=True)
    (folder / "approval.key").write_text(SECRET + "\n")
    (folder / "telemetry.env").write_text(HEADERS + "\n")
    fake_api.script = [
        [text("reading"),
         tool_use("Read", {"file_path": str(folder / "approval.key")}, id="key"),
         tool_use("Read", {"file_path": str(folder / "telemetry.env")}, id="otel")],
        [text("done")],
        [text("done")],
    ]
    env = {"XDG_CONFIG_HOME": str(config)} if where == "xdg" else {}
    run = claude.run("do step a", cwd=project, plugin_dir=plugin_copy, env=env, timeout=180)

    assert run.returncode == 0, run.stderr
    seen = results_by_id(fake_api.requests_main()[1])
    assert gate_denied(seen["key"]) and "approval key" in seen["key"].text, seen["key"].text
    assert gate_denied(seen["otel"]) and "telemetry settings" in seen["otel"].text, seen["otel"].text
    sent = json.dumps(fake_api.requests())
    assert SECRET not in sent and "TOKEN-9d04b7" not in sent, "a secret reached the model"
