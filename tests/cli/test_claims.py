"""``baton claim`` and ``baton release`` as people and scripts use them: exit 0 with a step, 1 with
none; ``--wait`` until one is ready; ``record`` claiming the recording worker's next step."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from conftest import Baton, Sandbox

PLAN = {"steps": [{"id": "a", "needs": []}, {"id": "b", "needs": ["a"]}, {"id": "c", "needs": ["a"]}]}


def install(baton: Baton, sandbox: Sandbox, plan: object = PLAN) -> None:
    (sandbox.project / "plan.json").write_text(json.dumps(plan))
    assert baton("init", "--plan", "plan.json").code == 0


def test_claim_gives_a_step_or_says_why_not(baton: Baton, sandbox: Sandbox) -> None:
    install(baton, sandbox)
    first = baton("claim", "--worker", "ann")
    assert (first.code, first.out) == (0, "worker ann claimed a\n")
    again = baton("claim", extra_env={"BATON_WORKER": "ann"})
    assert (again.code, again.out) == (0, "worker ann already holds a\n")
    none = baton("claim", "--worker", "bob", "--json")
    assert none.code == 1
    assert json.loads(none.out) == {"worker": "bob", "step": None, "new": False, "complete": False,
                                    "next": "(nothing ready for you now: 1 held by other workers, 2 waiting for "
                                            "steps not done yet - stop)"}


def test_recording_a_held_step_claims_the_next_and_says_so(baton: Baton, sandbox: Sandbox) -> None:
    install(baton, sandbox)
    baton("claim", "--worker", "ann")
    done = baton("record", "a", "done", "built", extra_env={"BATON_WORKER": "ann"})
    assert done.out == "recorded a done (attempt 1, #2); NEXT: b (claimed for you)\n"
    other = baton("record", "c", "running", extra_env={"BATON_WORKER": "bob"})  # bob holds nothing: no claim
    assert other.out.endswith("NEXT: (no step claimed by you: run baton claim to take a ready one)\n")
    assert [json.loads(r)["status"] for r in (sandbox.state / "steps.jsonl").read_text().splitlines()] == [
        "claim", "done", "claim", "running"]


def test_release_gives_the_step_back(baton: Baton, sandbox: Sandbox) -> None:
    install(baton, sandbox)
    assert baton("release", "--worker", "ann").code == 1
    baton("claim", "--worker", "ann")
    gone = baton("release", "--worker", "ann", "out", "of", "time")
    assert (gone.code, gone.out) == (0, "worker ann gave back a: another worker may claim it now\n")
    assert json.loads((sandbox.state / "steps.jsonl").read_text().splitlines()[-1])["note"] == "out of time"
    assert baton("claim", "--worker", "bob").out == "worker bob claimed a\n"


def test_claim_waits_until_a_step_is_ready(baton: Baton, sandbox: Sandbox, plugin_copy: object) -> None:
    install(baton, sandbox)
    baton("claim", "--worker", "ann")
    waiting = subprocess.Popen([sys.executable, str(plugin_copy) + "/bin/baton", "claim", "--worker", "bob",
                                "--wait", "60"], cwd=sandbox.project, stdout=subprocess.PIPE, text=True)
    time.sleep(1.5)
    assert waiting.poll() is None  # still waiting: nothing ready for bob yet
    baton("record", "a", "done", extra_env={"BATON_WORKER": "ann"})  # ann takes b; c is left for bob
    out, _ = waiting.communicate(timeout=60)
    assert (waiting.returncode, out) == (0, "worker bob claimed c\n")


def test_a_plan_without_needs_has_nothing_to_claim(baton: Baton, sandbox: Sandbox) -> None:
    assert baton("init", "a", "b").code == 0
    run = baton("claim", "--worker", "ann")
    assert (run.code, run.out) == (0, "this plan has no `needs`: its steps run in order, and NEXT is a for everyone\n")
    assert not (sandbox.state / "steps.jsonl").exists()
