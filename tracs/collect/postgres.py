"""The collector's storage on PostgreSQL (``tracs serve --db postgresql://…``; psycopg 3).

The same tables, calls (:class:`tracs.collect.storage.Store`) and guarantees as
:class:`tracs.collect.storage.SQLiteStore`:
``(device, sequence)`` is the primary key and reports go in with ``ON CONFLICT DO
NOTHING`` (stored once), and a batch's reports, ledger and counts are one
transaction committed before the batch is answered.  Several collector processes
may share the database: a batch takes a transaction-level advisory lock on its
device (:meth:`PostgresStore.lock_device`), so two batches of one device are
checked against the ledger one after the other.  A batch's accepted reports are one row
of ``batches`` (their columns as one ``BYTEA`` value, :func:`tracs.collect.storage.pack`).
:func:`open_store` opens the store a ``--db`` names: PostgreSQL or SQLite.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager


from .storage import SQLiteStore, Store, StoreError

__all__ = ["PostgresStore", "is_postgres", "open_store"]

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS devices (device TEXT PRIMARY KEY)",
    "CREATE TABLE IF NOT EXISTS batches (device TEXT NOT NULL, low BIGINT NOT NULL, high BIGINT NOT NULL, "
    "reports BIGINT NOT NULL, body BYTEA NOT NULL)",
    "CREATE INDEX IF NOT EXISTS batches_high ON batches (device, high)",
    "CREATE TABLE IF NOT EXISTS ledger (device TEXT NOT NULL, cap TEXT NOT NULL, key BIGINT NOT NULL, "
    "points BIGINT NOT NULL, PRIMARY KEY (device, cap, key))",
    "CREATE TABLE IF NOT EXISTS rejections (reason TEXT PRIMARY KEY, count BIGINT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS last_points (device TEXT NOT NULL, trajectory BIGINT NOT NULL, idx BIGINT NOT NULL, "
    "x DOUBLE PRECISION NOT NULL, y DOUBLE PRECISION NOT NULL, PRIMARY KEY (device, trajectory))",
)


class PostgresStore(Store):
    """The collector's PostgreSQL database at ``url`` (``postgresql://user@host:port/name``), for
    ``parameters``: the calls of :class:`tracs.collect.storage.Store`."""

    MARK = "%s"
    DEVICE_ORDER = 'device COLLATE "C"'  # byte order, as SQLite compares text
    SHARED = True
    ROWS_TABLE = ("SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema() "
                  "AND table_name = 'reports'")

    def __init__(self, url: str, parameters):
        try:
            import psycopg
        except ImportError:
            raise StoreError("a PostgreSQL database needs psycopg: pip install 'tracs[collect]'") from None
        self.path = url
        try:
            self._db = psycopg.connect(url, autocommit=True)
        except psycopg.Error as exc:
            raise StoreError(f"cannot connect to {url}: {exc}".strip()) from None
        self._lock = threading.RLock()
        self._depth = 0
        with self.transaction():
            self._db.execute("SELECT pg_advisory_xact_lock(7283)")  # one schema creation at a time
            for statement in _SCHEMA:
                self._db.execute(statement)
        self._start(parameters)

    @contextmanager
    def transaction(self):
        """One transaction, callers serialised (nested blocks join the outer one)."""
        with self._lock:
            if self._depth:
                yield
                return
            self._depth = 1
            try:
                with self._db.transaction():
                    yield
            finally:
                self._depth = 0

    @contextmanager
    def _reader(self):
        """A connection of its own for a long read."""
        import psycopg

        with psycopg.connect(self.path) as db:
            yield db

    def _stream(self, db, text: str):
        """A server-side cursor (rows fetched in chunks, not all at once by the client)."""
        cursor = db.cursor(name="tracs_stream")
        cursor.execute(text)
        return cursor

    def _snapshot(self, db) -> None:
        db.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")

    def lock_device(self, device: str) -> None:
        """Hold ``device``'s advisory lock until the transaction ends (other collector processes wait)."""
        self._db.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (device,))


def is_postgres(db) -> bool:
    """Whether ``db`` names a PostgreSQL database (a ``postgresql://`` URL) rather than a SQLite file."""
    return str(db).startswith(("postgresql://", "postgres://"))


def open_store(db, parameters, *, synchronous: str = "normal"):
    """The store of ``db``: a ``postgresql://`` URL (:class:`PostgresStore`) or a SQLite file
    (:class:`tracs.collect.storage.SQLiteStore`, with its ``synchronous`` level)."""
    if is_postgres(db):
        return PostgresStore(str(db), parameters)
    return SQLiteStore(db, parameters, synchronous=synchronous)
