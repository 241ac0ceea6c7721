"""A throwaway PostgreSQL server for the tests: ``initdb`` and ``pg_ctl`` in a temporary folder.

Run as the ``postgres`` user when the tests run as root (``initdb`` refuses root), in a folder
made with ``mkdtemp`` under /tmp and handed to that user (pytest's own temporary folders are
mode 0700 under /tmp/pytest-of-root, out of its reach) with a short path, since the server's
unix socket lives there. ``pg_ctl`` always gets ``-l``: a server started without it inherits the
caller's stdout and a captured run never ends. The folder is removed by :meth:`Cluster.remove`.
"""

from __future__ import annotations

import glob
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import uuid
from pathlib import Path
from typing import List, Optional

USER = "postgres"


def bindir() -> Path:
    """The newest server's programs: Debian keeps initdb and pg_ctl off PATH."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    if found:
        return Path(found[-1]).parent
    on_path = shutil.which("initdb")
    if on_path:
        return Path(on_path).parent
    raise RuntimeError("no initdb: install the server (dev/test does: apt-get install -y --no-install-recommends "
                       "postgresql)")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Cluster:
    """One server: ``url(name)`` for a database, ``createdb()`` for a new one, ``restart()``, ``stop()``;
    and the faults a machine meets: ``kill()`` (every server process SIGKILLed, as a crash),
    ``freeze()`` and ``thaw()`` (every server process SIGSTOPped, then SIGCONTinued)."""

    def __init__(self) -> None:
        self.bin = bindir()
        self.port = free_port()
        self.root = Path(tempfile.mkdtemp(prefix="pg-", dir="/tmp"))
        if os.geteuid() == 0:
            import pwd

            entry = pwd.getpwnam(USER)
            os.chown(self.root, entry.pw_uid, entry.pw_gid)
        self.data = self.root / "data"
        self.log = self.root / "server.log"

    def _run(self, args: List[str], timeout: float = 60) -> str:
        command = ["runuser", "-u", USER, "--", *args] if os.geteuid() == 0 else args
        with tempfile.TemporaryFile("w+") as out:  # a file, not a pipe (see the module's docstring)
            proc = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, text=True, timeout=timeout,
                                  cwd=str(self.root))
            out.seek(0)
            text = out.read()
        if proc.returncode:
            tail = self.log.read_text(errors="replace")[-1500:] if self.log.exists() else ""
            raise RuntimeError(f"{' '.join(args[:2])} exited {proc.returncode}: {text[-1500:]}\n{tail}")
        return text

    def initdb(self) -> Cluster:
        self._run([str(self.bin / "initdb"), "-D", str(self.data), "--auth=trust", f"--username={USER}",
                   "--encoding=UTF8", "--locale=C.UTF-8", "--no-sync", "--no-instructions"])
        return self

    def start(self) -> Cluster:
        options = f"-k {self.root} -p {self.port} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200"
        self._run([str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-o", options, "-w", "-t",
                   "60", "start"])
        return self

    def restart(self, mode: str = "fast") -> None:
        self._run([str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-m", mode, "-w", "-t",
                   "60", "restart"])

    def stop(self, mode: str = "fast") -> None:
        if self.running():  # not after kill(): its pid file stays behind
            self._run([str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "-t", "60", "stop"])

    def processes(self) -> List[int]:
        """The postmaster's pid first, then its children's (read from /proc)."""
        try:
            postmaster = int((self.data / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return []
        children = []
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    status = Path(f"/proc/{entry}/status").read_text()
                except OSError:
                    continue
                if f"\nPPid:\t{postmaster}\n" in status:
                    children.append(int(entry))
        return [postmaster, *children]

    def running(self) -> bool:
        return any(_alive(pid) for pid in self.processes()[:1])

    def kill(self) -> None:
        """SIGKILL every server process (a crash: no shutdown, the next start recovers)."""
        for pid in self.processes():
            _signal(pid, signal.SIGKILL)
        self._gone()
        # the dead postmaster may stay a zombie (a container's init need not reap it), and the next
        # start would take its pid for a live server: its lock files go, as a reboot would clear them
        for stale in (self.data / "postmaster.pid", self.root / f".s.PGSQL.{self.port}.lock",
                      self.root / f".s.PGSQL.{self.port}"):
            stale.unlink(missing_ok=True)

    def freeze(self) -> None:
        """SIGSTOP every server process: connections are accepted by the kernel and never answered."""
        for pid in self.processes():  # the postmaster first: it forks no new backend meanwhile
            _signal(pid, signal.SIGSTOP)

    def thaw(self) -> None:
        for pid in self.processes():
            _signal(pid, signal.SIGCONT)

    def backend(self, pid: int) -> None:
        """Freeze one backend (the server process of one connection), the rest running."""
        _signal(pid, signal.SIGSTOP)

    def _gone(self) -> None:
        import time

        deadline = time.monotonic() + 30
        while any(_alive(pid) for pid in self.processes()):
            if time.monotonic() > deadline:
                raise RuntimeError("the server's processes did not die")
            time.sleep(0.05)

    def remove(self) -> None:
        try:
            self.stop("immediate")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{USER}@127.0.0.1:{self.port}/{database}"

    def socket_url(self, database: str = "postgres") -> str:
        return f"postgresql://{USER}@/{database}?host={self.root}&port={self.port}"

    def createdb(self, name: Optional[str] = None) -> str:
        """A new empty database; returns its URL."""
        import psycopg

        name = name or "t_" + uuid.uuid4().hex[:12]
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)


def _signal(pid: int, number: int) -> None:
    try:
        os.kill(pid, number)
    except ProcessLookupError:
        pass


def _alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie waiting for its parent counts as gone)."""
    try:
        return "\nState:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False


def start_cluster() -> Cluster:
    cluster = Cluster()
    try:
        return cluster.initdb().start()
    except BaseException:
        cluster.remove()
        raise
