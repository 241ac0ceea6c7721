"""The PostgreSQL store against a real server: chosen only by the environment; the same lines and
hashes as ``steps.jsonl`` (push and pull give the file back byte for byte, ``verify`` means the
same); append-only; push and pull refuse different histories; one clear line without psycopg.

When the server is down: the gate denies with the reason, ``record`` queues, the brief says
DEGRADED; when it is back, the queue is written in order and nothing twice.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List

import psycopg
import pytest

from store.backend import choice, driver, psycopg_home
from store.backend.local import Local
from store.backend.postgres import SharedJob
from store.base.errors import BatonError
from store.state import journal, location, mirror, remote

if TYPE_CHECKING:
    from conftest import Baton, Sandbox
    from pgcluster import Cluster

REPO = Path(__file__).resolve().parents[2]
PLAN = {"job": "report", "steps": [{"id": "fetch", "needs": []}, {"id": "clean", "needs": []},
                                   {"id": "chart", "needs": ["fetch", "clean"], "writes": ["charts/**"]}]}


def project(root: Path, plan: Dict[str, Any] = PLAN) -> Path:
    (root / ".baton").mkdir(parents=True)
    (root / ".baton" / "plan.json").write_text(json.dumps(plan))
    return root


def db_lines(url: str, job: str) -> List[str]:
    return [line for _, line in SharedJob(url, job).lines()]


# ------------------------------------------------------------------ choosing the store


@pytest.mark.parametrize("env, chosen", [
    ({}, None),
    ({"BATON_DATABASE_URL": "postgresql://db/x"}, choice.Database("postgresql://db/x")),
    ({"BATON_DATABASE_URL": "postgresql://db/x", "BATON_STORE": "file"}, None),
    ({"BATON_STORE": "postgresql"}, choice.Database("")),
    ({"BATON_STORE": "Postgres", "BATON_JOB": " j "}, choice.Database("", "j")),
])
def test_the_environment_alone_chooses_the_store(env: Dict[str, str], chosen: Any) -> None:
    assert choice.selected(env) == chosen


def test_an_unknown_store_is_one_clear_error(baton: Baton, sandbox: Sandbox) -> None:
    project(sandbox.project)
    run = baton("brief", extra_env={"BATON_STORE": "mysql"})
    assert (run.code, run.out) == (2, "")
    assert run.err == "baton: BATON_STORE='mysql': expected one of file, postgresql\n"


def test_passwords_are_not_shown() -> None:
    assert choice.shown(choice.Database("postgresql://me:s3cret@db:5432/x")) == "postgresql://me@db:5432/x"
    assert choice.shown(choice.Database("host=db password=s3cret user=me")) == "host=db user=me"


def test_the_pg_variables_choose_the_server(baton: Baton, sandbox: Sandbox, pg_cluster: Cluster) -> None:
    url = pg_cluster.createdb()
    project(sandbox.project)
    env = {"BATON_STORE": "postgresql", "PGHOST": "127.0.0.1", "PGPORT": str(pg_cluster.port), "PGUSER": "postgres",
           "PGDATABASE": url.rsplit("/", 1)[1], "BATON_WORKER": "w1"}
    run = baton("claim", extra_env=env)
    assert run.code == 0 and run.out == "worker w1 claimed fetch\n", run
    assert [json.loads(line)["status"] for line in db_lines(url, "report")] == ["claim"]
    assert not (sandbox.state / "steps.jsonl").exists()


def test_without_psycopg_one_line_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)  # what an interpreter without it raises: ImportError
    with pytest.raises(BatonError) as caught:
        driver.psycopg()
    message = caught.value.message
    version = f"Python {sys.version_info[0]}.{sys.version_info[1]}"
    assert message.startswith(f"the PostgreSQL store needs psycopg 3, which {sys.executable} ({version}) cannot "
                              "import (looked in "), message
    assert "\n" not in message and message.endswith(
        "or unset BATON_DATABASE_URL and BATON_STORE to keep the job in files")
    # the tests run in a virtual environment: its own pip (Debian's python3: tests/backend/test_psycopg_install.py)
    assert f"install it with `{psycopg_home.install_line(os.environ)}`" in message
    assert psycopg_home.install_line(os.environ) == f"{psycopg_home.interpreter_venv()}/bin/python -m pip install " \
        "'psycopg[binary]'"


def test_a_plan_without_a_job_id_is_refused(baton: Baton, sandbox: Sandbox, pg_url: str) -> None:
    project(sandbox.project, {"steps": ["a"]})
    run = baton("record", "a", "done", extra_env={"BATON_DATABASE_URL": pg_url})
    assert run.code == 2 and "the plan needs a \"job\" id (the name every clone shares), or set BATON_JOB" in run.err
    assert baton("record", "a", "done", extra_env={"BATON_DATABASE_URL": pg_url, "BATON_JOB": "named"}).code == 0
    assert len(db_lines(pg_url, "named")) == 1


# ------------------------------------------------------------------ the same records


def test_push_then_pull_gives_back_the_same_bytes(baton: Baton, sandbox: Sandbox, pg_url: str, tmp_path: Path) -> None:
    project(sandbox.project)
    for step, status, note in [("fetch", "running", "start"), ("fetch", "done", "12 rows\nline \u2603"),
                               ("clean", "failed", "bad \"quote\""), ("clean", "done", "")]:
        assert baton("record", step, status, note).code == 0
    original = (sandbox.state / "steps.jsonl").read_bytes()

    pushed = baton("store", "push", pg_url)
    assert pushed.code == 0 and "pushed 4 record(s)" in pushed.out and "chain verified" in pushed.out, pushed
    assert "\n".join(db_lines(pg_url, "report")) + "\n" == original.decode("ascii")
    clone = project(tmp_path / "clone")
    pulled = baton("store", "pull", pg_url, cwd=clone)
    assert pulled.code == 0 and "4 records, chain verified" in pulled.out, pulled
    assert (clone / ".baton" / "steps.jsonl").read_bytes() == original

    env = {"BATON_DATABASE_URL": pg_url}
    assert baton("record", "chart", "done", "drawn", cwd=clone, extra_env=env).code == 0  # appended in the database
    again = baton("store", "pull", cwd=clone, extra_env=env)
    assert again.code == 0 and "5 records" in again.out
    assert (clone / ".baton" / "steps.jsonl").read_bytes().startswith(original)
    assert baton("verify", cwd=clone).out.startswith("ok: 5 records")  # the file store verifies what PG wrote
    assert baton("verify", cwd=clone, extra_env=env).out.startswith("ok: 5 records")
    status = json.loads(baton("status", "--json", cwd=clone, extra_env=env).out)
    assert (status["done"], status["records"]) == (3, 5)


def test_push_and_pull_refuse_different_histories(baton: Baton, sandbox: Sandbox, pg_url: str, tmp_path: Path) -> None:
    project(sandbox.project)
    baton("record", "fetch", "done", "here")
    other = project(tmp_path / "other")
    baton("record", "fetch", "done", "there", cwd=other)
    assert baton("store", "push", pg_url).code == 0
    refused = baton("store", "push", pg_url, cwd=other)
    assert refused.code == 1 and "differs from" in refused.err and "nothing was copied" in refused.err
    pulled = baton("store", "pull", pg_url, cwd=other)
    assert pulled.code == 1 and "different histories; nothing was written" in pulled.err
    assert json.loads((other / ".baton" / "steps.jsonl").read_text())["note"] == "there"
    assert baton("store", "push", cwd=other).code == 2  # no URL given, none configured


def test_push_refuses_a_sealed_line_that_is_not_a_record_before_copying_anything(
        baton: Baton, sandbox: Sandbox, pg_url: str) -> None:
    """A line whose hash is the SHA-256 of its own bytes but which lacks a record's fields passes a
    check of the chain from the bytes alone; push checks every record in full first, so the database
    gets none of the job (it once copied the records before it and failed on that line)."""
    from hashlib import sha256

    project(sandbox.project)
    for step in ("fetch", "clean"):
        assert baton("record", step, "done", "ok").code == 0
    ledger = sandbox.state / "steps.jsonl"
    last = json.loads(ledger.read_text().splitlines()[-1])
    body = b'{"seq":3,"x":1,"prev":"' + last["hash"].encode() + b'"'
    forged = body + b',"hash":"' + sha256(body + b"}").hexdigest()[:32].encode() + b'"}\n'
    with ledger.open("ab") as handle:
        handle.write(forged)
    refused = baton("store", "push", pg_url)
    assert refused.code == 1 and "line 3: missing field(s) ts, step, status" in refused.err, refused
    assert "only an intact chain is pushed" in refused.err and "Traceback" not in refused.err
    assert db_lines(pg_url, "report") == []


def test_the_records_are_append_only_and_verify_names_an_edit(baton: Baton, sandbox: Sandbox, pg_url: str) -> None:
    project(sandbox.project)
    env = {"BATON_DATABASE_URL": pg_url}
    for step in ("fetch", "clean", "chart"):
        assert baton("record", step, "done", f"{step} ok", extra_env=env).code == 0
    with psycopg.connect(pg_url, autocommit=True) as conn:
        with pytest.raises(psycopg.errors.RaiseException):
            conn.execute("UPDATE baton_records SET line = line WHERE seq = 2")
        conn.execute("ALTER TABLE baton_records DISABLE TRIGGER baton_records_append_only")
        conn.execute("UPDATE baton_records SET line = replace(line, 'clean ok', 'clean OK') WHERE seq = 2")
    run = baton("verify", extra_env=env)
    assert run.code == 1
    assert run.err.startswith("baton: verify failed: the job's records in the database: line 2: hash does not match")


# ------------------------------------------------------------------ when the server is down


def test_server_down_gate_denies_record_queues_brief_degraded_then_replayed_once(
        baton: Baton, sandbox: Sandbox, pg_cluster: Cluster, monkeypatch: pytest.MonkeyPatch) -> None:
    url = pg_cluster.createdb()
    project(sandbox.project)
    env = {"BATON_DATABASE_URL": url, "BATON_WORKER": "w1", "CLAUDE_PROJECT_DIR": str(sandbox.project)}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert baton("claim").out == "worker w1 claimed fetch\n"
    write = {"session_id": "s1", "cwd": str(sandbox.project), "hook_event_name": "PreToolUse", "tool_name": "Write",
             "tool_input": {"file_path": str(sandbox.project / "notes.txt"), "content": "x"}}
    from hooks import adapter

    assert adapter.run("PreToolUse", json.dumps(write).encode()) is None  # allowed while the server is up
    pg_cluster.stop()
    try:
        _age_cache(sandbox.state)  # the gate trusts a copy a few seconds old: make it older
        denied = adapter.run("PreToolUse", json.dumps(write).encode())
        assert denied is not None
        reason = denied["hookSpecificOutput"]["permissionDecisionReason"]
        assert reason.startswith(f"baton denied Write on {sandbox.project / 'notes.txt'}: the job's database "
                                 "cannot be reached (connection failed: ") and reason.endswith("[baton:database]")
        assert "only reading is allowed until it is back" in reason
        first = baton("record", "fetch", "done", "rows: 12")
        second = baton("record", "clean", "skipped", "not needed")
        assert (first.code, second.code) == (0, 0)
        assert first.out.startswith("queued fetch done: the job's database cannot be reached")
        brief = baton("brief").out
        assert "DONE: fetch, clean (skipped)" in brief  # acknowledged, so shown
        assert "DEGRADED: the job's database cannot be reached" in brief and "2 record(s) queued" in brief
        assert len(Local(sandbox.state).queued()) == 2
        assert baton("claim").code == 1
    finally:
        pg_cluster.start()
    back = baton("brief").out
    assert "DEGRADED" not in back and "NEXT: chart" not in back
    assert baton("claim").out == "worker w1 claimed chart\n"
    assert not (sandbox.state / "queue.jsonl").exists()
    records = [json.loads(line) for line in db_lines(url, "report")]
    assert [(r["step"], r["status"]) for r in records] == [("fetch", "claim"), ("fetch", "done"),
                                                           ("clean", "skipped"), ("chart", "claim")]
    assert records[1]["note"] == "rows: 12" and records[2]["note"] == "not needed"
    assert baton("verify").out.startswith("ok: 4 records, chain intact")
    assert adapter.run("PreToolUse", json.dumps(write).encode()) is not None  # chart may write only charts/**


def test_a_queued_record_already_written_is_not_written_again(sandbox: Sandbox, pg_url: str,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A writer whose commit reached the server but whose answer did not queues the record with
    the same id; the replay finds the id written and skips it."""
    project(sandbox.project)
    monkeypatch.setenv("BATON_DATABASE_URL", pg_url)
    layout = location.resolve()
    journal.append(layout, "fetch", "done", "once")
    [entry_id] = [row[0] for row in psycopg.connect(pg_url).execute("SELECT id FROM baton_writes").fetchall()]
    record = json.loads(db_lines(pg_url, "report")[0])
    local = Local(layout.root)
    local.enqueue({"id": entry_id, "job": "report", "step": "fetch", "status": "done", "note": "once",
                   "extra": {"ts": record["ts"], "session": ""}})
    local.enqueue({"id": "fresh-id", "job": "report", "step": "clean", "status": "done", "note": "later",
                   "extra": {"ts": record["ts"], "session": ""}})
    assert remote.replay(layout, remote.open_job(layout), local, journal.fields) == 2
    assert [json.loads(line)["note"] for line in db_lines(pg_url, "report")] == ["once", "later"]
    assert local.queued() == []


