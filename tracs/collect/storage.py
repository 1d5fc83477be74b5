"""The collector's storage: reports, enrolled devices, the devices' ledgers, rejection counts.

One SQLite file (standard library ``sqlite3``, write-ahead log, one writer connection):
a batch's accepted reports, the ledger they add to and the rejection counts are
written in one transaction, committed before the batch is answered.  With
``synchronous=NORMAL`` (the default) a committed transaction is in the write-ahead log
before the answer, so it survives a crash of the collector process (SIGKILL); the log is
synced to disk at checkpoints, so a power loss or an operating-system crash may lose the
transactions committed since the last one.  ``synchronous=FULL`` syncs the log at every
commit: an answered batch survives a power loss too, at one ``fsync`` per commit.
The accepted reports of a batch are one row of the table ``batches``: the device, the
lowest and highest sequence, the count and the report columns as one binary value
(:func:`pack`: each column's 8-byte little-endian values in turn), so a batch of 1,000
reports is one insert instead of 1,000.  A report sent twice is stored once: the
batch's sequences are checked against the stored batches of the device that overlap
them (:meth:`Store.stored`), in the transaction that stores it.  A database an earlier
collector wrote with one row per report (table ``reports``) is converted when opened.
The file also keeps the collector's secret (the key of the device tokens) and the
parameters of the collection it holds; opening it with other parameters is refused.
"""

from __future__ import annotations

import secrets
import sqlite3
import threading
from contextlib import closing, contextmanager

import numpy as np

from ..errors import InputError, TracsError

