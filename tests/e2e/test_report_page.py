"""The HTML report of a job played through the real CLI (tests/e2e/report_job.py), read in headless
Chromium as a person reads it: the text on the rendered page holds each step's name on its bar,
its notes and artifacts, the gate's refusals, the side effects run through ``baton once`` (the one
whose outcome was unknown, settled by hand), the approval, all with their times, a short event
log, and lanes named by when their session ran and how it ended; the session that only answered
``/baton:approve`` has no lane."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser import Browser, chromium

from . import report_job
from .driver import Claude
from .fakeapi import FakeAPI
from .jobstate import baton

CLOCK = r"\d\d:\d\d:\d\d"


@pytest.fixture
def browser() -> Iterator[Browser]:
    assert chromium(), "chromium is not installed; run dev/test, which installs it (apt-get install chromium)"
    with Browser(1100, 1250) as b:
        yield b


def text_of(browser: Browser, selector: str) -> str:
    found: str = browser.eval(f"(document.querySelector({json.dumps(selector)}) || {{}}).innerText || ''")
    return found


def rows_of(browser: Browser, table: str) -> list[str]:
    found: list[str] = browser.eval(f"[...document.querySelectorAll('#{table} tr')].slice(1).map(r => r.innerText)")
    return found


def test_the_report_shows_what_a_person_opens_it_for(claude: Claude, fake_api: FakeAPI, project: Path,
                                                    plugin_copy: Path, browser: Browser, tmp_path: Path) -> None:
    report_job.play(claude, fake_api, project, plugin_copy)
    status: dict[str, Any] = json.loads(baton(plugin_copy, project, claude.home, "status", "--json").stdout)
    page = tmp_path / "report.html"
    made = baton(plugin_copy, project, claude.home, "report", "--html", str(page))
    assert made.returncode == 0, made.stderr
    browser.goto(page.as_uri())
    browser.pump(0.3)
    browser.screenshot(tmp_path / "report.png", full_page=True)
    assert browser.errors() == [], "the page logged errors or warnings"

    # lanes: named by when each session ran and how it ended; the /baton:approve session has none
    lanes: list[str] = browser.eval("[...document.querySelectorAll('#timeline g.lane text.label')]"
                                    ".map(t => t.textContent)")
    worked = [s for s in status["sessions"] if s["turns"]]
    assert [s["commands"] for s in status["sessions"]] == [0, 1, 0, 0, 0]
    assert lanes[0] == "waiting for a person" and len(lanes) == 1 + len(worked) == 5
    named = [re.fullmatch(rf"#(\d) {CLOCK}-{CLOCK} (\w+)", lane) for lane in lanes[1:]]
    assert [m.groups() if m else lane for m, lane in zip(named, lanes[1:])] == [
        ("1", "ended"), ("3", "ended"), ("4", "lost"), ("5", "ended")]
    assert not any(s["id"][:8] in " ".join(lanes) for s in status["sessions"]), "a lane is named by a session id"
    assert "1 more session only answered /baton: commands" in text_of(browser, "#command-sessions")

    # each step's name on its bars, wherever a few letters fit (how wide a bar is depends on the timing)
    named: list[list[Any]] = browser.eval(
        "[...document.querySelectorAll('#timeline rect.bar')].map(r => [r.querySelector('title').textContent, "
        "Number(r.getAttribute('width')), (r.nextElementSibling && r.nextElementSibling.classList.contains("
        "'bar-name')) ? r.nextElementSibling.textContent : null])")
    shown = {}
    for title, width, name in named:
        step = title.split(" attempt ")[0].split(": ")[0]
        if name is not None:
            assert step == name or (name.endswith("\u2026") and step.startswith(name[:-1])), (step, name)
            shown[step] = name
        else:
            assert width < 3 * 6.3 + 6, f"{step}'s bar is {width:.0f} px wide but has no name"
    assert len(shown) >= 4, f"hardly any bar carries its step's name: {shown}"  # every bar wide enough does

    # each step's notes, with their times and attempts, and the artifact
    steps = text_of(browser, "#step-notes")
    for note in ("3 callers in src/", "note in docs/design.md", "parser2.py replaces the old parser",
                 "failed (attempt 1): validate failed (exit 1, no output) (note: suite green)",
                 "done (attempt 2): suite green", "done (attempt 1): dist/parser2.tar.gz", "both teams told"):
        assert re.search(rf"{CLOCK} {re.escape(note)}", steps) or re.search(rf"{CLOCK} done \(attempt 1\): "
                                                                            rf"{re.escape(note)}", steps), note
    assert "artifacts: dist/parser2.tar.gz" in text_of(browser, "#step-package")
    assert "approved by a person" in text_of(browser, "#step-design")

    # the approval, with its time and the person's note
    [approval] = rows_of(browser, "approvals")
    assert re.match(rf"{CLOCK}\tdesign\t{report_job.APPROVAL_NOTE}\tperson /baton:approve", approval)

    # the side effects: one ran, one was unknown and settled by hand in a terminal
    team, ops = rows_of(browser, "side-effects")
    assert re.fullmatch(rf"{CLOCK}\tnotify-team\tannounce\t./notify.sh team\t{CLOCK} ran: exit 0", team)
    assert re.fullmatch(rf"{CLOCK}\tnotify-ops\tannounce\t./notify.sh ops slow\toutcome unknown: no result was "
                        rf"recorded\n{CLOCK} settled done by hand \(in a terminal\): {report_job.SETTLED}", ops)

    # the gate's refusals: what was refused, when, where and why
    refused = rows_of(browser, "refusals")
    assert len(refused) == 3 and all(re.match(rf"{CLOCK}\t#\d\t", row) for row in refused)
    assert f"Write\t{report_job.REFUSED_WRITE}\tbaton denied writing" in refused[0] and "[writes]" in refused[0]
    assert f"Bash\t{report_job.REFUSED_BASH}\tbaton denied this command" in refused[1] and "[own-files]" in refused[1]
    assert "Bash\t./notify.sh team\t" in refused[2] and "[once]" in refused[2]
    assert "3 refused in all, by code:" in text_of(browser, "body")

    # a short event log, in time order, with records, sessions, refusals and alerts
    log = rows_of(browser, "event-log")
    assert 10 <= len(log) <= 30
    kinds = {row.split("\t")[2] for row in log}
    assert kinds == {"record", "session", "refused", "alert"}
    assert any("\trecord\tdesign approved: the note may be written" in row for row in log)
    assert any(row.endswith("\tsession\tlost") for row in log)
    times = [row.split("\t")[0] for row in log]
    assert times == sorted(times)

    # the page as the screenshot shows it to a person: nothing runs off the page's width, and every
    # text of the timeline (lane labels, step names on bars, the axis) lies inside the chart
    assert browser.eval("document.documentElement.scrollWidth <= window.innerWidth"), "the page scrolls sideways"
    outside: list[str] = browser.eval(
        "(() => { const t = document.querySelector('#timeline'); const svg = t.tagName === 'svg' ? t : "
        "t.querySelector('svg'); const box = svg.getBoundingClientRect(); return [...svg.querySelectorAll('text')]"
        ".filter(x => { const r = x.getBoundingClientRect(); return r.width > 0 && (r.left < box.left - 0.5 || "
        "r.right > box.right + 0.5 || r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5); })"
        ".map(x => x.textContent); })()")
    assert outside == [], f"text outside the timeline: {outside}"
