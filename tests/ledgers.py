"""Large ledgers for tests, written fast and byte for byte as ``seal`` + ``format_line`` write them."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Dict, Iterable, Iterator, List, Tuple

from store.ledger.chain import Verdict
from store.ledger.ledger import GENESIS, LedgerError, check_link, format_line, parse_line, seal

Entry = Tuple[str, str, str]  # step, status, note


def reference(data: bytes) -> Verdict:
    """verify's verdict from the full check, line by line, in one pass, as verify always did it: what
    every faster path must equal."""
    prev = None
    count = 0
    lines = data.split(b"\n")
    for number, raw in enumerate(lines[:-1], start=1):
        try:
            record = parse_line(raw)
            check_link(record, prev)
        except LedgerError as exc:
            return Verdict(count, prev["hash"] if prev else GENESIS, 0, f"line {number}: {exc}")
        prev, count = record, count + 1
    return Verdict(count, prev["hash"] if prev else GENESIS, len(lines[-1]), "")


def write(path: Path, entries: Iterable[Entry], session: str = "gen-session",
          ts: str = "2026-01-01T00:00:00Z") -> Tuple[int, str]:
    """Append ``entries`` as chained records (attempts counted as baton does); return (records, last hash)."""
    prev, seq = GENESIS, 0
    latest: Dict[str, Tuple[str, int]] = {}
    with open(path, "wb", buffering=1 << 20) as out:
        for step, status, note in entries:
            seq += 1
            prior = latest.get(step)
            attempt = 1 if prior is None else prior[1] if prior[0] == "running" else prior[1] + 1
            latest[step] = (status, attempt)
            body = (f'{{"seq":{seq},"ts":"{ts}","step":{json.dumps(step)},"status":"{status}",'
                    f'"note":{json.dumps(note)},"session":"{session}","attempt":{attempt},"prev":"{prev}"')
            digest = hashlib.sha256((body + "}").encode("ascii")).hexdigest()[:32]
            out.write(f'{body},"hash":"{digest}"}}\n'.encode("ascii"))
            prev = digest
    return seq, prev


def check(path: Path, samples: int = 50) -> None:
    """The first and last ``samples`` lines are exactly what seal + format_line make."""
    lines = path.read_bytes().splitlines(keepends=True)
    picked = list(enumerate(lines))[:samples] + list(enumerate(lines))[-samples:]
    for index, line in picked:
        record = json.loads(line)
        fields = {k: v for k, v in record.items() if k not in ("seq", "prev", "hash")}
        assert format_line(seal(fields, index + 1, record["prev"])) == line


def long_job(ids: List[str], fillers: int) -> Iterator[Entry]:
    """A realistic long job: the early steps done once at the start, then ``fillers`` records
    retrying one step, then the last few records; the later steps never recorded."""
    for step in ids[:3]:
        yield step, "running", f"starting {step}"
        yield step, "done", f"{step} finished"
    for i in range(fillers):
        yield ids[3], "running" if i % 2 == 0 else "failed", f"retry {i}: tests still red"
    yield ids[3], "running", "one more try"
    yield ids[3], "done", "green at last"
    yield ids[4], "running", "started the fifth"


def held_since_start(count: int) -> Iterator[bytes]:
    """A parallel job's lines: worker w1 claims ``held`` first and never lets go; then ``b`` and
    ``c`` are claimed by other workers, retried and in the end ``b`` done (records sealed by baton's own code)."""
    from typing import Any

    prev = GENESIS
    for seq in range(1, count + 1):
        fields: Dict[str, Any]
        if seq == 1:
            fields = {"step": "held", "status": "claim", "worker": "w1"}
        elif seq == count:
            fields = {"step": "b", "status": "done", "note": "b finished"}
        elif seq % 4 == 0:
            fields = {"step": "bc"[seq % 8 // 4], "status": "claim", "worker": f"w{2 + seq % 3}"}
        else:
            fields = {"step": "bc"[seq % 2], "status": "running" if seq % 3 else "failed", "note": f"try {seq}"}
        record = seal({"ts": f"2026-01-01T{seq // 3600:02d}:{seq // 60 % 60:02d}:{seq % 60:02d}Z",
                       "session": f"s{seq % 5}", **fields}, seq, prev)
        prev = record["hash"]
        yield format_line(record)
