"""One syntax for hosts: a rule's ``allow_hosts`` and a step's ``sandbox.network.allow_hosts`` accept and
refuse the same patterns, with the same words, and a pattern that allows every host is refused."""

from __future__ import annotations

from typing import Any, Optional

import pytest

from store.base.errors import BatonError
from store.plan.hostnames import host_pattern
from store.plan.plan import parse_plan

PATTERNS = [  # (pattern, its normal form, or None and what the refusal says)
    ("pypi.org", "pypi.org", ""), ("PyPI.org.", "pypi.org", ""), ("*.github.com", "*.github.com", ""),
    ("127.0.0.1", "127.0.0.1", ""), ("::1", "::1", ""), ("[::1]", "::1", ""), ("bücher.de", "xn--bcher-kva.de", ""),
    ("my_host.internal", "my_host.internal", ""), ("localhost", "localhost", ""),
    ("*", None, "would allow every host"), ("*.*", None, "would allow every host"), ("**", None, "every host"),
    ("*.", None, "would allow every host"), ("?", None, "would allow every host"),
    ("api-*.example.com", None, "a leading \"*.\" is the only wildcard"), ("*example.com", None, "only wildcard"),
    ("a.*.example.com", None, "only wildcard"), ("https://x.com", None, "is not a host pattern"),
    ("x.com/a", None, "is not a host pattern"), ("a..b", None, "is not a host pattern"), (" x.com", None, "expected"),
    ("", None, "expected host names"), (5, None, "expected host names"), ("x" * 64 + ".com", None, "not a host"),
]


@pytest.mark.parametrize("pattern, normal, why", PATTERNS, ids=[repr(p[0])[:20] for p in PATTERNS])
def test_a_host_pattern(pattern: Any, normal: Optional[str], why: str) -> None:
    if normal is not None:
        assert host_pattern(pattern) == normal
        return
    with pytest.raises(ValueError) as caught:
        host_pattern(pattern)
    assert why in str(caught.value)


def _error(raw: Any) -> str:
    try:
        parse_plan(raw)
    except BatonError as exc:
        return str(exc)
    return ""


@pytest.mark.parametrize("pattern, normal, why", PATTERNS, ids=[repr(p[0])[:20] for p in PATTERNS])
def test_a_rule_and_a_steps_sandbox_take_the_same_patterns(pattern: Any, normal: Optional[str], why: str) -> None:
    rule = _error({"rules": [{"id": "net", "reason": "r", "allow_hosts": [pattern]}], "steps": ["a"]})
    step = _error({"steps": [{"id": "a", "sandbox": {"network": {"allow_hosts": [pattern]}}}]})
    if normal is not None:
        assert rule == step == ""
        return
    assert why in rule and why in step
    assert "rule 1: field 'allow_hosts'" in rule and "field 'sandbox.network.allow_hosts'" in step
    assert rule.split(": ")[-1] == step.split(": ")[-1]  # the same words after the field
