#!/usr/bin/env python3
"""A seed-style store, the naive baseline that ``bench_store.py`` runs beside baton.

It keeps the same files as baton (``./.baton/plan.json`` and ``./.baton/steps.jsonl`` under the
current directory) the simplest possible way:

* ``record STEP STATUS [NOTE...]`` appends one JSON line: no lock, no hash chain, no fsync;
* ``brief`` reads the whole ledger, JSON-decodes every line, folds it into ``{step: status}``
  and prints PLAN / DONE / NEXT / LAST.

Its ``brief`` costs time and memory in proportion to the ledger's length; that is the point of
comparing against it. Not part of baton.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

STATE = Path(".baton")
COMPLETE = ("done", "skipped")


def plan_ids() -> List[str]:
    data = json.loads((STATE / "plan.json").read_text(encoding="utf-8"))
    return [s if isinstance(s, str) else str(s["id"]) for s in data["steps"]]


def record(step: str, status: str, note: str) -> int:
    STATE.mkdir(exist_ok=True)
    entry = {"ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "step": step, "status": status, "note": note}
    with open(STATE / "steps.jsonl", "a", encoding="utf-8") as handle:
        handle.write(json.dumps(entry) + "\n")
    print(f"recorded {step} {status}")
    return 0


def brief() -> int:
    ids = plan_ids()
    entries: List[Dict[str, Any]] = []
    try:
        with open(STATE / "steps.jsonl", encoding="utf-8") as handle:
            entries = [json.loads(line) for line in handle if line.strip()]
    except FileNotFoundError:
        pass
    status: Dict[str, str] = {}
    for entry in entries:
        status[entry["step"]] = entry["status"]
    done = [s for s in ids if status.get(s) in COMPLETE]
    nxt: Optional[str] = next((s for s in ids if status.get(s) not in COMPLETE), None)
    print("PLAN: " + ", ".join(ids))
    print("DONE: " + (", ".join(done) or "(nothing yet)"))
    print("NEXT: " + (nxt or "(all steps complete - stop)"))
    if entries:
        last = entries[-1]
        print(f"LAST: {last['step']} {last['status']} {last.get('note', '')}".rstrip())
    return 0


def main(argv: Sequence[str]) -> int:
    if len(argv) >= 3 and argv[0] == "record":
        return record(argv[1], argv[2], " ".join(argv[3:]))
    if list(argv) == ["brief"]:
        return brief()
    print("usage: seed_store.py record STEP STATUS [NOTE...] | brief", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
