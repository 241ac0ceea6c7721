"""Fixtures shared by the core's tests: a sandbox for every test and a way to run the CLI.

Every test (tests/e2e too, which only sees changed environment, HOME and cwd) runs with HOME and the
current directory in fresh temporary folders and without any CLAUDE*, PG*, BATON_DIR, BATON_FSYNC,
XDG_CONFIG_HOME or store-choosing BATON_* variable inherited from the shell that started pytest, nor
any OTEL_* or BATON_TELEMETRY, so no test can read or write a real job, a real database or the real
approval key, or send to a real collector. fsync stays on unless a test sets BATON_FSYNC=0 itself.
Tests of the PostgreSQL store get a server started for the session (``pg_cluster``) and a database
of their own (``pg_url``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, Iterable, Iterator, List, Mapping, NamedTuple, Optional, Sequence

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.database import DirectoryBasedExampleDatabase

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # the tests chdir away from the repository, so '' is not enough
    sys.path.insert(0, str(REPO))

from pgcluster import Cluster, start_cluster  # noqa: E402

from store.cli import main as cli  # noqa: E402
from store.ledger import ledger  # noqa: E402
from store.state.location import Layout  # noqa: E402

EXAMPLES = os.environ.get("BATON_HYPOTHESIS_DIR") or str(REPO / ".hypothesis" / "examples")  # dev/test: outside
settings.register_profile(
    "baton",
    database=DirectoryBasedExampleDatabase(EXAMPLES),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
settings.load_profile("baton")

DROPPED_VARIABLES = ("BATON_DIR", "BATON_FSYNC", "XDG_CONFIG_HOME",  # the approval key lives under XDG_CONFIG_HOME
                     "BATON_DATABASE_URL", "BATON_STORE", "BATON_JOB", "BATON_WORKER", "BATON_TELEMETRY")
COPY_NAME = "relay-copy"  # anything but the repository's own folder name


class Run(NamedTuple):
    """What one CLI run gave back."""

    code: int
    out: str
    err: str


@dataclass(frozen=True)
class Sandbox:
    home: Path
    project: Path

    @property
    def state(self) -> Path:
        return self.project / ".baton"


@pytest.fixture(autouse=True)
def sandbox(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    """HOME and cwd in fresh folders; no CLAUDE*, BATON_DIR, BATON_FSYNC or XDG_CONFIG_HOME.

    It uses its own temporary folder rather than ``tmp_path`` so that tests keep ``tmp_path``
    for themselves (tests/e2e makes ``tmp_path / "home"`` and ``tmp_path / "project"``).
    """
    base = tmp_path_factory.mktemp("sandbox")
    home, project = base / "home", base / "project"
    home.mkdir()
    project.mkdir()
    for name in list(os.environ):
        if name.startswith(("CLAUDE", "PG", "OTEL_")) or name in DROPPED_VARIABLES:  # PG*: libpq's settings
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(project)
    stray = [p for p in project.parents if (p / ".baton").is_dir()]
    if stray:  # state resolution walks up from cwd: a job above the temp folder would leak in
        pytest.fail(f"{stray[0] / '.baton'} exists above the test folders; remove it", pytrace=False)
    return Sandbox(home, project)


@pytest.fixture
def layout(sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> Layout:
    """An empty ``.baton/`` in the sandbox's project, written without fsync. A module that needs
    more (a plan, a session id) overrides it, asking for this one."""
    monkeypatch.setenv("BATON_FSYNC", "0")
    sandbox.state.mkdir()
    return Layout(sandbox.state, sandbox.project)


@pytest.fixture(scope="session")
def plugin_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """bin/ and store/ copied into a folder whose name is not the repository's."""
    dest = tmp_path_factory.mktemp(COPY_NAME)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for part in ("bin", "store"):
        shutil.copytree(REPO / part, dest / part, ignore=ignore)
    return dest


Baton = Callable[..., Run]


@pytest.fixture
def baton(plugin_copy: Path) -> Baton:
    """Run the CLI (from the copy) as a subprocess: ``baton("record", "a", "done", cwd=..., env=...)``.

    ``env`` replaces the (sandboxed) environment; ``extra_env`` adds to it.
    """

    def run(*args: str, cwd: Optional[Path] = None, env: Optional[Mapping[str, str]] = None,
            extra_env: Optional[Mapping[str, str]] = None, script: Optional[Path] = None,
            timeout: float = 60) -> Run:
        full_env: Dict[str, str] = dict(os.environ if env is None else env)
        full_env.update(extra_env or {})
        command = [sys.executable, str(script or plugin_copy / "bin" / "baton"), *args]
        proc = subprocess.run(command, cwd=str(cwd or Path.cwd()), env=full_env, capture_output=True,
                              text=True, encoding="utf-8", errors="replace", timeout=timeout)
        return Run(proc.returncode, proc.stdout, proc.stderr)

    return run


InProcess = Callable[[Sequence[str]], Run]


@pytest.fixture
def main(capsys: pytest.CaptureFixture[str]) -> InProcess:
    """Run ``store.cli.main`` in this process (fast, and lets a test watch what it reads)."""

    def run(argv: Sequence[str]) -> Run:
        capsys.readouterr()
        code = cli.main(list(argv))
        captured = capsys.readouterr()
        return Run(code, captured.out, captured.err)

    return run


def _chain(fields: Iterable[Dict[str, object]], seq: int, prev: str) -> List[bytes]:
    lines = []
    for item in fields:
        record = ledger.seal(dict(item), seq, prev)
        lines.append(ledger.format_line(record))
        seq, prev = seq + 1, record["hash"]
    return lines


ChainLines = Callable[..., List[bytes]]


@pytest.fixture
def chain_lines() -> ChainLines:
    """Ledger lines for ``fields`` (dicts without seq/prev/hash), sealed and chained from
    record ``seq`` onto ``prev`` (default: a new ledger)."""

    def build(fields: Iterable[Dict[str, object]], seq: int = 1, prev: str = ledger.GENESIS) -> List[bytes]:
        return _chain(fields, seq, prev)

    return build


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Cluster]:
    """A PostgreSQL server of the tests' own, removed (data folder and all) after the session."""
    cluster = start_cluster()
    try:
        yield cluster
    finally:
        cluster.remove()


@pytest.fixture
def pg_url(pg_cluster: Cluster) -> str:
    """The URL of a new, empty database on ``pg_cluster``."""
    return pg_cluster.createdb()


@pytest.fixture(scope="session")
def outage_cluster() -> Iterator[Cluster]:
    """The fault tests' own server (tests/faults kill it, freeze it and fill its clients' disks,
    which ``pg_cluster``'s users must never see)."""
    cluster = start_cluster()
    try:
        yield cluster
    finally:
        cluster.thaw()
        cluster.remove()


@pytest.fixture
def server(outage_cluster: Cluster) -> Iterator[Cluster]:
    """A server to kill, stop or freeze: running when the test starts, running again after it."""
    outage_cluster.thaw()
    if not outage_cluster.running():
        outage_cluster.start()
    yield outage_cluster
    outage_cluster.thaw()
    if not outage_cluster.running():
        outage_cluster.start()