__all__ = ["Store", "SQLiteStore", "StoreError"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS devices (device TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS batches (device TEXT NOT NULL, low INTEGER NOT NULL, high INTEGER NOT NULL,
    reports INTEGER NOT NULL, body BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS batches_high ON batches (device, high);
CREATE TABLE IF NOT EXISTS ledger (device TEXT NOT NULL, cap TEXT NOT NULL, key INTEGER NOT NULL,
    points INTEGER NOT NULL, PRIMARY KEY (device, cap, key));
CREATE TABLE IF NOT EXISTS rejections (reason TEXT PRIMARY KEY, count INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS last_points (device TEXT NOT NULL, trajectory INTEGER NOT NULL, idx INTEGER NOT NULL,
    x REAL NOT NULL, y REAL NOT NULL, PRIMARY KEY (device, trajectory)) WITHOUT ROWID;
"""
#: the stored columns of a report, in the order of a batch's body
STORED = ("sequence", "trajectory", "index", "time", "x", "y", "i", "j", "epsilon")
_FLOATS = ("x", "y", "epsilon")
#: each trajectory's last stored report (TraCS-D checks the next one exactly about it), filled from
#: the reports of a database written with one row per report before the table was kept
_FILL_LAST = ("INSERT INTO last_points SELECT r.device, r.trajectory, r.idx, r.x, r.y FROM reports AS r JOIN "
              "(SELECT device, trajectory, max(idx) AS idx FROM reports GROUP BY device, trajectory) AS m "
              "ON r.device = m.device AND r.trajectory = m.trajectory AND r.idx = m.idx WHERE true "
              "ON CONFLICT DO NOTHING")


class StoreError(TracsError, RuntimeError):
    """A database that does not hold this collection."""


def pack(columns: dict) -> bytes:
    """The body of a stored batch: the :data:`STORED` columns' values, 8 bytes little-endian each
    (``int64``; ``float64`` for ``x``, ``y``, ``epsilon``), one column after the other."""
    return b"".join(np.asarray(columns[name], dtype="<f8" if name in _FLOATS else "<i8").tobytes()
                    for name in STORED)


def unpack(body: bytes, names=STORED) -> dict:
    """The columns ``names`` of a body written by :func:`pack` (native byte order)."""
    n = len(body) // (8 * len(STORED))
    return {name: np.frombuffer(body, dtype="<f8" if name in _FLOATS else "<i8", count=n,
                                offset=8 * n * STORED.index(name)).astype(np.float64 if name in _FLOATS else np.int64)
            for name in names}


def _joined(parts: list, names=STORED) -> dict:
    """The columns of several :func:`unpack` results, one after the other."""
    return {name: np.concatenate([p[name] for p in parts]) if parts else
            np.zeros(0, dtype=np.float64 if name in _FLOATS else np.int64) for name in names}


class Store:
    """What every store shares: the calls of the collector, in SQL both SQLite and PostgreSQL
    speak (``?`` placeholders, written as the subclass's :attr:`MARK`).  A subclass connects
    (``_db``), creates the tables and gives :meth:`transaction` and :meth:`lock_device`."""

    MARK = "?"
    #: a row when the database holds a table ``reports`` (one row per report, an earlier layout)
    ROWS_TABLE = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'reports'"
    #: the order of device ids in an export (byte order, as SQLite compares text)
    DEVICE_ORDER = "device"
    #: other processes may write to the database (its counts are read from it, not kept)
    SHARED = False

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
            if held == parameters.to_json() and self._rows(self.ROWS_TABLE):
                self._convert()
            self._db.execute("INSERT INTO meta VALUES ('last points', 'kept') ON CONFLICT DO NOTHING")
        if held != parameters.to_json():
            raise StoreError(f"{self.path} holds the reports of a collection with other parameters; give "
                             "the same method, ε, region and caps, or another database")

    def _convert(self) -> None:
        """Store the reports of a database written with one row per report (table ``reports``) as
        batches of at most 65,536 reports per device, in sequence order, and drop the table."""
        if not self._rows("SELECT 1 FROM meta WHERE name = 'last points'"):
            self._db.execute(_FILL_LAST)
        with closing(self._db.cursor()) as cursor:
            for (device,) in self._rows("SELECT DISTINCT device FROM reports"):
                rows = self._rows("SELECT sequence, trajectory, idx, time, x, y, i, j, epsilon FROM reports "
                                  "WHERE device = ? ORDER BY sequence", (device,))
                for start in range(0, len(rows), 1 << 16):
                    part = np.array(rows[start:start + (1 << 16)], dtype=object)
                    self._insert_reports(cursor, device, {name: part[:, k] for k, name in enumerate(STORED)})
        self._db.execute("DROP TABLE reports")

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
        rows = self._rows("SELECT body FROM batches WHERE device = ? AND high >= ? AND low <= ?",
                          (device, int(sequences.min()), int(sequences.max())))
        return np.isin(sequences, _joined([unpack(r[0], ("sequence",)) for r in rows], ("sequence",))["sequence"])

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

    def last_points(self, device: str, trajectories: np.ndarray) -> np.ndarray:
        """Rows ``(trajectory, index, x, y)`` of the last stored report of each of ``device``'s
        ``trajectories`` that has one (float64)."""
        if not len(trajectories):
            return np.zeros((0, 4))
        rows = self._rows("SELECT trajectory, idx, x, y FROM last_points WHERE device = ? AND trajectory "
                          "BETWEEN ? AND ? ORDER BY trajectory", (device, int(trajectories.min()),
                                                                  int(trajectories.max())))
        return np.array(rows, dtype=np.float64).reshape(-1, 4)

    def commit(self, device: str, columns: dict, accepted: np.ndarray, added: dict, rejected: dict,
               last: bool = False) -> None:
        """Store the ``accepted`` reports, add to the ledger and count the rejections (one transaction);
        ``last``: keep each trajectory's last stored report too (:meth:`last_points`)."""
        rows = np.flatnonzero(accepted)
        with self.transaction(), closing(self._db.cursor()) as cursor:
            kept = {name: columns[name][rows] for name in STORED}
            self._insert_reports(cursor, device, kept)
            if last and len(rows):
                order = np.lexsort((kept["index"], kept["trajectory"]))
                ends = order[np.r_[kept["trajectory"][order][1:] != kept["trajectory"][order][:-1], True]]
                cursor.executemany(self._sql(
                    "INSERT INTO last_points VALUES (?, ?, ?, ?, ?) ON CONFLICT (device, trajectory) DO UPDATE "
                    "SET idx = excluded.idx, x = excluded.x, y = excluded.y WHERE excluded.idx > last_points.idx"),
                    list(zip([device] * len(ends), *(kept[name][ends].tolist() for name in ("trajectory", "index",
                                                                                            "x", "y")))))
            for cap, (keys, points) in added.items():
                cursor.executemany(self._sql("INSERT INTO ledger VALUES (?, ?, ?, ?) ON CONFLICT (device, cap, key) "
                                             "DO UPDATE SET points = ledger.points + excluded.points"),
                                   list(zip([device] * len(keys), [cap] * len(keys), keys.tolist(), points.tolist())))
            if rejected:
                cursor.executemany(self._sql("INSERT INTO rejections VALUES (?, ?) ON CONFLICT (reason) DO UPDATE "
                                             "SET count = rejections.count + excluded.count"), list(rejected.items()))

    def _insert_reports(self, cursor, device: str, columns: dict) -> None:
        """Store the reports ``columns`` of ``device`` as one batch (none stored before: the checks
        of the same transaction rejected those)."""
        sequence = np.asarray(columns["sequence"], dtype=np.int64)
        if len(sequence):
            cursor.execute(self._sql("INSERT INTO batches VALUES (?, ?, ?, ?, ?)"),
                           (device, int(sequence.min()), int(sequence.max()), len(sequence), pack(columns)))
            self._inserted(len(sequence))

    def _inserted(self, rows: int) -> None:
        """``rows`` reports were inserted by the transaction under way."""

    def writing(self):
        """A context in which no batch is being written by this process (its writer waits): what it
        reads of the database and of the counts the writer keeps agree."""
        return self._lock

    # -- reading back -----------------------------------------------------------------------
    def count(self) -> int:
        with self._lock:
            return int(self._rows("SELECT coalesce(sum(reports), 0) FROM batches")[0][0])

    def rejections(self) -> dict:
        with self._lock:
            return dict(self._rows("SELECT reason, count FROM rejections ORDER BY reason"))

    def reports(self) -> tuple[list, dict]:
        """``(devices, columns)`` of every stored report, by device, trajectory and index (all in
        memory: :meth:`report_chunks` streams them)."""
        parts = list(self.report_chunks())
        return [d for devices, _ in parts for d in devices], _joined([c for _, c in parts])

    def report_chunks(self, rows: int = 1 << 16):
        """``(devices, columns)`` of the stored reports by device, trajectory and index, in chunks
        of about ``rows`` that end with a whole trajectory, read on a connection of their own from
        one snapshot (the writer is not held up); one device's reports are in memory at a time."""
        with self._reader() as db:
            self._snapshot(db)
            devices = [r[0] for r in db.execute(f"SELECT device FROM batches GROUP BY device "
                                                f"ORDER BY {self.DEVICE_ORDER}").fetchall()]
            for device in devices:
                c = _joined([unpack(r[0]) for r in db.execute(self._sql("SELECT body FROM batches WHERE device = ?"),
                                                                      (device,)).fetchall()])
                c = {name: column[np.lexsort((c["index"], c["trajectory"]))] for name, column in c.items()}
                n = len(c["trajectory"])
                starts = np.flatnonzero(np.r_[True, c["trajectory"][1:] != c["trajectory"][:-1]])
                at = np.searchsorted(starts, np.arange(rows, n, rows))  # the first trajectory from each target on
                cuts = np.unique(np.r_[np.where(at < len(starts), starts[np.minimum(at, len(starts) - 1)], n), n])
                for a, b in zip(np.r_[0, cuts[:-1]], cuts):
                    if b > a:
                        yield [device] * int(b - a), {name: column[a:b] for name, column in c.items()}

    def lattice_pairs(self):
        """Chunks ``(k, 2)`` of the lattice indices ``(i, j)`` of the stored reports (a stored batch
        each), read on a connection of its own from the snapshot the first chunk is read in."""
        with self._reader() as db:
            cursor = self._stream(db, "SELECT body FROM batches")
            while rows := cursor.fetchmany(64):
                for (body,) in rows:
                    c = unpack(body, ("i", "j"))
                    yield np.column_stack([c["i"], c["j"]])

    def _stream(self, db, text: str):
        """A cursor of ``db`` running ``text`` whose rows are fetched as they are read."""
        return db.execute(text)

    def _snapshot(self, db) -> None:
        """Make the reads of ``db`` from now on see one snapshot."""
        db.execute("BEGIN")

    def close(self) -> None:
        self._db.close()


class SQLiteStore(Store):
    """The collector's SQLite database at ``path`` (created if missing), for ``parameters``
    (:class:`tracs.collect.Parameters`): every call is one transaction, callers serialised.
    ``synchronous``: ``"normal"`` or ``"full"`` (the module's docstring says what each keeps)."""

    def __init__(self, path, parameters, *, synchronous: str = "normal"):
        if synchronous not in ("normal", "full"):
            raise InputError(f"synchronous must be 'normal' or 'full', got {synchronous!r}")
        self.path = str(path)
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(f"PRAGMA synchronous={synchronous.upper()}")
        self._db.executescript(_SCHEMA)
        self._lock = threading.RLock()
        self._count = self._adding = 0
        self._start(parameters)
        self._count = Store.count(self)

    def count(self) -> int:
        """The stored reports (kept in memory: one process writes the file)."""
        with self._lock:
            return self._count

    def _inserted(self, rows: int) -> None:
        self._adding += rows

    @contextmanager
    def transaction(self):
        """One transaction, callers serialised (nested blocks join the outer one)."""
        with self._lock:
            if self._db.in_transaction:
                yield
                return
            self._db.execute("BEGIN IMMEDIATE")
            self._adding = 0
            try:
                yield
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
            self._count += self._adding

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
