"""JSON through CPython's C codec (``_json``) without importing the ``json`` package.

``import json`` costs a hook process more than everything else it does: ``json.decoder`` imports
``re``, which imports ``enum``, ``functools`` and ``collections`` (about 15 ms on a 2-core VM, as
much again as the interpreter's own start-up). The encoder and the scanner are the same C
functions ``json.dumps`` and ``json.loads`` use, called the way ``json`` calls them, so the text
and the values are identical (``tests/base/test_jsonc.py`` compares them). The rest goes to ``json``
itself: ``indent``, ``cls``, ``skipkeys``, no circular check, ``loads`` options other than
``object_pairs_hook``, bytes that are not plain UTF-8, and interpreters without ``_json``.

Errors are ``json.JSONDecodeError`` (``json.decoder`` is imported only to raise one), reachable
here as ``jsonc.JSONDecodeError``. CPython 3.11's scanner finds that class in ``sys.modules`` only:
before ``json.decoder`` is imported, an error inside an object or array comes out as a
``SystemError``, so the text is scanned again once it is.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from json import JSONDecodeError as JSONDecodeError
    from typing import IO, Any, Callable, Dict, Optional, Tuple

try:
    import _json as _c
except ImportError:  # pragma: no cover - an interpreter without CPython's accelerator: json does it all
    _c = None  # type: ignore[assignment]
_make_encoder: Any = getattr(_c, "make_encoder", None)
_make_scanner: Any = getattr(_c, "make_scanner", None)
_encode_str: Any = getattr(_c, "encode_basestring", None)
_encode_ascii: Any = getattr(_c, "encode_basestring_ascii", None)

_SPACE = " \t\n\r"
_CONSTANTS = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}


def __getattr__(name: str) -> Any:
    if name == "JSONDecodeError":
        from json import JSONDecodeError

        return JSONDecodeError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _error(message: str, text: str, at: int) -> Exception:
    from json import JSONDecodeError

    return JSONDecodeError(message, text, at)


class _Context:
    """What ``_json.make_scanner`` reads from a ``json.JSONDecoder`` (its defaults)."""

    strict = True
    object_hook = None
    object_pairs_hook: Optional[Callable[[Any], Any]] = None
    parse_float = float
    parse_int = int
    parse_constant = _CONSTANTS.__getitem__


_scanners: Dict[Any, Callable[[str, int], Tuple[Any, int]]] = {}  # object_pairs_hook -> scanner


def _scanner(pairs: Optional[Callable[[Any], Any]]) -> Callable[[str, int], Tuple[Any, int]]:
    scan = _scanners.get(pairs)
    if scan is None:
        context = _Context()
        context.object_pairs_hook = pairs
        scan = _scanners[pairs] = _make_scanner(context)
    return scan


def _plain_utf8(data: Any) -> bool:
    """``json.detect_encoding`` would say UTF-8 without a BOM: no BOM and no NUL in the first 4 bytes."""
    head = data[:4]
    return not (b"\x00" in head or head.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")))


def loads(s: Any, *, object_pairs_hook: Optional[Callable[[Any], Any]] = None, **options: Any) -> Any:
    if _make_scanner is None or options or not isinstance(s, str) and not (
            isinstance(s, (bytes, bytearray)) and _plain_utf8(s)):
        import json

        return json.loads(s, object_pairs_hook=object_pairs_hook, **options)
    if not isinstance(s, str):
        s = s.decode("utf-8", "surrogatepass")
    if s.startswith("\ufeff"):
        raise _error("Unexpected UTF-8 BOM (decode using utf-8-sig)", s, 0)
    at, size = 0, len(s)
    while at < size and s[at] in _SPACE:
        at += 1
    scan = _scanner(object_pairs_hook)
    try:
        try:
            value, end = scan(s, at)
        except SystemError:  # the scanner raises its errors through json.decoder, which it may only look up
            import json.decoder  # noqa: F401 - in sys.modules (CPython 3.11 does not import it), then again

            value, end = scan(s, at)
    except StopIteration as stop:
        raise _error("Expecting value", s, stop.value) from None
    if end != size and s[end:].strip(_SPACE):
        while s[end] in _SPACE:
            end += 1
        raise _error("Extra data", s, end)
    return value


def load(fp: IO[Any], **options: Any) -> Any:
    return loads(fp.read(), **options)


def _default(value: Any) -> Any:
    raise TypeError(f"Object of type {value.__class__.__name__} is not JSON serializable")


def dumps(obj: Any, *, skipkeys: bool = False, ensure_ascii: bool = True, check_circular: bool = True,
          allow_nan: bool = True, cls: Any = None, indent: Any = None, separators: Optional[Tuple[str, str]] = None,
          default: Optional[Callable[[Any], Any]] = None, sort_keys: bool = False) -> str:
    if _make_encoder is None or skipkeys or not check_circular or cls is not None or indent is not None:
        import json

        return json.dumps(obj, skipkeys=skipkeys, ensure_ascii=ensure_ascii, check_circular=check_circular,
                          allow_nan=allow_nan, cls=cls, indent=indent, separators=separators, default=default,
                          sort_keys=sort_keys)
    encode = _encode_ascii if ensure_ascii else _encode_str
    if isinstance(obj, str):
        text: str = encode(obj)
        return text
    item, key = separators if separators is not None else (", ", ": ")
    encoder = _make_encoder({}, default or _default, encode, None, key, item, sort_keys, False, allow_nan)
    return "".join(encoder(obj, 0))


def dump(obj: Any, fp: IO[str], **options: Any) -> None:
    fp.write(dumps(obj, **options))
