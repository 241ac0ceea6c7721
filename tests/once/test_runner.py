"""``baton once`` through the CLI, as a person, the model or a script runs it: a side effect runs at
most once, a stored result is replayed, an unknown outcome is refused until it is settled, and the
command's output, signals and exit code pass through."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Sequence

import pytest

from store.state import journal, once_keys
from store.state.location import Layout

if TYPE_CHECKING:
    from conftest import Baton, InProcess, Sandbox

# A side effect that counts its runs in runs.txt, prints an id, and exits with the code it is given;
# given "hold" for its second argument, it waits until the test creates `release` (a minute at most).
EFFECT = ("import os, sys, time\n"
          "open('runs.txt', 'a').write(os.environ.get('BATON_ONCE_KEY', '?') + '\\n')\n"
          "print('progress: sending', flush=True)\n"
          "deadline = time.monotonic() + 60\n"
          "while sys.argv[2:] == ['hold'] and not os.path.exists('release') and time.monotonic() < deadline:\n"
          "    time.sleep(0.02)\n"
          "time.sleep(float(sys.argv[2]) if sys.argv[2:] not in ([], ['hold']) else 0)\n"
          "print(json_text := '{\"data\": {\"id\": \"msg-' + str(os.getpid()) + '\"}}', flush=True)\n"
          "sys.exit(int(sys.argv[1]))\n")


# A side effect that says it holds, counts its run, and goes on until the test creates ``release`` (a
# minute at most); ``ended`` is the last thing it writes. Tests wait on these files, not on time. It
# prints before it counts: once counted, a test may kill baton, and a print to baton's pipe then
# would end it (broken pipe) and free the key.
HOLD = ("import os, time\n"
        "print('progress: holding', flush=True)\n"
        "open('runs.txt', 'a').write(os.environ.get('BATON_ONCE_KEY', '?') + '\\n')\n"
        "deadline = time.monotonic() + 60\n"
        "while not os.path.exists('release') and time.monotonic() < deadline:\n"
        "    time.sleep(0.02)\n"
        "open('ended', 'w').close()\n")


@pytest.fixture
def job(baton: Baton, sandbox: Sandbox) -> Path:
    assert baton("init", "deliver", "report").code == 0
    (sandbox.project / "effect.py").write_text(EFFECT)
    (sandbox.project / "hold.py").write_text(HOLD)
    return sandbox.project


def effect(code: int = 0, sleep: float = 0) -> List[str]:
    return [sys.executable, "effect.py", str(code), str(sleep)]


def hold() -> List[str]:
    return [sys.executable, "hold.py"]


def wait_for_run(project: Path, key: str) -> None:
    deadline = time.monotonic() + 60
    while key not in runs(project):
        assert time.monotonic() < deadline, f"the command of {key} never started"
        time.sleep(0.02)


def runs(project: Path) -> List[str]:
    path = project / "runs.txt"
    return path.read_text().split() if path.exists() else []


def records(project: Path) -> List[Dict[str, Any]]:
    return [json.loads(line) for line in (project / ".baton" / "steps.jsonl").read_text().splitlines()]


def popen(plugin_copy: Path, project: Path, *args: str, **kwargs: Any) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, str(plugin_copy / "bin" / "baton"), *args], cwd=str(project),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)


def test_it_runs_once_and_replays_the_stored_result(baton: Baton, job: Path) -> None:
    first = baton("once", "mail-1", "--id-json", "data.id", "--", *effect(7))
    assert first.code == 7
    assert first.out.startswith("progress: sending\n") and '"id": "msg-' in first.out  # streamed through
    ident = json.loads(first.out.splitlines()[-1])["data"]["id"]
    assert f"baton: once mail-1 ran (record #2): exit 7, id {ident}" in first.err
    second = baton("once", "mail-1", "--id-json", "data.id", "--", *effect(7))  # the same call: bound to the key
    assert second.code == 7 and runs(job) == ["mail-1"]
    assert second.out == first.out  # the stored tail of its output (it was short)
    assert second.err.startswith("baton: once mail-1 ran at ") and f"exit 7, id {ident}. Not run again" in second.err
    intent, result = records(job)
    assert (intent["status"], intent["key"], intent["step"]) == ("intent", "mail-1", "deliver")
    assert intent["note"].endswith("effect.py 7 0")
    assert (result["status"], result["outcome"], result["exit"], result["id"]) == ("result", "ran", 7, ident)
    assert len(result["out_sha256"]) == 64 and result["out_tail"] == first.out and result["seconds"] >= 0
    assert baton("verify").code == 0


def test_the_id_from_a_regex_and_a_missing_id(baton: Baton, job: Path) -> None:
    run = baton("once", "pr", "--id-from", r"msg-(\d+)", "--", *effect(0))
    assert run.code == 0 and records(job)[-1]["id"].isdigit()
    missing = baton("once", "pr2", "--id-from", "no-such-thing", "--", *effect(0))
    assert missing.code == 0 and "no external id found" in missing.err and "id" not in records(job)[-1]
    bad = baton("once", "pr3", "--id-from", "(", "--", *effect(0))
    assert bad.code == 2 and "not a valid regular expression" in bad.err and runs(job) == ["pr", "pr2"]


def kill_between(plugin_copy: Path, project: Path, key: str) -> None:
    """Start `baton once KEY` with a slow command and SIGKILL it and its command once the command ran."""
    proc = popen(plugin_copy, project, "once", key, "--", *effect(0, 30), start_new_session=True)
    deadline = time.monotonic() + 30
    while key not in runs(project):
        assert time.monotonic() < deadline, "the command never started"
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate()


def test_a_run_killed_between_intent_and_result_is_unknown_until_settled(
        baton: Baton, job: Path, plugin_copy: Path) -> None:
    kill_between(plugin_copy, job, "mail-2")
    again = baton("once", "mail-2", "--", *effect(0))
    assert again.code == 3 and runs(job) == ["mail-2"]
    assert again.err.startswith("baton: once mail-2: outcome unknown. A run started at ")
    first_hash = journal.read_state(Layout(job / ".baton", job)).snapshot.first_hash
    assert once_keys.idempotency_key(first_hash, "mail-2") in again.err
    assert 'baton once --settle mail-2 done|failed|retry "<evidence>"' in again.err
    brief = baton("brief").out
    assert any(line.startswith("UNKNOWN: mail-2 (deliver) started ") for line in brief.splitlines()), brief
    status = baton("status").out
    assert "side effects (baton once): 0 results, 1 open" in status and "  open mail-2 (deliver) since " in status
    assert [o["key"] for o in json.loads(baton("status", "--json").out)["once"]["open"]] == ["mail-2"]

    settled = baton("once", "--settle", "mail-2", "done", "the mail is in the outbox")
    assert settled.code == 0 and settled.out.startswith("settled once mail-2 done (record #2)")
    replay = baton("once", "mail-2", "--", *effect(0, 30))  # what the key ran
    assert replay.code == 0 and runs(job) == ["mail-2"] and "was settled done" in replay.err
    assert "the mail is in the outbox" in replay.err
    assert "UNKNOWN" not in baton("brief").out


def test_settle_failed_replays_a_failure_and_retry_runs_again(baton: Baton, job: Path, plugin_copy: Path) -> None:
    kill_between(plugin_copy, job, "a")
    assert baton("once", "--settle", "a", "failed", "the API said 500").code == 0
    assert baton("once", "a", "--", *effect(0, 30)).code == 1 and runs(job) == ["a"]
    retried = baton("once", "--settle", "a", "retry", "it did not happen: no message id at the provider")
    assert retried.code == 0 and "it may run again" in retried.out
    assert baton("once", "a", "--", *effect(0)).code == 0 and runs(job) == ["a", "a"]
    snap = journal.read_state(Layout(job / ".baton", job)).snapshot
    assert snap.once_results == 2  # the failure and the run; the retry settlement is no operation


@pytest.mark.parametrize("args, code, words", [
    (["--settle", "nope", "done", "x"], 1, "never ran here"),
    (["--settle", "k", "maybe", "x"], 2, "one of done, failed, retry"),
    (["--settle", "k", "done", "  "], 2, "say what you checked"),
    (["--settle", "k", "done"], 2, "needs KEY, OUTCOME and evidence"),
    (["k"], 2, "no command to run"),
    (["-x", "--", "true"], 2, "unknown option"),
    (["k", "--id-from"], 2, "needs a value"),
    (["k", "--id-from", "a", "--id-json", "b", "--", "true"], 2, "not both"),
    (["k", "--", "./no-such-program"], 2, "not found or not executable; nothing was recorded"),
    ([" k", "--", "true"], 2, "without surrounding spaces"),
    (["k\x01", "--", "true"], 2, "control characters"),
])
def test_bad_usage_is_one_line_and_records_nothing(baton: Baton, job: Path, args: Sequence[str], code: int,
                                                   words: str) -> None:
    run = baton("once", *args)
    assert run.code == code and run.err.count("\n") == 1 and words in run.err, run.err
    assert "Traceback" not in run.err and not (job / ".baton" / "steps.jsonl").exists()


def test_settling_a_key_with_a_result_or_one_running_now_is_refused(baton: Baton, job: Path,
                                                                    plugin_copy: Path) -> None:
    assert baton("once", "ok", "--", *effect(0)).code == 0
    refused = baton("once", "--settle", "ok", "retry", "again please")
    assert refused.code == 1 and "already has a result" in refused.err
    assert baton("once", "failing", "--", *effect(9)).code == 9
    assert baton("once", "--settle", "failing", "retry", "fixed the cause").code == 0  # a failure may be retried
    slow = popen(plugin_copy, job, "once", "slow", "--", *hold())
    wait_for_run(job, "slow")
    busy = baton("once", "--settle", "slow", "done", "guess")
    (job / "release").touch()
    assert busy.code == 1 and "is running now" in busy.err
    assert slow.wait(60) == 0


def test_help_and_no_plan(baton: Baton, sandbox: Sandbox) -> None:
    shown = baton("once", "--help")
    assert shown.code == 0 and "Exit codes" in shown.out and "--settle" in shown.out
    missing = baton("once", "k", "--", "true")
    assert missing.code == 2 and "no job here" in missing.err


def test_the_same_key_at_the_same_time_runs_once_and_all_get_its_result(job: Path, plugin_copy: Path) -> None:
    """Five at once; the one that runs holds its command until the other four say they wait (each
    stderr is read by a thread of its own), so all four wait, whatever the machine's speed."""
    procs = [popen(plugin_copy, job, "once", "same", "--id-json", "data.id", "--", sys.executable, "effect.py", "4",
                   "hold") for _ in range(5)]
    errs: List[List[str]] = [[] for _ in procs]
    readers = [threading.Thread(target=lambda p=p, e=e: e.extend(p.stderr), daemon=True) for p, e in zip(procs, errs)]
    for reader in readers:
        reader.start()
    deadline = time.monotonic() + 60
    while sum(any("waiting for its result" in line for line in e) for e in errs) < 4:
        assert time.monotonic() < deadline, errs
        time.sleep(0.02)
    (job / "release").touch()
    for proc, reader in zip(procs, readers):
        proc.wait(timeout=60)
        reader.join(timeout=60)
    outs = ["".join(e) for e in errs]
    assert [p.returncode for p in procs] == [4] * 5, outs
    assert runs(job) == ["same"]
    ran = [err for err in outs if "ran (record" in err]
    waited = [err for err in outs if "waiting for its result" in err]
    assert len(ran) == 1 and len(waited) == 4, outs
    ident = records(job)[-1]["id"]
    assert all(f"id {ident}" in err for err in outs)


