"""The gate tested by doing: every corpus form (tests/gate/corpus.py) run for real after baton's answer.

Each form runs in a fresh copy of a project and a home folder, as Claude Code would run it after
the PreToolUse answer (nothing on deny, the rewritten command on ``updatedInput``, the original
otherwise; an ``ask`` counts as the person saying yes), followed by PostToolUse, and the folders
are compared before and after. Three modes: ``sandboxed`` (bubblewrap; must be perfect: no change
outside the step's writes, to ``.baton/``, a protect path or the home folder, no key leaked, no
signed approval, no ordinary reading command refused), ``fallback`` (no sandbox: the static gate
alone; its gaps are exactly ``FALLBACK_GAPS``, so a gap that closes or opens fails the test) and
``control`` (no baton at all: every damaging form really does damage, so the corpus bites).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Dict, List

import gatemodes
import pytest
from corpus import Form, damaging, harmless
from execution import damaged, make_template, run_all
from fallback_gaps import FALLBACK_DENIED, FALLBACK_GAPS

DAMAGING = damaging()
HARMLESS = harmless()
Results = Dict[str, Dict[str, Any]]


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_template(tmp_path_factory.mktemp("corpus-template"))


@pytest.fixture(scope="module")
def results(template: Path, tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Results]:
    """``results(mode)``: every form's outcome in that mode, run once for the module (in a process pool)."""
    cache: Dict[str, Results] = {}

    def get(mode: str) -> Results:
        if mode not in cache:
            if mode == "sandboxed":
                gatemodes.sandboxed_here(tmp_path_factory.mktemp("probe-home"))
            cache[mode] = run_all(DAMAGING + HARMLESS, mode, template, tmp_path_factory.mktemp(f"corpus-{mode}"))
        return cache[mode]

    return get


def summary(forms: List[Form], found: Results, problems: Dict[str, List[str]]) -> str:
    lines = [f"{form_id}: {'; '.join(why[:3])} | decision={found[form_id]['decision']!r} "
             f"err={found[form_id]['err'][-160:]!r}" for form_id, why in sorted(problems.items())]
    return f"{len(problems)} of {len(forms)} forms:\n" + "\n".join(lines[:60])


def test_the_corpus_is_big_and_its_names_are_unique() -> None:
    assert len({f.command for f in DAMAGING}) >= 600
    assert len({f.command for f in HARMLESS}) >= 200
    ids = [f.id for f in DAMAGING + HARMLESS]
    assert len(ids) == len(set(ids))


def test_every_damaging_form_does_damage_when_nothing_stops_it(results: Callable[[str], Results]) -> None:
    found = results("control")
    duds = {f.id: ["did nothing it must not"] for f in DAMAGING if f.bites and not damaged(found[f.id])}
    assert not duds, summary(DAMAGING, found, duds)


def test_sandboxed_no_damaging_form_changes_anything_it_must_not(results: Callable[[str], Results]) -> None:
    found = results("sandboxed")
    problems = {f.id: damaged(found[f.id]) + found[f.id]["hook_errors"] for f in DAMAGING
                if damaged(found[f.id]) or found[f.id]["hook_errors"]}
    assert not problems, summary(DAMAGING, found, problems)
    assert all(found[f.id]["decision"] in ("deny", "ask", "allow") for f in DAMAGING), "a call went unanswered"


def test_sandboxed_ordinary_reading_commands_run_as_they_would_without_baton(results: Callable[[str], Results]) -> None:
    found, control = results("sandboxed"), results("control")
    problems = {}
    for form in HARMLESS:
        result, plain = found[form.id], control[form.id]
        why = (["denied"] if result["decision"] == "deny" else []) + damaged(result) + result["hook_errors"]
        if result["decision"] != "deny" and result["code"] != plain["code"]:
            why.append(f"exit {result['code']} where it exits {plain['code']} without baton")
        if bool(result["out"].strip()) != bool(plain["out"].strip()):
            why.append("its output differs in kind from the same command without baton")
        if why:
            problems[form.id] = why
    assert not problems, summary(HARMLESS, found, problems)


def test_fallback_gaps_are_exactly_the_known_ones(results: Callable[[str], Results]) -> None:
    found = results("fallback")
    gaps = {f.id for f in DAMAGING if damaged(found[f.id])}
    assert all(found[f.id]["decision"] == "deny" or not damaged(found[f.id]) or f.id in FALLBACK_GAPS
               for f in DAMAGING)
    assert gaps - FALLBACK_GAPS == set(), f"new gaps in the fallback: {sorted(gaps - FALLBACK_GAPS)}"
    assert FALLBACK_GAPS - gaps == set(), f"closed, remove from FALLBACK_GAPS: {sorted(FALLBACK_GAPS - gaps)}"


def test_fallback_refuses_exactly_the_known_reading_commands(results: Callable[[str], Results]) -> None:
    found = results("fallback")
    denied = {f.id for f in HARMLESS if found[f.id]["decision"] == "deny"}
    assert denied == FALLBACK_DENIED, (sorted(denied - FALLBACK_DENIED), sorted(FALLBACK_DENIED - denied))
    assert not [f.id for f in HARMLESS if damaged(found[f.id])]
