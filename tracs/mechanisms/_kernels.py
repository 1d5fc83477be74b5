"""Compiled single-pass sampling kernels for the optimal mechanisms (numba, cached).

Each kernel takes the inputs and pre-drawn uniforms — ``u[:n]`` chooses the
piece, ``u[n:]`` places the point — and performs exactly the floating-point
operations of the NumPy reference (``_sample`` of the mechanism) in the same
order, so both give bit-identical outputs for the same generator state.  Input
validation is fused into the same pass: the kernel returns the number of
inputs that are NaN or outside the domain, and the caller raises.

The piece is chosen with ``u_piece < side`` where ``side`` is the (small)
probability of the low-density part: with uniforms on the ``2^-53`` grid that
rounds the rare branch up, never to 0 (see
:class:`~tracs.mechanisms._base.PiecewiseConstantMechanism`).
"""

from __future__ import annotations


import numba
import numpy as np

__all__ = ["sample_classical", "sample_circular", "classical_one", "circular_one", "wrap_period", "run"]


@numba.njit(cache=True, nogil=True, inline="always")
def classical_one(x, u_piece, v, low, high, half, side, central_width, side_width):  # pragma: no cover
    """One OptimalClassical output for a valid ``x`` (``half`` is ``C`` on the unit interval,
    ``side`` the probability of the two side pieces)."""
    width = high - low
    s = (x - low) / width - half
    upper = 1.0 - 2.0 * half
    if s < 0.0:
        s = 0.0
    if s > upper:  # upper >= 1/2 > 0: no clash with the line above
        s = upper
    left = low + width * s
    # both candidates, then selects: a random branch would mispredict half the time
    # (two plain ifs above and this form of the select: TraCS-C's loop, which
    # inlines this function, ran 1.5 times faster than with ``elif`` and
    # ``z if z < left else …``; same results)
    inner = left + v * central_width
    z = low + v * side_width
    outer = z + central_width if z >= left else z
    y = outer if u_piece < side else inner
    return min(max(y, low), high)


@numba.njit(cache=True, nogil=True, inline="always")
def wrap_period(y, period):  # pragma: no cover
    """``y mod period`` in ``[0, period)`` for ``y`` in ``[−period, 2·period)``, as ``numpy.mod``.

    ``y − period`` is exact there (Sterbenz), like ``fmod``; a negative ``y`` gets
    ``+ period`` (rounded, as in ``numpy.mod``); a result of exactly ``period``
    (from a tiny negative) becomes 0, the same point.
    """
    if y < 0.0:
        y += period
    elif y >= period:
        y -= period
    if y >= period:
        y = 0.0
    return y


@numba.njit(cache=True, nogil=True, inline="always")
def circular_one(x, u_piece, v, period, half, side):  # pragma: no cover
    """One OptimalCircular output in ``[0, period)`` for a valid ``x`` (``side``: probability
    of the low-density arc)."""
    inner = x - half + v * (2.0 * half)
    outer = x + half + v * (period - 2.0 * half)
    y = outer if u_piece < side else inner
    # −0.0 becomes 0.0 as with numpy.mod
    return wrap_period(y, period) + 0.0


@numba.njit(cache=True, nogil=True)
def sample_classical(x, u, out, low, high, half, side, central_width, side_width):  # pragma: no cover
    """OptimalClassical on ``[low, high]`` over arrays; returns the count of invalid inputs."""
    n = x.size
    bad = 0
    for i in range(n):
        xi = x[i]
        if not (xi >= low and xi <= high):  # also catches NaN
            bad += 1
            out[i] = low
        else:
            out[i] = classical_one(xi, u[i], u[n + i], low, high, half, side, central_width, side_width)
    return bad


@numba.njit(cache=True, nogil=True)
def sample_circular(x, u, out, period, half, side):  # pragma: no cover
    """OptimalCircular on ``[0, period)`` over arrays; returns the count of invalid inputs."""
    n = x.size
    bad = 0
    for i in range(n):
        xi = x[i]
        if not (xi >= 0.0 and xi < period):  # also catches NaN
            bad += 1
            out[i] = 0.0
        else:
            out[i] = circular_one(xi, u[i], u[n + i], period, half, side)
    return bad


def run(kernel, x: np.ndarray, rng: np.random.Generator, *args) -> tuple[np.ndarray, int]:
    """Draw ``2·x.size`` uniforms, run ``kernel`` on the flattened input; returns ``(out, bad)``."""
    flat = np.ascontiguousarray(x, dtype=np.float64).reshape(-1)
    u = rng.random(2 * flat.size)
    out = np.empty(flat.size)
    bad = kernel(flat, u, out, *args)
    return out.reshape(x.shape), int(bad)