def test_a_second_caller_waiting_on_a_killed_run_gets_unknown(job: Path, plugin_copy: Path) -> None:
    holder = popen(plugin_copy, job, "once", "k", "--", *hold(), start_new_session=True)
    wait_for_run(job, "k")
    waiter = popen(plugin_copy, job, "once", "k", "--", *effect(0))
    assert waiter.stderr is not None and "waiting for its result" in waiter.stderr.readline()  # it waits now
    os.killpg(holder.pid, signal.SIGKILL)  # the holder and its command
    holder.communicate()
    _, err = waiter.communicate(timeout=60)
    assert waiter.returncode == 3 and "outcome unknown" in err and runs(job) == ["k"]


def test_a_command_left_running_by_a_killed_baton_still_holds_the_key(job: Path, plugin_copy: Path,
                                                                      baton: Baton) -> None:
    holder = popen(plugin_copy, job, "once", "k", "--", *hold())
    wait_for_run(job, "k")
    holder.kill()  # baton alone dies; its command goes on until released
    holder.communicate()
    second = popen(plugin_copy, job, "once", "k", "--", *effect(0))
    assert second.stderr is not None and "waiting for its result" in second.stderr.readline()
    assert second.poll() is None and not (job / "ended").exists(), "the second run did not wait for the command"
    (job / "release").touch()
    _, err = second.communicate(timeout=60)
    assert second.returncode == 3 and runs(job) == ["k"], err


