"""What the PostgreSQL outage tests share: a parallel job in a clone, the job's records as the
server holds them, the CLI started in the background (to kill the server while it works), and a
trigger that holds a claim inside the server, so that a kill lands between a committed record and
the claim that follows it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional

import psycopg

PLAN: Dict[str, Any] = {"job": "outage", "steps": [{"id": "a", "needs": []}, {"id": "b", "needs": []},
                                                   {"id": "c", "needs": ["a", "b"]}]}

# A claim record waits inside its INSERT for a minute: the test kills the server meanwhile. Only
# the timing is staged; the server, the kill and the client's connection are real.
HOLD_CLAIMS = """
CREATE OR REPLACE FUNCTION test_hold_claim() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN IF NEW.line LIKE '%"status":"claim"%' THEN PERFORM pg_sleep(60); END IF; RETURN NEW; END $$;
CREATE TRIGGER test_hold_claim BEFORE INSERT ON baton_records FOR EACH ROW EXECUTE FUNCTION test_hold_claim();
"""


def project(root: Path, plan: Mapping[str, Any] = PLAN) -> Path:
    (root / ".baton").mkdir(parents=True, exist_ok=True)
    (root / ".baton" / "plan.json").write_text(json.dumps(plan))
    return root


def records(url: str, job: str = "outage") -> List[Dict[str, Any]]:
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute("SELECT line FROM baton_records WHERE job = %s ORDER BY seq", (job,)).fetchall()
    return [json.loads(row[0]) for row in rows]


def steps(url: str, job: str = "outage") -> List[tuple[str, str]]:
    return [(r["step"], r["status"]) for r in records(url, job)]


def hold_claims(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(HOLD_CLAIMS)


def let_claims_go(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP TRIGGER test_hold_claim ON baton_records")


def wait_until_held(url: str, seconds: float = 30) -> None:
    """Until a claim waits in the trigger (a backend sleeping in pg_sleep)."""
    deadline = time.monotonic() + seconds
    with psycopg.connect(url, autocommit=True) as conn:
        while time.monotonic() < deadline:
            if conn.execute("SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'PgSleep'").fetchone()[0]:
                return
            time.sleep(0.05)
    raise AssertionError("no claim reached the server")


def start(plugin: Path, args: List[str], cwd: Path, env: Mapping[str, str]) -> subprocess.Popen[str]:
    """``baton ARGS`` from the plugin's copy, in the background."""
    return subprocess.Popen([sys.executable, str(plugin / "bin" / "baton"), *args], cwd=str(cwd),
                            env={**os.environ, **env}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(proc: subprocess.Popen[str], seconds: float = 60) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=seconds)
    return proc.returncode, out, err


def only_baton_lines(err: str) -> None:
    """Every line on stderr is baton's own (``baton: ...``): nothing the driver logged on its way."""
    stray = [line for line in err.splitlines() if not line.startswith("baton: ")]
    assert not stray, err


def timed(run: Any, *args: Any, **kwargs: Any) -> tuple[Any, float]:
    began = time.monotonic()
    result = run(*args, **kwargs)
    return result, time.monotonic() - began


def env_for(url: str, worker: str, extra: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
    return {"BATON_DATABASE_URL": url, "BATON_WORKER": worker, **(extra or {})}
