"""The dashboard and the report: 80 columns, colour only for a terminal (and never with NO_COLOR),
the text report with every step and session, and an HTML page that needs nothing from elsewhere."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict

import jobs
import pytest

from store.cli import dashboard, page

if TYPE_CHECKING:
    from conftest import Baton, InProcess, Sandbox


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A job of 1,000 steps and 200 sessions, every 9th session killed before reporting its cost."""
    project = tmp_path_factory.mktemp("big") / "project"
    jobs.write_job(project, 1000, 200)
    return project


def status(baton: Baton, project: Path, *args: str) -> Dict[str, Any]:
    run = baton("status", "--json", *args, cwd=project)
    assert run.code == 0, run.err
    data: Dict[str, Any] = json.loads(run.out)
    return data


def test_the_dashboard_fits_80_columns_for_any_job(baton: Baton, big: Path) -> None:
    for args in ((), ("--all",)):
        run = baton("status", *args, cwd=big)
        assert run.code == 0, run.err
        lines = run.out.splitlines()
        assert max(len(line) for line in lines) <= 80
    assert len(baton("status", cwd=big).out.splitlines()) < 40, "compact: a window of the steps, not 1,000 lines"
    assert len(run.out.splitlines()) > 1000, "--all lists every step"


def test_colour_only_on_a_terminal_and_never_with_no_color(baton: Baton, big: Path) -> None:
    data = status(baton, big)

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert dashboard.use_colour(Terminal(), {}) is True
    assert dashboard.use_colour(Terminal(), {"NO_COLOR": ""}) is False
    assert dashboard.use_colour(Terminal(), {"TERM": "dumb"}) is False
    assert dashboard.use_colour(io.StringIO(), {}) is False
    coloured = dashboard.render(data, colour=True)
    assert "\x1b[1m" in coloured and "\x1b[32m" in coloured
    plain = re.sub(r"\x1b\[[0-9;]*m", "", coloured)
    assert plain == dashboard.render(data, colour=False)
    assert max(len(line) for line in plain.splitlines()) <= 80


def test_the_dashboard_says_what_the_status_document_says(baton: Baton, big: Path) -> None:
    data = status(baton, big)
    text = baton("status", cwd=big).out
    assert "job synthetic-1000  [####################]  1000/1000 steps" in text
    tokens = data["tokens"]
    assert f"tokens {dashboard.count(tokens['input'])} in, {dashboard.count(tokens['output'])} out" in text
    assert f"{dashboard.money(data['cost']['reported_usd'])} reported" in text
    assert f"({data['cost']['unreported_sessions']} sessions without a cost)" in " ".join(text.split())
    assert f"{dashboard.count(data['tools']['calls'])} calls, {data['tools']['failures']} failed" in text
    assert f"seen   {data['sessions_total']} sessions" in text
    assert data["sessions_total"] == 200 and data["cost"]["unreported_sessions"] == 22


def test_a_job_read_from_the_ledgers_end_says_so(baton: Baton, sandbox: Sandbox) -> None:
    from store.monitor import figures, summary
    from store.state import location
    from store.state.job import Job

    assert baton("init", "a", "b").code == 0 and baton("record", "a", "done").code == 0
    assert status(baton, sandbox.project)["partial"] is False
    assert "note " not in baton("status").out
    job = Job(location.resolve(), {})
    job.partial = True  # as a fresh clone's long ledger is read while its snapshot is rebuilt
    data = summary.summarize(job, figures.refresh(job.layout, job.plan))
    assert data["partial"] is True
    assert "note   read from the ledger's end while its snapshot is rebuilt" in dashboard.render(data)


def test_the_text_report_lists_every_step_and_session(baton: Baton, big: Path) -> None:
    run = baton("report", cwd=big)
    assert run.code == 0, run.err
    lines = run.out.splitlines()
    assert sum(1 for line in lines if re.match(r"[ >] step-\d{4} ", line)) == 1000
    start = lines.index("sessions:")
    assert len([line for line in lines[start + 2:] if line.strip()]) == 200


def test_the_html_page_needs_nothing_from_elsewhere(baton: Baton, big: Path, tmp_path: Path) -> None:
    target = tmp_path / "report.html"
    run = baton("report", "--html", str(target), cwd=big)
    assert run.code == 0 and run.out.startswith(f"wrote {target} (")
    html = target.read_text(encoding="utf-8")
    assert "<script" not in html.lower()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//|file:)""", html, re.I)
    assert "@import" not in html and "url(" not in html
    assert f'content="{page.CSP}"' in html
    marks = html.count("<rect") + html.count("<line") + html.count("<path")
    assert marks < 6000, f"{marks} marks: a big job must be aggregated, not drawn mark by mark"
    assert len(html) < 2_000_000


def test_what_the_job_recorded_is_shown_as_text_never_as_markup(baton: Baton, sandbox: Sandbox,
                                                                  tmp_path: Path) -> None:
    hostile = '<img src=x onerror=alert(1)></table><script>alert(2)</script>&amp;'
    assert baton("init", "a", "b").code == 0
    assert baton("record", "a", "running", hostile).code == 0
    assert baton("record", "a", "done", hostile).code == 0
    assert baton("once", "<b>key</b>", "--", "true").code == 0
    target = tmp_path / "r.html"
    assert baton("report", "--html", str(target)).code == 0
    html = target.read_text(encoding="utf-8")
    assert "<img" not in html and "<script" not in html.lower() and "<b>key</b>" not in html
    escaped = "&lt;img src=x onerror=alert(1)&gt;&lt;/table&gt;&lt;script&gt;alert(2)&lt;/script&gt;&amp;amp;"
    assert html.count(escaped) >= 3  # the step's two notes, and the event log
    assert "&lt;b&gt;key&lt;/b&gt;" in html


def test_the_report_of_a_job_with_nothing_yet(baton: Baton, sandbox: Sandbox, tmp_path: Path) -> None:
    assert baton("init", "a", "b").code == 0
    assert "no record yet" in baton("report").out
    assert baton("report", "--html", str(tmp_path / "r.html")).code == 0
    assert "Nothing has happened yet" in (tmp_path / "r.html").read_text()


def test_the_report_speaks_json_for_programs(baton: Baton, sandbox: Sandbox, tmp_path: Path) -> None:
    assert baton("init", "a", "b").code == 0
    assert baton("record", "a", "done", "first").code == 0
    data = json.loads(baton("report", "--json").out)
    assert (data["schema"], data["done"], data["next"]) == ("baton.status", 1, "b")
    target = tmp_path / "r.html"
    wrote = json.loads(baton("report", "--html", str(target), "--json").out)
    assert wrote == {"file": str(target), "bytes": len(target.read_bytes())}


def test_a_report_that_cannot_be_written_is_one_clear_error(main: InProcess, sandbox: Sandbox) -> None:
    assert main(["init", "a"]).code == 0
    run = main(["report", "--html", str(sandbox.project / "missing" / "r.html")])
    assert run.code == 2 and run.err.startswith("baton: ") and "cannot write the report" in run.err
    assert len(run.err.splitlines()) == 1