def test_an_append_is_a_commit_a_retry_adds_nothing_and_a_guarded_record_is_never_queued(
        sandbox: Sandbox, pg_cluster: Cluster, monkeypatch: pytest.MonkeyPatch) -> None:
    """The journal's guarantees hold with the job in the database: a repeated record is found, not
    written again; a guard judges the state in the transaction; with the server gone, a plain
    record is kept in the queue with a warning, and one that a guard must judge fails, writing
    nothing anywhere."""
    url = pg_cluster.createdb()
    project(sandbox.project)
    monkeypatch.setenv("BATON_DATABASE_URL", url)
    layout = location.resolve()
    first = journal.commit(layout, "fetch", "done", "rows: 12")
    again = journal.commit(layout, "fetch", "done", "rows: 12")
    assert (first.retry, again.retry, first.warnings) == (False, True, ())
    assert again.record["seq"] == first.record["seq"] == 1 and len(db_lines(url, "report")) == 1
    seen: List[int] = []

    def over_the_limit(snap: Any) -> None:
        seen.append(snap.seq)
        raise BatonError("over the limit", 1)

    with pytest.raises(BatonError, match="over the limit"):
        journal.commit(layout, "clean", "done", "guarded", guard=over_the_limit)
    assert seen and seen[-1] == 1 and len(db_lines(url, "report")) == 1  # judged on the state in the database
    pg_cluster.stop()
    try:
        with pytest.raises(BatonError) as caught:
            journal.commit(layout, "clean", "done", "guarded", guard=lambda snap: None)
        assert caught.value.message.startswith("cannot record: the job's database cannot be reached")
        assert "nothing was recorded" in caught.value.message and Local(layout.root).queued() == []
        queued = journal.commit(layout, "clean", "done", "plain")
        assert queued.record["queued"] is True and queued.record["note"] == "plain"
        assert queued.warnings[0].startswith("the job's database cannot be reached (")
        assert [e["note"] for e in Local(layout.root).queued()] == ["plain"]
    finally:
        pg_cluster.start()
    assert journal.read_state(layout).snapshot.seq == 2  # the queue written once the server is back
    assert [json.loads(line)["note"] for line in db_lines(url, "report")] == ["rows: 12", "plain"]


