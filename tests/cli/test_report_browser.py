"""The HTML report in a real browser: headless Chromium (Debian's package, started by the test) loads
the page from a file, a screenshot is taken, the dashboard's figures are in the DOM with the values
``baton status --json`` gives, the timeline and charts rendered, and the console stayed clean."""

from __future__ import annotations

import json
import re
import struct
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict

import jobs
import pytest
from browser import Browser, chromium

if TYPE_CHECKING:
    from conftest import Baton



@pytest.fixture(scope="module")
def browser() -> Browser:
    assert chromium(), "chromium is not installed; run dev/test, which installs it (apt-get install chromium)"
    with Browser(1100, 900) as b:
        yield b


def figures(b: Browser) -> Dict[str, Any]:
    found: Dict[str, Any] = b.eval(
        "Object.fromEntries([...document.querySelectorAll('.card .v')].map(e => [e.id, e.dataset.value]))")
    return found


def png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    width, height = struct.unpack(">II", head[16:24])
    return width, height


@pytest.mark.parametrize("size", [(12, 4), (1000, 200)], ids=["small", "1000-steps-200-sessions"])
def test_the_report_renders_in_chromium_with_the_status_figures(size: tuple[int, int], browser: Browser,
                                                                 baton: Baton, tmp_path: Path) -> None:
    project = tmp_path / "project"
    jobs.write_job(project, *size, killed_every=3)
    status = json.loads(baton("status", "--json", cwd=project).out)
    target = tmp_path / "report.html"
    assert baton("report", "--html", str(target), cwd=project).code == 0

    browser.goto(target.as_uri())
    browser.pump(0.3)
    shot = tmp_path / "report.png"
    browser.screenshot(shot, full_page=True)

    assert browser.errors() == [], "the page logged errors or warnings"
    assert png_size(shot)[0] == 1100 and png_size(shot)[1] > 900
    shown = figures(browser)
    assert shown["steps-done"] == str(status["done"]) == str(size[0])
    assert shown["tokens-total"] == str(status["tokens"]["total"])
    assert float(shown["cost-reported"]) == pytest.approx(status["cost"]["reported_usd"])
    assert shown["tool-calls"] == str(status["tools"]["calls"]) and shown["tool-failures"] == str(
        status["tools"]["failures"])
    assert shown["sessions"] == str(status["sessions_total"]) == str(size[1])
    assert shown["retries"] == str(status["retries"]) and shown["turns"] == str(status["turns"])
    lanes = browser.eval("document.querySelectorAll('#timeline g.lane').length")
    per_lane = -(-size[1] // 30)  # past 30 sessions, consecutive sessions share a lane
    waited = any(a["outcome"] == "waiting" for s in status["steps"] for a in s["attempts"])
    assert lanes == -(-size[1] // per_lane) + waited
    labels = browser.eval("[...document.querySelectorAll('#timeline g.lane text.label')].map(t => t.textContent)")
    when = r"(\d\d:\d\d(:\d\d)?|\d\d-\d\d \d\d:\d\d)"  # seconds under an hour, the date past a day
    single, shared = rf"#\d+ {when}-{when} (ended|lost|running)", rf"#\d+-\d+ from {when}"
    assert all(re.fullmatch(single if per_lane == 1 else shared, label) for label in labels[waited:]), labels
    assert not any(s["id"][:8] in " ".join(labels) for s in status["sessions"]), "a lane is named by a session id"
    assert browser.eval("document.querySelectorAll('#step-notes .step').length") == size[0]
    drawn = browser.eval("[...document.querySelectorAll('#timeline rect.bar')].reduce((n, r) => n + "
                         "Number(r.dataset.count), 0)")
    attempts = sum(len([a for a in s["attempts"] if a["outcome"] != "waiting"]) for s in status["steps"])
    waits = sum(len([a for a in s["attempts"] if a["outcome"] == "waiting"]) for s in status["steps"])
    assert drawn == attempts + waits, "every attempt is in the timeline, alone or in a merged mark"
    box = browser.eval("(() => { const r = document.querySelector('#timeline').getBoundingClientRect(); "
                       "return [r.width, r.height]; })()")
    assert box[0] > 900 and box[1] > 100
    columns = browser.eval("document.querySelectorAll('#cost-chart g.col').length")
    assert columns == min(size[0], 100)
    total = browser.eval("[...document.querySelectorAll('#token-chart g.col')].reduce((n, g) => n + "
                         "Number(g.dataset.value), 0)")
    assert total == status["tokens"]["total"]
    rows = browser.eval("document.querySelectorAll('#steps tr[data-step]').length")
    assert rows == size[0]
