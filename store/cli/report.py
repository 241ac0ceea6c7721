"""``baton report`` (the whole summary as text, or ``--html FILE``) and ``baton export`` (send the
figures to an OpenTelemetry collector now, or ``--print`` the request bodies without sending);
with ``--json``, each prints one JSON object instead (the report: the status document)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from store.base import durable, jsonc
from store.base.errors import CHECK, BatonError
from store.base.text import one_line
from store.cli import dashboard, views
from store.state import journal
from store.state.job import Job

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any, Dict, List, Mapping

    from store.state.location import Layout


def status_of(layout: Layout, records: int = 5) -> Dict[str, Any]:
    """The status document, with the ledger's last ``records`` records (the page's event log wants more)."""
    job = Job(layout, os.environ)
    journal.warn_torn(job.torn)
    last, _ = journal.last_records(layout, records)
    return views.status_data(job, last)


def sessions_text(data: Mapping[str, Any]) -> List[str]:
    lines = [f"  {'session':<9} {'start':<17} {'ended':<10}{'turns':>6}{'calls':>7}{'fail':>6}{'tokens':>9}"
             f"{'cost':>11}"]
    for v in data["sessions"]:
        cost = dashboard.money(v["cost_usd"]) if v["cost_usd"] is not None else "unknown"
        start = str(v["start"] or "")[:16].replace("T", " ")
        lines.append(f"  {v['id'][:8]:<9} {start:<17} {one_line(v['ended'], 10):<10}{v['turns']:>6}"
                     f"{dashboard.count(v['calls']):>7}{dashboard.count(v['failures']):>6}"
                     f"{dashboard.count(v['tokens']['total']):>9}{cost:>11}")
    return lines


def report_text(data: Mapping[str, Any], colour: bool = False) -> str:
    dash = dashboard.render(data, colour, every=True, log_line=views.log_line)
    parts = ["\n".join([*views.database_lines(data), dash])]
    if data["sessions"]:
        parts.append("sessions:\n" + "\n".join(sessions_text(data)))
    if data["alerts"]:
        parts.append(f"alerts ({data['alerts_total']} raised):\n" + "\n".join(
            f"  {a.get('ts')} {one_line(str(a.get('message')), 200)}" for a in data["alerts"]))
    return "\n\n".join(parts)


def cmd_report(args: argparse.Namespace, layout: Layout) -> int:
    if args.html:
        from store.cli import page, page_events

        data = status_of(layout, page_events.LOG_ROWS)
        target = Path(args.html)
        html = page.render(data).encode("utf-8")
        try:
            durable.atomic_write(target, html, sync=False)
        except OSError as exc:
            raise BatonError(f"{target}: cannot write the report: {exc}") from None
        print(views.to_json({"file": str(target), "bytes": len(html)}) if args.json
              else f"wrote {target} ({len(html):,} bytes)")
        return 0
    data = status_of(layout)
    print(views.to_json(data) if args.json else report_text(data, dashboard.use_colour(sys.stdout, os.environ)))
    return 0


def cmd_export(args: argparse.Namespace, layout: Layout) -> int:
    from store.cli.job_needed import need_plan
    from store.monitor import exporting, telemetry

    need_plan(layout)
    settings = exporting.settings_for(layout, os.environ)
    config = telemetry.Config(settings.values)
    if args.print:
        state = exporting.load_state(layout)
        import time

        batch = exporting.gather(layout, os.environ, state, time.time())
        metric_bodies, log_bodies = batch.bodies(config)
        for body in metric_bodies + log_bodies:
            print(jsonc.dumps(body, separators=(",", ":")))
        return 0
    outcome = exporting.run(layout, os.environ, rounds=1, settings=settings)
    if args.json:
        error = outcome.error if outcome else "nothing was sent"
        print(views.to_json({"ok": not error, "sent_points": outcome.sent_points if outcome else 0,
                             "sent_logs": outcome.sent_logs if outcome else 0, "metrics_url": config.metrics_url,
                             "logs_url": config.logs_url, "settings_from": settings.source, "error": error or None}))
        return CHECK if error else 0
    if outcome is None or outcome.error:
        print(f"baton: export failed: {outcome.error if outcome else 'nothing was sent'} (settings from "
              f"{settings.source}); nothing is lost: the next export sends it", file=sys.stderr)
        return CHECK
    print(f"sent {outcome.sent_points} metric points to {config.metrics_url} and {outcome.sent_logs} log records "
          f"to {config.logs_url} (settings from {settings.source})")
    return 0
