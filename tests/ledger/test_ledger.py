"""The ledger's line format, its hash chain, and the readers that only look at its end."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List

import pytest
from hypothesis import given
from hypothesis import strategies as st

from store.ledger import ledger
from store.ledger.ledger import GENESIS, LedgerError, check_link, format_line, parse_line, read_last, read_tail, seal

if TYPE_CHECKING:
    from conftest import ChainLines


def _fields(i: int, note: str = "") -> Dict[str, Any]:
    return {"ts": "2026-01-01T00:00:00Z", "step": f"s{i % 7}", "status": "done", "note": note or f"n{i}",
            "session": "", "attempt": 1}


def _write(path: Path, lines: List[bytes], torn: bytes = b"") -> None:
    path.write_bytes(b"".join(lines) + torn)


def test_seal_chains_and_parse_round_trips() -> None:
    first = seal(_fields(1), 1, GENESIS)
    second = seal(_fields(2), 2, first["hash"])
    assert list(first)[0] == "seq" and list(first)[-2:] == ["prev", "hash"]
    assert (first["prev"], second["prev"]) == (GENESIS, first["hash"])
    for record in (first, second):
        line = format_line(record)
        assert line.endswith(b"\n") and line.count(b"\n") == 1
        assert parse_line(line[:-1]) == record
    check_link(first, None)
    check_link(second, first)


def test_seal_ignores_caller_chain_fields() -> None:
    record = seal({**_fields(1), "seq": 99, "prev": "x", "hash": "y"}, 3, "p" * 32)
    assert (record["seq"], record["prev"]) == (3, "p" * 32)
    assert record["hash"] == ledger.chain_hash(record)


@given(st.dictionaries(st.text(max_size=10), st.one_of(st.text(), st.integers(), st.booleans(), st.none()),
                       max_size=6))
def test_any_fields_give_one_ascii_line_that_round_trips(extra: Dict[str, Any]) -> None:
    record = seal({**_fields(1), **extra}, 1, GENESIS)
    line = format_line(record)
    assert line.count(b"\n") == 1 and line.endswith(b"\n")
    assert all(b < 128 for b in line)
    assert parse_line(line[:-1]) == record


@pytest.mark.parametrize("key, value", [
    ("note", "changed"), ("status", "failed"), ("step", "s9"), ("ts", "2027-01-01T00:00:00Z"), ("attempt", 2),
    ("seq", 2), ("prev", "f" * 32),
])
def test_any_changed_field_breaks_the_hash(key: str, value: Any) -> None:
    record = seal(_fields(1), 1, GENESIS)
    edited = dict(record, **{key: value})
    with pytest.raises(LedgerError, match="hash does not match"):
        parse_line(format_line(edited)[:-1])


@pytest.mark.parametrize("raw, message", [
    (b"{not json", "not valid JSON"),
    (b"\xff\xfe", "not valid JSON"),
    (b"[1, 2]", "not a JSON object"),
    (b'{"seq": 1, "ts": "t", "step": "a", "status": "done", "prev": "0"}', "missing field(s) hash"),
    (b'{"seq": "1", "ts": "t", "step": "a", "status": "done", "prev": "0", "hash": "h"}', "wrong type"),
    (b"", "not valid JSON"),
])
def test_parse_line_rejects_bad_lines(raw: bytes, message: str) -> None:
    with pytest.raises(LedgerError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_line(raw)


def test_check_link_names_broken_prev_and_seq_gap() -> None:
    first = seal(_fields(1), 1, GENESIS)
    with pytest.raises(LedgerError, match="chain broken"):
        check_link(seal(_fields(2), 2, "e" * 32), first)
    with pytest.raises(LedgerError, match="seq is 3, expected 2"):
        check_link(seal(_fields(2), 3, first["hash"]), first)
    with pytest.raises(LedgerError, match="chain broken"):
        check_link(seal(_fields(2), 1, "e" * 32), None)


def test_read_tail_of_missing_empty_clean_and_torn_files(tmp_path: Path, chain_lines: ChainLines) -> None:
    path = tmp_path / "steps.jsonl"
    assert read_tail(path) == ledger.Tail(None, 0, b"")
    path.write_bytes(b"")
    assert read_tail(path) == ledger.Tail(None, 0, b"")
    lines = chain_lines(_fields(i) for i in range(3))
    _write(path, lines)
    size = path.stat().st_size
    assert read_tail(path) == ledger.Tail(parse_line(lines[-1][:-1]), size, b"")
    _write(path, lines, torn=b'{"seq":4,"ts"')
    assert read_tail(path) == ledger.Tail(parse_line(lines[-1][:-1]), size, b'{"seq":4,"ts"')
    _write(path, [], torn=b'{"seq":1')
    assert read_tail(path) == ledger.Tail(None, 0, b'{"seq":1')


def test_read_tail_finds_a_last_line_longer_than_a_read_chunk(tmp_path: Path, chain_lines: ChainLines) -> None:
    path = tmp_path / "steps.jsonl"
    lines = chain_lines([_fields(1), _fields(2, note="x" * (3 * ledger.TAIL_CHUNK))])
    _write(path, lines, torn=b"y" * (ledger.TAIL_CHUNK + 5))
    tail = read_tail(path)
    assert tail.last is not None and tail.last["seq"] == 2 and len(tail.last["note"]) == 3 * ledger.TAIL_CHUNK
    assert len(tail.torn) == ledger.TAIL_CHUNK + 5


def test_read_tail_raises_on_a_corrupt_last_line(tmp_path: Path, chain_lines: ChainLines) -> None:
    path = tmp_path / "steps.jsonl"
    _write(path, chain_lines(_fields(i) for i in range(2)) + [b"garbage\n"])
    with pytest.raises(LedgerError):
        read_tail(path)


@pytest.mark.parametrize("count", [0, 1, 5, 300, 2999, 3000, 5000])
def test_read_last_returns_the_last_records_across_chunks(tmp_path: Path, chain_lines: ChainLines, count: int) -> None:
    path = tmp_path / "steps.jsonl"
    lines = chain_lines(_fields(i, note="z" * (i % 50)) for i in range(3000))
    assert len(b"".join(lines)) > 3 * ledger.TAIL_CHUNK
    _write(path, lines, torn=b'{"seq":3001')
    records, torn = read_last(path, count)
    expected = [parse_line(line[:-1]) for line in lines[max(len(lines) - count, 0):]] if count else []
    assert records == expected
    assert [r["seq"] for r in records] == list(range(max(3000 - count, 0) + 1, 3001))[:count]
    assert torn == b'{"seq":3001'


def test_read_last_skips_corrupt_lines(tmp_path: Path, chain_lines: ChainLines) -> None:
    path = tmp_path / "steps.jsonl"
    lines = chain_lines(_fields(i) for i in range(4))
    lines[2] = b"oops\n"
    _write(path, lines)
    records, torn = read_last(path, 3)
    assert [r["seq"] for r in records] == [2, 4] and torn == b""


def test_read_last_of_a_missing_file(tmp_path: Path) -> None:
    assert read_last(tmp_path / "none.jsonl", 5) == ([], b"")


def test_iter_lines_gives_offsets_and_marks_the_torn_tail(tmp_path: Path, chain_lines: ChainLines) -> None:
    path = tmp_path / "steps.jsonl"
    lines = chain_lines(_fields(i) for i in range(3))
    _write(path, lines, torn=b"{half")
    got = list(ledger.iter_lines(path))
    offsets = [sum(len(x) for x in lines[:i]) for i in range(4)]
    assert got == [(offsets[i], lines[i][:-1], True) for i in range(3)] + [(offsets[3], b"{half", False)]
    assert list(ledger.iter_lines(path, offsets[2])) == got[2:]
    assert list(ledger.iter_lines(tmp_path / "none.jsonl")) == []


def test_lines_are_compact_json(chain_lines: ChainLines) -> None:
    (line,) = chain_lines([_fields(1, note="a b")])
    assert b": " not in line and b", " not in line.replace(b'"a b"', b"")
    assert json.loads(line) == parse_line(line[:-1])


def test_iter_objects_follows_complete_lines_by_offset(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    lines = [b'{"a": 1}\n', b"\n", b"not json\n", b"[1, 2]\n", b'{"b": 2}\n', b'{"c": 3']  # the last one torn
    path.write_bytes(b"".join(lines))
    ends = [sum(len(x) for x in lines[: i + 1]) for i in range(len(lines))]
    assert list(ledger.iter_objects(path)) == [(ends[0], {"a": 1}), (ends[1], None), (ends[2], None),
                                               (ends[3], None), (ends[4], {"b": 2})]
    assert list(ledger.iter_objects(path, ends[3])) == [(ends[4], {"b": 2})]
    assert list(ledger.iter_objects(path, ends[4])) == []  # only the torn line is left
    assert list(ledger.iter_objects(tmp_path / "missing")) == []