def test_baton_once_refuses_a_job_kept_in_a_database(baton: Baton, sandbox: Sandbox, pg_url: str) -> None:
    project(sandbox.project)
    run = baton("once", "k1", "--", "touch", "ran.txt", extra_env={"BATON_DATABASE_URL": pg_url})
    assert run.code == 2 and run.err.startswith("baton: baton once needs the job in .baton/steps.jsonl"), run
    assert not (sandbox.project / "ran.txt").exists() and db_lines(pg_url, "report") == []
    artifacts = baton("verify", "--artifacts", extra_env={"BATON_DATABASE_URL": pg_url})  # checkpoints work there
    assert artifacts.code == 0 and "artifacts: no DONE step carries artifacts" in artifacts.out, artifacts


def test_a_copy_past_its_freshness_is_refreshed_in_the_background(
        baton: Baton, sandbox: Sandbox, pg_cluster: Cluster, monkeypatch: pytest.MonkeyPatch) -> None:
    """The hook answers from the copy at once and a detached process asks the server: it renews
    the lease and rewrites the copy; when the server is gone, it records that, and from then on
    the gate denies."""
    url = pg_cluster.createdb()
    project(sandbox.project)
    for name, value in {"BATON_DATABASE_URL": url, "BATON_WORKER": "w1",
                        "CLAUDE_PROJECT_DIR": str(sandbox.project)}.items():
        monkeypatch.setenv(name, value)
    assert baton("claim").code == 0
    write = {"session_id": "s1", "cwd": str(sandbox.project), "hook_event_name": "PreToolUse", "tool_name": "Write",
             "tool_input": {"file_path": str(sandbox.project / "notes.txt"), "content": "x"}}
    from hooks import adapter

    def beat() -> float:
        with psycopg.connect(url) as conn:
            row = conn.execute("SELECT extract(epoch FROM heartbeat) FROM baton_claims WHERE worker = 'w1'").fetchone()
        return float(row[0])

    before = beat()
    aged = _age_cache(sandbox.state, mirror.FRESH_SECONDS + 30)
    assert adapter.run("PreToolUse", json.dumps(write).encode()) is None  # answered from the copy
    assert _wait_for(lambda: _fetched(sandbox.state) > aged), "the copy was not refreshed"
    assert beat() > before  # the lease was renewed by the refresh
    pg_cluster.stop()
    try:
        aged = _age_cache(sandbox.state, mirror.FRESH_SECONDS + 30)
        assert adapter.run("PreToolUse", json.dumps(write).encode()) is None  # the copy still answers
        assert _wait_for(lambda: "error" in json.loads((sandbox.state / "shared.json").read_text()))
        denied = adapter.run("PreToolUse", json.dumps(write).encode())
        assert denied is not None and "[baton:database]" in denied["hookSpecificOutput"]["permissionDecisionReason"]
    finally:
        pg_cluster.start()
    assert not (sandbox.state / "errors.log").exists()


