"""Patterns compiled on first use: the same answers as re.compile, nothing compiled before a use,
and every module-level pattern in store/ compiles (a typo there must fail here, not at a user's call)."""

from __future__ import annotations

import importlib
import pkgutil
import re

import pytest

import store
from store.base.regex import Lazy, lazy


def test_a_lazy_pattern_answers_as_the_compiled_one() -> None:
    pattern = lazy(r"([a-z]+)-(\d+)", re.I)
    compiled = re.compile(r"([a-z]+)-(\d+)", re.I)
    for text in ("Ab-12", "x-", "--1", "abc-3 and def-4"):
        assert bool(pattern.match(text)) is bool(compiled.match(text))
        assert pattern.findall(text) == compiled.findall(text)
        assert pattern.sub(r"\2", text) == compiled.sub(r"\2", text)
    assert (pattern.pattern, pattern.flags, pattern.groups) == (compiled.pattern, compiled.flags, compiled.groups)
    assert lazy(rb"\x00+").fullmatch(b"\x00\x00") is not None


def test_nothing_is_compiled_before_the_first_use() -> None:
    pattern = lazy(r"(unbalanced")
    assert type(pattern).__name__ == "Lazy" and "_compiled" not in vars(pattern)
    with pytest.raises(re.error):
        pattern.search("x")
    good = lazy(r"a+")
    assert "_compiled" not in vars(good)
    assert good.search("baa") is not None
    assert "_compiled" in vars(good) and "search" in vars(good)  # later calls skip __getattr__


def test_every_module_level_pattern_in_store_compiles() -> None:
    found = 0
    for info in pkgutil.walk_packages(store.__path__, "store."):
        if info.name.endswith("__main__"):
            continue  # running it is the CLI
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if isinstance(value, Lazy):
                value.pattern  # noqa: B018 - reading it compiles it
                found += 1
    assert found >= 3, found  # the gate's remaining patterns (the shell reader, the Stop's refusal codes: no re)
