"""Check that released values lie on a sampler's declared public lattice.

A mechanism that releases ``origin + k·spacing`` (integer ``0 <= k < count``)
cannot leak its input through the low-order bits of a floating-point output
(Mironov, CCS 2012): the set of possible outputs is fixed in advance.  A value
off the lattice is therefore a violation in itself, whatever its frequency.

Accepted declarations (the ``lattice`` attribute of a sampler or perturber):

* ``(origin, spacing, count)`` — or any object with those three attributes —
  for 1-D outputs;
* a pair of those, one per axis, for 2-D outputs;
* an object with ``contains(values) -> bool array`` for any other shape of
  lattice;
* a ``(direction, distance)`` pair (attributes ``direction`` and ``distance``)
  for perturbers that release a point about a public reference: the released
  *indices* (``lattice_indices``) are checked against the two lattices, and the
  released points must be one function of those indices (:class:`IndexedRelease`).
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError, InputTypeError
from ..methods import method_of

__all__ = ["declared_lattice", "off_lattice", "release_indices", "PointSet", "IndexedRelease", "is_indexed"]


def is_indexed(lattice) -> bool:
    """Whether ``lattice`` is a ``(direction, distance)`` pair checked through released indices."""
    return hasattr(lattice, "direction") and hasattr(lattice, "distance")


class IndexedRelease:
    """Bit-exact check of releases that are a public function of lattice indices.

    Call :meth:`record` with the released indices ``(n, k)`` (and, for points
    released about a previous release, that reference point as ``context``), then
    :meth:`contains` with the released points of the same draws.  A release passes
    when each index lies in its lattice and its point is, bit for bit, the point
    first seen with the same indices and context (across every batch so far):
    then the points carry no information beyond them.  Keys are a 64-bit mix of
    the context's and indices' bits, so two different keys share one with
    probability about ``n²/2^65`` (a false alarm, never a miss).
    """

    def __init__(self, lattices):
        self.counts = np.array([_triple(lat)[2] for lat in lattices], dtype=np.int64)
        self._runs = []  # sorted (keys, points) runs, each at most half the size of the one before
        self._pending = None

    def record(self, indices, context=None) -> None:
        idx = np.asarray(indices, dtype=np.int64).reshape(-1, len(self.counts))
        ctx = np.zeros((len(idx), 2)) if context is None else np.asarray(context, dtype=np.float64)
        self._pending = (idx, np.ascontiguousarray(ctx.reshape(len(idx), -1) + 0.0))

    def contains(self, values) -> np.ndarray:
        (idx, ctx), self._pending = self._pending, None
        values = np.asarray(values, dtype=np.float64).reshape(len(idx), -1)
        ok = np.all((idx >= 0) & (idx < self.counts), axis=1)
        key = _mix([*ctx.view(np.uint64).T, *np.clip(idx, 0, self.counts - 1).astype(np.uint64).T])
        order = np.argsort(key, kind="stable")  # earlier draws first within a key
        sorted_keys = key[order]
        first = np.r_[True, sorted_keys[1:] != sorted_keys[:-1]]
        new_keys, new_points = sorted_keys[first], values[order[first]]
        # the point first seen with each key: from an earlier batch (sorted runs), else this one's first
        reference = new_points.copy()
        seen = np.zeros(len(new_keys), dtype=bool)
        for keys, points in self._runs:
            pos = np.minimum(np.searchsorted(keys, new_keys), len(keys) - 1)
            hit = keys[pos] == new_keys
            reference[hit] = points[pos[hit]]
            seen |= hit
        same = np.empty(len(key), dtype=bool)
        same[order] = np.all(reference[np.cumsum(first) - 1] == values[order], axis=1)
        self._add(new_keys[~seen], new_points[~seen])
        return ok & same

    def _add(self, keys, points) -> None:
        """Keep the unseen keys: a new sorted run, merged with smaller-or-equal runs before it."""
        if len(keys) == 0:
            return
        self._runs.append((keys, points))
        while len(self._runs) > 1 and len(self._runs[-1][0]) >= len(self._runs[-2][0]):
            (k2, p2), (k1, p1) = self._runs.pop(), self._runs.pop()
            keys, points = np.concatenate([k1, k2]), np.concatenate([p1, p2])
            order = np.argsort(keys, kind="stable")
            self._runs.append((keys[order], points[order]))


def _mix(columns) -> np.ndarray:
    """A 64-bit hash of rows of uint64 words (splitmix64 finaliser per word)."""
    h = np.full(len(columns[0]), 0x9E3779B97F4A7C15, dtype=np.uint64)
    for col in columns:
        h = (h ^ col) * np.uint64(0xBF58476D1CE4E5B9)
        h ^= h >> np.uint64(31)
        h = h * np.uint64(0x94D049BB133111EB)
        h ^= h >> np.uint64(29)
    return h


class PointSet:
    """A finite public set of output points (e.g. the POIs a baseline releases) as a lattice.

    ``contains`` is an exact, bit-for-bit membership test, vectorised.
    """

    def __init__(self, points):
        pts = np.asarray(points, dtype=np.float64)
        if pts.ndim != 2 or pts.shape[1] != 2 or len(pts) == 0:
            raise InputError(f"points must have shape (m, 2) with m >= 1, got {pts.shape}")
        self._keys = np.unique((pts[:, 0] + 0.0) + 1j * (pts[:, 1] + 0.0))

    def __len__(self) -> int:
        return len(self._keys)

    def contains(self, values) -> np.ndarray:
        values = np.asarray(values, dtype=np.float64)
        keys = (values[:, 0] + 0.0) + 1j * (values[:, 1] + 0.0)
        pos = np.minimum(np.searchsorted(self._keys, keys), len(self._keys) - 1)
        return self._keys[pos] == keys


def declared_lattice(sampler, lattice=None):
    """The lattice to check: the one given, else the one the registry declares for the sampler's
    entry (:meth:`tracs.methods.Method.lattice_of`: None for POIs), else (a sampler no entry
    builds) its ``lattice`` attribute, else ``None``."""
    if lattice is not None:
        return lattice
    entry = method_of(sampler)
    if entry is not None:
        return entry.lattice_of(sampler)
    value = getattr(sampler, "lattice", None)
    return value() if callable(value) and not hasattr(value, "contains") else value


def _triple(lat):
    if all(hasattr(lat, a) for a in ("origin", "spacing", "count")):
        return float(lat.origin), float(lat.spacing), int(lat.count)
    try:
        origin, spacing, count = lat
        return float(origin), float(spacing), int(count)
    except (TypeError, ValueError) as exc:
        raise InputTypeError(
            "lattice must be (origin, spacing, count), a pair of those (one per axis) or an "
            f"object with contains(values), got {lat!r}"
        ) from exc


def _on_axis(values: np.ndarray, lat) -> np.ndarray:
    origin, spacing, count = _triple(lat)
    if not (np.isfinite(origin) and np.isfinite(spacing) and spacing > 0 and count >= 1):
        raise InputError(f"lattice needs a finite origin, spacing > 0 and count >= 1, got {lat!r}")
    with np.errstate(invalid="ignore", over="ignore"):
        k = np.rint((values - origin) / spacing)
        return (k >= 0) & (k < count) & (origin + k * spacing == values)


def _is_pair(lat) -> bool:
    try:
        return len(lat) == 2 and all(np.ndim(part) == 1 or hasattr(part, "spacing") for part in lat)
    except TypeError:
        return False


def off_lattice(values, lattice) -> tuple[int, object]:
    """Count the values that are not on ``lattice`` bit for bit; also return the first one.

    ``values`` is ``(n,)`` for 1-D outputs or ``(n, 2)`` for points.
    """
    values = np.asarray(values, dtype=np.float64)
    if is_indexed(lattice):
        raise InputTypeError("a (direction, distance) lattice is checked through IndexedRelease")
    if hasattr(lattice, "contains"):
        ok = np.asarray(lattice.contains(values), dtype=bool)
    elif values.ndim == 2 and _is_pair(lattice):
        ok = _on_axis(values[:, 0], lattice[0]) & _on_axis(values[:, 1], lattice[1])
    elif values.ndim == 2:
        ok = np.all(_on_axis(values, lattice), axis=1)
    else:
        ok = _on_axis(values, lattice)
    bad = np.flatnonzero(~ok)
    if len(bad) == 0:
        return 0, None
    first = values[bad[0]]
    return int(len(bad)), (tuple(float(v) for v in first) if values.ndim == 2 else float(first))


def release_indices(values, lattice) -> np.ndarray:
    """``(n, d)`` int64 indices of the released values on ``lattice`` (per axis), for the
    audit's low-bit events; without a per-axis lattice, the bits of the doubles themselves."""
    values = np.asarray(values, dtype=np.float64)
    cols = values[:, None] if values.ndim == 1 else values
    if lattice is not None and not hasattr(lattice, "contains") and not is_indexed(lattice):
        lats = lattice if values.ndim == 2 and _is_pair(lattice) else [lattice] * cols.shape[1]
        out = np.empty(cols.shape, dtype=np.int64)
        for axis, lat in enumerate(lats):
            origin, spacing, _ = _triple(lat)
            with np.errstate(invalid="ignore", over="ignore"):
                k = np.rint((cols[:, axis] - origin) / spacing)
            out[:, axis] = np.clip(np.nan_to_num(k), -2.0 ** 62, 2.0 ** 62).astype(np.int64)
        return out
    return np.ascontiguousarray(cols + 0.0).view(np.int64).reshape(cols.shape)
