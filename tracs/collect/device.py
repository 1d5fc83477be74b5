"""The device side of a collection: release each fix as it happens, keep the state, upload.

A :class:`Device` keeps everything it must never forget in one SQLite file
(standard library ``sqlite3``): the previous release and next stream position of
each trajectory (TraCS-D releases about the previous *released* point), the next
report's sequence number, the ledger of ε spent (per trajectory, per UTC day,
lifetime) and the queue of reports the collector has not acknowledged.  A report
and the state it advances are committed in one transaction before the report can
leave the device: a device killed at any moment reopens with the same queue and
never draws a stream position twice.

Releases go through the library's perturber at the fix's stream position
(the perturber's ``release_at``), keyed as ``tracs perturb --seed``
keys a user: a device's reports equal, bit for bit, the release of the same
user's rows by ``tracs perturb`` with the same seed and public parameters.
"""

from __future__ import annotations

import contextlib
import hashlib
import sqlite3
import time as _time

import numpy as np

from ..errors import InputError, InputTypeError, TracsError
from ..public import into_region
from .published import ParameterError, Parameters
from .protocol import ARROW_TYPE, encode_arrow, stream_of

__all__ = ["Device", "BudgetExhausted", "UploadError"]

_DAY_NS = 86_400 * 10**9
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS trajectories (label TEXT PRIMARY KEY, number INTEGER NOT NULL UNIQUE,
    next_index INTEGER NOT NULL, prev_x REAL, prev_y REAL);
