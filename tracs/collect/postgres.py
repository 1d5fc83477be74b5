"""The collector's storage on PostgreSQL (``tracs serve --db postgresql://…``; psycopg 3).

The same tables, calls (:class:`tracs.collect.storage.Store`) and guarantees as
:class:`tracs.collect.storage.SQLiteStore`:
``(device, sequence)`` is the primary key and reports go in with ``ON CONFLICT DO
NOTHING`` (stored once), and a batch's reports, ledger and counts are one
transaction committed before the batch is answered.  Several collector processes
may share the database: a batch takes a transaction-level advisory lock on its
device (:meth:`PostgresStore.lock_device`), so two batches of one device are
checked against the ledger one after the other.  A batch's reports go in with
``COPY … FROM STDIN`` in PostgreSQL's binary format (built from the NumPy columns at
once, :func:`copy_rows`) into a temporary table, then ``INSERT … SELECT … ON CONFLICT
DO NOTHING``.  :func:`open_store` opens the store a ``--db`` names: PostgreSQL or SQLite.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager

import numpy as np

from .storage import STORED, SQLiteStore, Store, StoreError

__all__ = ["PostgresStore", "open_store"]

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS devices (device TEXT PRIMARY KEY)",
    "CREATE TABLE IF NOT EXISTS reports (device TEXT NOT NULL, sequence BIGINT NOT NULL, "
    "trajectory BIGINT NOT NULL, idx BIGINT NOT NULL, time BIGINT NOT NULL, x DOUBLE PRECISION NOT NULL, "
    "y DOUBLE PRECISION NOT NULL, i BIGINT NOT NULL, j BIGINT NOT NULL, epsilon DOUBLE PRECISION NOT NULL, "
    "PRIMARY KEY (device, sequence))",
    "CREATE TABLE IF NOT EXISTS ledger (device TEXT NOT NULL, cap TEXT NOT NULL, key BIGINT NOT NULL, "
    "points BIGINT NOT NULL, PRIMARY KEY (device, cap, key))",
    "CREATE TABLE IF NOT EXISTS rejections (reason TEXT PRIMARY KEY, count BIGINT NOT NULL)",
)


class PostgresStore(Store):
    """The collector's PostgreSQL database at ``url`` (``postgresql://user@host:port/name``), for
    ``parameters``: the calls of :class:`tracs.collect.storage.Store`."""

    MARK = "%s"
    DEVICE_ORDER = 'device COLLATE "C"'  # byte order, as SQLite compares text

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

    def _insert_reports(self, cursor, device: str, columns: dict) -> None:
        if not len(columns["sequence"]):
            return
        cursor.execute("CREATE TEMP TABLE IF NOT EXISTS incoming (LIKE reports) ON COMMIT DELETE ROWS")
        with cursor.copy("COPY incoming (device, sequence, trajectory, idx, time, x, y, i, j, epsilon) "
                         "FROM STDIN (FORMAT BINARY)") as copy:
            copy.write(copy_rows(device, columns))
        cursor.execute("INSERT INTO reports SELECT * FROM incoming ON CONFLICT DO NOTHING")

    @contextmanager
    def _reader(self):
        """A connection of its own for a long read."""
        import psycopg

        with psycopg.connect(self.path) as db:
            yield db

    def lock_device(self, device: str) -> None:
        """Hold ``device``'s advisory lock until the transaction ends (other collector processes wait)."""
        self._db.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (device,))


_COPY_HEADER = b"PGCOPY\n\xff\r\n\x00" + b"\x00" * 8  # signature, flags, header extension length
_FLOATS = ("x", "y", "epsilon")


def copy_rows(device: str, columns: dict) -> bytes:
    """The reports of ``device`` (the :data:`tracs.collect.storage.STORED` columns) as the body of a
    binary ``COPY``: each row a field count, then each field's length and big-endian value."""
    name = device.encode("utf-8")
    fields = [("count", ">i2"), ("device_size", ">i4"), ("device", f"S{len(name)}")]
    for column in STORED:
        fields += [(f"{column}_size", ">i4"), (column, ">f8" if column in _FLOATS else ">i8")]
    rows = np.zeros(len(columns["sequence"]), dtype=np.dtype(fields))
    rows["count"], rows["device_size"], rows["device"] = 1 + len(STORED), len(name), name
    for column in STORED:
        rows[f"{column}_size"] = 8
        rows[column] = columns[column]
    return _COPY_HEADER + rows.tobytes() + b"\xff\xff"


def open_store(db, parameters, *, synchronous: str = "normal"):
    """The store of ``db``: a ``postgresql://`` URL (:class:`PostgresStore`) or a SQLite file
    (:class:`tracs.collect.storage.SQLiteStore`, with its ``synchronous`` level)."""
    if str(db).startswith(("postgresql://", "postgres://")):
        return PostgresStore(str(db), parameters)
    return SQLiteStore(db, parameters, synchronous=synchronous)
