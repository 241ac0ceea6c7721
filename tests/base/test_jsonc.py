"""store.base.jsonc says what json says, byte for byte and value for value, and loads neither json
nor re to say it."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from store.base import jsonc

ROOT = Path(__file__).resolve().parents[2]
TEXT = st.text(st.characters(codec="utf-8") | st.sampled_from(["\u2028", "\x00", "\ud800", "\U0001f600", '"', "\\"]))
SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | TEXT
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
                      max_leaves=20)
OPTIONS = st.fixed_dictionaries({}, optional={
    "separators": st.sampled_from([(",", ":"), (", ", ": "), (";", "=")]), "ensure_ascii": st.booleans(),
    "sort_keys": st.booleans(), "allow_nan": st.booleans()})


def same_value(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(map(same_value, a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(same_value(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


@settings(max_examples=400)
@given(value=VALUES, options=OPTIONS)
def test_dumps_writes_what_json_writes(value: Any, options: Dict[str, Any]) -> None:
    try:
        want = json.dumps(value, **options)
    except (ValueError, TypeError) as exc:  # allow_nan=False, keys sort_keys cannot order
        with pytest.raises(type(exc)):
            jsonc.dumps(value, **options)
        return
    assert jsonc.dumps(value, **options) == want


@settings(max_examples=400)
@given(value=VALUES, indent=st.sampled_from([None, 0, 2]), spaces=st.sampled_from(["", " ", "\n\t", "\r\n "]))
def test_loads_reads_what_json_reads(value: Any, indent: Any, spaces: str) -> None:
    text = spaces + json.dumps(value, indent=indent) + spaces
    assert same_value(jsonc.loads(text), json.loads(text))
    data = text.encode("utf-8", "surrogatepass")
    assert same_value(jsonc.loads(data), json.loads(data))


@pytest.mark.parametrize("text", ["", " ", "{", '{"a": 1} x', "[1,]", "\ufeff[1]", "nul", '"\x01"', "1 2", "[1]\n\n]",
                                  '{"a" 1}', "NaN x", "-"])
def test_bad_text_raises_what_json_raises(text: str) -> None:
    with pytest.raises(json.JSONDecodeError) as want:
        json.loads(text)
    with pytest.raises(jsonc.JSONDecodeError) as got:
        jsonc.loads(text)
    assert type(got.value) is type(want.value) and str(got.value) == str(want.value)
    assert (got.value.pos, got.value.lineno, got.value.colno) == (want.value.pos, want.value.lineno, want.value.colno)


@pytest.mark.parametrize("data", [b"\xef\xbb\xbf[1]", '["\u00e9"]'.encode("utf-16"), '{"a": 2}'.encode("utf-32-le"),
                                  b"\xff\xfe", b"[1]"])
def test_bytes_in_any_json_encoding_read_as_json_reads_them(data: bytes) -> None:
    try:
        want: Any = json.loads(data)
    except ValueError as exc:
        with pytest.raises(type(exc)):
            jsonc.loads(data)
        return
    assert jsonc.loads(data) == want


def test_options_the_c_codec_lacks_go_to_json() -> None:
    pairs: List[Any] = []
    assert jsonc.loads('{"a": 1, "a": 2}', object_pairs_hook=pairs.append) is None and pairs == [[("a", 1), ("a", 2)]]
    assert jsonc.loads("1.5", parse_float=str) == "1.5"
    value = {"b": [1, {"c": None}], "a": "x"}
    for options in ({"indent": 2}, {"indent": 2, "sort_keys": True}, {"skipkeys": True}, {"check_circular": False}):
        assert jsonc.dumps(value, **options) == json.dumps(value, **options)
    assert jsonc.dumps({1: set()}, default=sorted) == json.dumps({1: set()}, default=sorted)
    with pytest.raises(TypeError, match="Object of type set is not JSON serializable"):
        jsonc.dumps({"a": {1}})
    loop: List[Any] = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular reference"):
        jsonc.dumps(loop)


def test_dump_and_load_go_through_files(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    with open(path, "w", encoding="utf-8") as handle:
        jsonc.dump({"k": [1, "\u00e9"]}, handle, ensure_ascii=False)
    assert path.read_text(encoding="utf-8") == json.dumps({"k": [1, "\u00e9"]}, ensure_ascii=False)
    with open(path, encoding="utf-8") as handle:
        assert jsonc.load(handle) == {"k": [1, "\u00e9"]}


def test_it_loads_neither_json_nor_re() -> None:
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from store.base import jsonc; "
            "jsonc.loads(jsonc.dumps({'a': [1.5, None, 'x\u00e9']}, separators=(',', ':'))); "
            "print(sorted(m for m in ('json', 'json.decoder', 're', 'enum') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-S", "-c", code, str(ROOT)], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


BAD = ["{oops", '{"a": 1, oops}', "[1, 2", '{"a": "b', "[1,]", "", "1 2", '{"a" 1}', "[NaN, -Infinity, x]"]


def test_errors_in_a_process_without_json_are_json_s() -> None:
    """In a fresh process nothing has imported json.decoder, where the C scanner looks up the error
    type (CPython 3.11 only looks in sys.modules): each error must still be json's, with its text."""
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from store.base import jsonc\n"
            "for text in sys.argv[2:]:\n"
            "    try:\n        jsonc.loads(text)\n"
            "    except Exception as exc:\n        print(type(exc).__module__, type(exc).__name__, exc)\n")
    out = subprocess.run([sys.executable, "-S", "-c", code, str(ROOT), *BAD], capture_output=True, text=True,
                         check=True)
    want = []
    for text in BAD:
        with pytest.raises(json.JSONDecodeError) as caught:
            json.loads(text)
        want.append(f"json.decoder JSONDecodeError {caught.value}")
    assert out.stdout.splitlines() == want, out.stderr


def test_an_error_is_json_s_own_type() -> None:
    with pytest.raises(ValueError) as caught:
        jsonc.loads("{")
    assert isinstance(caught.value, json.JSONDecodeError)
    assert jsonc.JSONDecodeError is json.JSONDecodeError
    with pytest.raises(AttributeError):
        jsonc.no_such_name  # noqa: B018