CREATE TABLE IF NOT EXISTS days (day INTEGER PRIMARY KEY, points INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS queue (sequence INTEGER PRIMARY KEY, trajectory INTEGER NOT NULL,
    idx INTEGER NOT NULL, time INTEGER NOT NULL, x REAL NOT NULL, y REAL NOT NULL,
    i INTEGER NOT NULL, j INTEGER NOT NULL);
"""


class BudgetExhausted(TracsError, RuntimeError):
    """A report would overspend a cap; nothing was drawn.

    Attributes
    ----------
    cap : str
        ``"trajectory"``, ``"day"`` or ``"lifetime"``.
    resets : str or None
        When the cap allows reports again: ``"a new trajectory"``, the next UTC midnight
        (ISO 8601), or ``None`` (never).
    """

    def __init__(self, cap: str, resets):
        self.cap, self.resets = cap, resets
        when = "never resets" if resets is None else f"resets at {resets}"
        super().__init__(f"the {cap} budget cap is spent ({when}): nothing was released")


class UploadError(TracsError, RuntimeError):
    """The collector refused a batch (a 4xx answer) or could not be reached after the retries."""


def _nanoseconds(time) -> int:
    """UTC nanoseconds since 1970 of a time (datetime, pandas/NumPy time, ISO text or int ns)."""
    import pandas as pd

    if isinstance(time, (int, np.integer)) and not isinstance(time, bool):
        return int(time)
    stamp = pd.Timestamp(time)
    if pd.isna(stamp):
        raise InputError(f"time: not a time, got {time!r}")
    if stamp.tzinfo is not None:
        stamp = stamp.tz_convert("UTC").tz_localize(None)
    return int(stamp.as_unit("ns").value)


def _key_fingerprint(random_key) -> str:
    return hashlib.sha256(b"tracs.device.key\x00" + np.asarray(random_key.key).tobytes()).hexdigest()


class Device:
    """One phone of a collection.

    Parameters
    ----------
    parameters : Parameters, dict or JSON text
        The collection's public parameters (``GET /v1/parameters``); refused with
        :class:`ParameterError` naming what this device cannot honour.
    device_id : str
        The device's id: its stream key (as ``tracs perturb`` keys a user by its id).
    key : int or tracs.random.Secure
        The device's secret random key (``tracs perturb --seed``); a reproducible key,
        so that a restart continues the same streams.
    state : path-like
        The SQLite file of the state (created if missing).  Reopening a state made
        under other parameters, another id or another key is refused.
    token : str, optional
        The upload token the collector gave ``device_id`` at enrolment.
    """

    def __init__(self, parameters, device_id, key, state, *, token: str | None = None):
        from ..random import Secure, resolve_key

        self.parameters = parameters if isinstance(parameters, Parameters) else Parameters.from_json(parameters)
        if not isinstance(device_id, str) or not device_id:
            raise InputTypeError(f"device_id must be a non-empty str, got {device_id!r}")
        if isinstance(key, bool) or not isinstance(key, (int, np.integer, Secure)):
            raise InputTypeError("key must be a non-negative int or tracs.random.Secure(seed): a reproducible key, "
                                 f"so that a restart continues its streams, got {type(key).__name__}")
        self.device_id, self.token = device_id, token
        self._key = resolve_key(int(key) if isinstance(key, np.integer) else key)
        self._model = self.parameters.perturber()
        self._caps = self.parameters.cap_points()
        import pyproj

        self._to_metric = pyproj.Transformer.from_crs(4326, self.parameters.crs, always_xy=True)
        self._box = self.parameters.lonlat_box()
        self._db = sqlite3.connect(str(state), isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")  # a committed stream position survives a power cut
        self._db.executescript(_SCHEMA)
        self._depth = 0
        self._streams = {}  # trajectory number -> its keyed stream (a pure function of the id and number)
        self._check_identity()

    # -- state ------------------------------------------------------------------------
    def _check_identity(self) -> None:
        expected = {"device": self.device_id, "parameters": self.parameters.digest,
                    "key": _key_fingerprint(self._key)}
        with self.transaction():
            have = dict(self._db.execute("SELECT name, value FROM meta"))
            for name, value in expected.items():
                if name in have and have[name] != value:
                    what = {"device": f"device {have['device']!r}", "parameters": "other parameters",
                            "key": "another key"}[name]
                    raise ParameterError(f"this state was made by {what}: open it with the same, or start "
                                         "a new state file")
                if name not in have:
                    self._db.execute("INSERT INTO meta VALUES (?, ?)", (name, value))
            for name in ("next_sequence", "lifetime", "trajectories"):
                self._db.execute("INSERT OR IGNORE INTO meta VALUES (?, '0')", (name,))

    def _meta(self, name: str) -> int:
        return int(self._db.execute("SELECT value FROM meta WHERE name = ?", (name,)).fetchone()[0])

    def _set(self, name: str, value) -> None:
        self._db.execute("UPDATE meta SET value = ? WHERE name = ?", (str(value), name))

    @contextlib.contextmanager
    def transaction(self):
        """Commit every report made inside the block in one transaction (at its end); a
        failure inside rolls all of them back, and none of them was sent.  A block inside
        another is a savepoint: a report refused inside one (a spent cap) changes nothing."""
        if self._depth:
            name = f"s{self._depth}"
            self._db.execute(f"SAVEPOINT {name}")
            self._depth += 1
            try:
                yield
            except BaseException:
                self._db.execute(f"ROLLBACK TO {name}")
                raise
            finally:
                self._depth -= 1
                self._db.execute(f"RELEASE {name}")
            return
        self._db.execute("BEGIN IMMEDIATE")
        self._depth = 1
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        else:
            self._db.execute("COMMIT")
        finally:
            self._depth = 0

    def close(self) -> None:
        self._db.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- releasing ----------------------------------------------------------------------
    def _trajectory(self, label):
        """``(label, number, next_index, previous release)`` of the trajectory a fix belongs to;
        a new label opens the device's next trajectory (``None``: the current one)."""
        if label is None:
            current = self._db.execute("SELECT value FROM meta WHERE name = 'current'").fetchone()
            label = current[0] if current is not None else "0"
        label = str(label)
        row = self._db.execute("SELECT number, next_index, prev_x, prev_y FROM trajectories WHERE label = ?",
                               (label,)).fetchone()
        if row is None:
            number = self._meta("trajectories")
            self._db.execute("INSERT INTO trajectories VALUES (?, ?, 0, NULL, NULL)", (label, number))
            self._set("trajectories", number + 1)
            row = (number, 0, None, None)
        self._db.execute("INSERT OR REPLACE INTO meta VALUES ('current', ?)", (label,))
        previous = None if row[2] is None else (row[2], row[3])
        return label, row[0], row[1], previous

    def _check_budget(self, next_index: int, day: int) -> None:
        """Raise :class:`BudgetExhausted` if one more point overspends a cap (before any draw)."""
        import pandas as pd

        caps = self._caps
        if caps["trajectory"] is not None and next_index + 1 > caps["trajectory"]:
            raise BudgetExhausted("trajectory", "a new trajectory")
        if caps["day"] is not None:
            row = self._db.execute("SELECT points FROM days WHERE day = ?", (day,)).fetchone()
            if (0 if row is None else row[0]) + 1 > caps["day"]:
                raise BudgetExhausted("day", pd.Timestamp((day + 1) * _DAY_NS, tz="UTC").isoformat())
        if caps["lifetime"] is not None and self._meta("lifetime") + 1 > caps["lifetime"]:
            raise BudgetExhausted("lifetime", None)

    def report(self, lat, lon, time, trajectory=None) -> dict:
        """Release one fix and queue its report; returns the report (the columns of
        :mod:`tracs.collect.protocol`).

        ``trajectory`` names the fix's trajectory (any label; ``None``: the current
        one, the first being ``"0"``); a new label starts the device's next
        trajectory, numbered from 0 in order.  Raises :class:`BudgetExhausted` when a
        cap is spent — checked before anything is drawn — and ``ValueError`` for a fix
        outside the collection's box; a fix of the box outside the rectangle inscribed in
        it (the public region) moves onto the rectangle, as ``tracs perturb`` moves it.  The report and the advanced state (stream
        position, previous release, ledger, queue) are committed together.
        """
        ns = _nanoseconds(time)
        day = ns // _DAY_NS
        if not self._box.contains(float(lon), float(lat)):
            raise InputError(f"the fix ({float(lat)!r}, {float(lon)!r}) lies outside the collection's box "
                             f"{list(self.parameters.box)} (min_lon, min_lat, max_lon, max_lat)")
        x, y = self._to_metric.transform(np.array([float(lon)]), np.array([float(lat)]), errcheck=True)
        # a fix of the box outside its inscribed rectangle moves onto it, as in 'tracs perturb'
        moved = into_region(np.array([[float(x[0]), float(y[0])]]), self._model.region)[0]
        point = (float(moved[0, 0]), float(moved[0, 1]))
        with self.transaction():
            label, number, index, previous = self._trajectory(trajectory)
            self._check_budget(index, day)
            stream = self._streams.get(number)
            if stream is None:
                stream = self._streams[number] = stream_of(self.device_id, number)
            released, (i, j) = self._model.release_at(point, self._key, stream, index, previous)
            sequence = self._meta("next_sequence")
            rx, ry = float(released[0]), float(released[1])
            self._db.execute("UPDATE trajectories SET next_index = ?, prev_x = ?, prev_y = ? WHERE label = ?",
                             (index + 1, rx, ry, label))
            self._db.execute("INSERT INTO days VALUES (?, 1) ON CONFLICT(day) DO UPDATE SET points = points + 1",
                             (day,))
            self._set("lifetime", self._meta("lifetime") + 1)
            self._set("next_sequence", sequence + 1)
            self._db.execute("INSERT INTO queue VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                             (sequence, number, index, ns, rx, ry, int(i), int(j)))
        return {"sequence": sequence, "trajectory": number, "index": index, "time": ns, "x": rx, "y": ry,
                "i": int(i), "j": int(j), "epsilon": self.parameters.epsilon}

    # -- the queue ------------------------------------------------------------------------
    def queued(self, limit: int | None = None) -> dict:
        """The reports not yet acknowledged, oldest first, as the columns of a batch."""
        sql = "SELECT sequence, trajectory, idx, time, x, y, i, j FROM queue ORDER BY sequence"
        rows = self._db.execute(sql + ("" if limit is None else f" LIMIT {int(limit)}")).fetchall()
        names = ("sequence", "trajectory", "index", "time", "x", "y", "i", "j")
        columns = {name: [row[k] for row in rows] for k, name in enumerate(names)}
        columns["epsilon"] = [self.parameters.epsilon] * len(rows)
        return columns

    def batch(self, limit: int | None = None) -> dict:
        """A batch of queued reports, as ``POST /v1/reports`` takes it."""
        p = self.parameters
        return {"device": self.device_id, "protocol": p.protocol, "parameters": p.digest, "method": p.method,
                "reports": self.queued(limit)}

    def acknowledge(self, sequences) -> None:
        """Drop from the queue the reports the collector answered for (stored, or refused for good)."""
        with self.transaction():
            self._db.executemany("DELETE FROM queue WHERE sequence = ?", [(int(s),) for s in sequences])

    def upload(self, url: str, *, batch_size: int = 1000, retries: int = 5, backoff: float = 0.2,
               timeout: float = 30.0, client=None, body: str = "arrow") -> dict:
        """Send the queue to the collector at ``url`` in batches of ``batch_size``.

        Each batch is sent as Arrow IPC (``body="arrow"``, the default) or JSON (``"json"``).

        A batch is retried ``retries`` times, waiting ``backoff``·2^k seconds, when the
        collector cannot be reached or answers 5xx; a report leaves the queue only once
        the collector answered for it (accepted, already stored, or rejected for a
        reason).  Returns the totals: ``sent``, ``accepted``, ``rejected`` by reason.
        Raises :class:`UploadError` on a 4xx answer (the collector's reason) or when
        the retries are spent (the queue keeps the reports).
        """
        import httpx

        if body not in ("arrow", "json"):
            raise InputError(f"body must be 'arrow' or 'json', got {body!r}")
        own = client is None
        client = httpx.Client(timeout=timeout) if own else client
        totals = {"sent": 0, "accepted": 0, "rejected": {}}
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        try:
            while True:
                batch = self.batch(batch_size)
                if not batch["reports"]["sequence"]:
                    return totals
                answer = _post(client, url.rstrip("/") + "/v1/reports", batch, headers, retries, backoff, body)
                rejected = answer.get("rejected", [])
                for item in rejected:
                    totals["rejected"][item["reason"]] = totals["rejected"].get(item["reason"], 0) + 1
                totals["sent"] += len(batch["reports"]["sequence"])
                totals["accepted"] += int(answer.get("accepted", 0))
                self.acknowledge(batch["reports"]["sequence"])
        finally:
            if own:
                client.close()


def _post(client, url: str, batch: dict, headers: dict, retries: int, backoff: float, body: str) -> dict:
    """POST ``batch`` (as Arrow IPC or JSON); retry on network errors and 5xx with exponential back-off."""
    import httpx

    if body == "arrow":
        options = {"content": encode_arrow(batch), "headers": {**headers, "Content-Type": ARROW_TYPE}}
    else:
        options = {"json": batch, "headers": headers}

    last = None
    for attempt in range(retries + 1):
        if attempt:
            _time.sleep(backoff * 2 ** (attempt - 1))
        try:
            response = client.post(url, **options)
        except httpx.TransportError as exc:
            last = f"{type(exc).__name__}: {exc}"
            continue
        if response.status_code >= 500:
            last = f"HTTP {response.status_code}: {response.text[:200]}"
            continue
        if response.status_code >= 400:
            raise UploadError(f"the collector refused the batch: HTTP {response.status_code}: {response.text[:500]}")
        return response.json()
    raise UploadError(f"no answer from {url} after {retries + 1} attempts ({last}); the reports stay queued")