def test_the_idempotency_key_is_stable_for_the_job_and_the_key(baton: Baton, job: Path, tmp_path: Path) -> None:
    show = ["sh", "-c", "echo $BATON_IDEMPOTENCY_KEY"]
    key_a = baton("once", "k1", "--", *show).out.strip()
    key_b = baton("once", "k2", "--", *show).out.strip()
    assert key_a.startswith("baton-") and key_a != key_b
    clone = tmp_path / "clone"
    (clone / ".baton").mkdir(parents=True)
    for name in ("plan.json", "steps.jsonl"):  # what a git clone of the job carries
        (clone / ".baton" / name).write_bytes((job / ".baton" / name).read_bytes())
    elsewhere = baton("once", "k3", "--", *show, cwd=clone).out.strip()
    here = baton("once", "k3", "--", *show).out.strip()
    assert elsewhere == here and elsewhere not in (key_a, key_b)


def test_the_external_ops_limit_counts_results_and_refuses_more(baton: Baton, job: Path) -> None:
    plan = {"limits": {"external_ops": 2}, "steps": ["deliver"]}
    (job / ".baton" / "plan.json").write_text(json.dumps(plan))
    assert baton("once", "a", "--", *effect(0)).code == 0
    assert baton("once", "b", "--", *effect(3)).code == 3  # a failed operation still went out
    refused = baton("once", "c", "--", *effect(0))
    assert refused.code == 1 and "external_ops limit (2 of 2" in refused.err and "nothing was run" in refused.err
    assert runs(job) == ["a", "b"] and len(records(job)) == 4
    assert baton("once", "a", "--", *effect(0)).code == 0  # a replay is no new operation


