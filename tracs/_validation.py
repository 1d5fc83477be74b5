"""Input validation and random-number-generator normalisation shared by all layers.

Validation happens once, at the public boundary, with messages that name the
offending argument.  Nothing here is random or stateful.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .errors import TracsError

__all__ = ["as_generator", "check_epsilon", "as_float_array", "check_finite", "check_positive_int",
           "NotRealError", "MIN_EPSILON", "MAX_EPSILON", "as_batch", "as_trajectory"]

#: the smallest privacy budget accepted anywhere: far below it every release is
#: indistinguishable from releasing nothing, and constants such as ``1/ε²`` leave
#: the floating-point range (``ε = 5e-324`` makes ``1/ε`` overflow)
MIN_EPSILON = 1e-100

#: the largest privacy budget a mechanism samples exactly: every probability of
#: every lattice point stays a normal double (``e^{-ε}`` and the cell masses above
#: ``2^-1000``).  A ValueError names this limit.
MAX_EPSILON = 700.0


class NotRealError(TracsError, TypeError, ValueError):
    """A complex (or otherwise non-real) number where a real one is needed.

    Both a ``TypeError`` (wrong type) and a ``ValueError`` (wrong value: a complex
    number is a number), so either ``except`` clause catches it.
    """


def read_only(a: np.ndarray) -> np.ndarray:
    """A read-only view of ``a`` (no copy).

    The compiled kernels take their input arrays read-only: numba compiles one
    version of a kernel per writability of its arguments, so giving every call the
    same kind keeps one compiled kernel for arrays the caller owns and for read-only
    ones (pandas' copy-on-write frames, memory-mapped files).
    """
    view = a.view()
    view.flags.writeable = False
    return view


def _reject_complex(value, name: str) -> None:
    if isinstance(value, numbers.Complex) and not isinstance(value, numbers.Real):
        raise NotRealError(f"{name} must be a real number, got the complex number {value!r}")


def as_generator(rng=None) -> np.random.Generator:
    """Return a :class:`numpy.random.Generator` for ``rng``.

    Parameters
    ----------
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator
        ``None`` seeds a fresh generator from the operating system's entropy
        (the right choice for deployment); an int or a ``SeedSequence`` gives a
        reproducible stream; a ``Generator`` is used as it is.

    Notes
    -----
    NumPy's generators (PCG64) are statistically strong but not
    cryptographically secure.  For deployment against an adversary who may
    observe many outputs, pass ``None`` (fresh OS entropy per call) or a
    generator built on ``numpy.random.SeedSequence(secrets.randbits(128))``.
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or isinstance(rng, np.random.SeedSequence):
        return np.random.default_rng(rng)
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool):
        if rng < 0:
            raise ValueError(f"rng seed must be non-negative, got {rng}")
        return np.random.default_rng(int(rng))
    raise TypeError(
        "rng must be None, a non-negative int, a numpy.random.SeedSequence or a "
        f"numpy.random.Generator, got {type(rng).__name__}"
    )


def check_epsilon(epsilon, name: str = "epsilon", *, maximum: float | None = None) -> float:
    """Validate a privacy parameter: a finite real number in ``[MIN_EPSILON, maximum]``.

    ``maximum`` is ``None`` (no upper limit: a budget per trajectory, shared out
    later) or the largest value the caller samples exactly (:data:`MAX_EPSILON`
    for the mechanisms); the message names the limit.  Complex numbers raise
    :class:`NotRealError`; NaN, infinities, negatives, zero and values below
    :data:`MIN_EPSILON` (``5e-324`` included) raise ``ValueError``.
    """
    _reject_complex(epsilon, name)
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(epsilon).__name__}")
    value = float(epsilon)
    if math.isnan(value) or math.isinf(value):
        raise ValueError(f"{name} must be finite, got {value}")
    if value <= 0.0:
        raise ValueError(f"{name} must be > 0, got {value}")
    if value < MIN_EPSILON:
        raise ValueError(f"{name} = {value!r} is below the smallest supported budget "
                         f"{MIN_EPSILON:g}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} = {value:g} exceeds {maximum:g}, the largest budget sampled "
                         "exactly (every lattice probability stays a normal double); for "
                         f"epsilon >= ~200 the release is already a point mass at the input's "
                         "lattice point in practice")
    return value


