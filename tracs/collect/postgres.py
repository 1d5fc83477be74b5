"""The collector's storage on PostgreSQL (``tracs serve --db postgresql://…``; psycopg 3).

The same tables, calls and guarantees as :class:`tracs.collect.storage.SQLiteStore`:
``(device, sequence)`` is the primary key and reports go in with ``ON CONFLICT DO
NOTHING`` (stored once), and a batch's reports, ledger and counts are one
transaction committed before the batch is answered.  Several collector processes
may share the database: a batch takes a transaction-level advisory lock on its
device (:meth:`PostgresStore.lock_device`), so two batches of one device are
checked against the ledger one after the other.
"""

from __future__ import annotations

import secrets
import threading
from contextlib import contextmanager

import numpy as np

from .storage import STORED, StoreError

__all__ = ["PostgresStore"]

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


class PostgresStore:
    """The collector's PostgreSQL database at ``url`` (``postgresql://user@host:port/name``), for
    ``parameters``: the interface of :class:`tracs.collect.storage.SQLiteStore`."""

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
            self._db.execute("INSERT INTO meta VALUES ('secret', %s) ON CONFLICT DO NOTHING", (secrets.token_hex(32),))
            self._db.execute("INSERT INTO meta VALUES ('parameters', %s) ON CONFLICT DO NOTHING",
                             (parameters.to_json(),))
            held = self._value("parameters")
        if held != parameters.to_json():
            raise StoreError(f"{url} holds the reports of a collection with other parameters; give the same "
                             "method, ε, region and caps, or another database")

    def _value(self, name: str) -> str:
        return self._db.execute("SELECT value FROM meta WHERE name = %s", (name,)).fetchone()[0]

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

    def lock_device(self, device: str) -> None:
        """Hold ``device``'s advisory lock until the transaction ends (other collector processes wait)."""
        self._db.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (device,))

    def close(self) -> None:
        self._db.close()

    def secret(self) -> bytes:
        with self._lock:
            return bytes.fromhex(self._value("secret"))

    def enroll(self, device: str) -> None:
        with self.transaction():
            self._db.execute("INSERT INTO devices VALUES (%s) ON CONFLICT DO NOTHING", (device,))

    def enrolled(self, device: str) -> bool:
        with self._lock:
            return self._db.execute("SELECT 1 FROM devices WHERE device = %s", (device,)).fetchone() is not None

    def stored(self, device: str, sequences: np.ndarray) -> np.ndarray:
        if not len(sequences):
            return np.zeros(0, dtype=bool)
        rows = self._db.execute("SELECT sequence FROM reports WHERE device = %s AND sequence BETWEEN %s AND %s",
                                (device, int(sequences.min()), int(sequences.max()))).fetchall()
        return np.isin(sequences, np.array([r[0] for r in rows], dtype=np.int64))

    def spent(self, device: str, cap: str, keys: np.ndarray) -> np.ndarray:
        out = np.zeros(len(keys), dtype=np.int64)
        if not len(keys):
            return out
        rows = self._db.execute("SELECT key, points FROM ledger WHERE device = %s AND cap = %s AND key = ANY(%s)",
                                (device, cap, keys.tolist())).fetchall()
        if rows:
            have = np.array(rows, dtype=np.int64)
            out[np.searchsorted(keys, have[:, 0])] = have[:, 1]
        return out

    def commit(self, device: str, columns: dict, accepted: np.ndarray, added: dict, rejected: dict) -> None:
        rows = np.flatnonzero(accepted)
        values = [columns[name][rows].tolist() for name in STORED]
        with self.transaction(), self._db.cursor() as cur:
            cur.executemany("INSERT INTO reports VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
                            "ON CONFLICT DO NOTHING", list(zip([device] * len(rows), *values)))
            for cap, (keys, points) in added.items():
                cur.executemany("INSERT INTO ledger VALUES (%s, %s, %s, %s) ON CONFLICT (device, cap, key) "
                                "DO UPDATE SET points = ledger.points + excluded.points",
                                list(zip([device] * len(keys), [cap] * len(keys), keys.tolist(), points.tolist())))
            cur.executemany("INSERT INTO rejections VALUES (%s, %s) ON CONFLICT (reason) DO UPDATE "
                            "SET count = rejections.count + excluded.count", list(rejected.items()))

    def count(self) -> int:
        with self._lock:
            return self._db.execute("SELECT count(*) FROM reports").fetchone()[0]

    def rejections(self) -> dict:
        with self._lock:
            return dict(self._db.execute("SELECT reason, count FROM rejections ORDER BY reason").fetchall())

    def reports(self) -> tuple[list, dict]:
        with self._lock:
            rows = self._db.execute("SELECT device, sequence, trajectory, idx, time, x, y, i, j, epsilon "
                                    "FROM reports ORDER BY device COLLATE \"C\", trajectory, idx").fetchall()
        devices = [r[0] for r in rows]
        columns = {name: np.array([r[k + 1] for r in rows], dtype=np.float64 if name in ("x", "y", "epsilon")
                                  else np.int64) for k, name in enumerate(STORED)}
        return devices, columns
