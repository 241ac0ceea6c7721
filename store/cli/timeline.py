"""The report's timeline as inline SVG: one lane per session that worked (consecutive sessions share a
lane past :data:`MAX_LANES`), named by when it ran and how it ended (:mod:`store.cli.lanes`), a
bar per step attempt coloured by how it ended and carrying the step's name where it fits, tool
failures as ticks and alerts as triangles. Bars and ticks closer than a pixel merge into one mark
that says how many it stands for, so a job of a thousand steps and two hundred sessions draws a
few thousand marks."""

from __future__ import annotations

from html import escape

from store.cli import lanes
from store.monitor.clock import epoch, iso

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

    Mark = Tuple[float, float, str, str, str]  # x0, x1, outcome, title, the step's name

WIDTH, GUTTER, RIGHT = 1000, 215, 12
CHAR = 6.3  # pixels per character of an 11 px label, about: a name is written on a bar it fits
LANE, GAP, TOP, AXIS = 16, 4, 22, 24
MAX_LANES = 30
COLUMN = 2.0  # pixels: narrower attempts share one mark per column this wide
COLOURS = {"done": "#2e9e5b", "failed": "#d64545", "skipped": "#9aa5b1", "running": "#3b82f6", "left": "#f59e0b",
           "waiting": "#a855f7"}
WORST = ("failed", "left", "running", "waiting", "done", "skipped")  # which outcome a merged mark shows
OUTSIDE, WAITING = "outside", "waiting"
LIGHT = ("left", "skipped")  # bars pale enough that their name is written dark


class Scale:
    def __init__(self, start: float, end: float) -> None:
        self.start, self.end = start, max(end, start + 1.0)

    def x(self, t: float) -> float:
        return GUTTER + (WIDTH - GUTTER - RIGHT) * (t - self.start) / (self.end - self.start)


