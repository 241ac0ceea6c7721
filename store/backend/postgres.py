"""One job's records in PostgreSQL: the same lines and hashes as ``steps.jsonl``, appended in
transactions, with the snapshot updated in the same transaction and claims taken with
``SELECT ... FOR UPDATE SKIP LOCKED``.

Tables (created on first use, under an advisory lock): ``baton_jobs`` (the chain's head and the
snapshot), ``baton_records`` (one row per record: its seq, hash and exact line; append-only, a
trigger refuses updates and deletes), ``baton_claims`` (who holds which step, and the heartbeat,
in database time) and ``baton_writes`` (the id of every append, so a write replayed from a
clone's queue is never applied twice). Lock order, always: a step's claim row, then the job row.
"""

from __future__ import annotations

from store.backend import driver
from store.base import jsonc
from store.base.errors import CHECK, BatonError
from store.base.values import Frozen

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Iterator, List, Optional, Sequence, Tuple, TypeVar

    T = TypeVar("T")

GENESIS = "0" * 32
SCHEMA_VERSION = "1"
SCHEMA_LOCK = 0x62746F6E  # advisory lock key ("bton") serialising schema creation
RETRIES = 8
PAGE = 5000
SCHEMA = """
CREATE TABLE IF NOT EXISTS baton_meta (key text PRIMARY KEY, value text NOT NULL);
INSERT INTO baton_meta (key, value) VALUES ('schema', '1') ON CONFLICT DO NOTHING;
CREATE TABLE IF NOT EXISTS baton_jobs (
    job text PRIMARY KEY,
    seq bigint NOT NULL DEFAULT 0,
    hash text NOT NULL,
    snapshot text,
    created timestamptz NOT NULL DEFAULT now());
CREATE TABLE IF NOT EXISTS baton_records (
    job text NOT NULL REFERENCES baton_jobs (job),
    seq bigint NOT NULL,
    hash text NOT NULL,
    line text NOT NULL,
    written timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (job, seq));
CREATE TABLE IF NOT EXISTS baton_claims (
    job text NOT NULL REFERENCES baton_jobs (job),
    step text NOT NULL,
    worker text,
    seq bigint,
    claimed_at timestamptz,
    heartbeat timestamptz,
    PRIMARY KEY (job, step));
CREATE TABLE IF NOT EXISTS baton_writes (
    job text NOT NULL,
    id text NOT NULL,
    seq bigint NOT NULL,
    PRIMARY KEY (job, id));
CREATE OR REPLACE FUNCTION baton_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'baton_records is append-only'; END $$;
DO $$ BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = 'baton_records_append_only') THEN
        CREATE TRIGGER baton_records_append_only BEFORE UPDATE OR DELETE ON baton_records
            FOR EACH ROW EXECUTE FUNCTION baton_append_only();
    END IF;
END $$;
"""


def _pipeline(conn: Any) -> Any:
    """libpq's pipeline mode where it exists (libpq 14+), else a block that does nothing."""
    import contextlib

    return conn.pipeline() if driver.psycopg().Pipeline.is_supported() else contextlib.nullcontext()


class Head(Frozen):
    """The end of a job's chain as the database holds it, with its snapshot (``None`` when absent)."""

    __slots__ = ("seq", "hash", "snapshot")

    def __init__(self, seq: int, hash: str, snapshot: Optional[str]) -> None:
        self.seq, self.hash, self.snapshot = seq, hash, snapshot


class Built(Frozen):
    """A sealed record ready to store: its line (no newline), seq, hash, the record's step, status
    and worker, and the snapshot after it."""

    __slots__ = ("line", "seq", "hash", "step", "status", "worker", "snapshot")

    def __init__(self, line: str, seq: int, hash: str, step: str, status: str, worker: str, snapshot: str) -> None:
        self.line, self.seq, self.hash, self.snapshot = line, seq, hash, snapshot
        self.step, self.status, self.worker = step, status, worker


class Lease(Frozen):
    """A claim as the database sees it: seconds since it was taken and since the holder's last sign."""

    __slots__ = ("step", "worker", "seq", "age", "idle")

    def __init__(self, step: str, worker: str, seq: int, age: float, idle: float) -> None:
        self.step, self.worker, self.seq, self.age, self.idle = step, worker, seq, age, idle


