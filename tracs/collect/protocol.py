"""What a report carries, how a batch of them is written, and the one release of a single fix.

A report is one released point: ``sequence`` (the device's count of reports, from
0: never reused), ``trajectory`` (the number of the device's trajectory, from 0),
``index`` (the point's position in it: its stream position), ``time`` (UTC,
nanoseconds since 1970), the released ``x``, ``y`` (metres, in the parameters'
CRS), the lattice indices ``i``, ``j`` they are made of and the ``epsilon`` spent.
A batch is one device's reports as columns::

    {"device": "007", "protocol": 1, "parameters": "<sha-256>", "method": "tracs-d",
     "reports": {"sequence": [...], "trajectory": [...], "index": [...], "time": [...],
                 "x": [...], "y": [...], "i": [...], "j": [...], "epsilon": [...]}}

The true point never leaves the device: a report is a function of the lattice
indices, the previous report of its trajectory and public parameters.
"""

from __future__ import annotations

import hashlib
import hmac

import numpy as np

__all__ = ["COLUMNS", "INTEGER_COLUMNS", "release_one", "device_token", "stream_of"]

#: the columns of a batch of reports, and their types
COLUMNS = ("sequence", "trajectory", "index", "time", "x", "y", "i", "j", "epsilon")
INTEGER_COLUMNS = ("sequence", "trajectory", "index", "time", "i", "j")


def stream_of(user: str, trajectory: int) -> np.ndarray:
    """The keyed stream of ``user``'s trajectory number ``trajectory`` (its ``trajectory``-th,
    from 0), as ``tracs perturb --seed`` names it: :func:`tracs.random.stream_ids` of the user's
    key repeated once per trajectory (:func:`tracs.cli._fast.user_keys` keys users by their id)."""
    from ..random import stream_ids

    return stream_ids([user] * (trajectory + 1))[-1:]


def release_one(model, point, random_key, stream, index: int, previous):
    """Release one fix with the library's perturber at stream position ``(stream, index)``.

    ``point`` is the fix in metres, ``previous`` the previous *release* of its
    trajectory (``None`` for its first point, whose reference is the public
    anchor).  Returns ``(released (2,), indices (2,))``, bit for bit what
    ``model.perturb_many`` of the whole trajectory releases for that point under
    the same key and stream.

    The perturber's own release (``_release``, the compiled kernel of the batch path)
    is called on one point with the offsets ``[0, −index, 1]``: the kernel numbers a
    point of trajectory ``t`` by ``position − (offsets[t] − offsets[0])``, so the point
    is drawn at ``index`` from the second stream; for a point after the first the
    kernel's reference is the row before it, ``out[−1]``, the one row of ``out``,
    which holds ``previous``.  No draw is made here and no mechanism is repeated.
    """
    from ..perturbers._base import KeyedSource
    from ..random import KeyedStreams

    coords = np.asarray(point, dtype=np.float64).reshape(1, 2)
    model.region.validate_points(coords, "point")
    offsets = np.array([0, -int(index), 1], dtype=np.int64)
    out = np.zeros((1, 2)) if previous is None else np.array(previous, dtype=np.float64).reshape(1, 2)
    streams = np.repeat(np.asarray(stream, dtype=np.uint64), 2)
    source = KeyedSource(KeyedStreams(random_key.kind, random_key.key, streams), offsets)
    released, indices = model._release(coords, offsets, source, indices=True, out=out)
    return released[0].copy(), indices[0].copy()


def device_token(secret: bytes, device: str) -> str:
    """The upload token of ``device``: HMAC-SHA-256 of its id under the collector's secret (hex)."""
    return hmac.new(secret, b"tracs.device\x00" + device.encode("utf-8"), hashlib.sha256).hexdigest()
