"""A synthetic job of any size written straight to disk, as baton's hooks and Claude Code would have
left it: the plan, a chained ledger, events (sessions, tool outcomes, alerts) and one transcript
per session (with a cost entry unless the session was killed). For reports and benchmarks that
need a thousand steps and two hundred sessions without running them."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path
from typing import Any, Dict, List

from store.ledger import ledger

START = 1795500000.0  # 2026-11-24T...Z: in the past, so the job is over


def _iso(t: float, ms: bool = False) -> str:
    base = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t))
    return base + (f".{int(t * 1000) % 1000:03d}Z" if ms else "Z")


def _assistant(n: int, t: float, tokens: List[int], session: str) -> str:
    usage = {"input_tokens": tokens[0], "output_tokens": tokens[1], "cache_read_input_tokens": tokens[2],
             "cache_creation_input_tokens": tokens[3]}
    return json.dumps({"type": "assistant", "isSidechain": False, "requestRef": f"req-{session[:4]}-{n}",
                       "message": {"id": f"msg_{session[:4]}_{n}", "role": "assistant", "usage": usage,
                                   "content": [{"type": "text", "text": "working"}]},
                       "timestamp": _iso(t, ms=True), "sessionId": session}, separators=(",", ":"))


def write_job(project: Path, steps: int, sessions: int, seed: int = 7, killed_every: int = 9) -> Dict[str, Any]:
    """Write the job into ``project/.baton`` and transcripts under ``project/transcripts``; return
    what was written (tokens by kind, sessions, records) for the tests to compare against."""
    rng = random.Random(seed)
    state, folder = project / ".baton", project / "transcripts"
    state.mkdir(parents=True, exist_ok=True)
    folder.mkdir(exist_ok=True)
    ids = [f"step-{i:04d}" for i in range(steps)]
    plan = {"job": f"synthetic-{steps}", "limits": {"cost_usd": 1000.0},
            "steps": [{"id": s, "phase": "implemented", **({"approval": True} if i % 97 == 50 else {})}
                      for i, s in enumerate(ids)]}
    (state / "plan.json").write_text(json.dumps(plan))
    records: List[Dict[str, Any]] = []
    events: List[str] = []
    totals = [0, 0, 0, 0]
    t = START
    per_session = -(-steps // sessions)
    for k in range(sessions):
        sid = f"{k:08x}-5e55-4000-8000-{rng.randrange(16**12):012x}"
        path = folder / f"{sid}.jsonl"
        lines: List[str] = []
        events.append(json.dumps({"kind": "session", "event": "start", "ts": _iso(t), "session": sid,
                                  "source": "startup", "transcript": str(path)}))
        killed = killed_every and k % killed_every == killed_every - 1
        session_tokens = [0, 0, 0, 0]
        for step in ids[k * per_session:(k + 1) * per_session]:
            if plan["steps"][ids.index(step)].get("approval"):
                t += rng.uniform(300, 3000)
                records.append({"ts": _iso(t), "step": step, "status": "approved", "note": "", "session": "",
                                "attempt": 0, "by": "person", "via": "test", "sig": "0" * 64})
            tries = 2 if rng.random() < 0.1 else 1
            for attempt in range(1, tries + 1):
                for _ in range(rng.randint(1, 4)):
                    t += rng.uniform(5, 60)
                    tokens = [rng.randint(50, 900), rng.randint(20, 400), rng.randint(0, 60000), rng.randint(0, 3000)]
                    lines.append(_assistant(len(lines), t, tokens, sid))
                    session_tokens = [a + b for a, b in zip(session_tokens, tokens)]
                    ok = rng.random() > 0.08
                    events.append(json.dumps({"ts": _iso(t + 1), "session": sid, "agent": "", "step": step,
                                              "tool": "Bash", "target": "make test", "ok": ok,
                                              "error": "" if ok else "Exit code 1", "changed": [f"src/{step}.py"]}))
                t += 2
                status = "failed" if attempt < tries else "done"
                records.append({"ts": _iso(t), "step": step, "status": status, "note": f"{step} {status}",
                                "session": sid, "attempt": attempt})
        if not killed:
            weight = session_tokens[0] + 5 * session_tokens[1] + 0.1 * session_tokens[2] + 1.25 * session_tokens[3]
            covered = {"inputTokens": session_tokens[0], "outputTokens": session_tokens[1],
                       "cacheReadInputTokens": session_tokens[2], "cacheCreationInputTokens": session_tokens[3]}
            lines.append(json.dumps({"type": "cost-state", "sessionId": sid, "totalCostUSD": round(weight * 3e-6, 6),
                                     "modelUsage": {"claude-opus-5-5": covered}}))
            events.append(json.dumps({"kind": "session", "event": "end", "ts": _iso(t + 1), "session": sid,
                                      "reason": "other"}))
        totals = [a + b for a, b in zip(totals, session_tokens)]
        path.write_text("\n".join(lines) + "\n")
        t += rng.uniform(60, 600)
    _write_ledger(state / "steps.jsonl", records)
    (state / "events.jsonl").write_text("\n".join(events) + "\n")
    return {"tokens": totals, "sessions": sessions, "records": len(records), "steps": steps}


def _write_ledger(path: Path, records: List[Dict[str, Any]]) -> None:
    seq, prev, lines = 1, ledger.GENESIS, []
    for fields in records:
        record = ledger.seal(fields, seq, prev)
        lines.append(ledger.format_line(record))
        seq, prev = seq + 1, record["hash"]
    path.write_bytes(b"".join(lines))
