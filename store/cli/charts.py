"""The report's bar charts as inline SVG: cost and tokens per step, one column each (past
:data:`MAX_BARS` steps, a column per group of consecutive steps), each labelled below with its
step's name where it fits."""

from __future__ import annotations

from html import escape

from store.cli.dashboard import count, money

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, List, Mapping, Sequence, Tuple

MAX_BARS = 100
CHAR = 6.3  # pixels per character of an 11 px label, about
TOKEN_COLOURS = (("input", "#2563eb"), ("output", "#16a34a"), ("cache_read", "#93c5fd"), ("cache_creation", "#f59e0b"))


def groups(steps: Sequence[Mapping[str, Any]]) -> List[Tuple[str, List[Mapping[str, Any]]]]:
    """Consecutive steps in at most :data:`MAX_BARS` groups, each with a label."""
    size = max(1, -(-len(steps) // MAX_BARS))
    out = []
    for first in range(0, len(steps), size):
        chunk = list(steps[first:first + size])
        label = chunk[0]["id"] if size == 1 else f"steps {first + 1}-{first + len(chunk)}: {chunk[0]['id']} ... " \
                                                 f"{chunk[-1]['id']}"
        out.append((label, chunk))
    return out


def _below(x: float, room: float, y: float, label: str) -> str:
    """A column's name under it, shortened to its width; nothing when not even a few letters fit."""
    fits = int(room / CHAR)
    if fits < min(len(label), 3):
        return ""
    shown = label if len(label) <= fits else label[:max(fits - 1, 1)] + "\u2026"
    return f'<text class="col-name" x="{x:.1f}" y="{y:.1f}" text-anchor="middle">{escape(shown)}</text>'


def _bars(chart: str, rows: Sequence[Tuple[str, Sequence[Tuple[str, float, str]]]],
          unit: Callable[[float], str], named: bool) -> str:
    """A bar chart: one column per row, stacked segments (name, value, colour); ``named``: each
    column's label written under it."""
    width, height, left, bottom = 1000, 196, 60, 36
    top = max((sum(v for _, v, _ in segs) for _, segs in rows), default=0.0) or 1.0
    step = (width - left) / max(len(rows), 1)
    parts = [f'<svg id="{chart}" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="100%">',
             f'<text x="{left - 6}" y="12" text-anchor="end">{escape(unit(top))}</text>',
             f'<line x1="{left}" y1="{height - bottom}" x2="{width}" y2="{height - bottom}" stroke="#d1d5db"/>']
    for i, (label, segs) in enumerate(rows):
        x, y = left + i * step, float(height - bottom)
        total = sum(v for _, v, _ in segs)
        title = escape(f"{label}: " + ", ".join(f"{name} {unit(v)}" for name, v, _ in segs))
        parts.append(f'<g class="col" data-label="{escape(label)}" data-value="{total}"><title>{title}</title>')
        for _, value, colour in segs:
            h = (height - bottom - 16) * value / top
            y -= h
            parts.append(f'<rect x="{x + step * 0.1:.1f}" y="{y:.1f}" width="{max(step * 0.8, 0.8):.1f}" '
                         f'height="{h:.1f}" fill="{colour}"/>')
        if named:
            parts.append(_below(x + step / 2, step * 0.95, height - bottom + 14, label))
        parts.append("</g>")
    parts.append("</svg>")
    return "\n".join(parts)


def cost_chart(data: Mapping[str, Any]) -> str:
    rows = []
    for label, chunk in groups(data["steps"]):
        reported = sum(s["cost_usd"] or 0.0 for s in chunk)
        estimated = sum((s["cost_estimated_usd"] or 0.0) for s in chunk) - reported
        rows.append((label, [("reported", reported, "#2563eb"), ("estimated, not reported", max(estimated, 0.0),
                                                                "#bfdbfe")]))
    legend = ('<p class="legend"><span><i style="background:#2563eb"></i>reported</span><span>'
              '<i style="background:#bfdbfe"></i>estimated (not reported yet)</span></p>')
    return _bars("cost-chart", rows, money, len(rows) == len(data["steps"])) + legend


def token_chart(data: Mapping[str, Any]) -> str:
    rows = [(label, [(kind, float(sum(s["tokens"][kind] for s in chunk)), colour) for kind, colour in TOKEN_COLOURS])
            for label, chunk in groups(data["steps"])]
    legend = '<p class="legend">' + "".join(f'<span><i style="background:{c}"></i>{k.replace("_", " ")}</span>'
                                             for k, c in TOKEN_COLOURS) + "</p>"
    return _bars("token-chart", rows, count, len(rows) == len(data["steps"])) + legend
