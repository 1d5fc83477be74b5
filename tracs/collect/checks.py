"""The collector's checks of a batch of reports, all at once with NumPy (no loop over reports).

Every report of a batch gets a reason code (0: accepted), the first that applies:
its ε is not the published one; its lattice indices or its point are not on the
published lattice; its point lies outside the public region; its sequence,
trajectory or index is negative; it repeats a sequence of the same batch; the
collector stored its sequence before (a re-sent report: answered, stored once);
it would overspend a budget cap of the device's ledger, which the collector keeps
too (so a modified device cannot overspend); TraCS-D: its reference — the report
before it in its trajectory — is neither in the batch nor the last report the
collector stored of that trajectory, so the report cannot be checked exactly.  The
batch-level fields (protocol version, parameters digest, method) are checked by
:mod:`tracs.collect.collector`.
"""

from __future__ import annotations

import numpy as np

from ..methods import POLAR, lattice_kind
from .published import CAPS

__all__ = ["REASONS", "check_reports", "cap_rejections", "DAY_NS"]

DAY_NS = 86_400 * 10**9
#: reason codes (index) and their text; 0 is accepted
REASONS = ("accepted", "epsilon is not the published one", "not on the published lattice",
           "outside the region", "negative sequence, trajectory or index", "repeated in the batch",
           "already stored", "trajectory cap spent", "day cap spent", "lifetime cap spent",
           "the report before it in its trajectory is not stored")
_EPSILON, _LATTICE, _REGION, _POSITION, _REPEATED, _STORED, _UNREFERENCED = 1, 2, 3, 4, 5, 6, 10
_CAP = {name: 7 + k for k, name in enumerate(CAPS)}


def _first(reason: np.ndarray, bad: np.ndarray, code: int) -> None:
    """Give ``code`` to the reports that are ``bad`` and have no reason yet."""
    reason[(reason == 0) & bad] = code


def referenced(model) -> bool:
    """Whether ``model`` releases each point about a reference (TraCS-D: the previous release): its
    registry entry's lattice is a ``(direction, distance)`` pair (:data:`tracs.methods.POLAR`)."""
    return lattice_kind(model) == POLAR


def _on_lattice(model, lattice, c, last) -> tuple[np.ndarray, np.ndarray]:
    """Whether each report's indices and point are a release of the published lattice, and
    (:func:`referenced` models) whether its reference is unknown (then it is not checked)."""
    (o0, h0, n0), (o1, h1, n1) = lattice
    i, j = c["i"], c["j"]
    ok = (i >= 0) & (i < n0) & (j >= 0) & (j < n1)
    ii, jj = np.where(ok, i, 0), np.where(ok, j, 0)
    if not referenced(model):  # coordinate lattices: the point is the cell's value
        return ok & (c["x"] == o0 + ii * h0) & (c["y"] == o1 + jj * h1), np.zeros(len(ok), dtype=bool)
    # direction-distance: a point is a release about its reference — the public anchor for a first
    # point, else the report before it in its trajectory, in the batch or the last one stored — to 1e-9
    # of the diameter (sines and cosines may differ in the last bits between libraries)
    order = np.lexsort((c["index"], c["trajectory"]))
    follows = np.zeros(len(order), dtype=bool)
    follows[1:] = (c["trajectory"][order][1:] == c["trajectory"][order][:-1]) & \
        (c["index"][order][1:] == c["index"][order][:-1] + 1)
    reference = np.full((len(order), 2), np.nan)
    reference[c["index"] == 0] = model.anchor_point
    later = order[1:][follows[1:]]
    reference[later, 0], reference[later, 1] = c["x"][order[:-1][follows[1:]]], c["y"][order[:-1][follows[1:]]]
    if len(last):  # rows (trajectory, index, x, y), one per trajectory, sorted by trajectory
        at = np.minimum(np.searchsorted(last[:, 0], c["trajectory"]), len(last) - 1)
        hit = np.isnan(reference[:, 0]) & (last[at, 0] == c["trajectory"]) & (last[at, 1] == c["index"] - 1)
        reference[hit] = last[at[hit], 2:]
    unknown = np.isnan(reference[:, 0])
    checked = ok & np.isfinite(reference).all(axis=1) & model.region.contains(np.nan_to_num(reference))
    if checked.any():
        expected = model.lattice.points_about(reference[checked], ii[checked], jj[checked])
        near = np.hypot(expected[:, 0] - c["x"][checked], expected[:, 1] - c["y"][checked])
        ok[checked] = near <= 1e-9 * model.region.diameter
    return ok, unknown


