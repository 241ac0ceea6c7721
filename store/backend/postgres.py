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

from store.backend import budget, driver
from store.base import jsonc
from store.base.errors import CHECK, BatonError
from store.base.values import Frozen

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, TypeVar

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
    """The end of a job's chain as the database holds it, with its snapshot (``None`` when absent),
    and the server's clock when it was read (seconds since 1970; 0 when not read): records take
    their time from it, so every clone's records and leases share one clock."""

    __slots__ = ("seq", "hash", "snapshot", "now")

    def __init__(self, seq: int, hash: str, snapshot: Optional[str], now: float = 0.0) -> None:
        self.seq, self.hash, self.snapshot, self.now = seq, hash, snapshot, now


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

    def _run(self, work: Callable[[Any], T], committing: Optional[List[bool]] = None) -> T:
        """``work(connection)``, retried on a deadlock or serialization failure, the schema made when
        missing, and once on a new connection when the one kept from earlier was dropped (appends
        are safe to retry: their write id is stored with them). Each try ends within the time
        ``budget`` gives it. Any other sign the server cannot be used becomes
        :class:`driver.Unreachable`, marked ``unknown`` when ``committing`` says the connection was
        lost while the transaction committed."""
        module = driver.psycopg()
        errors = module.errors
        fresh_tried = False
        for attempt in range(RETRIES):
            reused = driver.cached(self.conninfo)
            conn = driver.connect(self.conninfo)
            seconds = budget.limit()
            if seconds <= 0:
                raise driver.Unreachable(budget.exhausted())
            with budget.Watch(conn.fileno(), seconds) as watch:
                try:
                    return work(conn)
                except errors.UndefinedTable:
                    self._create_schema(conn)
                except (errors.DeadlockDetected, errors.SerializationFailure, errors.LockNotAvailable):
                    if attempt == RETRIES - 1:
                        raise
                except module.Error as exc:
                    lost = driver.unreachable(exc) if not watch.fired else driver.failed(exc, True, seconds)
                    if lost is None and not (conn.closed or conn.broken):
                        raise
                    lost = lost or driver.failed(exc, False, seconds)
                    driver.forget(self.conninfo)
                    if reused and not fresh_tried and not watch.fired:  # a kept connection the server dropped
                        fresh_tried = True
                        continue
                    if lost.waited:
                        budget.note_failure(self.conninfo, lost.cause)
                    raise driver.Unreachable(lost.cause, bool(committing), lost.waited) from None
        raise AssertionError("unreachable: the loop returns or raises")  # pragma: no cover

    def _create_schema(self, conn: Any) -> None:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
            conn.execute(SCHEMA)

    # ------------------------------------------------------------------ reading

    def head(self) -> Head:
        def work(conn: Any) -> Head:
            row = conn.execute("SELECT j.seq, j.hash, j.snapshot, extract(epoch FROM clock_timestamp()) FROM "
                               "(SELECT 1) AS one LEFT JOIN baton_jobs j ON j.job = %s", (self.name,)).fetchone()
            if row[0] is None:
                return Head(0, GENESIS, None, float(row[3]))
            return Head(int(row[0]), str(row[1]), row[2], float(row[3]))

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

    def lines_at(self, seqs: Sequence[int]) -> Dict[int, str]:
        """The lines of the records ``seqs`` (those that exist), in one query: what a checkpoint
        check reads, a record's place in a database being its seq."""
        if not seqs:
            return {}
        rows = self._run(lambda conn: conn.execute(
            "SELECT seq, line FROM baton_records WHERE job = %s AND seq = ANY(%s::bigint[])",
            (self.name, sorted(set(seqs)))).fetchall())
        return {int(seq): str(line) for seq, line in rows}

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

        committing: List[bool] = []

        def work(conn: Any) -> Optional[Built]:
            committing.clear()
            with _pipeline(conn), conn.transaction():  # statements whose answers are not read go together
                if claim_row:
                    conn.execute("SELECT 1 FROM baton_claims WHERE job = %s AND step = %s FOR UPDATE",
                                 (self.name, step))
                built = self._store(conn, make, write_id)
                committing.extend([True] if built is not None else [])  # leaving the block commits it
            return built

        return self._run(work, committing)

    def claim(self, worker: str, candidates: Sequence[str], lease_seconds: float,
              make: Callable[[Head, str], Optional[Built]], write_id: str,
              holders: Optional[Mapping[str, Tuple[str, int]]] = None) -> Optional[Built]:
        """Take the first of ``candidates`` that nobody holds (or whose holder's heartbeat is older
        than ``lease_seconds``, in database time) and append the claim record ``make`` builds.
        Rows other claimers have locked are skipped, not waited for. ``holders`` (step -> worker,
        seq, as the records say): a candidate without a claim row yet (a job that ``store push``
        of an older baton copied without its claims) starts with its holder's lease, not free."""
        held = dict(holders or {})
        committing: List[bool] = []

        def work(conn: Any) -> Optional[Built]:
            committing.clear()
            with _pipeline(conn), conn.transaction():  # statements whose answers are not read go together
                self._ensure_job(conn)
                names = list(candidates)
                conn.execute("INSERT INTO baton_claims (job, step, worker, seq, claimed_at, heartbeat) "
                             "SELECT %s, c.step, c.worker, c.seq, now(), now() FROM unnest(%s::text[], %s::text[], "
                             "%s::bigint[]) AS c (step, worker, seq) ON CONFLICT DO NOTHING",
                             (self.name, names, [held[n][0] if n in held else None for n in names],
                              [held[n][1] if n in held else None for n in names]))
                row = conn.execute(
                    "SELECT step FROM baton_claims WHERE job = %s AND step = ANY(%s::text[]) AND (worker IS NULL "
                    "OR worker = %s OR heartbeat < now() - make_interval(secs => %s)) "
                    "ORDER BY array_position(%s::text[], step) LIMIT 1 FOR UPDATE SKIP LOCKED",
                    (self.name, names, worker, lease_seconds, names)).fetchone()
                if row is None:
                    return None
                chosen = str(row[0])
                built = self._store(conn, lambda head: make(head, chosen), write_id)
                committing.extend([True] if built is not None else [])  # leaving the block commits it
            return built

        return self._run(work, committing)

    def _ensure_job(self, conn: Any) -> None:
        conn.execute("INSERT INTO baton_jobs (job, hash) VALUES (%s, %s) ON CONFLICT DO NOTHING", (self.name, GENESIS))

    def _locked_head(self, conn: Any, write_id: str = "") -> Tuple[Head, Optional[Tuple[str, int, str]]]:
        """The job's head, its row locked, and the record ``write_id`` wrote, if it was written."""
        query = ("SELECT j.seq, j.hash, j.snapshot, r.line, r.seq, r.hash FROM baton_jobs j "
                 "LEFT JOIN baton_writes w ON w.job = j.job AND w.id = %s "
                 "LEFT JOIN baton_records r ON r.job = w.job AND r.seq = w.seq WHERE j.job = %s FOR UPDATE OF j")
        found = conn.execute(query, (write_id, self.name))
        clock = conn.execute("SELECT extract(epoch FROM clock_timestamp())")  # read once the lock is held
        row = found.fetchone()
        if row is None:
            self._ensure_job(conn)
            row = conn.execute(query, (write_id, self.name)).fetchone()
        now = float(clock.fetchone()[0])
        before = (str(row[3]), int(row[4]), str(row[5])) if row[3] is not None else None
        return Head(int(row[0]), str(row[1]), row[2], now), before

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

    def copy_in(self, rows: Sequence[Tuple[int, str, str]], expect: Head, snapshot: str,
                held: Optional[Sequence[Tuple[str, str, int, float]]] = None) -> None:
        """Append already sealed ``(seq, hash, line)`` rows onto a head that must still be ``expect``
        (``baton store push``), with the snapshot after them, in one transaction. ``held``, given
        with the last rows: the claims they leave, ``(step, worker, seq, idle seconds)``, each with
        the lease its holder had (its heartbeat set that many seconds back in database time); every
        other claim row is given back."""

        def work(conn: Any) -> None:
            with conn.transaction():
                self._ensure_job(conn)
                head, _ = self._locked_head(conn)
                if (head.seq, head.hash) != (expect.seq, expect.hash):
                    raise BatonError("the job changed in the database while it was being copied; run it again", CHECK)
                if rows:
                    with conn.cursor() as cur:
                        cur.executemany("INSERT INTO baton_records (job, seq, hash, line) VALUES (%s, %s, %s, %s)",
                                        [(self.name, seq, hsh, line) for seq, hsh, line in rows])
                    last_seq, last_hash, _ = rows[-1]
                    conn.execute("UPDATE baton_jobs SET seq = %s, hash = %s, snapshot = %s WHERE job = %s",
                                 (last_seq, last_hash, snapshot, self.name))
                if held is not None:
                    self._set_claims(conn, held)

        self._run(work)

    def _set_claims(self, conn: Any, held: Sequence[Tuple[str, str, int, float]]) -> None:
        steps = [h[0] for h in held]
        conn.execute("UPDATE baton_claims SET worker = NULL WHERE job = %s AND NOT (step = ANY(%s::text[]))",
                     (self.name, steps))
        conn.execute("INSERT INTO baton_claims (job, step, worker, seq, claimed_at, heartbeat) "
                     "SELECT %s, c.step, c.worker, c.seq, now() - make_interval(secs => c.idle), "
                     "now() - make_interval(secs => c.idle) FROM unnest(%s::text[], %s::text[], %s::bigint[], "
                     "%s::float8[]) AS c (step, worker, seq, idle) ON CONFLICT (job, step) DO UPDATE SET "
                     "worker = EXCLUDED.worker, seq = EXCLUDED.seq, claimed_at = EXCLUDED.claimed_at, "
                     "heartbeat = EXCLUDED.heartbeat",
                     (self.name, steps, [h[1] for h in held], [h[2] for h in held], [h[3] for h in held]))
