"""``baton verify``, ``log``, ``repair`` and ``merge``: the ledger checked whole, shown, mended after a
torn or damaged end, and merged as git's merge driver (a job kept in a database has no file to mend)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from store.base.errors import CHECK, BatonError
from store.cli import views
from store.cli.job_needed import need_job
from store.ledger.ledger import last_lines
from store.state import journal
from store.state.job import Job

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import List

    from store.state import location


def cmd_verify(args: argparse.Namespace, layout: location.Layout) -> int:
    need_job(layout)
    verdict = journal.verify(layout)
    where = layout.ledger if journal.shared() is None else "the job's records in the database"
    if args.json:
        print(views.to_json({"ok": not verdict.problem, "ledger": str(where), "records": verdict.records,
                              "last_hash": verdict.last_hash, "torn_bytes": verdict.torn,
                              "problem": verdict.problem or None}))
        return CHECK if verdict.problem else 0
    if verdict.problem:
        print(f"baton: verify failed: {where}: {verdict.problem}", file=sys.stderr)
        return CHECK
    print(f"ok: {verdict.records} records, chain intact (last hash {verdict.last_hash[:12]})")
    if verdict.torn:
        print(f"torn tail: {verdict.torn} bytes after record {verdict.records} (line {verdict.records + 1}) "
              "from a writer killed mid-append; not corruption, the next record repairs it")
    if not args.artifacts:
        return 0
    from store.checkpoint import freshness

    job = Job(layout, os.environ)
    findings = freshness.check(layout, job.plan, job.snap, deadline=None).findings
    for line in freshness.report_lines(findings):
        print(line)
    return CHECK if any(f.kind in ("changed", "stale") for f in findings) else 0


def cmd_log(args: argparse.Namespace, layout: location.Layout) -> int:
    if args.n < 0:
        raise BatonError("-n must be 0 or more")
    need_job(layout)
    if journal.shared() is not None:  # the records are in the job's database
        notes: List[str] = []
        records, _ = journal.last_records(layout, args.n, notes)
        for note in notes:  # the server is down: the clone's copy, said so before the records
            print(f"baton: warning: {note}", file=sys.stderr)
        for record in records:
            print(views.to_json(record) if args.json else views.log_line(record))
        return 0
    start, end, torn = last_lines(layout.ledger, args.n)
    journal.warn_torn(len(torn))
    views.write_log(layout.ledger, start, end, args.json, sys.stdout)
    return 0


def cmd_repair(args: argparse.Namespace, layout: location.Layout) -> int:
    from store.state import repair

    if journal.shared() is not None:
        raise BatonError("the job's records are kept in its database, where each append is one transaction: there "
                         "is no torn or damaged line to move aside (`baton verify` checks the chain)")
    need_job(layout)
    if not layout.ledger.exists():
        print("nothing to repair: the job has no records yet")
        return 0
    steps = Job(layout, os.environ, save=False).plan.ids if layout.has_plan() else None
    done = repair.repair(layout, steps)
    for warning in done.warnings:
        print(f"baton: warning: {warning}", file=sys.stderr)
    if done.lines:
        print(f"moved {done.lines} bad line(s) ({done.size} bytes, from byte {done.offset}) to {done.kept_in}; "
              f"recorded as #{done.record['seq'] if done.record else '?'}; run `baton verify`")
    elif done.torn:
        print(f"removed a torn last line ({done.torn} bytes, kept in {layout.torn} when it could be written)")
    else:
        print("nothing to repair: the ledger ends on a valid record")
    return 0


def cmd_merge(args: argparse.Namespace, layout: location.Layout) -> int:
    from store.cli import gitmerge

    if args.register:
        if args.files:
            raise BatonError("give either --register or BASE OURS THEIRS")
        print(gitmerge.register(layout, required=True))
        return 0
    if len(args.files) != 3:
        raise BatonError("usage: baton merge BASE OURS THEIRS (as git's merge driver) or baton merge --register")
    merged = gitmerge.merge_files(Path(args.files[1]), Path(args.files[2]))
    print(f"baton: merged ledgers: {merged.added} record(s) of theirs appended after ours' {merged.ours}, "
          f"{merged.skipped} already present", file=sys.stderr)
    return 0
