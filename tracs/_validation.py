"""Input validation and random-number-generator normalisation shared by all layers.

Validation happens once, at the public boundary, with messages that name the
offending argument.  Nothing here is random or stateful.
"""

from __future__ import annotations

import math
import numbers
import re

import numpy as np

from .errors import InputError, InputTypeError, TracsError

__all__ = ["as_generator", "check_epsilon", "as_float_array", "check_finite", "check_integer",
           "NotRealError", "MIN_EPSILON", "MAX_EPSILON", "as_batch", "as_trajectory", "as_points",
           "check_offsets", "column_key", "check_memory_budget"]

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
            raise InputError(f"rng seed must be non-negative, got {rng}")
        return np.random.default_rng(int(rng))
    raise InputTypeError(
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
        raise InputTypeError(f"{name} must be a real number, got {type(epsilon).__name__}")
    value = float(epsilon)
    if math.isnan(value) or math.isinf(value):
        raise InputError(f"{name} must be finite, got {value}")
    if value <= 0.0:
        raise InputError(f"{name} must be > 0, got {value}")
    if value < MIN_EPSILON:
        raise InputError(f"{name} = {value!r} is below the smallest supported budget "
                         f"{MIN_EPSILON:g}")
    if maximum is not None and value > maximum:
        raise InputError(f"{name} = {value:g} exceeds {maximum:g}, the largest budget sampled "
                         "exactly (every lattice probability stays a normal double); for "
                         f"epsilon >= ~200 the release is already a point mass at the input's "
                         "lattice point in practice")
    return value


def column_key(name) -> str:
    """The key column names are matched by: lower case, letters and digits only.

    ``"User ID"``, ``"user_id"`` and ``"userId"`` all give ``"userid"``; every reader,
    the POI files and the guess of a file's layout match header names by this key.
    """
    return re.sub(r"[^0-9a-z]", "", str(name).lower())


def check_finite(value, name: str) -> float:
    """Validate a finite real scalar parameter. Returns it as float."""
    _reject_complex(value, name)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InputTypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    if not math.isfinite(value):
        raise InputError(f"{name} must be finite, got {value}")
    return value


def check_integer(value, name: str, minimum: int = 1, *, integral_floats: bool = False) -> int:
    """Validate an integer parameter (a count, a number of categories): ``>= minimum``. Returns it as int.

    A bool is refused (it is not a count).  Anything that is not an integer raises
    :class:`~tracs.errors.InputTypeError`, floats included, unless ``integral_floats``
    lets a float holding a whole number (``6.0``) through; a value below ``minimum``
    raises :class:`~tracs.errors.InputError`.
    """
    kinds = numbers.Real if integral_floats else numbers.Integral
    if isinstance(value, bool) or not isinstance(value, kinds):
        raise InputTypeError(f"{name} must be an integer, got {type(value).__name__}")
    if not isinstance(value, numbers.Integral) and not (math.isfinite(value) and float(value).is_integer()):
        raise InputError(f"{name} must be an integer, got {value!r}")
    value = int(value)
    if value < minimum:
        raise InputError(f"{name} must be >= {minimum}, got {value}")
    return value


#: the units of a memory budget: powers of 1000 (B, kB, MB …) and of 1024 (KiB, MiB, GiB), any case
_MEMORY_UNITS = {"": 1, "b": 1, "k": 1e3, "kb": 1e3, "m": 1e6, "mb": 1e6, "g": 1e9, "gb": 1e9,
                 "t": 1e12, "tb": 1e12, "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30}


def check_memory_budget(memory) -> int | None:
    """A budget in bytes from ``None``, a positive number of bytes or a string such as ``"2GB"``.

    Units: B, kB, MB, GB, TB (powers of 1000) and KiB, MiB, GiB (powers of 1024), any case.
    """
    if memory is None:
        return None
    if isinstance(memory, str):
        match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z]*)\s*", memory)
        if match is None or match.group(2).lower() not in _MEMORY_UNITS:
            raise InputError(f"memory must be a number of bytes or a size such as '2GB', got {memory!r}")
        value = float(match.group(1)) * _MEMORY_UNITS[match.group(2).lower()]
    elif isinstance(memory, bool) or not isinstance(memory, (int, float, np.integer, np.floating)):
        raise InputTypeError(f"memory must be a number of bytes or a size such as '2GB', got "
                             f"{type(memory).__name__}")
    else:
        value = float(memory)
    if not np.isfinite(value) or value <= 0:
        raise InputError(f"memory must be a positive size, got {memory!r}")
    return int(value)


def as_float_array(x, name: str = "x") -> np.ndarray:
    """Convert ``x`` to a float64 array and reject NaN, infinite or complex entries.

    Complex input raises :class:`NotRealError` instead of being cast to its real
    part (NumPy's cast only warns).
    """
    arr = _real_array(x, name)
    if not np.all(np.isfinite(arr)):
        bad = int(np.count_nonzero(~np.isfinite(arr)))
        raise InputError(f"{name} contains {bad} NaN or infinite value(s)")
    return arr


