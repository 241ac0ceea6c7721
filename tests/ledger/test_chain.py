"""verify over the whole ledger: the fast check from a line's bytes gives, for any ledger and any
damage, exactly the verdict of the full check line by line, and names the same first bad line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import List

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ledgers import reference

from store.ledger import chain
from store.ledger.chain import Verdict
from store.ledger.ledger import GENESIS, LedgerError, format_line, parse_line, seal
from store.ledger.sealing import all_sealed


def _ledger(count: int) -> List[bytes]:
    lines, prev = [], GENESIS
    for seq in range(1, count + 1):
        record = seal({"ts": "2026-01-01T00:00:00Z", "step": f"s{seq % 5}", "status": "done",
                       "note": f"n\u00e9 {seq}" * (seq % 3), "session": "", "attempt": 1}, seq, prev)
        lines.append(format_line(record))
        prev = record["hash"]
    return lines


def _respaced(line: bytes) -> bytes:
    """The same record in another valid JSON form (spaces after separators)."""
    return json.dumps(json.loads(line), separators=(", ", ": ")).encode() + b"\n"


def _resealed(line: bytes) -> bytes:
    record = parse_line(line[:-1])
    record["note"] = "edited"
    return format_line(seal(record, record["seq"], record["prev"]))


@st.composite
def damaged(draw: st.DrawFn) -> bytes:
    lines = _ledger(draw(st.integers(0, 40)))
    for _ in range(draw(st.integers(0, 2))):
        kind = draw(st.sampled_from(["flip", "delete", "repeat", "swap", "blank", "garbage", "respace", "reseal",
                                     "torn"]))
        if not lines:
            break
        i = draw(st.integers(0, len(lines) - 1))
        if kind == "flip" and len(lines[i]) > 1:
            line = bytearray(lines[i])
            at = draw(st.integers(0, len(line) - 2))
            line[at] = draw(st.integers(32, 126))
            lines[i] = bytes(line)
        elif kind == "delete":
            del lines[i]
        elif kind == "repeat":
            lines.insert(i, lines[i])
        elif kind == "swap" and i + 1 < len(lines):
            lines[i], lines[i + 1] = lines[i + 1], lines[i]
        elif kind in ("blank", "garbage"):
            lines.insert(i, b"\n" if kind == "blank" else b'{"seq":1,"hash":"x"}\n')
        elif kind in ("respace", "reseal"):
            try:
                lines[i] = _respaced(lines[i]) if kind == "respace" else _resealed(lines[i])
            except (ValueError, LedgerError):
                pass  # a line an earlier change already broke
        elif kind == "torn" and lines[-1]:
            lines[-1] = lines[-1][: draw(st.integers(0, len(lines[-1]) - 1))]
    return b"".join(lines)


@settings(max_examples=120)
@given(data=damaged(), chunk=st.sampled_from([64, 700, 1 << 20]), split=st.sampled_from([0, 1 << 40]))
def test_the_fast_verdict_is_the_full_verdict(tmp_path_factory: pytest.TempPathFactory,
                                              monkeypatch: pytest.MonkeyPatch, data: bytes, chunk: int,
                                              split: int) -> None:
    monkeypatch.setattr(chain, "BLOCK", chunk)
    monkeypatch.setattr(chain, "SPLIT_BYTES", split)  # 0: a piece per processor at once, whatever the size
    path = tmp_path_factory.mktemp("v") / "steps.jsonl"
    path.write_bytes(data)
    assert chain.verify(path) == reference(data)


def test_a_valid_record_in_another_form_still_passes(tmp_path: Path) -> None:
    lines = _ledger(5)
    lines[2] = _respaced(lines[2])
    path = tmp_path / "steps.jsonl"
    path.write_bytes(b"".join(lines))
    assert not all_sealed([line[:-1] for line in lines])
    assert chain.verify(path) == Verdict(5, parse_line(lines[-1][:-1])["hash"], 0, "")


def test_all_sealed_refuses_any_changed_byte() -> None:
    lines = [line[:-1] for line in _ledger(3)]
    assert all_sealed(lines)
    for at in range(len(lines[1])):
        changed = bytearray(lines[1])
        changed[at] = changed[at] ^ 1
        assert not all_sealed([lines[0], bytes(changed), lines[2]]), at


def test_the_fast_check_refuses_any_other_byte_anywhere_in_a_line() -> None:
    """Each byte of a sealed line replaced by each hex digit, a quote or a letter that is not hex:
    the block is no longer sealed, down to the letters of the ``prev`` and ``hash`` keys (a hex
    letter there once passed the fast check, which read every hex digit at the line's end as 0)."""
    lines = [line[:-1] for line in _ledger(3)]
    first = parse_line(lines[0])
    assert chain.sealed_run(lines[1:], 1, first["hash"].encode())
    for at in range(len(lines[1])):
        for byte in b'0123456789abcdef"x':
            if byte == lines[1][at]:
                continue
            changed = bytearray(lines[1])
            changed[at] = byte
            assert not chain.sealed_run([bytes(changed), lines[2]], 1, first["hash"].encode()), (at, chr(byte))


@pytest.mark.parametrize("key, damaged", [(b'"hash":', b'"hcsh":'), (b'"prev":', b'"prcv":')])
def test_a_damaged_key_is_named_as_the_full_check_names_it(tmp_path: Path, key: bytes, damaged: bytes) -> None:
    lines = _ledger(3)
    lines[1] = lines[1].replace(key, damaged)
    path = tmp_path / "steps.jsonl"
    path.write_bytes(b"".join(lines))
    verdict = chain.verify(path)
    assert verdict == reference(b"".join(lines)) and verdict.problem.startswith("line 2: "), verdict
