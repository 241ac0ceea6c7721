"""The documentation as the tests read it: README.md and the pages in docs/.

``section(title)`` finds the one section with that heading, whichever file holds it, so a test that
keeps a table true does not care on which page the table lives; ``anchors`` and ``links`` read a
page as GitHub renders it, for the test that every relative link and anchor resolves.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Dict, List, Tuple

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
FENCE = re.compile(r"^```.*?^```[^\n]*$", re.M | re.S)
HEADING = re.compile(r"^(#{1,6}) (.+?)\s*$", re.M)
INLINE_CODE = re.compile(r"`[^`\n]*`")
# [label](target) and ![alt](target); a label may run over a line break
LINK = re.compile(r"!?\[([^\]]*)\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def pages() -> List[Path]:
    """README.md first, then docs/*.md by name."""
    return [README, *sorted((ROOT / "docs").glob("*.md"))]


def text_of(page: Path) -> str:
    return page.read_text(encoding="utf-8")


def _blank_fences(text: str) -> str:
    """``text`` with each fenced code block's lines emptied (line numbers and offsets kept): a
    ``# comment`` in a shell example is not a heading, a ``[x](y)`` in one is not a link."""
    return FENCE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def headings(text: str) -> List[Tuple[int, int, str, int]]:
    """(start, level, title, end of the heading line) of every heading outside code blocks."""
    return [(m.start(), len(m.group(1)), m.group(2), m.end()) for m in HEADING.finditer(_blank_fences(text))]


def section(title: str) -> str:
    """The text under the heading ``title`` (any level) up to the next heading of the same or a
    higher level, from README.md or docs/*.md; the title must name exactly one section."""
    found = []
    for page in pages():
        text = text_of(page)
        marks = headings(text)
        for i, (_, level, name, body) in enumerate(marks):
            if name == title:
                end = next((start for start, other, _, _ in marks[i + 1:] if other <= level), len(text))
                found.append((page, text[body:end].lstrip("\n")))
    assert found, f"no section {title!r} in README.md or docs/*.md"
    assert len(found) == 1, f"section {title!r} is in more than one place: {[str(p) for p, _ in found]}"
    return found[0][1]


def anchor(title: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped (``_`` and ``-`` kept),
    spaces made hyphens."""
    return re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")


def anchors(text: str) -> List[str]:
    """Every anchor a page has, a repeated heading numbered ``-1``, ``-2`` ... as GitHub does."""
    seen: Dict[str, int] = {}
    out = []
    for _, _, title, _ in headings(text):
        base = anchor(title)
        count = seen.get(base, 0)
        seen[base] = count + 1
        out.append(base if count == 0 else f"{base}-{count}")
    return out


def links(text: str) -> List[str]:
    """The targets of the page's Markdown links and images, outside code."""
    prose = INLINE_CODE.sub("", _blank_fences(text))
    return [m.group(2) for m in LINK.finditer(prose)]
