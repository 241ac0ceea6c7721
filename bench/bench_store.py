#!/usr/bin/env python3
"""Benchmark baton's ``record`` and ``brief`` against the ledger's length.

For each ledger size (default 1,000 / 100,000 / 1,000,000 records) it builds a temp project whose
``.baton/steps.jsonl`` holds that many chained records over a 40-step plan, then times, as child
processes started exactly as a user would (``python3 bin/baton record STEP STATUS note``):

* ``baton record`` and ``baton brief``: median, min and max wall time of ``--runs`` runs, the
  child's peak RSS (``os.wait4`` rusage) and the brief's size in bytes;
* ``cold brief``: the first ``baton brief`` after the bulk write, with no ``state.json`` (a fresh
  clone): it answers from the ledger's end and starts the detached rebuild of ``state.json``;
  the benchmark then waits for that rebuild (``rebuild aside``) before timing anything else;
* the same ``record`` / ``brief`` figures for ``bench/seed_store.py``, a naive seed-style store
  whose brief decodes the whole ledger every time;
* ``python3 -c pass``, so the interpreter's own start-up is visible.

It ends with the ratio of the largest size's medians to the smallest's (target: within 1.5x for
baton). Standard library only; the temp tree under /tmp is removed at the end.

    python3 bench/bench_store.py [--sizes 1000,100000,1000000] [--runs N] [--quick] [--json]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

REPO = Path(__file__).resolve().parent.parent
BATON = REPO / "bin" / "baton"
SEED = Path(__file__).resolve().parent / "seed_store.py"

sys.dont_write_bytecode = True  # leave no __pycache__ in the work tree
sys.path.insert(0, str(REPO))

from store.ledger.ledger import GENESIS, check_link, format_line, parse_line, read_last, seal

DEFAULT_SIZES = (1_000, 100_000, 1_000_000)
QUICK_SIZES = (1_000, 100_000)
DEFAULT_RUNS = 7
QUICK_RUNS = 3
TARGET_RATIO = 1.5
SEED_TARGETS = {"brief": 1.1, "record": 1.3}  # baton over the seed store at the smallest size
SESSION_ID = "b3e1c0de-7a11-4c3b-9f00-00000000bench"
SESSION_EVERY = 200  # records per simulated session in the bulk ledger
EPOCH = 1_735_689_600  # 2025-01-01T00:00:00Z
VERBS = ("survey", "parse", "design", "write", "test", "refactor", "document", "review")
NOUNS = ("config", "ledger", "cli", "hooks", "schema", "cache", "report", "docs")
MODULES = ("config", "ledger", "cli", "hooks", "schema", "cache", "report", "server", "parser")
FUNCS = ("load", "apply", "render", "resolve", "append", "verify", "merge", "flush")
NOTES = (
    "ran {n} tests in tests/test_{m}.py: all green after fixing {k} asserts",
    "edited src/{m}.py: split {f}() into two helpers, moved {n} lines",
    "build ok in {n}.{k}s; lint clean; next: wire {m} into the CLI",
    "KeyError 'path' in {m}.py:{n} when \"{f}\" runs twice; guard added",
    "reviewed {m}/{f}.py ({n} lines) \u2014 kept the old API, {k} TODOs",
)


class BenchError(Exception):
    """A measured command failed or a generated ledger did not check out."""


# ----------------------------------------------------------------------------- the bulk ledger


def plan_ids() -> List[str]:
    """40 realistic step names, ``s01-survey-config`` ... ``s40-...``."""
    return [f"s{i + 1:02d}-{VERBS[i % len(VERBS)]}-{NOUNS[(i * 3) % len(NOUNS)]}" for i in range(40)]


def _visits(ids: Sequence[str], rng: random.Random) -> Iterator[Tuple[str, str]]:
    """(step, status) forever, cycling over the plan: mostly running/done, some failures and skips."""
    visit = 0
    while True:
        step = ids[visit % len(ids)]
        roll = rng.random()
        if roll < 0.02:
            yield step, "skipped"
        elif roll < 0.12:
            yield from ((step, "running"), (step, "failed"), (step, "running"), (step, "done"))
        else:
            yield from ((step, "running"), (step, "done"))
        visit += 1


def _note(rng: random.Random) -> str:
    template = NOTES[rng.randrange(len(NOTES))]
    return template.format(n=rng.randrange(2, 400), k=rng.randrange(1, 9), m=MODULES[rng.randrange(len(MODULES))],
                           f=FUNCS[rng.randrange(len(FUNCS))])


def _session(index: int) -> str:
    h = hashlib.md5(f"bench-session-{index}".encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


@dataclass
class Sample:
    """Bulk records kept to check the fast writer against ``seal`` + ``format_line``."""

    fields: Dict[str, Any]
    seq: int
    prev: str
    line: bytes


def write_ledger(path: Path, count: int, ids: Sequence[str]) -> List[Sample]:
    """Write ``count`` chained records, byte for byte what ``seal`` + ``format_line`` make.

    The line is formatted directly (``seal`` costs ~15 us a record); the field order is
    journal.append's: seq, ts, step, status, note, session, attempt, prev, hash. Returns a sample
    (the first 200, every 9,973rd and the last 200) for :func:`check_samples`.
    """
    rng = random.Random(count)
    visits = _visits(ids, rng)
    quoted = {s: json.dumps(s) for s in ids}
    latest: Dict[str, Tuple[str, int]] = {}  # step -> (status, attempt), as journal._attempt sees it
    prev, session = GENESIS, _session(0)
    samples: List[Sample] = []
    gmtime, strftime, sha256 = time.gmtime, time.strftime, hashlib.sha256
    with open(path, "wb", buffering=1 << 20) as out:
        for seq in range(1, count + 1):
            step, status = next(visits)
            prior = latest.get(step)
            attempt = 1 if prior is None else prior[1] if prior[0] == "running" else prior[1] + 1
            latest[step] = (status, attempt)
            if seq % SESSION_EVERY == 1 and seq > 1:
                session = _session(seq // SESSION_EVERY)
            ts = strftime("%Y-%m-%dT%H:%M:%SZ", gmtime(EPOCH + seq * 23))
            note = _note(rng)
            body = (f'{{"seq":{seq},"ts":"{ts}","step":{quoted[step]},"status":"{status}",'
                    f'"note":{json.dumps(note)},"session":"{session}","attempt":{attempt},"prev":"{prev}"')
            digest = sha256((body + "}").encode("ascii")).hexdigest()[:32]
            line = f'{body},"hash":"{digest}"}}\n'.encode("ascii")
            out.write(line)
            if seq <= 200 or seq > count - 200 or seq % 9973 == 0:
                fields = {"ts": ts, "step": step, "status": status, "note": note, "session": session,
                          "attempt": attempt}
                samples.append(Sample(fields, seq, prev, line))
            prev = digest
    return samples


def check_samples(samples: Sequence[Sample], ledger: Path, count: int) -> None:
    """Each sampled line equals ``format_line(seal(...))``, parses, and links to its predecessor."""
    for s in samples:
        if format_line(seal(s.fields, s.seq, s.prev)) != s.line:
            raise BenchError(f"record {s.seq}: the fast writer differs from seal + format_line")
        record = parse_line(s.line[:-1])
        check_link(record, {"seq": s.seq - 1, "hash": s.prev} if s.seq > 1 else None)
    tail, torn = read_last(ledger, 50)
    if torn or len(tail) != min(50, count) or tail[-1]["seq"] != count:
        raise BenchError(f"{ledger}: the tail does not end at record {count}")
    for before, after in zip(tail, tail[1:]):
        check_link(after, before)


def wait_for_snapshot(state: Path, timeout: float = 600) -> None:
    """Until the detached rebuild has saved ``state.json`` and let go of ``rebuild.lock``."""
    import fcntl

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if (state / "state.json").exists():
            fd = os.open(str(state / "rebuild.lock"), os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                pass
            finally:
                os.close(fd)
        time.sleep(0.05)
    raise BenchError(f"{state}: no snapshot saved within {timeout:.0f} s")


def check_snapshot(state: Path, count: int) -> None:
    """After the rebuild the snapshot must have applied every record without a problem."""
    data = json.loads(state.read_text(encoding="ascii"))
    if data.get("seq") != count or data.get("problems"):
        raise BenchError(f"{state}: seq {data.get('seq')} (want {count}), problems {data.get('problems')}")


# ----------------------------------------------------------------------------- measuring


@dataclass
class Run:
    seconds: float
    maxrss_kb: int
    out_bytes: int
    cpu_seconds: float = 0.0  # user + system time of the child (less sensitive to a busy machine)


@dataclass
class Figure:
    """Several runs of one command."""

    runs: List[Run] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(r.seconds for r in self.runs)

    @property
    def cpu(self) -> float:
        """Median user + system time: less disturbed than wall time on a busy machine."""
        return statistics.median(r.cpu_seconds for r in self.runs)

    @property
    def low(self) -> float:
        return min(r.seconds for r in self.runs)

    @property
    def high(self) -> float:
        return max(r.seconds for r in self.runs)

    @property
    def rss_kb(self) -> int:
        return max(r.maxrss_kb for r in self.runs)

    @property
    def out_bytes(self) -> int:
        return self.runs[-1].out_bytes

    def as_json(self) -> Dict[str, Any]:
        return {"seconds": [r.seconds for r in self.runs], "maxrss_kb": [r.maxrss_kb for r in self.runs],
                "out_bytes": [r.out_bytes for r in self.runs], "median_seconds": self.median,
                "min_seconds": self.low, "max_seconds": self.high, "peak_maxrss_kb": self.rss_kb,
                "cpu_seconds": [r.cpu_seconds for r in self.runs], "median_cpu_seconds": self.cpu}


# Linux carries the forking process's peak RSS into the child's ru_maxrss, so a child forked by
# this (larger) process would report at least our own size. Each command is therefore started by a
# fresh, minimal interpreter (-S -I, builtins only, ~8 MB) that forks, execs and wait4s it.
LAUNCHER = r"""
import os, sys, time
cwd, inp, out, err, *argv = sys.argv[1:]
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        os.chdir(cwd)
        if inp:
            os.dup2(os.open(inp, os.O_RDONLY), 0)
        os.dup2(os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), 1)
        os.dup2(os.open(err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), 2)
        os.execv(argv[0], argv)
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
print(time.perf_counter() - start, os.waitstatus_to_exitcode(status), usage.ru_maxrss,
      usage.ru_utime + usage.ru_stime)