def as_batch(coords, offsets=None, *, finite: bool = True):
    """Validate a batch of trajectories into ``(coords (N, 2), offsets (T+1,), as_list)``.

    ``coords`` is a flat ``(N, 2)`` array with ``offsets`` (non-decreasing
    integers from 0 to N; empty trajectories allowed), or, with ``offsets=None``,
    a list of ``(n_i, 2)`` arrays or a :class:`tracs.Batch` (checked when it was built:
    its arrays as they are).  ``finite=False`` leaves the check that every coordinate is
    finite to the caller (who checks it chunk by chunk).
    """
    if _is_batch(coords):
        if offsets is not None:
            raise InputTypeError("give offsets or a tracs.Batch (which has its own), not both")
        return coords.coords, coords.offsets, False
    if offsets is None:
        if isinstance(coords, np.ndarray) or not isinstance(coords, (list, tuple)):
            raise InputTypeError("offsets is required unless coords is a list of (n, 2) arrays")
        parts = [as_points(part, f"coords[{i}]", finite=finite) for i, part in enumerate(coords)]
        if not parts:
            raise InputError("coords is an empty list")
        lengths = np.array([len(p) for p in parts], dtype=np.int64)
        offsets = np.concatenate([[0], np.cumsum(lengths)])
        return np.ascontiguousarray(np.concatenate(parts, axis=0)), offsets, True
    flat = as_points(coords, "coords", finite=finite)
    return flat, check_offsets(offsets, len(flat)), False


def _is_batch(value) -> bool:
    """Whether ``value`` is a :class:`tracs.Batch` (by its class's mark: the batch's module
    imports this one, so it is not imported here)."""
    return getattr(type(value), "is_trajectory_batch", False) is True


def check_offsets(offsets, n: int, *, empty: bool = True) -> np.ndarray:
    """Validate the offsets of a batch of ``n`` points; return them as a new int64 array.

    ``offsets`` holds ``T + 1`` integers (no float, no bool) running from 0 to ``n``,
    non-decreasing: trajectory ``t`` is rows ``offsets[t]:offsets[t+1]``.  ``empty=False``
    also refuses an empty trajectory (two equal offsets), for callers to whom one is
    meaningless (the mean error of no point, a trajectory of no point).
    """
    off = np.asarray(offsets)
    if off.dtype == bool or not np.issubdtype(off.dtype, np.integer):
        raise InputTypeError(f"offsets must be an integer array, got dtype {off.dtype}")
    if off.ndim != 1 or off.size < 2:
        raise InputError("offsets must be a 1-D array of length T+1 >= 2")
    off = off.astype(np.int64)
    if off[0] != 0 or off[-1] != n:
        raise InputError(f"offsets must run from 0 to N={n}, got {off[0]} .. {off[-1]}")
    lengths = np.diff(off)
    if np.any(lengths < 0):
        raise InputError("offsets must be non-decreasing")
    if not empty and np.any(lengths == 0):
        raise InputError(f"{int(np.count_nonzero(lengths == 0))} trajectory(ies) are empty (two equal "
                         "offsets): each needs at least one point")
    return off


def as_trajectory(points) -> tuple[np.ndarray, np.ndarray]:
    """Validate one non-empty trajectory into ``(coords (n, 2), offsets [0, n])``."""
    pts = as_points(points)
    if len(pts) == 0:
        raise InputError("points is empty")
    return pts, np.array([0, len(pts)])


def _real_array(x, name: str) -> np.ndarray:
    """``x`` as a float64 array; complex input raises :class:`NotRealError`, non-numeric ``TypeError``."""
    if np.iscomplexobj(x):
        raise NotRealError(f"{name} must be real, got complex values")
    try:
        return np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputTypeError(f"{name} must be numeric, got {type(x).__name__}") from exc


def as_points(points, name: str = "points", *, leading: bool = False, finite: bool = True) -> np.ndarray:
    """Validate coordinate pairs: a real ``(n, 2)`` array (``leading=True``: any ``(..., 2)``
    array), every value finite unless ``finite=False``; return them as contiguous float64.

    Complex values raise :class:`NotRealError`, non-numeric ones ``InputTypeError``,
    NaN or infinite values and a wrong shape ``InputError``.  An empty array passes:
    callers that need points say so in their own words.
    """
    arr = _real_array(points, name)
    if (arr.ndim == 0 or arr.shape[-1] != 2) if leading else (arr.ndim != 2 or arr.shape[1] != 2):
        raise InputError(f"{name} must have shape ({'...' if leading else 'n'}, 2), got {arr.shape}")
    if finite and not np.all(np.isfinite(arr)):
        bad = int(np.count_nonzero(~np.isfinite(arr)))
        raise InputError(f"{name} contains NaN or infinite values ({bad} of {arr.size})")
    return np.ascontiguousarray(arr)
