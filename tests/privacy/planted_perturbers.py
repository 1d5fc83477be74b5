"""Perturbers with planted leaks that only a searching audit finds (test-only).

Each wraps TraCS-C at ε = 1 on the audit catalogue's 2 km × 1 km rectangle and
releases some points through TraCS-C at ε = 20 instead — on the same public
lattice, so the lattice check cannot see them; only the statistics can:

* ``band``: first points whose x lies in an interior band of 2 % of the width
  (``1200 ≤ x < 1240``);
* ``third``: the 3rd point of every trajectory, and no other;
* ``long``: every point of a trajectory of at least 12 points;
* ``near-vertex``: points 0 < d ≤ 30 m from the vertex (0, 0), not the vertex itself;
* ``keyed``: every point, but only on the keyed path of ``tracs perturb``
  (:func:`tracs.engine.perturb_many` with ``keys=``, which releases chunks through
  ``release_into``), or ``perturb_many`` given ``keys=``.
"""

from __future__ import annotations

import numpy as np

#: leak name -> (description, which points leak: f(coords, position, length, keyed) -> bool array)
LEAKS = {
    "band": ("ε = 20 on an interior band of 2 % of the width (1200 ≤ x < 1240 m)",
             lambda xy, pos, length, keyed: (xy[:, 0] >= 1200.0) & (xy[:, 0] < 1240.0)),
    "third": ("ε = 20 at the 3rd point only",
              lambda xy, pos, length, keyed: pos == 2),
    "long": ("ε = 20 on trajectories of 12 points or more",
             lambda xy, pos, length, keyed: length >= 12),
    "near-vertex": ("ε = 20 within 30 m of the vertex (0, 0), not at it",
                    lambda xy, pos, length, keyed: (np.hypot(xy[:, 0], xy[:, 1]) <= 30.0)
                    & (np.hypot(xy[:, 0], xy[:, 1]) > 0.0)),
    "keyed": ("ε = 20 on every point released on the keyed path",
              lambda xy, pos, length, keyed: np.full(len(xy), keyed)),
}


class PlantedLeak:
    """TraCS-C at ε whose points picked by ``LEAKS[name]`` are released at ``hot``·… ε = 20."""

    def __init__(self, name: str, epsilon: float = 1.0, hot: float = 20.0, band=None):
        from tracs import Rectangle, TraCSC

        self.name = name
        self.region = Rectangle(0.0, 0.0, 2000.0, 1000.0)
        self.base = TraCSC(self.region, epsilon)
        self.hot = TraCSC(self.region, hot)
        self.lattice = self.base.lattice
        self.privacy_spent = self.base.privacy_spent
        self.leaks = LEAKS[name][1]
        if band is not None:  # another band: (start, width) in metres of x
            start, width = band
            self.leaks = lambda xy, pos, length, keyed: (xy[:, 0] >= start) & (xy[:, 0] < start + width)

    round_to = None

    def perturb_many(self, coords, offsets=None, *, rng=None, keys=None):
        coords = np.asarray(coords, dtype=np.float64)
        offsets = np.asarray(offsets, dtype=np.int64)
        gen = np.random.default_rng(rng) if not isinstance(rng, np.random.Generator) else rng
        out = self.base.perturb_many(coords, offsets, rng=gen, keys=keys)
        hot = self.hot.perturb_many(coords, offsets, rng=gen, keys=keys)
        lengths = np.diff(offsets)
        pos = np.arange(len(coords)) - np.repeat(offsets[:-1], lengths)
        leak = self.leaks(coords, pos, np.repeat(lengths, lengths), keys is not None)
        out[leak] = hot[leak]
        return out

    def release_into(self, coords, offsets, streams, out):
        """The chunk path of :func:`tracs.engine.perturb_many` (keyed streams resolved)."""
        hot = np.empty_like(out)
        self.base.release_into(coords, offsets, streams, out)
        self.hot.release_into(coords, offsets, streams, hot)
        lengths = np.diff(offsets)
        pos = np.arange(len(coords)) - np.repeat(offsets[:-1], lengths)
        leak = self.leaks(coords, pos, np.repeat(lengths, lengths), True)
        out[leak] = hot[leak]