def check_finite(value, name: str) -> float:
    """Validate a finite real scalar parameter. Returns it as float."""
    _reject_complex(value, name)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    return value


def check_positive_int(value, name: str) -> int:
    """Validate a count: an integer (not a bool) ``>= 1``. Returns it as int.

    Raises ``TypeError`` for anything that is not an integer (floats included) and
    ``ValueError`` for an integer below 1.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {value}")
    return int(value)


def as_float_array(x, name: str = "x") -> np.ndarray:
    """Convert ``x`` to a float64 array and reject NaN, infinite or complex entries.

    Complex input raises :class:`NotRealError` instead of being cast to its real
    part (NumPy's cast only warns).
    """
    arr = _real_array(x, name)
    if not np.all(np.isfinite(arr)):
        bad = int(np.count_nonzero(~np.isfinite(arr)))
        raise ValueError(f"{name} contains {bad} NaN or infinite value(s)")
    return arr


def as_batch(coords, offsets=None, *, finite: bool = True):
    """Validate a batch of trajectories into ``(coords (N, 2), offsets (T+1,), as_list)``.

    ``coords`` is a flat ``(N, 2)`` array with ``offsets`` (non-decreasing
    integers from 0 to N; empty trajectories allowed), or, with ``offsets=None``,
    a list of ``(n_i, 2)`` arrays.  ``finite=False`` leaves the check that every
    coordinate is finite to the caller (who checks it chunk by chunk).
    """
    if offsets is None:
        if isinstance(coords, np.ndarray) or not isinstance(coords, (list, tuple)):
            raise TypeError("offsets is required unless coords is a list of (n, 2) arrays")
        parts = [_as_xy(part, f"coords[{i}]", finite) for i, part in enumerate(coords)]
        if not parts:
            raise ValueError("coords is an empty list")
        lengths = np.array([len(p) for p in parts], dtype=np.int64)
        offsets = np.concatenate([[0], np.cumsum(lengths)])
        return np.ascontiguousarray(np.concatenate(parts, axis=0)), offsets, True
    flat = _as_xy(coords, "coords", finite)
    off = np.asarray(offsets)
    if off.dtype == bool or not np.issubdtype(off.dtype, np.integer):
        raise TypeError(f"offsets must be an integer array, got dtype {off.dtype}")
    if off.ndim != 1 or off.size < 2:
        raise ValueError("offsets must be a 1-D array of length T+1 >= 2")
    off = off.astype(np.int64)
    if off[0] != 0 or off[-1] != len(flat):
        raise ValueError(f"offsets must run from 0 to N={len(flat)}, got {off[0]} .. {off[-1]}")
    if np.any(np.diff(off) < 0):
        raise ValueError("offsets must be non-decreasing")
    return flat, off, False


def as_trajectory(points) -> tuple[np.ndarray, np.ndarray]:
    """Validate one non-empty trajectory into ``(coords (n, 2), offsets [0, n])``."""
    pts = _as_xy(points, "points")
    if len(pts) == 0:
        raise ValueError("points is empty")
    return pts, np.array([0, len(pts)])


def _real_array(x, name: str) -> np.ndarray:
    """``x`` as a float64 array; complex input raises :class:`NotRealError`, non-numeric ``TypeError``."""
    if np.iscomplexobj(x):
        raise NotRealError(f"{name} must be real, got complex values")
    try:
        return np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be numeric, got {type(x).__name__}") from exc


def _as_xy(points, name, finite: bool = True):
    arr = _real_array(points, name)
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise ValueError(f"{name} must have shape (n, 2), got {arr.shape}")
    if finite and not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return np.ascontiguousarray(arr)
