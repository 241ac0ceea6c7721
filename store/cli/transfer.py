"""``baton store push`` and ``baton store pull``: a job copied between ``.baton/steps.jsonl`` and a
PostgreSQL database, line for line (same bytes, same hashes), each end's chain verified before
the command reports success. Either refuses when the two histories differ rather than merge them.
"""

from __future__ import annotations

import os
import sys

from store.backend import choice
from store.backend.postgres import PAGE, Head, SharedJob
from store.base import durable
from store.base.errors import CHECK, BatonError
from store.ledger import chain
from store.ledger.ledger import iter_lines, parse_line, read_tail
from store.state import mirror, remote
from store.state.snapshot import Snapshot

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, Iterator, List, Tuple

    from store.state.location import Layout


def _open(layout: Layout, url: str, job: str) -> Tuple[SharedJob, str]:
    conninfo = url
    if not conninfo:
        database = choice.selected(os.environ)
        if database is None:
            raise BatonError("give the database's URL (baton store push postgresql://...) or set BATON_DATABASE_URL")
        conninfo = database.conninfo
    shared = SharedJob(conninfo, remote.job_name(layout, job))
    return shared, choice.shown(choice.Database(conninfo))


def _db_lines(shared: SharedJob) -> Iterator[Tuple[int, bytes, bool]]:
    for seq, line in shared.lines():
        yield seq, line.encode("ascii", "replace"), True


def _verify_database(shared: SharedJob, where: str) -> chain.Verdict:
    verdict = chain.verify_lines(_db_lines(shared))
    if verdict.problem:
        raise BatonError(f"the job {shared.name} in {where} does not verify: {verdict.problem}", CHECK)
    return verdict


def _report(as_json: bool, data: Dict[str, Any], text: str, warning: str) -> None:
    if as_json:
        from store.cli.views import to_json

        print(to_json(data))
    else:
        print(text)
    if warning:
        print(f"baton: {warning}", file=sys.stderr)


def push(layout: Layout, url: str, job: str, as_json: bool = False) -> int:
    """Copy the file job into the database: all of it, or what follows the records it already has."""
    shared, where = _open(layout, url, job)
    # every record in full, not the chain from its bytes alone (chain.verify): a line sealed over bytes
    # that are not a record would be refused half-way through the copy
    local = chain.verify_lines(iter_lines(layout.ledger))
    if local.problem:
        raise BatonError(f"{layout.ledger}: {local.problem}; only an intact chain is pushed (see baton verify)", CHECK)
    if not local.records:
        raise BatonError(f"{layout.ledger}: no records to push")
    head = shared.head()
    if head.seq > local.records:
        raise BatonError(f"the job {shared.name} in {where} has {head.seq} records and {layout.ledger} only "
                         f"{local.records}: pull instead", CHECK)
    snap, batch, copied, expect = Snapshot(), [], 0, head
    for _, raw, complete in iter_lines(layout.ledger):
        if not complete:
            break
        record = parse_line(raw)
        mirror.fold(snap, record)
        if record["seq"] <= head.seq:
            if record["seq"] == head.seq and record["hash"] != head.hash:
                raise BatonError(f"the job {shared.name} in {where} differs from {layout.ledger} at record "
                                 f"{head.seq}: they are different histories; nothing was copied", CHECK)
            continue
        batch.append((record["seq"], record["hash"], raw.decode("ascii")))
        if len(batch) >= PAGE:
            shared.copy_in(batch, expect, snap.to_bytes().decode("ascii"))
            copied, expect, batch = copied + len(batch), Head(record["seq"], record["hash"], None), []
    if copied or batch:  # the claims go with the last rows: the file store is the side worked in
        shared.copy_in(batch, expect, snap.to_bytes().decode("ascii"), held=_held(layout, snap))
        copied += len(batch)
    stored = _verify_database(shared, where)
    if (stored.records, stored.last_hash) != (local.records, local.last_hash):
        raise BatonError(f"after the copy the job {shared.name} in {where} ends at record {stored.records} "
                         f"({stored.last_hash[:12]}), not {local.records} ({local.last_hash[:12]})", CHECK)
    torn = (f"the torn last line of {layout.ledger} ({local.torn} bytes) is not a record and was not pushed"
            if local.torn else "")
    _report(as_json, {"job": shared.name, "database": where, "copied": copied, "records": stored.records,
                      "last_hash": stored.last_hash, "verified": True, "torn_bytes": local.torn},
            f"pushed {copied} record(s) of {layout.ledger} to job {shared.name} in {where}: it holds "
            f"{stored.records}, chain verified (last hash {stored.last_hash[:12]})", torn)
    return 0


