"""The external id a side effect printed: ``--id-from REGEX`` and ``--id-json FIELD``."""

from __future__ import annotations

from typing import Optional

import pytest

from store.base.errors import BatonError
from store.once.ident import MAX_ID, compile_pattern, from_json, from_regex


@pytest.mark.parametrize("pattern, out, found", [
    (r"id=(\d+)", b"sent\nid=42\nid=43\n", "42"),
    (r"https://\S+/pull/\d+", b"created https://github.com/o/r/pull/7 ok", "https://github.com/o/r/pull/7"),
    (r"^ID: (.*)$", b"x\nID: abc def\n", "abc def"),
    (r"id=(\d+)", b"nothing here", None),
    (r"(a)|(b)", b"b", None),  # the first group did not take part
])
def test_from_regex(pattern: str, out: bytes, found: Optional[str]) -> None:
    assert from_regex(compile_pattern(pattern), out) == found


@pytest.mark.parametrize("field, out, found", [
    ("id", b'{"id": 42}', "42"),
    ("data.id", b'{"data": {"id": "msg-1"}}', "msg-1"),
    ("items.0.url", b'{"items": [{"url": "u1"}, {"url": "u2"}]}', "u1"),
    ("items.-1.url", b'{"items": [{"url": "u1"}, {"url": "u2"}]}', "u2"),
    ("ok", b'{"ok": true}', "true"),
    ("data.id", b'progress 10%\nprogress 100%\n{"data": {"id": 7}}\n', "7"),  # the last JSON line
    ("data", b'{"data": {"id": 7}}', None),  # not a scalar
    ("missing", b'{"id": 1}', None),
    ("items.5", b'{"items": [1]}', None),
    ("id", b"not json at all", None),
    ("id", b'{"id": null}', None),
])
def test_from_json(field: str, out: bytes, found: Optional[str]) -> None:
    assert from_json(field, out) == found


def test_ids_are_capped_and_bad_patterns_are_usage_errors() -> None:
    assert len(from_regex(compile_pattern("(x+)"), b"x" * 1000) or "") == MAX_ID
    with pytest.raises(BatonError) as caught:
        compile_pattern("(")
    assert caught.value.code == 2
