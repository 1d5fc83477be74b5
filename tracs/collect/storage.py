"""The collector's storage: reports, enrolled devices, the devices' ledgers, rejection counts.

One SQLite file (standard library ``sqlite3``, write-ahead log, one writer connection):
a batch's accepted reports, the ledger they add to and the rejection counts are
written in one transaction, committed before the batch is answered.  With
``synchronous=NORMAL`` (the default) a committed transaction is in the write-ahead log
before the answer, so it survives a crash of the collector process (SIGKILL); the log is
synced to disk at checkpoints, so a power loss or an operating-system crash may lose the
transactions committed since the last one.  ``synchronous=FULL`` syncs the log at every
commit: an answered batch survives a power loss too, at one ``fsync`` per commit.
``(device, sequence)`` is the primary key and reports go in with ``ON CONFLICT DO
NOTHING``: a report sent twice is stored once.  The file also keeps the collector's
secret (the key of the device tokens) and the parameters of the collection it holds;
opening it with other parameters is refused.
"""

from __future__ import annotations

import secrets
import sqlite3
import threading
from contextlib import closing, contextmanager

import numpy as np

from ..errors import TracsError

__all__ = ["Store", "SQLiteStore", "StoreError"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS devices (device TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS reports (device TEXT NOT NULL, sequence INTEGER NOT NULL,
    trajectory INTEGER NOT NULL, idx INTEGER NOT NULL, time INTEGER NOT NULL, x REAL NOT NULL,
    y REAL NOT NULL, i INTEGER NOT NULL, j INTEGER NOT NULL, epsilon REAL NOT NULL,
    PRIMARY KEY (device, sequence)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS ledger (device TEXT NOT NULL, cap TEXT NOT NULL, key INTEGER NOT NULL,
    points INTEGER NOT NULL, PRIMARY KEY (device, cap, key));
CREATE TABLE IF NOT EXISTS rejections (reason TEXT PRIMARY KEY, count INTEGER NOT NULL);
"""
#: the stored columns of a report, in the table's order
STORED = ("sequence", "trajectory", "index", "time", "x", "y", "i", "j", "epsilon")


class StoreError(TracsError, RuntimeError):
    """A database that does not hold this collection."""


class Store:
    """What every store shares: the calls of the collector, in SQL both SQLite and PostgreSQL
    speak (``?`` placeholders, written as the subclass's :attr:`MARK`).  A subclass connects
    (``_db``), creates the tables and gives :meth:`transaction` and :meth:`lock_device`."""

    MARK = "?"
    #: the order of device ids in an export (byte order, as SQLite compares text)
    DEVICE_ORDER = "device"

    def _sql(self, text: str) -> str:
        return text.replace("?", self.MARK)

    def _rows(self, text: str, args=()) -> list:
        return self._db.execute(self._sql(text), args).fetchall()

    def _start(self, parameters) -> None:
        """Keep a new secret and the parameters in a new database; refuse one of other parameters."""
        with self.transaction():
            for name, value in (("secret", secrets.token_hex(32)), ("parameters", parameters.to_json())):
                self._db.execute(self._sql("INSERT INTO meta VALUES (?, ?) ON CONFLICT DO NOTHING"), (name, value))
            held = self._value("parameters")
        if held != parameters.to_json():
            raise StoreError(f"{self.path} holds the reports of a collection with other parameters; give "
                             "the same method, ε, region and caps, or another database")

    def _value(self, name: str) -> str:
        return self._rows("SELECT value FROM meta WHERE name = ?", (name,))[0][0]

    # -- devices -------------------------------------------------------------------------
    def secret(self) -> bytes:
        """The key of the device tokens (kept in the database, never served)."""
        with self._lock:
            return bytes.fromhex(self._value("secret"))

    def enroll(self, device: str) -> None:
        with self.transaction():
            self._db.execute(self._sql("INSERT INTO devices VALUES (?) ON CONFLICT DO NOTHING"), (device,))

    def enrolled(self, device: str) -> bool:
        with self._lock:
            return bool(self._rows("SELECT 1 FROM devices WHERE device = ?", (device,)))

    # -- what a batch is checked against ---------------------------------------------------
    def stored(self, device: str, sequences: np.ndarray) -> np.ndarray:
        """Whether each sequence of ``device`` is already stored."""
        if not len(sequences):
            return np.zeros(0, dtype=bool)
        rows = self._rows("SELECT sequence FROM reports WHERE device = ? AND sequence BETWEEN ? AND ?",
                          (device, int(sequences.min()), int(sequences.max())))
        return np.isin(sequences, np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows)))

    def spent(self, device: str, cap: str, keys: np.ndarray) -> np.ndarray:
        """Points of ``device`` stored under each ledger key of ``cap`` (sorted unique ``keys``)."""
        out = np.zeros(len(keys), dtype=np.int64)
        if not len(keys):
            return out
        rows = self._rows("SELECT key, points FROM ledger WHERE device = ? AND cap = ? AND key BETWEEN ? AND ?",
                          (device, cap, int(keys[0]), int(keys[-1])))
        if rows:
            have = np.array(rows, dtype=np.int64)
            at = np.searchsorted(keys, have[:, 0])
            hit = (at < len(keys)) & (keys[np.minimum(at, len(keys) - 1)] == have[:, 0])
            out[at[hit]] = have[hit, 1]
        return out

    def commit(self, device: str, columns: dict, accepted: np.ndarray, added: dict, rejected: dict) -> None:
        """Store the ``accepted`` reports, add to the ledger and count the rejections (one transaction)."""
        rows = np.flatnonzero(accepted)
        with self.transaction(), closing(self._db.cursor()) as cursor:
            self._insert_reports(cursor, device, {name: columns[name][rows] for name in STORED})
            for cap, (keys, points) in added.items():
                cursor.executemany(self._sql("INSERT INTO ledger VALUES (?, ?, ?, ?) ON CONFLICT (device, cap, key) "
                                             "DO UPDATE SET points = ledger.points + excluded.points"),
                                   list(zip([device] * len(keys), [cap] * len(keys), keys.tolist(), points.tolist())))
            cursor.executemany(self._sql("INSERT INTO rejections VALUES (?, ?) ON CONFLICT (reason) DO UPDATE "
                                         "SET count = rejections.count + excluded.count"), list(rejected.items()))

    def _insert_reports(self, cursor, device: str, columns: dict) -> None:
        """Insert the rows ``columns`` of ``device`` (a report stored before is kept, not doubled)."""
        values = [columns[name].tolist() for name in STORED]
        cursor.executemany(self._sql("INSERT INTO reports VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                                     "ON CONFLICT DO NOTHING"), list(zip([device] * len(values[0]), *values)))

    # -- reading back -----------------------------------------------------------------------
    def count(self) -> int:
        with self._lock:
            return self._rows("SELECT count(*) FROM reports")[0][0]

    def rejections(self) -> dict:
        with self._lock:
            return dict(self._rows("SELECT reason, count FROM rejections ORDER BY reason"))

    def reports(self) -> tuple[list, dict]:
        """``(devices, columns)`` of every stored report, by device, trajectory and index (all in
        memory: :meth:`report_chunks` streams them)."""
        parts = list(self.report_chunks()) or [([], _columns([]))]
        return [d for devices, _ in parts for d in devices], \
            {name: np.concatenate([c[name] for _, c in parts]) for name in STORED}

    def report_chunks(self, rows: int = 1 << 16):
        """``(devices, columns)`` of the stored reports by device, trajectory and index, in chunks
        of about ``rows`` that end with a whole trajectory, read on a connection of their own
        (the writer is not held up)."""
        with self._reader() as db:
            cursor = db.execute(self._sql("SELECT device, sequence, trajectory, idx, time, x, y, i, j, epsilon "
                                          f"FROM reports ORDER BY {self.DEVICE_ORDER}, trajectory, idx"))
            held = []
            while True:
                fetched = cursor.fetchmany(rows)
                held += fetched
                if not fetched:
                    if held:
                        yield [r[0] for r in held], _columns(held)
                    return
                last = held[-1][:3:2]  # the last trajectory may go on in the next rows: held back
                cut = len(held)
                while cut and held[cut - 1][:3:2] == last:
                    cut -= 1
                if cut:
                    yield [r[0] for r in held[:cut]], _columns(held[:cut])
                    held = held[cut:]

    def lattice_counts(self, chunk: int = 65_536):
        """Chunks ``(k, 3)`` of ``(i, j, reports)``: the stored reports counted per lattice pair (read on
        a connection of its own)."""
        with self._reader() as db:
            cursor = db.execute("SELECT i, j, count(*) FROM reports GROUP BY i, j")
            while rows := cursor.fetchmany(chunk):
                yield np.array(rows, dtype=np.int64)

    def close(self) -> None:
        self._db.close()


def _columns(rows: list) -> dict:
    """The :data:`STORED` columns of rows ``(device, *STORED)``."""
    return {name: np.array([r[k + 1] for r in rows], dtype=np.float64 if name in ("x", "y", "epsilon") else np.int64)
            for k, name in enumerate(STORED)}


class SQLiteStore(Store):
    """The collector's SQLite database at ``path`` (created if missing), for ``parameters``
    (:class:`tracs.collect.Parameters`): every call is one transaction, callers serialised.
    ``synchronous``: ``"normal"`` or ``"full"`` (the module's docstring says what each keeps)."""

    def __init__(self, path, parameters, *, synchronous: str = "normal"):
        if synchronous not in ("normal", "full"):
            raise ValueError(f"synchronous must be 'normal' or 'full', got {synchronous!r}")
        self.path = str(path)
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(f"PRAGMA synchronous={synchronous.upper()}")
        self._db.executescript(_SCHEMA)
        self._lock = threading.RLock()
        self._start(parameters)

    @contextmanager
    def transaction(self):
        """One transaction, callers serialised (nested blocks join the outer one)."""
        with self._lock:
            if self._db.in_transaction:
                yield
                return
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def lock_device(self, device: str) -> None:
        """Nothing to do: ``BEGIN IMMEDIATE`` already serialises every writer of the file."""

    @contextmanager
    def _reader(self):
        """A connection of its own for a long read (the write-ahead log lets it read a snapshot)."""
        db = sqlite3.connect(self.path)
        try:
            yield db
        finally:
            db.close()