def _lanes(data: Mapping[str, Any]) -> Tuple[List[Tuple[str, str]], Dict[Optional[str], int]]:
    """(key, label) per lane, and the lane of each session id (``None``: outside any session)."""
    sessions = lanes.drawn(data)
    numbers, how = lanes.numbers(data), lanes.precision(data)
    rows: List[Tuple[str, str]] = []
    where: Dict[Optional[str], int] = {}
    bars = [a for s in data["steps"] for a in s["attempts"]]
    if any(a["outcome"] == "waiting" for a in bars):
        rows.append((WAITING, "waiting for a person"))
    size = -(-len(sessions) // MAX_LANES) if sessions else 1
    for first in range(0, len(sessions), size):
        group = sessions[first:first + size]
        label = (lanes.label(group[0], numbers.get(group[0]["id"], 0), how) if size == 1
                 else lanes.group_label(group, numbers, how))
        for view in group:
            where[view["id"]] = len(rows)
        rows.append((group[0]["id"], label))
    if any(a["session"] is None and a["outcome"] != "waiting" for a in bars):
        where[None] = len(rows)
        rows.append((OUTSIDE, "outside a session"))
    return rows, where


def _span(data: Mapping[str, Any]) -> Optional[Scale]:
    times = [epoch(a[k]) for s in data["steps"] for a in s["attempts"] for k in ("start", "end")]
    times += [epoch(s[k]) for s in data["sessions"] for k in ("start", "end")]
    times += [epoch(a.get("ts")) for a in data["alerts"]] + [epoch(data["duration"]["last_activity"])]
    known = [t for t in times if t is not None]
    return Scale(min(known), max(known)) if known else None


def _merge(marks: Sequence[Mark]) -> List[Tuple[float, float, List[Mark]]]:
    """Marks: those narrower than :data:`COLUMN` pixels share one mark per column of that width;
    wider ones stay as they are."""
    wide = [(m[0], m[1], [m]) for m in marks if m[1] - m[0] >= COLUMN]
    columns: Dict[int, List[Mark]] = {}
    for mark in marks:
        if mark[1] - mark[0] < COLUMN:
            columns.setdefault(int(mark[0] // COLUMN), []).append(mark)
    narrow = [(col * COLUMN, col * COLUMN + COLUMN, sorted(group)) for col, group in columns.items()]
    return sorted(wide + narrow, key=lambda m: m[0])


def _name(x0: float, x1: float, y: float, name: str, outcome: str) -> str:
    """The step's name written on its bar, shortened to fit; nothing when not even a few letters fit."""
    room = int((x1 - x0 - 6) / CHAR)
    if room < min(len(name), 3):
        return ""
    shown = name if len(name) <= room else name[:max(room - 1, 1)] + "\u2026"
    tone = " light" if outcome in LIGHT else ""
    return f'<text class="bar-name{tone}" x="{x0 + 3:.1f}" y="{y + LANE - 4:.1f}">{escape(shown)}</text>'


def _bar(x0: float, x1: float, y: float, members: List[Mark]) -> str:
    outcomes = [m[2] for m in members]
    worst = next(o for o in WORST + tuple(outcomes) if o in outcomes)
    if len(members) == 1:
        title = members[0][3]
    else:
        counts = ", ".join(f"{outcomes.count(o)} {o}" for o in WORST if o in outcomes)
        title = f"{len(members)} attempts ({counts}): {members[0][3]} ... {members[-1][3]}"
    width = max(x1 - x0, 1.5)
    return (f'<rect class="bar outcome-{worst}" data-count="{len(members)}" x="{x0:.1f}" y="{y:.1f}" '
            f'width="{width:.1f}" height="{LANE}" fill="{COLOURS.get(worst, "#666")}" stroke="#fff" '
            f'stroke-width="0.5">'
            f"<title>{escape(title)}</title></rect>"
            + (_name(x0, x0 + width, y, members[0][4], worst) if len(members) == 1 else ""))


def _attempt_marks(data: Mapping[str, Any], scale: Scale, lanes: Sequence[Tuple[str, str]],
                   where: Mapping[Optional[str], int], now: float) -> Dict[int, List[Mark]]:
    per_lane: Dict[int, List[Mark]] = {i: [] for i in range(len(lanes))}
    for step in data["steps"]:
        for a in step["attempts"]:
            start = epoch(a["start"])
            if start is None:
                continue
            end = (epoch(a["end"]) if a["end"] else None) or now
            lane = 0 if a["outcome"] == "waiting" else where.get(a["session"], where.get("*", -1))
            if lane < 0:
                continue
            label = (f"{step['id']} attempt {a['n']}: {a['outcome']}, {iso(start)}"
                     + (f" to {iso(end)}" if a["end"] else ", still open"))
            per_lane[lane].append((scale.x(start), scale.x(max(end, start)), a["outcome"], label, str(step["id"])))
    return per_lane


def _axis(scale: Scale, height: float) -> List[str]:
    out = []
    for i in range(6):
        t = scale.start + (scale.end - scale.start) * i / 5
        x = scale.x(t)
        label = iso(t)[5:16].replace("T", " ") if scale.end - scale.start > 86400 else iso(t)[11:19]
        anchor = "start" if i == 0 else "end" if i == 5 else "middle"
        out.append(f'<line class="tick" x1="{x:.1f}" y1="{TOP - 4}" x2="{x:.1f}" y2="{height - AXIS + 4}" '
                   f'stroke="#e5e7eb"/><text x="{x:.1f}" y="{height - 6}" text-anchor="{anchor}">{label}</text>')
    return out


def svg(data: Mapping[str, Any], now: Optional[float] = None) -> str:
    """The timeline for a status document; a short note instead when nothing has happened yet."""
    scale = _span(data)
    if scale is None:
        return '<p class="empty">Nothing has happened yet: no session, no record.</p>'
    lanes, where = _lanes(data)
    now = scale.end if now is None else min(now, scale.end)
    height = TOP + len(lanes) * (LANE + GAP) + AXIS
    parts = [f'<svg id="timeline" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" '
             f'width="100%" role="img" aria-label="timeline of the job">'] + _axis(scale, height)
    per_lane = _attempt_marks(data, scale, lanes, where, now)
    for index, (key, label) in enumerate(lanes):
        y = TOP + index * (LANE + GAP)
        parts.append(f'<g class="lane" data-lane="{escape(key)}"><text class="label" x="{GUTTER - 8}" '
                     f'y="{y + LANE - 4}" text-anchor="end">{escape(label)}</text>')
        parts += [_bar(x0, x1, y, members) for x0, x1, members in _merge(per_lane[index])]
        parts.append("</g>")
    parts += _session_spans(data, scale, where)
    parts += _failure_ticks(data, scale, where)
    parts += _alert_marks(data, scale)
    parts.append("</svg>")
    return "\n".join(parts)


def _session_spans(data: Mapping[str, Any], scale: Scale, where: Mapping[Optional[str], int]) -> List[str]:
    out = []
    for view in data["sessions"]:
        if view["id"] not in where:
            continue  # a session that only answered baton's commands
        y = TOP + where[view["id"]] * (LANE + GAP) + LANE + 1
        for run in view["runs"]:
            start, end = epoch(run["start"]), epoch(run["end"]) or scale.end
            if start is not None:
                out.append(f'<line class="run ended-{escape(run["ended"])}" x1="{scale.x(start):.1f}" y1="{y}" '
                           f'x2="{scale.x(end):.1f}" y2="{y}" stroke="#94a3b8" stroke-width="2"><title>session '
                           f'{escape(view["id"][:8])}: {escape(run["ended"])}</title></line>')
    return out


def _failure_ticks(data: Mapping[str, Any], scale: Scale, where: Mapping[Optional[str], int]) -> List[str]:
    columns: Dict[Tuple[int, int], int] = {}
    for mark in data.get("failure_times", ()):
        t, lane = epoch(mark["ts"]), where.get(mark["session"])
        if t is not None and lane is not None:
            key = (lane, int(scale.x(t)))
            columns[key] = columns.get(key, 0) + 1
    out = []
    for (lane, x), n in sorted(columns.items()):
        y = TOP + lane * (LANE + GAP)
        out.append(f'<line class="failure" data-count="{n}" x1="{x}" y1="{y - 3}" x2="{x}" y2="{y + LANE + 3}" '
                   f'stroke="#991b1b" stroke-width="1.5"><title>{n} tool failure{"s" if n > 1 else ""}</title></line>')
    return out


def _alert_marks(data: Mapping[str, Any], scale: Scale) -> List[str]:
    out = []
    for alert in data["alerts"]:
        t = epoch(alert.get("ts"))
        if t is not None:
            x = scale.x(t)
            out.append(f'<path class="alert" d="M{x - 5:.1f},4 L{x + 5:.1f},4 L{x:.1f},14 Z" fill="#ea580c">'
                       f"<title>{escape(str(alert.get('ts')))} {escape(str(alert.get('message')))}</title></path>")
    return out
