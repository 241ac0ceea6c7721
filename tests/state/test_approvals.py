"""A person's approvals: the key (where, mode, reuse), signatures bound to project, step, time
and session, and approvals that do not count."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict

import pytest
from hypothesis import given
from hypothesis import strategies as st

from store.cli import actions
from store.state import approvals
from store.state.job import Job
from store.state.location import Layout

if TYPE_CHECKING:
    from conftest import Sandbox


def test_key_dir_follows_xdg_then_home(tmp_path: Path) -> None:
    assert approvals.key_dir({"HOME": "/h"}) == "/h/.config/baton"
    assert approvals.key_dir({"HOME": "/h", "XDG_CONFIG_HOME": "/x"}) == "/x/baton"
    assert approvals.key_dir({"HOME": "/h", "XDG_CONFIG_HOME": ""}) == "/h/.config/baton"


def test_ensure_key_creates_a_private_key_once(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path)}
    key = approvals.ensure_key(env)
    path = tmp_path / ".config" / "baton" / approvals.KEY_NAME
    assert len(key) == 64 and path.read_bytes() == key
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert approvals.ensure_key(env) == key
    assert approvals.read_key(env) == key


@pytest.mark.parametrize("content", [b"", b"short", b"x" * 31])
def test_a_key_shorter_than_32_bytes_is_no_key(tmp_path: Path, content: bytes) -> None:
    folder = tmp_path / ".config" / "baton"
    folder.mkdir(parents=True)
    (folder / approvals.KEY_NAME).write_bytes(content)
    assert approvals.read_key({"HOME": str(tmp_path)}) is None


def test_a_truncated_key_does_not_block_approvals_forever(tmp_path: Path) -> None:
    folder = tmp_path / ".config" / "baton"
    folder.mkdir(parents=True)
    (folder / approvals.KEY_NAME).write_bytes(b"")
    assert len(approvals.ensure_key({"HOME": str(tmp_path)})) >= 32


# fields never hold the unit separator that joins them (step ids refuse control characters)
TEXT = st.text(st.characters(codec="utf-8", blacklist_characters="\x1f"), max_size=20)
FIELDS = st.tuples(TEXT, TEXT, TEXT, TEXT)


@given(a=FIELDS, b=FIELDS)
def test_a_signature_binds_every_field(a: Any, b: Any) -> None:
    key = b"k" * 64
    assert approvals.sign(key, *a) == approvals.sign(key, *a)
    if a != b:
        assert approvals.sign(key, *a) != approvals.sign(key, *b)
    assert approvals.sign(key, *a) != approvals.sign(b"j" * 64, *a)


def entry(key: bytes, project: str = "/p", step: str = "s", ts: str = "t", session: str = "x") -> Dict[str, Any]:
    return {"ts": ts, "session": session, "sig": approvals.sign(key, project, step, ts, session)}


@pytest.mark.parametrize("change,valid", [
    ({}, True),
    ({"ts": "other"}, False),
    ({"session": "other"}, False),
    ({"session": None}, False),
    ({"sig": None}, False),
    ({"sig": 5}, False),
    ({"sig": ""}, False),
])
def test_is_valid(change: Dict[str, Any], valid: bool) -> None:
    key = b"k" * 64
    assert approvals.is_valid({**entry(key), **change}, key, "/p", "s") is valid


def test_is_valid_needs_the_key_the_project_and_the_step() -> None:
    key = b"k" * 64
    good = entry(key)
    assert approvals.is_valid(good, key, "/p", "s")
    assert not approvals.is_valid(good, None, "/p", "s")
    assert not approvals.is_valid(good, b"j" * 64, "/p", "s")
    assert not approvals.is_valid(good, key, "/q", "s")
    assert not approvals.is_valid(good, key, "/p", "t")
    unsigned_session = {"ts": "t", "session": None, "sig": approvals.sign(key, "/p", "s", "t", "")}
    assert approvals.is_valid(unsigned_session, key, "/p", "s")  # no session is signed as ""


def test_approved_steps_without_a_key_counts_nothing(tmp_path: Path) -> None:
    key = b"k" * 64
    snapshot = {"a": entry(key, step="a"), "b": entry(key, step="b")}
    assert approvals.approved_steps(snapshot, {"HOME": str(tmp_path)}, "/p") == {"a": False, "b": False}


def make_job(project: Path) -> Layout:
    layout = Layout(project / ".baton", project)
    layout.root.mkdir(parents=True)
    layout.plan.write_text(json.dumps({"steps": [{"id": "design", "approval": True}, "build"]}))
    return layout


def test_an_approval_copied_from_another_project_does_not_count(sandbox: Sandbox, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BATON_FSYNC", "0")
    env = dict(os.environ)
    first, second = make_job(tmp_path / "one"), make_job(tmp_path / "two")
    actions.approve_step(first, env, "design", "", "test")
    assert Job(first, env).approved("design")
    second.ledger.write_bytes(first.ledger.read_bytes())  # same key (same person), other project
    job = Job(second, env)
    assert not job.approved("design") and job.waiting_for_approval()
    assert list(job.forged()) == ["design"]


def test_a_renamed_key_folder_invalidates_approvals(sandbox: Sandbox, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BATON_FSYNC", "0")
    env = dict(os.environ)
    layout = make_job(tmp_path / "one")
    actions.approve_step(layout, env, "design", "", "test")
    key_dir = Path(approvals.key_dir(env))
    key_dir.rename(key_dir.with_name("baton-old"))
    assert not Job(layout, env).approved("design")
    key_dir.with_name("baton-old").rename(key_dir)
    assert Job(layout, env).approved("design")


@given(key=st.binary(max_size=200), message=st.binary(max_size=300))
def test_the_signature_is_standard_hmac_sha256(key: bytes, message: bytes) -> None:
    import hashlib
    import hmac

    assert approvals.hmac_sha256(key, message) == hmac.new(key, message, hashlib.sha256).hexdigest()


@pytest.mark.parametrize("a, b, same", [("ab", "ab", True), ("ab", "ac", False), ("ab", "abc", False),
                                        ("", "", True), ("\u00e9", "\u00e9", True), ("\u00e9", "e", False)])
def test_same_text(a: str, b: str, same: bool) -> None:
    assert approvals.same_text(a, b) is same
def ordered_job(project: Path) -> Layout:
    layout = Layout(project / ".baton", project)
    layout.root.mkdir(parents=True)
    layout.plan.write_text(json.dumps({"steps": ["build", {"id": "ship", "approval": True}, "after"]}))
    return layout


def forge_approval(layout: Layout, env: Dict[str, str], step: str) -> None:
    """A validly signed approval written while ``step`` did not wait (as a program holding the key could)."""
    from store.state import journal

    key, ts = approvals.ensure_key(env), journal.now_iso()
    sig = approvals.sign(key, os.path.realpath(str(layout.root)), step, ts, "s")
    journal.append(layout, step, "approved", "", ts=ts, session="s", by="person", via="test", sig=sig)


def test_an_approval_counts_only_for_the_step_waiting_when_it_was_given(sandbox: Sandbox, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BATON_FSYNC", "0")
    env = dict(os.environ)
    layout = ordered_job(tmp_path / "p")
    with pytest.raises(Exception, match="not waiting for an approval now \\(NEXT is build\\)"):
        actions.approve_step(layout, env, "ship", "", "test")
    forge_approval(layout, env, "ship")  # signed, but ahead of time
    actions.record_step(layout, env, "build", "done", "")
    job = Job(layout, env)
    assert "ship" in job.snap.approvals and not job.approved("ship") and job.waiting_for_approval()
    actions.approve_step(layout, env, "ship", "", "test")  # now it waits: this one counts
    assert Job(layout, env).approved("ship")
    actions.record_step(layout, env, "build", "done", "again")  # NEXT moved back, then on again
    assert not Job(layout, env).approved("ship"), "an approval older than the step's wait does not count"
