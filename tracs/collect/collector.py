"""The collector's logic, apart from HTTP: enrol devices, check and store batches, count.

:meth:`Collector.ingest` takes one device's batch (decoded JSON), checks the batch's
fields (protocol version, parameters digest, method, columns of equal lengths and
the right types), then every report at once (:mod:`tracs.collect.checks`), stores
the accepted ones and answers with the accepted count and the reason of each
rejected report.  A :class:`Refused` is a batch refused as a whole (the HTTP status
and the reason): nothing is stored.
"""

from __future__ import annotations

import hmac
import queue
import threading
import time
from concurrent.futures import Future

import numpy as np

from ..errors import TracsError
from .checks import REASONS, cap_rejections, check_reports, referenced
from .lattice_counts import LatticeCounts
from .protocol import COLUMNS, INTEGER_COLUMNS, device_token

__all__ = ["Collector", "Refused", "LATENCY_BUCKETS"]

#: upper bounds (seconds) of the batch latency histogram
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
#: most reports in one batch
MAX_REPORTS = 100_000


class Refused(TracsError):
    """A request refused as a whole: ``status`` (HTTP) and ``reason``."""

    def __init__(self, status: int, reason: str):
        super().__init__(reason)
        self.status, self.reason = status, reason


class _GroupWriter:
    """The one writer of the store: batches waiting when a transaction ends are checked and
    written together in the next one (group commit), then answered.

    Each batch is checked against everything written before it, the batches of the same
    transaction included (one connection sees its own writes); a batch is answered only
    after its transaction is committed.  Waiting batches share one synced commit, so
    concurrent uploads cost one ``fsync`` per group instead of one per batch.
    """

    MAX_GROUP = 64

    def __init__(self, collector):
        self._collector = collector
        self._queue = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="tracs-collect-writer", daemon=True)
        self._thread.start()

    def submit(self, device: str, columns: dict) -> Future:
        future = Future()
        self._queue.put((device, columns, future))
        return future

    def _run(self) -> None:
        while True:
            group = [self._queue.get()]
            while len(group) < self.MAX_GROUP:
                try:
                    group.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            group.sort(key=lambda item: item[0])  # devices' locks in one order (stable: a device's batches in turn)
            store = self._collector.store
            with store.writing():  # the batches are counted for the estimate as their transaction commits
                try:
                    with store.transaction():
                        reasons = [self._collector._store(device, columns) for device, columns, _ in group]
                except BaseException as exc:  # noqa: BLE001 - every waiting batch is answered with it
                    for _, _, future in group:
                        future.set_exception(exc)
                    continue
                for (_, columns, _), reason in zip(group, reasons):
                    self._collector.density.add(columns["i"][reason == 0], columns["j"][reason == 0])
            for (_, _, future), reason in zip(group, reasons):
                future.set_result(reason)


def _column(reports: dict, name: str, n: int) -> np.ndarray:
    """Column ``name`` as int64 or float64: a JSON list, or a NumPy column of an Arrow body."""
    values = reports.get(name)
    if not isinstance(values, (list, np.ndarray)):
        raise Refused(422, f"reports.{name}: a list (JSON) or a numeric column without nulls (Arrow) is needed")
    if len(values) != n:
        raise Refused(422, f"reports.{name} has {len(values)} values for {n} reports")
    integer = name in INTEGER_COLUMNS
    if isinstance(values, np.ndarray):
        array = values
    else:
        try:
            array = np.array(values)
        except (TypeError, ValueError, OverflowError):
            array = np.array([], dtype=object)
    kinds = "iu" if integer else "iuf"
    if n and array.dtype.kind not in kinds:
        raise Refused(422, f"reports.{name}: {'integers' if integer else 'numbers'} are needed")
    return array.astype(np.int64 if integer else np.float64, copy=False)