def _wait_for(condition: Any, seconds: float = 20) -> bool:
    import time

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return False


def _fetched(state: Path) -> float:
    return float(json.loads((state / "shared.json").read_text()).get("fetched", 0))


def _age_cache(state: Path, seconds: float = 0) -> float:
    """Make the clone's copy ``seconds`` old (0: as old as can be); returns its new time."""
    import time

    path = state / "shared.json"
    data = json.loads(path.read_text())
    data["fetched"] = time.time() - seconds if seconds else 0
    path.write_text(json.dumps(data))
    return float(data["fetched"])


def test_init_refuses_effects_and_keeps_checkpoints_with_the_job_in_a_database(
        baton: Baton, sandbox: Sandbox, pg_url: str, tmp_path: Path) -> None:
    """Issue 25.12: `baton once` needs the file store, so a plan whose effects run only through it is
    refused before it is written; a plan with checkpoint fields is kept, and nothing is said of them
    (they are checked, tests/backend/test_pg_checkpoints.py)."""
    env = {"BATON_DATABASE_URL": pg_url}
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"job": "fx", "effects": ["curl *"], "steps": [{"id": "deploy"}]}))
    refused = baton("init", "--plan", str(plan), extra_env=env)
    assert refused.code == 2 and "this plan's 'effects' (curl *) may run only through `baton once`" in refused.err
    assert "nothing was written" in refused.err and not (sandbox.state / "plan.json").exists(), refused
    assert baton("init", "--plan", str(plan)).code == 0  # in files it is fine
    plan.write_text(json.dumps({"job": "cp", "steps": [{"id": "build", "inputs": ["src/*"]}]}))
    kept = baton("init", "--force", "--plan", str(plan), extra_env=env)
    assert kept.code == 0 and kept.out.startswith("created ") and "checkpoint" not in kept.out + kept.err, kept