def test_an_intent_is_on_disk_before_the_command_starts(baton: Baton, job: Path) -> None:
    peek = ["sh", "-c", "tail -n 1 .baton/steps.jsonl"]
    run = baton("once", "peek", "--", *peek, extra_env={"BATON_FSYNC": "0"})
    seen = json.loads(run.out)
    assert (seen["status"], seen["key"]) == ("intent", "peek")


def test_intent_and_result_are_fsynced_whatever_baton_fsync_says(main: InProcess, job: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BATON_FSYNC", "0")
    synced: List[int] = []
    real = os.fsync

    def spy(fd: int) -> None:
        synced.append(os.fstat(fd).st_size)
        real(fd)

    monkeypatch.setattr(os, "fsync", spy)
    assert main(["once", "k", "--", "true"]).code == 0
    ledger = job / ".baton" / "steps.jsonl"
    sizes = [len(line) + 1 for line in ledger.read_bytes().splitlines()]
    assert sizes[0] in synced and sizes[0] + sizes[1] in synced
    synced.clear()
    assert main(["record", "deliver", "running"]).code == 0
    assert synced == []  # an ordinary record follows BATON_FSYNC=0


@pytest.mark.parametrize("trap, code, recorded", [(False, 3, False), (True, 0, True)],
                         ids=["dies of the signal", "exits by itself"])
def test_sigterm_is_forwarded_and_only_a_finished_command_gets_a_result(
        job: Path, plugin_copy: Path, baton: Baton, trap: bool, code: int, recorded: bool) -> None:
    script = ("import signal, sys, time\n"
              + ("signal.signal(signal.SIGTERM, lambda *a: (print('cleaned up', flush=True), sys.exit(0)))\n"
                 if trap else "")
              + "open('runs.txt', 'a').write('t\\n')\nprint('started', flush=True)\ntime.sleep(30)\n")
    proc = popen(plugin_copy, job, "once", "t", "--", sys.executable, "-c", script)
    assert proc.stdout is not None and proc.stdout.readline() == "started\n"
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == code, err
    statuses = [r["status"] for r in records(job)]
    assert statuses == (["intent", "result"] if recorded else ["intent"])
    if trap:
        assert out == "cleaned up\n"
    else:
        assert "ended by signal 15" in err and "outcome is unknown" in err
        assert baton("once", "t", "--", "true").code == 3


def test_a_command_killed_by_a_signal_of_its_own_is_unknown(baton: Baton, job: Path) -> None:
    run = baton("once", "crash", "--", "sh", "-c", "echo half; kill -9 $$")
    assert run.code == 3 and run.out == "half\n" and "ended by signal 9" in run.err
    assert [r["status"] for r in records(job)] == ["intent"]


def test_output_is_streamed_while_the_command_runs(job: Path, plugin_copy: Path) -> None:
    proc = popen(plugin_copy, job, "once", "slow", "--", *hold())
    assert proc.stdout is not None and proc.stdout.readline() == "progress: holding\n"
    assert not (job / "ended").exists(), "the first line arrived only at the end"
    (job / "release").touch()
    proc.communicate(timeout=60)
    assert proc.returncode == 0


def test_a_big_output_is_hashed_whole_and_kept_as_a_tail(baton: Baton, job: Path) -> None:
    big = ["sh", "-c", "seq 1 200000"]
    run = baton("once", "big", "--", *big)
    assert run.code == 0 and run.out.splitlines()[-1] == "200000"
    import hashlib

    result = records(job)[-1]
    assert result["out_sha256"] == hashlib.sha256(run.out.encode()).hexdigest()
    assert result["out_tail"].endswith("199999\n200000\n") and len(result["out_tail"]) <= 500


def test_a_step_is_not_done_while_one_of_its_side_effects_is_unknown(baton: Baton, job: Path,
                                                                     plugin_copy: Path) -> None:
    kill_between(plugin_copy, job, "mail-3")
    refused = baton("record", "deliver", "done", "all sent")
    assert refused.code == 1 and "ran a side effect whose outcome is not known yet (mail-3)" in refused.err
    assert 'baton once --settle mail-3 done|failed|retry "<evidence>"' in refused.err
    assert baton("once", "--settle", "mail-3", "done", "it is in the outbox").code == 0
    assert baton("record", "deliver", "done", "all sent").code == 0


def test_ctrl_c_at_a_terminal_reaches_the_command_once(job: Path, plugin_copy: Path) -> None:
    import pty

    script = ("import signal, sys, time\n"
              "signal.signal(signal.SIGINT, lambda *a: open('ints.txt', 'a').write('INT\\n'))\n"
              "print('ready', flush=True)\ntime.sleep(3)\n")
    argv = [sys.executable, str(plugin_copy / "bin" / "baton"), "once", "tty", "--", sys.executable, "-c", script]
    pid, master = pty.fork()
    if pid == 0:  # the child: a session whose controlling terminal is the pty, as in a terminal window
        os.chdir(job)
        os.execv(argv[0], argv)
    seen = b""
    while b"ready" not in seen:
        seen += os.read(master, 1024)
    os.write(master, b"\x03")  # Ctrl-C: the terminal signals the whole foreground process group
    _, status = os.waitpid(pid, 0)
    try:
        while os.read(master, 1024):
            pass
    except OSError:
        pass
    os.close(master)
    assert os.waitstatus_to_exitcode(status) == 0
    assert (job / "ints.txt").read_text() == "INT\n"  # not twice: baton did not forward it again
