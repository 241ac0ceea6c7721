"""Two Claude Code sessions, in two clones of one project, share a job kept in PostgreSQL: each
is given a different ready step at the same time, the gate holds each to its own step's
``writes``, and the job completes with every step done once.

Each session talks to its own scripted API (two people, two machines). The scripted model reads
NEXT from what baton showed it (the brief, then ``baton record``'s answer or the Stop hook's),
tries a write into the other step's folder, which the gate must refuse, writes its own file,
records the step, and goes on with whatever NEXT it is given. The hooks' ``python3`` is a virtual
environment's, first on PATH, with psycopg installed, as a user would set it up.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from pgcluster import Cluster

from .briefs import injected
from .driver import Claude
from .fakeapi import FakeAPI, text, tool_results, tool_use
from .jobstate import gate_denied, results_by_id

PLAN = {
    "job": "two-clones",
    "steps": [
        {"id": "left", "needs": [], "writes": ["left/**"]},
        {"id": "right", "needs": [], "writes": ["right/**"]},
        {"id": "join", "needs": ["left", "right"], "writes": ["join.txt"]},
    ],
}
OTHER = {"left": "right", "right": "left", "join": "left"}
NEXT = re.compile(r"NEXT: ([a-z]+)\b")


class Model:
    """The scripted model of one session: its step from the latest thing baton told it."""

    def __init__(self, project: Path, together: threading.Barrier) -> None:
        self.project, self.together = project, together
        self.turn = 0

    def __call__(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        self.turn += 1
        if self.turn == 1:  # both sessions hold their steps before either works on it
            self.together.wait(timeout=120)
        step = self.latest_next(body)
        if step is None:
            return [text("Nothing is ready for me; stopping.")]
        last = [r.text for r in tool_results(body)]
        if last and last[-1].startswith(f"recorded {step} done"):
            return [text(f"{step} is recorded.")]
        if any(f"wrote {step}" in t or "File created" in t and f"/{self.target(step)}" in t for t in last[-1:]):
            return [tool_use("Bash", {"command": f'baton record {step} done "wrote {self.target(step)}"',
                                      "description": "record"}, id=f"rec_{step}")]
        other = f"{OTHER[step]}/from-{step}.txt"
        return [text(f"working on {step}"),
                tool_use("Write", {"file_path": str(self.project / other), "content": "x\n"}, id=f"stray_{step}"),
                tool_use("Write", {"file_path": str(self.project / self.target(step)), "content": f"{step}\n"},
                         id=f"own_{step}")]

    @staticmethod
    def target(step: str) -> str:
        return "join.txt" if step == "join" else f"{step}/{step}.txt"

    @staticmethod
    def latest_next(body: dict[str, Any]) -> str | None:
        """NEXT as baton last said it: a tool result or Stop feedback, else the injected brief."""
        texts: list[str] = []
        for message in body.get("messages", []):
            content = message.get("content")
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
            for block in blocks:
                if block.get("type") == "text" and "Stop hook additional context" in block["text"]:
                    texts.append(block["text"])
                elif block.get("type") == "tool_result" and "NEXT: " in json.dumps(block.get("content")):
                    texts.append(json.dumps(block.get("content")))
        texts = texts or [c.text for c in injected(body)]
        for found in reversed(texts):
            match = NEXT.search(found.replace("\\n", "\n"))
            if match:
                return match.group(1) if match.group(1) in OTHER else None
            if "NEXT: (" in found:
                return None
        return None


def clone_pair(tmp_path: Path) -> tuple[Path, Path]:
    """A git project holding the plan, and two clones of it."""
    origin = tmp_path / "origin"
    (origin / ".baton").mkdir(parents=True)
    (origin / ".baton" / "plan.json").write_text(json.dumps(PLAN, indent=2) + "\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q", str(origin)], check=True)
    subprocess.run([*git, "-C", str(origin), "add", "."], check=True)
    subprocess.run([*git, "-C", str(origin), "commit", "-qm", "plan"], check=True)
    clones = tmp_path / "alice-clone", tmp_path / "bob-clone"
    for clone in clones:
        subprocess.run(["git", "clone", "-q", str(origin), str(clone)], check=True)
    return clones


def test_two_sessions_in_two_clones_take_different_steps_and_finish_the_job(
    claude_exe: Path, plugin_copy: Path, tmp_path: Path, pg_cluster: Cluster
) -> None:
    url = pg_cluster.createdb()
    clones = clone_pair(tmp_path)
    together = threading.Barrier(2)
    apis = [FakeAPI(Model(clone, together)).start() for clone in clones]
    people = [Claude(claude_exe, api.base_url, tmp_path / f"home{i}") for i, api in enumerate(apis)]
    venv_bin = str(Path(sys.executable).parent)  # a python3 with psycopg, as the user put it on PATH
    env = {"BATON_DATABASE_URL": url, "PATH": venv_bin + os.pathsep + os.environ["PATH"]}
    try:
        procs = [person.start("Run the job in .baton/plan.json.", cwd=clone, plugin_dir=plugin_copy, env=env)
                 for person, clone in zip(people, clones)]
        outs = [proc.communicate(timeout=300) for proc in procs]
    finally:
        for person in people:
            person.kill_all()
        for api in apis:
            api.stop()
    for proc, (out, err) in zip(procs, outs):
        assert proc.returncode == 0, (out, err)

    from store.backend.postgres import SharedJob

    records = [json.loads(line) for _, line in SharedJob(url, "two-clones").lines()]
    sessions = [json.loads(out)["session_id"] for out, _ in outs]
    first_two = records[:2]
    assert [r["status"] for r in first_two] == ["claim", "claim"]  # both held a step before any was done
    assert {r["step"] for r in first_two} == {"left", "right"}
    assert {r["worker"] for r in first_two} == set(sessions)
    done = [r["step"] for r in records if r["status"] == "done"]
    assert sorted(done) == ["join", "left", "right"]  # every step once
    assert done[-1] == "join"
    holder = {r["step"]: r["worker"] for r in records if r["status"] == "claim"}
    for step in ("left", "right", "join"):  # each file written once, by the session holding the step
        where = [c for c in clones if (c / Model.target(step)).exists()]
        assert len(where) == 1 and sessions.index(holder[step]) == clones.index(where[0]), step
    for api, clone in zip(apis, clones):  # the gate refused the write into the other step's folder
        for request in api.requests_main():
            for call_id, result in results_by_id(request).items():
                if call_id.startswith("stray_"):
                    assert gate_denied(result) and "[baton:writes]" in result.text, result.text
        assert not any((clone / d).exists() and any((clone / d).glob("from-*")) for d in ("left", "right"))
    verified = subprocess.run([sys.executable, str(plugin_copy / "bin" / "baton"), "verify"], cwd=clones[0],
                              env={**os.environ, "BATON_DATABASE_URL": url}, capture_output=True, text=True)
    assert verified.returncode == 0 and verified.stdout.startswith(f"ok: {len(records)} records"), verified