def _held(layout: Layout, snap: Snapshot) -> List[Tuple[str, str, int, float]]:
    """The claims ``snap`` leaves, each with how long its holder has been idle by the file store's
    heartbeats: the database keeps their leases, so no live worker's step is given away."""
    from store.plan.plan import load_plan
    from store.state import claims, leases

    try:
        found = {lease.step: lease.idle for lease in leases.file_leases(layout, load_plan(layout.plan), snap)}
    except BatonError:  # no plan to read (a job pushed by name): each holder starts a full lease
        found = {}
    return [(step, str(entry.get("worker") or ""), int(entry.get("seq") or 0), found.get(step, 0.0))
            for step, entry in snap.claims.items() if claims.holder(snap.claims, step) is not None]


def pull(layout: Layout, url: str, job: str, as_json: bool = False) -> int:
    """Write the database's records to ``steps.jsonl``, which must hold a prefix of them (or nothing)."""
    shared, where = _open(layout, url, job)
    head = shared.head()
    if not head.seq:
        raise BatonError(f"the job {shared.name} in {where} has no records", CHECK)
    tail = read_tail(layout.ledger)
    if tail.last is not None:
        seq = int(tail.last["seq"])
        if seq > head.seq:
            raise BatonError(f"{layout.ledger} has {seq} records and the job {shared.name} in {where} only "
                             f"{head.seq}: push instead", CHECK)
        theirs = [parse_line(line.encode("ascii")) for _, line in shared.lines(seq - 1, seq)]
        if not theirs or theirs[0]["hash"] != tail.last["hash"]:
            raise BatonError(f"{layout.ledger} differs from the job {shared.name} in {where} at record {seq}: "
                             "they are different histories; nothing was written", CHECK)
    layout.root.mkdir(parents=True, exist_ok=True)
    tmp = layout.root / f".steps.jsonl.pull.{os.getpid()}.tmp"
    try:
        verdict = _copy_out(shared, where, tmp)
        with durable.locked(layout.lock):
            os.replace(tmp, layout.ledger)
            try:
                os.unlink(layout.snapshot)  # rebuilt from the ledger on the next read
            except FileNotFoundError:
                pass
    finally:
        if tmp.exists():
            tmp.unlink()
    written = chain.verify(layout.ledger)
    if written.problem or (written.records, written.last_hash) != (verdict.records, verdict.last_hash):
        raise BatonError(f"{layout.ledger} does not verify after the pull: {written.problem or 'records differ'}",
                         CHECK)
    torn = (f"the torn last line ({len(tail.torn)} bytes) of the old file was not a record and is gone"
            if tail.torn else "")
    _report(as_json, {"job": shared.name, "database": where, "ledger": str(layout.ledger), "records": written.records,
                      "last_hash": written.last_hash, "verified": True},
            f"pulled job {shared.name} from {where} into {layout.ledger}: {written.records} records, chain verified "
            f"(last hash {written.last_hash[:12]})", torn)
    return 0


def _copy_out(shared: SharedJob, where: str, tmp: os.PathLike[str]) -> chain.Verdict:
    """Stream the database's lines into ``tmp``, verifying the chain as they come."""
    chunk: List[bytes] = []
    with open(tmp, "wb") as handle:
        def lines() -> Iterator[Tuple[int, bytes, bool]]:
            for seq, raw, complete in _db_lines(shared):
                chunk.append(raw + b"\n")
                if len(chunk) >= PAGE:
                    handle.write(b"".join(chunk))
                    chunk.clear()
                yield seq, raw, complete

        verdict = chain.verify_lines(lines())
        handle.write(b"".join(chunk))
        handle.flush()
        os.fsync(handle.fileno())
    if verdict.problem:
        raise BatonError(f"the job {shared.name} in {where} does not verify: {verdict.problem}; nothing was written",
                         CHECK)
    return verdict
