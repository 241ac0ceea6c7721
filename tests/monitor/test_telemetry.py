"""OpenTelemetry export against a real collector (rotel, started here on loopback ports): the decoded
metric names, values and attributes match ``baton status --json``; events arrive as log records;
every body is valid for the official protobuf schema; nothing leaves the machine unless asked; a
collector that is down or slow loses nothing a later export cannot send; hooks never wait."""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Iterator, List

import jobs
import pytest
from collector import Rotel, free_port, json_bodies, latest, points

from store.monitor import launch, telemetry
from store.state.location import Layout

if TYPE_CHECKING:
    from conftest import Baton


@pytest.fixture
def rotel() -> Iterator[Rotel]:
    collector = Rotel().start()
    try:
        yield collector
    finally:
        collector.close()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    where = tmp_path / "project"
    jobs.write_job(where, steps=8, sessions=3, killed_every=2)  # the second session is killed
    return where


def env_for(endpoint: str, **extra: str) -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env.update(BATON_TELEMETRY="1", OTEL_EXPORTER_OTLP_ENDPOINT=endpoint, OTEL_RESOURCE_ATTRIBUTES=
               "deployment.environment=test,team=relay%20ops", OTEL_SERVICE_NAME="baton-test", **extra)
    return env


def status(baton: Baton, project: Path) -> Dict[str, Any]:
    data: Dict[str, Any] = json.loads(baton("status", "--json", cwd=project).out)
    return data


def test_the_standard_variables_configure_the_export() -> None:
    config = telemetry.Config({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318/",
                               "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": "https://logs.example/v1/custom",
                               "OTEL_EXPORTER_OTLP_HEADERS": "Authorization=Bearer%20abc,x-team=relay",
                               "OTEL_EXPORTER_OTLP_METRICS_HEADERS": "x-team=metrics",
                               "OTEL_EXPORTER_OTLP_TIMEOUT": "2500",
                               "OTEL_RESOURCE_ATTRIBUTES": "service.name=ignored,baton.job.id=j%2C1,bad"})
    assert (config.metrics_url, config.logs_url) == ("http://collector:4318/v1/metrics", "https://logs.example/v1/custom")
    assert config.metrics_headers == {"Authorization": "Bearer abc", "x-team": "metrics"}
    assert config.logs_headers == {"Authorization": "Bearer abc", "x-team": "relay"}
    assert config.timeout == 2.5
    assert config.resource["service.name"] == "ignored" and config.resource["baton.job.id"] == "j,1"
    assert telemetry.Config({"OTEL_SERVICE_NAME": "svc"}).resource["service.name"] == "svc"
    default = telemetry.Config({})
    assert (default.metrics_url, default.timeout) == ("http://localhost:4318/v1/metrics", 5.0)


@pytest.mark.parametrize(("value", "on"), [("1", True), ("true", True), ("", False), ("0", False), ("no", False)])
def test_telemetry_is_off_unless_asked(value: str, on: bool) -> None:
    assert telemetry.enabled({"BATON_TELEMETRY": value}) is on
    assert telemetry.enabled({"BATON_TELEMETRY": value, "OTEL_SDK_DISABLED": "true"}) is False


def test_the_export_reaches_a_real_collector_with_the_status_figures(baton: Baton, project: Path,
                                                                     rotel: Rotel) -> None:
    data = status(baton, project)
    run = baton("export", cwd=project, env=env_for(rotel.endpoint))
    assert run.code == 0, run.err
    assert run.out.startswith("sent ") and rotel.endpoint in run.out
    dump = rotel.wait_for("baton.session.ended")
    rotel.wait_for("Name: baton.job.turns")
    job = {"baton.job.id": "synthetic-8"}
    assert latest(dump, "baton.job.steps.done", **job) == data["done"] == 8
    assert latest(dump, "baton.job.steps.total", **job) == 8
    assert latest(dump, "baton.job.sessions", **job) == 3
    for kind, type_name in (("input", "input"), ("output", "output"), ("cache_read", "cacheRead"),
                            ("cache_creation", "cacheCreation")):
        sent = sum(p["value"] for p in points(dump, "baton.job.tokens") if p["attributes"]["type"] == type_name)
        assert sent == data["tokens"][kind], kind
    for step in data["steps"]:
        mine = [p for p in points(dump, "baton.job.tool_calls") if p["attributes"]["baton.step.id"] == step["id"]]
        assert sum(p["value"] for p in mine) == step["calls"]
        assert {p["attributes"]["baton.step.phase"] for p in mine} == {"implemented"}
        assert {p["attributes"]["session.id"] for p in mine} <= {s["id"] for s in data["sessions"]}
        assert latest(dump, "baton.job.retries", **{"baton.step.id": step["id"]}) == step["retries"]
    cost = sum(p["value"] for p in points(dump, "baton.job.cost"))
    assert cost == pytest.approx(data["cost"]["reported_usd"], rel=1e-6)
    assert sum(p["value"] for p in points(dump, "baton.job.tool_failures")) == data["tools"]["failures"]
    resource = dump["metrics"][0]["resource"]
    assert resource["service.name"] == "baton-test" and resource["team"] == "relay ops"
    events = [r["EventName"] for r in dump["logs"]]
    records = [r for r in json.loads("[" + ",".join(
        line for line in (project / ".baton/steps.jsonl").read_text().splitlines()) + "]")]
    assert events.count("baton.step.recorded") == sum(1 for r in records if r["status"] in ("done", "failed"))
    assert events.count("baton.session.started") == 3 and events.count("baton.session.ended") == 3
    lost = next(r for r in dump["logs"] if r["attributes"].get("baton.session.ended") == "lost")
    assert lost["SeverityText"] == "WARN"
    assert all(error == "" for _, _, _, error in rotel.bodies), "every body is valid for opentelemetry-proto"
    assert {ctype for _, ctype, _, _ in rotel.bodies} == {"application/json"}
    assert rotel.answers and set(rotel.answers) == {200}


