"""psycopg on Debian, for real: Debian's own ``python3`` (PEP 668: its pip refuses to install
outside a virtual environment) runs baton as the hooks do, with ``-S``. baton finds psycopg in the
active virtual environment, in the user's site folder and in baton's own environment; its error
gives an install line that works here (run word for word, from a local wheelhouse) and never the
one Debian refuses; and then the job really goes to a PostgreSQL server.

The wheelhouse (psycopg and its dependencies, for that Python version) is downloaded once into the
test cache (``.cache/wheels``); installs read only from it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional

import pytest

REPO = Path(__file__).resolve().parents[2]
SYSTEM = Path("/usr/bin/python3")  # Debian's, as the issue met it
PIN = "psycopg[binary]==3.3.9"  # what dev/requirements-test.txt installs for the other tests


def _run(argv: List[Any], env: Dict[str, str], cwd: Optional[Path] = None,
         timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(a) for a in argv], env=env, cwd=str(cwd) if cwd else None, capture_output=True,
                          text=True, timeout=timeout)


def _system_python() -> Path:
    """Debian's python3, when it is managed by the system and has no psycopg of its own."""
    if not SYSTEM.exists():
        pytest.skip("no /usr/bin/python3 here")
    probe = _run([SYSTEM, "-c", "import sysconfig, os, importlib.util as u; print(os.path.isfile(os.path.join("
                  "sysconfig.get_path('stdlib'), 'EXTERNALLY-MANAGED')), u.find_spec('psycopg') is not None)"],
                 {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"})
    managed, has = probe.stdout.split()
    if managed != "True":
        pytest.skip("/usr/bin/python3 is not managed by the system (PEP 668) here")
    if has == "True":
        pytest.skip("psycopg is installed system-wide here, so nothing is missing")
    return SYSTEM


@pytest.fixture(scope="session")
def system_python() -> Path:
    return _system_python()


@pytest.fixture(scope="session")
def wheelhouse(system_python: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    version = _run([system_python, "-c", "import sys; print('%d%d' % sys.version_info[:2])"], dict(os.environ))
    folder = REPO / ".cache" / "wheels" / f"psycopg-3.3.9-cp{version.stdout.strip()}"
    if not folder.is_dir():
        venv = tmp_path_factory.mktemp("download") / "venv"
        made = _run([system_python, "-m", "venv", venv], dict(os.environ))
        assert made.returncode == 0, made.stderr
        part = folder.with_name(folder.name + f".part-{os.getpid()}")
        got = _run([venv / "bin" / "python", "-m", "pip", "download", "-q", "--disable-pip-version-check", "-d", part,
                    PIN], dict(os.environ))
        assert got.returncode == 0, f"cannot download {PIN} into the test cache: {got.stderr[-2000:]}"
        os.replace(part, folder)
    return folder


@pytest.fixture
def person(tmp_path: Path, wheelhouse: Path, system_python: Path) -> Dict[str, str]:
    """A fresh HOME and a shell whose python3 is Debian's; pip reads only the wheelhouse."""
    home = tmp_path / "home"
    home.mkdir()
    return {"HOME": str(home), "PATH": f"{system_python.parent}:/bin", "LANG": "C.UTF-8", "PIP_NO_INDEX": "1",
            "PIP_FIND_LINKS": str(wheelhouse), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}


@pytest.fixture
def job(tmp_path: Path, plugin_copy: Path, person: Dict[str, str], pg_url: str, system_python: Path) -> Iterator[Path]:
    project = tmp_path / "project"
    project.mkdir()
    made = _run([system_python, "-S", plugin_copy / "bin" / "baton", "init", "a", "b"], person, project)
    assert made.returncode == 0, made.stderr
    plan = project / ".baton" / "plan.json"
    plan.write_text('{"job": "debian", "steps": ["a", "b"]}\n')
    yield project


def _baton(plugin_copy: Path, project: Path, env: Dict[str, str], pg_url: str,
           *args: str) -> subprocess.CompletedProcess[str]:
    """``baton ARGS`` as the hooks run Python: Debian's python3 with -S, the job in the database."""
    return _run([SYSTEM, "-S", plugin_copy / "bin" / "baton", *args], {**env, "BATON_DATABASE_URL": pg_url}, project)


def _works_through_the_database(plugin_copy: Path, project: Path, env: Dict[str, str], pg_url: str) -> None:
    recorded = _baton(plugin_copy, project, env, pg_url, "record", "a", "done", "into the database")
    assert recorded.returncode == 0, recorded.stderr
    verify = _baton(plugin_copy, project, env, pg_url, "verify")
    assert verify.returncode == 0 and "ok: 1 records" in verify.stdout, verify
    assert not (project / ".baton" / "steps.jsonl").exists(), "the record went to the database, not the file"


def _install_line(error: str) -> str:
    found = re.search(r"install it with `([^`]+)`", error)
    assert found, error
    return found.group(1)


def test_debians_pip_refuses_the_line_the_docs_used_to_give(system_python: Path, person: Dict[str, str]) -> None:
    has_pip = _run([system_python, "-c", "import pip"], person)
    if has_pip.returncode != 0:
        pytest.skip("Debian's pip (python3-pip) is not installed here")
    refused = _run(["bash", "-c", "python3 -m pip install 'psycopg[binary]'"], person)
    assert refused.returncode != 0 and "externally-managed-environment" in refused.stdout + refused.stderr


def test_the_error_gives_a_line_that_works_here_and_the_job_then_uses_the_database(
        job: Path, plugin_copy: Path, person: Dict[str, str], pg_url: str, system_python: Path) -> None:
    missing = _baton(plugin_copy, job, person, pg_url, "status")
    assert missing.returncode == 2 and missing.stdout == "", missing
    error = missing.stderr
    assert error.count("\n") == 1 and f"{system_python} (Python 3." in error and "cannot import" in error
    line = _install_line(error)
    assert line != "python3 -m pip install 'psycopg[binary]'" and not line.startswith(f"{system_python} -m pip"), line
    own = Path(person["HOME"]) / ".local" / "share" / "baton" / "venv"
    assert line == f"{system_python} -m venv {own} && {own}/bin/python -m pip install 'psycopg[binary]'"
    done = _run(["bash", "-c", line], person, job)
    assert done.returncode == 0, done.stdout + done.stderr
    _works_through_the_database(plugin_copy, job, person, pg_url)


def test_an_active_virtual_environment_is_found_though_python3_is_debians(
        job: Path, plugin_copy: Path, person: Dict[str, str], pg_url: str, system_python: Path, tmp_path: Path) -> None:
    venv = tmp_path / "project-venv"
    assert _run([system_python, "-m", "venv", venv], person).returncode == 0
    active = {**person, "VIRTUAL_ENV": str(venv)}  # as `source venv/bin/activate` sets it; python3 stays Debian's
    missing = _baton(plugin_copy, job, active, pg_url, "status")
    line = _install_line(missing.stderr)
    assert line == f"{venv}/bin/python -m pip install 'psycopg[binary]'", missing.stderr
    assert _run(["bash", "-c", line], active).returncode == 0
    _works_through_the_database(plugin_copy, job, active, pg_url)
    without = _baton(plugin_copy, job, person, pg_url, "status")
    assert without.returncode == 2 and "cannot import" in without.stderr, "found only while it is active"


def test_the_user_site_is_found(job: Path, plugin_copy: Path, person: Dict[str, str], pg_url: str,
                                system_python: Path) -> None:
    if _run([system_python, "-c", "import pip"], person).returncode != 0:
        pytest.skip("Debian's pip (python3-pip) is not installed here")
    user = _run([system_python, "-m", "pip", "install", "--user", "--break-system-packages", "psycopg[binary]"], person)
    assert user.returncode == 0, user.stdout + user.stderr
    assert list((Path(person["HOME"]) / ".local" / "lib").glob("python3.*/site-packages/psycopg"))
    _works_through_the_database(plugin_copy, job, person, pg_url)


def test_an_environment_of_another_python_version_is_named(tmp_path: Path, plugin_copy: Path) -> None:
    """Any interpreter: an active environment made by another Python cannot serve this one."""
    other = tmp_path / "py399"
    (other / "lib" / "python3.99" / "site-packages" / "psycopg").mkdir(parents=True)
    (other / "pyvenv.cfg").write_text("home = /opt/python3.99/bin\nversion = 3.99.1\n")
    home = tmp_path / "home"
    home.mkdir()
    base = sys._base_executable if hasattr(sys, "_base_executable") else sys.executable  # noqa: SLF001
    probe = _run([base, "-c", "import psycopg"], {"HOME": str(home)})
    if probe.returncode == 0:
        pytest.skip(f"{base} imports psycopg from its own site folders")
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "VIRTUAL_ENV": str(other),
           "BATON_DATABASE_URL": "postgresql://127.0.0.1:9/none"}
    project = tmp_path / "p"
    (project / ".baton").mkdir(parents=True)
    (project / ".baton" / "plan.json").write_text('{"job": "j", "steps": ["a"]}')
    run = _run([base, "-S", plugin_copy / "bin" / "baton", "status"], env, project)
    assert run.returncode == 2
    assert f"the active environment ($VIRTUAL_ENV) {other} is Python 3.99, this is 3." in run.stderr, run.stderr
    assert f"{other}/bin/python -m pip" not in run.stderr, "never the pip of an environment this Python cannot use"