"""


def launch(argv: Sequence[str], cwd: Path, env: Dict[str, str], stdin: Optional[Path] = None) -> Tuple[Run, bytes, str]:
    """Run ``argv`` in ``cwd`` with ``stdin`` (a file; default /dev/null) as its standard input.

    Returns its wall time (fork to reap), peak RSS and stdout size, with the stdout bytes and the
    stderr text. A non-zero exit raises :class:`BenchError`.
    """
    with tempfile.TemporaryDirectory(prefix="baton-bench-run-") as scratch:
        out, err = Path(scratch) / "out", Path(scratch) / "err"
        launched = subprocess.run([sys.executable, "-S", "-I", "-c", LAUNCHER, str(cwd), str(stdin or ""), str(out),
                                   str(err), *argv],
                                  env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False)
        try:
            seconds, code, maxrss, cpu = launched.stdout.split()
        except ValueError:
            raise BenchError(f"launcher failed: {launched.stderr.strip()}") from None
        errors = err.read_text(encoding="utf-8", errors="replace")
        if int(code) != 0:
            raise BenchError(f"{' '.join(argv[1:])} exited {code}: {errors.strip()}")
        stdout = out.read_bytes()
        return Run(float(seconds), int(maxrss), len(stdout), float(cpu)), stdout, errors  # ru_maxrss: KiB


def run_once(argv: Sequence[str], cwd: Path, env: Dict[str, str]) -> Run:
    """Run ``argv`` in ``cwd``; return its wall time (fork to reap), peak RSS and stdout size."""
    return launch(argv, cwd, env)[0]


def note_for(run: int, size: int) -> str:
    return f"bench run {run}: record latency at {size:,} records, fsync as configured"


@dataclass
class Store:
    """One store under test: how to call it and its project directory."""

    name: str
    script: Path
    project: Path

    def argv(self, *args: str) -> List[str]:
        return [sys.executable, str(self.script), *args]


@dataclass
class SizeResult:
    records: int
    ledger_bytes: int = 0
    build_seconds: float = 0.0
    rebuild: Figure = field(default_factory=Figure)  # the cold brief
    aside_seconds: float = 0.0  # until the detached rebuild had saved state.json
    figures: Dict[str, Dict[str, Figure]] = field(default_factory=dict)  # store -> command -> figure

    def as_json(self) -> Dict[str, Any]:
        return {"records": self.records, "ledger_bytes": self.ledger_bytes, "build_seconds": self.build_seconds,
                "baton_cold_brief": self.rebuild.as_json(), "rebuild_aside_seconds": self.aside_seconds,
                "stores": {s: {c: f.as_json() for c, f in cmds.items()} for s, cmds in self.figures.items()}}


def progress(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def make_project(folder: Path, ids: Sequence[str]) -> Path:
    state = folder / ".baton"
    state.mkdir(parents=True)
    (state / "plan.json").write_text(json.dumps({"steps": list(ids)}, indent=2) + "\n", encoding="utf-8")
    return state


def measure_size(size: int, runs: int, work: Path, env: Dict[str, str], ids: Sequence[str]) -> SizeResult:
    result = SizeResult(size)
    folder = work / f"n{size}"
    baton = Store("baton", BATON, folder / "baton")
    seed = Store("seed", SEED, folder / "seed")
    state = make_project(baton.project, ids)
    seed_state = make_project(seed.project, ids)

    progress(f"{size:,} records: writing the ledger")
    start = time.perf_counter()
    samples = write_ledger(state / "steps.jsonl", size, ids)
    result.build_seconds = time.perf_counter() - start
    result.ledger_bytes = (state / "steps.jsonl").stat().st_size
    check_samples(samples, state / "steps.jsonl", size)
    shutil.copyfile(state / "steps.jsonl", seed_state / "steps.jsonl")

    progress(f"{size:,} records: first brief (no state.json), then the rebuild it starts aside")
    start = time.perf_counter()
    result.rebuild.runs.append(run_once(baton.argv("brief"), baton.project, env))
    wait_for_snapshot(state)
    result.aside_seconds = time.perf_counter() - start
    check_snapshot(state / "state.json", size)

    stores = (baton, seed)
    result.figures = {s.name: {"record": Figure(), "brief": Figure()} for s in stores}
    progress(f"{size:,} records: {runs} x record")
    for i in range(runs):  # interleaved, so a noisy moment hurts both stores alike
        step = ids[i % len(ids)]
        for s in stores:
            result.figures[s.name]["record"].runs.append(
                run_once(s.argv("record", step, "running", note_for(i, size)), s.project, env))
    progress(f"{size:,} records: {runs} x brief")
    for _ in range(runs):
        for s in stores:
            run = run_once(s.argv("brief"), s.project, env)
            result.figures[s.name]["brief"].runs.append(run)
    shutil.rmtree(folder)
    return result


def warm_up(work: Path, env: Dict[str, str], ids: Sequence[str]) -> None:
    """One untimed pass of every command, so bytecode compilation is not in the first figure."""
    folder = work / "warm-up"
    for script in (BATON, SEED):
        project = folder / script.stem
        make_project(project, ids)
        run_once([sys.executable, str(script), "record", ids[0], "running", "warm-up"], project, env)
        run_once([sys.executable, str(script), "brief"], project, env)
    shutil.rmtree(folder)


# ----------------------------------------------------------------------------- reporting


def machine() -> Dict[str, Any]:
    cpu = platform.processor() or "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpu": cpu, "nproc": os.cpu_count() or 0, "python": platform.python_version(),
            "executable": sys.executable, "system": f"{platform.system()} {platform.release()} {platform.machine()}"}


def revision(root: Path = REPO) -> str:
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--", "store", "bin"],
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + (" (store/ or bin/ has uncommitted changes)" if dirty else "")


def ms(seconds: float) -> str:
    return f"{seconds * 1000:,.1f}"


def mb(kib: int) -> str:
    return f"{kib / 1024:,.1f}"


def ratios(results: Sequence[SizeResult]) -> Dict[str, float]:
    small, large = results[0], results[-1]
    out: Dict[str, float] = {}
    for store_name in ("baton", "seed"):
        for command in ("record", "brief"):
            base = small.figures[store_name][command].median
            out[f"{store_name} {command}"] = large.figures[store_name][command].median / base if base else 0.0
    return out


def table(meta: Dict[str, Any], bare: Figure, results: Sequence[SizeResult]) -> str:
    m = meta["machine"]
    fsync = "on" if meta["fsync"] else "off"
    bare_line = (f"median {ms(bare.median)} ms (min {ms(bare.low)}, max {ms(bare.high)}), "
                 f"peak RSS {mb(bare.rss_kb)} MB")
    lines = [
        "baton store benchmark",
        f"machine : {m['cpu']}, nproc {m['nproc']}, {m['system']}",
        f"python  : {m['python']} ({m['executable']})",
        f"baton   : {meta['revision']}",
        f"fsync   : {fsync} for baton record (BATON_FSYNC={int(meta['fsync'])}); "
        "the seed store never fsyncs, takes no lock",
        f"runs    : {meta['runs']} per figure; wall time of each child process, fork to exit; peak RSS = max ru_maxrss",
        "note    : timings on a shared VM are noisy: compare medians, and rows of one run with each other",
        "",
        f"interpreter start-up, python3 -c pass: {bare_line}",
        "",
    ]
    header = ("records", "ledger MB", "store", "command", "median ms", "min ms", "max ms", "cpu ms", "peak RSS MB",
              "out bytes")
    rows: List[Tuple[str, ...]] = [header]
    for r in results:
        first = True
        for store_name in ("baton", "seed"):
            for command in ("record", "brief"):
                f = r.figures[store_name][command]
                rows.append((f"{r.records:,}" if first else "", f"{r.ledger_bytes / 1e6:,.1f}" if first else "",
                             store_name, command, ms(f.median), ms(f.low), ms(f.high), ms(f.cpu), mb(f.rss_kb),
                             str(f.out_bytes) if command == "brief" else ""))
                first = False
        rb = r.rebuild
        rows.append(("", "", "baton", "cold brief", ms(rb.median), "", "", ms(rb.cpu), mb(rb.rss_kb),
                     str(rb.out_bytes)))
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    left = {0, 2, 3}
    for n, row in enumerate(rows):
        cells = [c.ljust(w) if i in left else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))]
        lines.append("  ".join(cells).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    lines += [
        "",
        "cold brief = the first `baton brief` after the bulk write, with no state.json (one run): it reads",
        "the plan's steps from the ledger's end and starts the rebuild of state.json aside, which took "
        + ", ".join(f"{r.records:,}: {r.aside_seconds:.1f} s" for r in results) + ".",
        "Every later brief and record reads the snapshot and applies only new lines.",
        "out bytes = size of the brief printed on stdout. Ledger build times: "
        + ", ".join(f"{r.records:,}: {r.build_seconds:.1f} s" for r in results) + ".",
    ]
    first = results[0]
    lines += ["", f"baton against the seed store at {first.records:,} records (medians of wall and cpu time; "
              f"targets: brief within {SEED_TARGETS['brief']}x, record within {SEED_TARGETS['record']}x):"]
    for command, target in SEED_TARGETS.items():
        mine, seed = first.figures["baton"][command], first.figures["seed"][command]
        wall = mine.median / seed.median if seed.median else 0.0
        cpu = mine.cpu / seed.cpu if seed.cpu else 0.0
        lines.append(f"  {command:<7} wall {wall:6.2f}x  {'ok' if wall <= target else 'OVER TARGET':<11}  "
                     f"cpu {cpu:6.2f}x  {'ok' if cpu <= target else 'OVER TARGET'}")
    if len(results) > 1:
        small, large = results[0].records, results[-1].records
        lines += ["", f"ratio of medians, {large:,} / {small:,} records (target for baton: within {TARGET_RATIO}x):"]
        for name, value in ratios(results).items():
            verdict = ("  ok" if value <= TARGET_RATIO else "  OVER TARGET") if name.startswith("baton") else ""
            lines.append(f"  {name:<13} {value:8.2f}x{verdict}")
    return "\n".join(lines)


# ----------------------------------------------------------------------------- main


def parse_sizes(text: str) -> List[int]:
    try:
        sizes = sorted({int(part.replace("_", "")) for part in text.split(",") if part.strip()})
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of integers: {text!r}") from None
    if not sizes or sizes[0] < 1:
        raise argparse.ArgumentTypeError("sizes must be positive integers")
    return sizes


def measured_env(work: Path, **extra: str) -> Dict[str, str]:
    """The environment of a measured process: none of Claude Code's or baton's variables from this
    shell, the bytecode cache on (as users have it) but kept in ``work``, and ``extra``."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("BATON_DIR", "PYTHONDONTWRITEBYTECODE") and not k.startswith("CLAUDE")}
    env.update({"PYTHONPYCACHEPREFIX": str(work / "pycache"), **extra})
    return env


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--sizes", type=parse_sizes, help="ledger sizes in records, comma separated "
                        "(default 1000,100000,1000000; --quick: 1000,100000)")
    parser.add_argument("--runs", type=int,
                        help=f"timed runs per figure (default {DEFAULT_RUNS}; --quick: {QUICK_RUNS})")
    parser.add_argument("--quick", action="store_true", help="smaller sizes and fewer runs, for a smoke check")
    parser.add_argument("--no-fsync", action="store_true", help="run baton record with BATON_FSYNC=0")
    parser.add_argument("--json", action="store_true", help="print the raw figures as JSON instead of the table")
    args = parser.parse_args(argv)
    sizes: List[int] = args.sizes or list(QUICK_SIZES if args.quick else DEFAULT_SIZES)
    runs: int = args.runs or (QUICK_RUNS if args.quick else DEFAULT_RUNS)
    if runs < 1:
        parser.error("--runs must be at least 1")

    work = Path(tempfile.mkdtemp(prefix="baton-bench-", dir="/tmp"))
    env = measured_env(work, BATON_FSYNC="0" if args.no_fsync else "1", CLAUDE_CODE_SESSION_ID=SESSION_ID)
    ids = plan_ids()
    meta = {"machine": machine(), "revision": revision(), "fsync": not args.no_fsync, "runs": runs, "sizes": sizes}
    try:
        warm_up(work, env, ids)
        progress(f"{runs} x python3 -c pass")
        bare = Figure([run_once([sys.executable, "-c", "pass"], work, env) for _ in range(runs)])
        results = [measure_size(size, runs, work, env, ids) for size in sizes]
    except BenchError as exc:
        print(f"bench: {exc}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        data = {**meta, "python_pass": bare.as_json(), "results": [r.as_json() for r in results],
                "ratios": ratios(results) if len(results) > 1 else {}}
        print(json.dumps(data, indent=2))
    else:
        print(table(meta, bare, results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