class SharedJob:
    """Job ``name`` in the database ``conninfo``: every method is one or a few transactions."""

    def __init__(self, conninfo: str, name: str) -> None:
        self.conninfo, self.name = conninfo, name

    def _run(self, work: Callable[[Any], T]) -> T:
        """``work(connection)``, retried on a deadlock or serialization failure, the schema made when
        missing, and once on a new connection when the one kept from earlier was dropped (appends
        are safe to retry: their write id is stored with them). Any other sign the server cannot
        be used becomes :class:`driver.Unreachable`."""
        module = driver.psycopg()
        errors = module.errors
        fresh_tried = False
        for attempt in range(RETRIES):
            reused = driver.cached(self.conninfo)
            conn = driver.connect(self.conninfo)
            try:
                return work(conn)
            except errors.UndefinedTable:
                self._create_schema(conn)
            except (errors.DeadlockDetected, errors.SerializationFailure, errors.LockNotAvailable):
                if attempt == RETRIES - 1:
                    raise
            except module.Error as exc:
                lost = driver.unreachable(exc)
                if lost is None:
                    raise
                driver.forget(self.conninfo)
                if reused and not fresh_tried:  # a kept connection the server dropped (a restart): once more
                    fresh_tried = True
                    continue
                raise lost from None
        raise AssertionError("unreachable: the loop returns or raises")  # pragma: no cover

    def _create_schema(self, conn: Any) -> None:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
            conn.execute(SCHEMA)

    # ------------------------------------------------------------------ reading

    def head(self) -> Head:
        def work(conn: Any) -> Head:
            row = conn.execute("SELECT seq, hash, snapshot FROM baton_jobs WHERE job = %s", (self.name,)).fetchone()
            return Head(0, GENESIS, None) if row is None else Head(int(row[0]), str(row[1]), row[2])

        return self._run(work)

    def lines(self, after: int = 0, upto: Optional[int] = None) -> Iterator[Tuple[int, str]]:
        """``(seq, line)`` in order from ``after + 1``, read a page at a time."""
        def page_after(start: int) -> Callable[[Any], List[Any]]:
            def work(conn: Any) -> List[Any]:
                return list(conn.execute("SELECT seq, line FROM baton_records WHERE job = %s AND seq > %s "
                                         "ORDER BY seq LIMIT %s", (self.name, start, PAGE)).fetchall())

            return work

        while True:
            page = self._run(page_after(after))
            for seq, line in page:
                if upto is not None and seq > upto:
                    return
                yield int(seq), str(line)
            if len(page) < PAGE:
                return
            after = int(page[-1][0])

    def last_lines(self, count: int) -> List[str]:
        rows = self._run(lambda conn: conn.execute(
            "SELECT line FROM baton_records WHERE job = %s ORDER BY seq DESC LIMIT %s", (self.name, count)).fetchall())
        return [str(r[0]) for r in reversed(rows)]

    def leases(self) -> List[Lease]:
        rows = self._run(lambda conn: conn.execute(
            "SELECT step, worker, seq, extract(epoch FROM now() - claimed_at), extract(epoch FROM now() - heartbeat) "
            "FROM baton_claims WHERE job = %s AND worker IS NOT NULL ORDER BY seq", (self.name,)).fetchall())
        return [Lease(str(s), str(w), int(q or 0), float(a or 0), float(i or 0)) for s, w, q, a, i in rows]

    # ------------------------------------------------------------------ writing

    def renew(self, worker: str) -> int:
        """Mark ``worker`` active now (database time); how many claims it holds."""
        cur = self._run(lambda conn: conn.execute(
            "UPDATE baton_claims SET heartbeat = now() WHERE job = %s AND worker = %s", (self.name, worker)))
        return int(cur.rowcount or 0)

    def save_snapshot(self, head: Head, snapshot: str) -> None:
        """Store a rebuilt snapshot, unless the chain moved on meanwhile."""
        self._run(lambda conn: conn.execute(
            "UPDATE baton_jobs SET snapshot = %s WHERE job = %s AND seq = %s AND hash = %s",
            (snapshot, self.name, head.seq, head.hash)))

    def append(self, step: str, make: Callable[[Head], Optional[Built]], write_id: str,
               claim_row: bool = True) -> Optional[Built]:
        """Append what ``make(head)`` builds on the locked head, in one transaction with the
        snapshot and the claim it changes; ``None`` when ``make`` declined. When ``write_id`` was
        written before (a replay of a write whose commit was not acknowledged), that record is
        returned, with an empty snapshot, and nothing is written. ``claim_row``: the record may
        change the step's claim (its row is then locked first, as claims lock it)."""

        def work(conn: Any) -> Optional[Built]:
            with _pipeline(conn), conn.transaction():  # statements whose answers are not read go together
                if claim_row:
                    conn.execute("SELECT 1 FROM baton_claims WHERE job = %s AND step = %s FOR UPDATE",
                                 (self.name, step))
                return self._store(conn, make, write_id)

        return self._run(work)

    def claim(self, worker: str, candidates: Sequence[str], lease_seconds: float,
              make: Callable[[Head, str], Optional[Built]], write_id: str) -> Optional[Built]:
        """Take the first of ``candidates`` that nobody holds (or whose holder's heartbeat is older
        than ``lease_seconds``, in database time) and append the claim record ``make`` builds.
        Rows other claimers have locked are skipped, not waited for."""

        def work(conn: Any) -> Optional[Built]:
            with _pipeline(conn), conn.transaction():  # statements whose answers are not read go together
                self._ensure_job(conn)
                conn.execute("INSERT INTO baton_claims (job, step) SELECT %s, unnest(%s::text[]) "
                             "ON CONFLICT DO NOTHING", (self.name, list(candidates)))
                row = conn.execute(
                    "SELECT step FROM baton_claims WHERE job = %s AND step = ANY(%s::text[]) AND (worker IS NULL "
                    "OR worker = %s OR heartbeat < now() - make_interval(secs => %s)) "
                    "ORDER BY array_position(%s::text[], step) LIMIT 1 FOR UPDATE SKIP LOCKED",
                    (self.name, list(candidates), worker, lease_seconds, list(candidates))).fetchone()
                if row is None:
                    return None
                chosen = str(row[0])
                return self._store(conn, lambda head: make(head, chosen), write_id)

        return self._run(work)

    def _ensure_job(self, conn: Any) -> None:
        conn.execute("INSERT INTO baton_jobs (job, hash) VALUES (%s, %s) ON CONFLICT DO NOTHING", (self.name, GENESIS))

    def _locked_head(self, conn: Any, write_id: str = "") -> Tuple[Head, Optional[Tuple[str, int, str]]]:
        """The job's head, its row locked, and the record ``write_id`` wrote, if it was written."""
        query = ("SELECT j.seq, j.hash, j.snapshot, r.line, r.seq, r.hash FROM baton_jobs j "
                 "LEFT JOIN baton_writes w ON w.job = j.job AND w.id = %s "
                 "LEFT JOIN baton_records r ON r.job = w.job AND r.seq = w.seq WHERE j.job = %s FOR UPDATE OF j")
        row = conn.execute(query, (write_id, self.name)).fetchone()
        if row is None:
            self._ensure_job(conn)
            row = conn.execute(query, (write_id, self.name)).fetchone()
        before = (str(row[3]), int(row[4]), str(row[5])) if row[3] is not None else None
        return Head(int(row[0]), str(row[1]), row[2]), before

    def _store(self, conn: Any, make: Callable[[Head], Optional[Built]], write_id: str) -> Optional[Built]:
        head, before = self._locked_head(conn, write_id)
        if before is not None:  # written already (its commit's answer was lost): that record, not a second
            fields = jsonc.loads(before[0])
            return Built(str(before[0]), int(before[1]), str(before[2]), str(fields.get("step", "")),
                         str(fields.get("status", "")), str(fields.get("worker") or ""), "")
        built = make(head)
        if built is None:
            return None
        # in a pipeline (see the callers), these and the COMMIT go in one round trip
        conn.execute("INSERT INTO baton_records (job, seq, hash, line) VALUES (%s, %s, %s, %s)",
                     (self.name, built.seq, built.hash, built.line))
        conn.execute("UPDATE baton_jobs SET seq = %s, hash = %s, snapshot = %s WHERE job = %s",
                     (built.seq, built.hash, built.snapshot, self.name))
        conn.execute("INSERT INTO baton_writes (job, id, seq) VALUES (%s, %s, %s)", (self.name, write_id, built.seq))
        self._track_claim(conn, built)
        return built

    def _track_claim(self, conn: Any, built: Built) -> None:
        if built.status == "claim":
            conn.execute("INSERT INTO baton_claims (job, step, worker, seq, claimed_at, heartbeat) "
                         "VALUES (%s, %s, %s, %s, now(), now()) ON CONFLICT (job, step) DO UPDATE SET "
                         "worker = EXCLUDED.worker, seq = EXCLUDED.seq, claimed_at = now(), heartbeat = now()",
                         (self.name, built.step, built.worker, built.seq))
        elif built.status == "release":
            conn.execute("UPDATE baton_claims SET worker = NULL WHERE job = %s AND step = %s AND worker = %s",
                         (self.name, built.step, built.worker))
        elif built.status in ("done", "skipped"):
            conn.execute("UPDATE baton_claims SET worker = NULL WHERE job = %s AND step = %s", (self.name, built.step))

    def copy_in(self, rows: Sequence[Tuple[int, str, str]], expect: Head, snapshot: str) -> None:
        """Append already sealed ``(seq, hash, line)`` rows onto a head that must still be ``expect``
        (``baton store push``), with the snapshot after them, in one transaction."""

        def work(conn: Any) -> None:
            with conn.transaction():
                self._ensure_job(conn)
                head, _ = self._locked_head(conn)
                if (head.seq, head.hash) != (expect.seq, expect.hash):
                    raise BatonError("the job changed in the database while it was being copied; run it again", CHECK)
                with conn.cursor() as cur:
                    cur.executemany("INSERT INTO baton_records (job, seq, hash, line) VALUES (%s, %s, %s, %s)",
                                    [(self.name, seq, hsh, line) for seq, hsh, line in rows])
                last_seq, last_hash, _ = rows[-1]
                conn.execute("UPDATE baton_jobs SET seq = %s, hash = %s, snapshot = %s WHERE job = %s",
                             (last_seq, last_hash, snapshot, self.name))

        self._run(work)