class Collector:
    """Checks and stores the reports of one collection.

    Parameters
    ----------
    parameters : tracs.collect.Parameters
    store : tracs.collect.storage.SQLiteStore
    admin_token : str or None
        The bearer token of the admin endpoints (``None``: they are closed).
    """

    #: most devices remembered as enrolled (then forgotten all at once, and read again)
    KNOWN = 1 << 16

    def __init__(self, parameters, store, admin_token: str | None = None):
        self.parameters, self.store, self.admin_token = parameters, store, admin_token
        self._secret = store.secret()
        self._digest = parameters.digest
        self._referenced = referenced(parameters.perturber())
        self._enrolled = set()  # devices found enrolled (never removed): checked without the database
        self.density = LatticeCounts(store, parameters)
        self._writer = _GroupWriter(self)
        self.latency = np.zeros(len(LATENCY_BUCKETS) + 1, dtype=np.int64)
        self.latency_sum = 0.0
        one = {name: np.zeros(1, dtype=np.int64 if name in INTEGER_COLUMNS else np.float64) for name in COLUMNS}
        check_reports(parameters, one, np.zeros(1, dtype=bool))  # perturber built, kernels loaded: not in a batch

    # -- access ---------------------------------------------------------------------------
    def token(self, device: str) -> str:
        return device_token(self._secret, device)

    def check_admin(self, authorization: str | None) -> None:
        if self.admin_token is None:
            raise Refused(403, "admin endpoints are closed: start the collector with --admin-token")
        if not authorization or not authorization.startswith("Bearer "):
            raise Refused(401, "admin endpoint: send 'Authorization: Bearer <admin token>'")
        if not hmac.compare_digest(authorization[7:].encode(), self.admin_token.encode()):
            raise Refused(403, "wrong admin token")

    def enroll(self, device) -> str:
        """Enrol ``device`` and return its upload token."""
        if not isinstance(device, str) or not device or len(device) > 256:
            raise Refused(422, "device: a non-empty id of at most 256 characters is needed")
        self.store.enroll(device)
        return self.token(device)

    def _check_device(self, device, authorization: str | None) -> None:
        if not isinstance(device, str) or not device:
            raise Refused(422, "device: the batch must name its device (a non-empty string)")
        if not authorization or not authorization.startswith("Bearer "):
            raise Refused(401, f"device {device!r}: send its token as 'Authorization: Bearer <token>'")
        if not self.known(device) and not self.store.enrolled(device):
            raise Refused(403, f"unknown device {device!r}: enrol it first (POST /v1/devices or "
                               "tracs serve --issue-token)")
        if not hmac.compare_digest(authorization[7:].encode(), self.token(device).encode()):
            raise Refused(403, f"wrong token for device {device!r}")
        if len(self._enrolled) >= self.KNOWN:
            self._enrolled.clear()
        self._enrolled.add(device)

    def known(self, device) -> bool:
        """Whether ``device`` was found enrolled before (then checking a batch reads no database)."""
        return isinstance(device, str) and device in self._enrolled

    # -- batches ---------------------------------------------------------------------------
    def _columns(self, batch) -> tuple[str, dict]:
        p = self.parameters
        if batch.get("protocol") != p.protocol:
            raise Refused(422, f"protocol version {batch.get('protocol')!r} is not served (version {p.protocol})")
        if batch.get("method") != p.method:
            raise Refused(422, f"method {batch.get('method')!r} is not the published {p.method!r}")
        if batch.get("parameters") != self._digest:
            raise Refused(422, "the batch was made under other parameters (digest differs): "
                               "fetch GET /v1/parameters")
        reports = batch.get("reports")
        if not isinstance(reports, dict) or not isinstance(reports.get("sequence"), (list, np.ndarray)):
            raise Refused(422, "reports: an object of columns is needed (" + ", ".join(COLUMNS) + ")")
        n = len(reports["sequence"])
        if n > MAX_REPORTS:
            raise Refused(413, f"a batch holds at most {MAX_REPORTS:,} reports, got {n:,}")
        return n, {name: _column(reports, name, n) for name in COLUMNS}

    def ingest(self, batch, authorization: str | None) -> dict:
        """Check and store one batch; the answer, once it is committed: ``accepted`` (the count)
        and ``rejected`` (sequence and reason of each rejected report)."""
        future, c, start = self.submit(batch, authorization)
        return self.answer(future.result(), c, start)

    def submit(self, batch, authorization: str | None) -> tuple[Future, dict, float]:
        """Check a batch's fields and hand it to the writer: ``(future of its reason codes, its
        columns, the time it came)``, for :meth:`answer`."""
        start = time.perf_counter()
        if not isinstance(batch, dict):
            raise Refused(422, "the body must be a JSON object {\"device\": ..., \"reports\": {...}}")
        device = batch.get("device")
        self._check_device(device, authorization)
        n, c = self._columns(batch)
        return self._writer.submit(device, c), c, start

    def answer(self, reason: np.ndarray, c: dict, start: float) -> dict:
        """The answer to a batch of columns ``c`` whose reports got ``reason`` (once committed)."""
        accepted = reason == 0
        bad = np.flatnonzero(~accepted)
        answer = {"accepted": int(accepted.sum()),
                  "rejected": [{"sequence": s, "reason": REASONS[r]}
                               for s, r in zip(c["sequence"][bad].tolist(), reason[bad].tolist())]}
        self._time(time.perf_counter() - start)
        return answer

    def _store(self, device: str, c: dict) -> np.ndarray:
        """Check one batch against the stored reports and ledger and write it (inside the writer's
        transaction); returns the reason code of each report."""
        self.store.lock_device(device)
        last = self.store.last_points(device, c["trajectory"]) if self._referenced else None
        reason = check_reports(self.parameters, c, self.store.stored(device, c["sequence"]), last)
        added = cap_rejections(self.parameters, c, reason, lambda cap, keys: self.store.spent(device, cap, keys))
        accepted = reason == 0
        codes, counts = np.unique(reason[~accepted], return_counts=True)
        self.store.commit(device, c, accepted, added,
                          {REASONS[k]: int(v) for k, v in zip(codes.tolist(), counts.tolist())}, last=self._referenced)
        return reason

    def _time(self, seconds: float) -> None:
        self.latency[np.searchsorted(LATENCY_BUCKETS, seconds)] += 1
        self.latency_sum += seconds

    # -- counts --------------------------------------------------------------------------
    def metrics(self) -> str:
        """The Prometheus text exposition: stored reports, rejections by reason, batch latency."""
        stored = self.store.count()
        lines = ["# HELP tracs_reports_stored Reports stored.", "# TYPE tracs_reports_stored gauge",
                 f"tracs_reports_stored {stored}",
                 "# HELP tracs_reports_accepted_total Reports accepted (each stored once).",
                 "# TYPE tracs_reports_accepted_total counter", f"tracs_reports_accepted_total {stored}",
                 "# HELP tracs_reports_rejected_total Reports rejected, by reason.",
                 "# TYPE tracs_reports_rejected_total counter"]
        lines += [f'tracs_reports_rejected_total{{reason="{reason}"}} {count}'
                  for reason, count in self.store.rejections().items()]
        lines += ["# HELP tracs_batch_seconds Time to check and store a batch.",
                  "# TYPE tracs_batch_seconds histogram"]
        cumulative = np.cumsum(self.latency)
        lines += [f'tracs_batch_seconds_bucket{{le="{b}"}} {cumulative[k]}' for k, b in enumerate(LATENCY_BUCKETS)]
        lines += [f'tracs_batch_seconds_bucket{{le="+Inf"}} {cumulative[-1]}',
                  f"tracs_batch_seconds_sum {self.latency_sum:.6f}", f"tracs_batch_seconds_count {cumulative[-1]}"]
        return "\n".join(lines) + "\n"
