"""OpenTelemetry from inside Claude Code, set where a person sets it: the real CLI, a real collector
(rotel behind a proxy that demands a header, as a collector behind an authenticating gateway does)
on a port that is not the default, and baton's automatic export started by the session's hooks.

Claude Code 2.1.328 strips every ``OTEL_*`` variable from its hooks' environments, so these pass
only because baton reads them where they can still be found: the CLI's launch environment, the
``env`` of its settings, or baton's own telemetry file.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from monitor.collector import Rotel, latest

from .briefs import Run, bash
from .driver import Claude
from .fakeapi import FakeAPI, text
from .jobstate import write_plan

JOB = "e2e-otel"
TOKEN = "Bearer s3cret-for-the-collector"


@pytest.fixture(autouse=True)
def no_otel_from_the_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("OTEL_") or name == "BATON_TELEMETRY":
            monkeypatch.delenv(name)


@pytest.fixture
def rotel() -> Iterator[Rotel]:
    collector = Rotel(required={"authorization": TOKEN}).start()
    try:
        yield collector
    finally:
        collector.close()


@pytest.fixture
def decoy() -> Iterator[Rotel]:
    """A second collector that must receive nothing."""
    collector = Rotel().start()
    try:
        yield collector
    finally:
        collector.close()


def one_session(claude: Claude, fake_api: FakeAPI, project: Path, plugin: Path, env: dict[str, str]) -> None:
    write_plan(project, {"job": JOB, "steps": [{"id": "a", "phase": "implemented"}]})
    fake_api.script = Run([bash("echo A > a.txt"), bash('baton record a done "wrote a.txt"')], [text("done")])
    result = claude.run("run the job", cwd=project, plugin_dir=plugin, env=env)
    assert result.returncode == 0, result.stderr


def arrived(collector: Rotel) -> dict[str, Any]:
    """What the collector took once the step's record and the job's progress are in."""
    collector.wait_for("baton.step.recorded", timeout=60)
    dump = collector.wait_for("baton.job.steps.done", timeout=60)
    assert latest(dump, "baton.job.steps.done", **{"baton.job.id": JOB}) == 1
    [record] = [r for r in dump["logs"] if r.get("EventName") == "baton.step.recorded"]
    assert record["attributes"]["baton.job.id"] == JOB and record["attributes"]["baton.step.id"] == "a"
    assert all(not error for _, _, _, error in collector.bodies), "a body failed the protobuf schema"
    return dump


def export_state(project: Path) -> dict[str, Any]:
    state: dict[str, Any] = json.loads((project / ".baton/monitor/telemetry.json").read_text())
    return state


def test_the_variables_exported_before_claude_code_starts_reach_the_export(
        claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path, rotel: Rotel) -> None:
    env = {"BATON_TELEMETRY": "1", "OTEL_EXPORTER_OTLP_ENDPOINT": rotel.endpoint,
           "OTEL_EXPORTER_OTLP_HEADERS": f"authorization={TOKEN.replace(' ', '%20')}",
           "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment=e2e"}
    one_session(claude, fake_api, project, plugin_copy, env)

    dump = arrived(rotel)
    assert {m["resource"].get("deployment.environment") for m in dump["metrics"]} == {"e2e"}
    assert 401 not in rotel.answers, "a request went without the header the collector requires"
    state = export_state(project)
    assert state["error"] is None and state["from"].startswith("Claude Code's environment")
    assert "was started with" in state["from"]


def test_baton_s_telemetry_file_wins_and_carries_the_headers(
        claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path, rotel: Rotel, decoy: Rotel) -> None:
    settings = claude.home / ".config" / "baton" / "telemetry.env"
    settings.parent.mkdir(parents=True)
    settings.write_text("# where baton sends the job's figures\n"
                        f'export OTEL_EXPORTER_OTLP_ENDPOINT="{rotel.endpoint}"\n'
                        f"OTEL_EXPORTER_OTLP_HEADERS=authorization={TOKEN.replace(' ', '%20')}\n"
                        "OTEL_EXPORTER_OTLP_LOGS_HEADERS=x-signal=logs\n")
    settings.chmod(0o600)
    # the shell names another collector: baton's own file says where baton's figures go
    env = {"BATON_TELEMETRY": "1", "OTEL_EXPORTER_OTLP_ENDPOINT": decoy.endpoint}
    one_session(claude, fake_api, project, plugin_copy, env)

    arrived(rotel)
    assert decoy.headers == [], "the figures also went to the collector the shell named"
    logs = [h for path, h in rotel.headers if path == "/v1/logs"]
    metrics = [h for path, h in rotel.headers if path == "/v1/metrics"]
    assert logs and all(h.get("x-signal") == "logs" and h.get("authorization") == TOKEN for h in logs)
    assert metrics and all("x-signal" not in h and h.get("authorization") == TOKEN for h in metrics)
    assert export_state(project)["from"] == str(settings)


def test_the_variables_in_claude_code_s_settings_reach_the_export(
        claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path, rotel: Rotel) -> None:
    user_settings = claude.home / ".claude" / "settings.json"
    user_settings.parent.mkdir(parents=True)
    user_settings.write_text(json.dumps({"env": {
        "BATON_TELEMETRY": "1", "OTEL_EXPORTER_OTLP_ENDPOINT": rotel.endpoint,
        "OTEL_EXPORTER_OTLP_HEADERS": f"authorization={TOKEN.replace(' ', '%20')}"}}))
    one_session(claude, fake_api, project, plugin_copy, {})

    arrived(rotel)
    state = export_state(project)
    assert state["error"] is None and str(user_settings) in state["from"]
