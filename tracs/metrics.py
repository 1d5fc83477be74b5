"""Utility metrics: the average error (AE) of perturbed trajectories.

AE of one trajectory is the mean over its points of the Euclidean distance
between the true and the released point; the AE of a data set is the mean of
that over trajectories (each trajectory weighs the same, whatever its length),
as in the TraCS paper.  Distances are in the units of the coordinates: perturb
and measure in a metric projection to get metres.  ``normalize_by=`` gives the
paper's compatibility mode (coordinates min-max scaled to the unit square of a
region's bounding box), which distorts distances unless the box is a square.
"""

from __future__ import annotations

import numpy as np

from ._validation import as_float_array, check_offsets
from .errors import InputError, InputTypeError

__all__ = ["point_errors", "trajectory_errors", "average_error", "point_pairs"]


def point_pairs(true, perturbed) -> tuple[np.ndarray, np.ndarray]:
    """Validate true and released points: two finite float arrays of the same shape ``(N, 2)``."""
    a = as_float_array(true, "true")
    b = as_float_array(perturbed, "perturbed")
    if a.ndim != 2 or a.shape[1] != 2:
        raise InputError(f"true must have shape (N, 2), got {a.shape}")
    if a.shape != b.shape:
        raise InputError(f"true and perturbed differ in shape: {a.shape} vs {b.shape}")
    return a, b


def _pair(true, perturbed, normalize_by):
    offsets = None
    if isinstance(true, (list, tuple)) and not isinstance(perturbed, np.ndarray):
        if not isinstance(perturbed, (list, tuple)) or len(true) != len(perturbed):
            raise InputError("true and perturbed must be lists of the same length")
        if not true:
            raise InputError("no trajectories")
        offsets = np.concatenate([[0], np.cumsum([len(t) for t in true])]).astype(np.int64)
        true = np.concatenate([as_float_array(t, "true").reshape(-1, 2) for t in true])
        perturbed = np.concatenate([as_float_array(p, "perturbed").reshape(-1, 2) for p in perturbed])
    a, b = point_pairs(true, perturbed)
    if normalize_by is not None:
        xmin, ymin, xmax, ymax = _bounds(normalize_by)
        scale = np.array([xmax - xmin, ymax - ymin])
        a = (a - (xmin, ymin)) / scale
        b = (b - (xmin, ymin)) / scale
    return a, b, offsets


def _bounds(region):
    bounds = getattr(region, "bounds", region)
    try:
        xmin, ymin, xmax, ymax = (float(v) for v in bounds)
    except (TypeError, ValueError) as exc:
        raise InputTypeError("normalize_by must be a region or (xmin, ymin, xmax, ymax)") from exc
    if not (xmin < xmax and ymin < ymax):
        raise InputError(f"normalize_by has empty bounds {bounds!r}")
    return xmin, ymin, xmax, ymax


def point_errors(true, perturbed, *, normalize_by=None) -> np.ndarray:
    """Euclidean distance between each true and released point, shape ``(N,)``."""
    a, b, _ = _pair(true, perturbed, normalize_by)
    return np.hypot(a[:, 0] - b[:, 0], a[:, 1] - b[:, 1])


def trajectory_errors(true, perturbed, offsets=None, *, normalize_by=None) -> np.ndarray:
    """Mean point error of each trajectory, shape ``(T,)``.

    Parameters
    ----------
    true, perturbed : array_like, shape (N, 2), or lists of (n_i, 2) arrays
        The same points in the same order.
    offsets : array_like of int, shape (T+1,)
        Trajectory boundaries (omit for lists; omitted for arrays means one
        trajectory).  Empty trajectories raise ``ValueError``.
    normalize_by : region or (xmin, ymin, xmax, ymax), optional
        Compatibility mode: measure in coordinates scaled to the unit square.
    """
    a, b, list_offsets = _pair(true, perturbed, normalize_by)
    if list_offsets is not None:
        offsets = list_offsets
    if len(a) == 0:
        raise InputError("no points")
    off = np.array([0, len(a)]) if offsets is None else check_offsets(offsets, len(a), empty=False)
    err = np.hypot(a[:, 0] - b[:, 0], a[:, 1] - b[:, 1])
    sums = np.add.reduceat(err, off[:-1])
    return sums / np.diff(off)


def average_error(true, perturbed, offsets=None, *, normalize_by=None) -> float:
    """Average error (AE): the mean over trajectories of the mean point error.

    Without ``offsets`` (and for plain arrays) the input is one trajectory.  See
    :func:`trajectory_errors` for the parameters.
    """
    return float(np.mean(trajectory_errors(true, perturbed, offsets, normalize_by=normalize_by)))