def test_the_export_says_what_the_collector_took_in_json(baton: Baton, project: Path, rotel: Rotel) -> None:
    run = baton("export", "--json", cwd=project, env=env_for(rotel.endpoint))
    assert run.code == 0, run.err
    answer = json.loads(run.out)
    assert answer["ok"] is True and answer["error"] is None and answer["sent_points"] > 0
    assert answer["metrics_url"] == f"{rotel.endpoint}/v1/metrics" and answer["logs_url"] == f"{rotel.endpoint}/v1/logs"
    dead = baton("export", "--json", cwd=project, env=env_for(f"http://127.0.0.1:{free_port()}"))
    failed = json.loads(dead.out)
    assert dead.code == 1 and failed["ok"] is False and failed["error"] and failed["sent_points"] == 0


def test_a_second_export_sends_the_job_and_only_what_changed(baton: Baton, project: Path, rotel: Rotel) -> None:
    env = env_for(rotel.endpoint)
    assert baton("export", cwd=project, env=env).code == 0
    first = len(rotel.bodies)
    assert baton("export", cwd=project, env=env).code == 0
    again = json_bodies(rotel)[first:]
    names = {m["name"] for body in again if "resourceMetrics" in body
             for m in body["resourceMetrics"][0]["scopeMetrics"][0]["metrics"]}
    assert "baton.job.steps.done" in names and "baton.job.tokens" not in names, "no step changed meanwhile"
    assert not any("resourceLogs" in body for body in again), "no event is sent twice"
    with (project / ".baton/events.jsonl").open("a") as handle:
        handle.write(json.dumps({"ts": "2026-11-30T10:00:00Z", "session": "s", "agent": "", "step": "step-0003",
                                 "tool": "Bash", "target": "x", "ok": True, "error": "", "changed": []}) + "\n")
    assert baton("export", cwd=project, env=env).code == 0
    third = json_bodies(rotel)[len(again) + first:]
    steps = {p["attributes"][1]["value"]["stringValue"] for body in third if "resourceMetrics" in body
             for m in body["resourceMetrics"][0]["scopeMetrics"][0]["metrics"] if m["name"] == "baton.job.tool_calls"
             for p in m["sum"]["dataPoints"]}
    assert steps == {"step-0003"}


def test_a_collector_that_is_down_loses_nothing(baton: Baton, project: Path, tmp_path: Path) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    run = baton("export", cwd=project, env=env_for(dead))
    assert run.code == 1 and "export failed" in run.err and "nothing is lost" in run.err
    state = json.loads((project / ".baton/monitor/telemetry.json").read_text())
    assert (state["ledger"], state["alerts"], state["runs"], state["rev"]) == (0, 0, {}, 0)
    assert "Connection refused" in state["error"] or "URLError" in state["error"]
    assert "failing: " in baton("status", cwd=project, env=env_for(dead)).out
    collector = Rotel().start()
    try:
        assert baton("export", cwd=project, env=env_for(collector.endpoint)).code == 0
        dump = collector.wait_for("baton.session.ended", count=3)
        ledger = (project / ".baton/steps.jsonl").read_text().splitlines()
        assert sum(1 for r in dump["logs"] if r["EventName"] == "baton.step.recorded") == sum(
            1 for line in ledger if json.loads(line)["status"] in ("done", "failed"))
        assert latest(dump, "baton.job.steps.done", **{"baton.job.id": "synthetic-8"}) == 8
    finally:
        collector.close()
    state = json.loads((project / ".baton/monitor/telemetry.json").read_text())
    assert state["error"] is None and state["ok"]


class Silent:
    """A collector that accepts connections and never answers."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.accepted: List[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted.append(conn)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def close(self) -> None:
        self.sock.close()
        for conn in self.accepted:
            conn.close()


def test_a_slow_collector_is_given_up_on_after_the_timeout(baton: Baton, project: Path) -> None:
    silent = Silent()
    try:
        started = time.monotonic()
        run = baton("export", cwd=project, env=env_for(silent.endpoint, OTEL_EXPORTER_OTLP_TIMEOUT="400"))
        took = time.monotonic() - started
    finally:
        silent.close()
    assert run.code == 1 and "timed out" in run.err
    assert took < 10
    state = json.loads((project / ".baton/monitor/telemetry.json").read_text())
    assert state["ledger"] == 0, "nothing was accepted: everything waits for the next export"


def test_nothing_is_sent_or_started_when_telemetry_is_off(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    layout = Layout(project / ".baton", project)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.settimeout(1.0)
    endpoint = f"http://127.0.0.1:{listener.getsockname()[1]}"
    try:
        assert launch.kick(layout, {"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint}) is False
        with pytest.raises(socket.timeout):
            listener.accept()
    finally:
        listener.close()
    assert not (project / ".baton/monitor/telemetry.json").exists()