def check_reports(params, c: dict, stored: np.ndarray, last=None) -> np.ndarray:
    """Reason codes of the reports ``c`` (columns as arrays); ``stored[k]``: report ``k``'s
    sequence is already stored for this device; ``last`` (:func:`referenced` models): rows
    ``(trajectory, index, x, y)`` of the last stored report of the batch's trajectories, sorted
    by trajectory.  Budget caps: :func:`cap_rejections`."""
    model = params.perturber()
    reason = np.zeros(len(c["sequence"]), dtype=np.int64)
    _first(reason, c["epsilon"] != params.epsilon, _EPSILON)
    on, unknown = _on_lattice(model, params.release["lattice"], c, np.zeros((0, 4)) if last is None else last)
    _first(reason, ~on, _LATTICE)
    points = np.column_stack([c["x"], c["y"]])
    finite = np.isfinite(points).all(axis=1)
    inside = np.zeros(len(points), dtype=bool)
    inside[finite] = model.region.contains(points[finite])
    _first(reason, ~inside, _REGION)
    _first(reason, (c["sequence"] < 0) | (c["trajectory"] < 0) | (c["index"] < 0), _POSITION)
    order = np.argsort(c["sequence"], kind="stable")
    repeated = np.zeros(len(reason), dtype=bool)
    repeated[order[1:]] = c["sequence"][order][1:] == c["sequence"][order][:-1]
    _first(reason, repeated, _REPEATED)
    _first(reason, stored, _STORED)
    _first(reason, unknown, _UNREFERENCED)
    return reason


def ledger_keys(c: dict) -> dict:
    """The ledger key of each report under each cap: its trajectory, its UTC day, 0 (lifetime)."""
    return {"trajectory": c["trajectory"], "day": np.floor_divide(c["time"], DAY_NS),
            "lifetime": np.zeros(len(c["time"]), dtype=np.int64)}


def cap_rejections(params, c: dict, reason: np.ndarray, spent) -> dict:
    """Reject (in ``reason``, in place) the reports that overspend a cap, in sequence order.

    ``spent(cap, keys) -> counts``: the points the collector already stored under each
    key of ``cap``.  Returns ``{cap: (keys, added)}``, the points the accepted
    reports add to the ledger of each cap the parameters set (a cap they leave unset is
    never checked: its ledger is not kept, as the parameters of a collection never change).
    """
    limits = params.cap_points()
    keys_of = ledger_keys(c)
    added = {}
    order = np.argsort(c["sequence"], kind="stable")
    for cap in CAPS:
        if limits[cap] is None:
            continue
        keys = keys_of[cap]
        live = order[reason[order] == 0]
        unique, inverse = np.unique(keys[live], return_inverse=True)
        if len(live):
            # rank of each live report among the batch's live reports of its key, in sequence order
            by_key = np.argsort(inverse, kind="stable")
            starts = np.flatnonzero(np.r_[True, inverse[by_key][1:] != inverse[by_key][:-1]])
            rank = np.empty(len(live), dtype=np.int64)
            rank[by_key] = np.arange(len(live)) - np.repeat(starts, np.diff(np.r_[starts, len(live)]))
            over = np.asarray(spent(cap, unique), dtype=np.int64)[inverse] + rank + 1 > limits[cap]
            reason[live[over]] = _CAP[cap]
            live = live[~over]
            unique, inverse = np.unique(keys[live], return_inverse=True)
        added[cap] = (unique, np.bincount(inverse, minlength=len(unique)))
    return added
