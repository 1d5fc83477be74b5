"""The public lattice every one-dimensional mechanism releases on, and its exact law.

A continuous sampler computed in binary64 leaks its input through the low bits
of its output (Mironov, CCS 2012).  Here no release is a raw double: every
mechanism exposes ``lattice = (origin, spacing, count)`` — public, fixed by the
mechanism's parameters and ``resolution``, never by the input — and releases
only values ``origin + k·spacing`` (:func:`lattice_point`, the one function that
computes them), ``0 <= k < count``.

How a release is made (proof in ``docs/privacy.md``):

1. **Snap the input** to the public *input lattice* (``resolution`` of the
   input domain's width) by randomised rounding: ``x`` between the points
   ``x_i <= x <= x_{i+1}`` becomes ``x_{i+1}`` with probability about
   ``(x − x_i)/spacing``, else ``x_i``.
2. **Release an output cell** from the row ``P(j | x_k)``: the mass the
   continuous mechanism at the lattice input ``x_k`` puts on output cell ``j``
   (differences of its cdf; unbounded outputs use a public window whose end
   cells absorb the tails).  Every step after snapping depends only on the
   integer ``k`` and public constants.

Each row is post-processing of an ε-LDP mechanism, so any two rows obey
``P(j | x_k) <= e^ε P(j | x_k')``; the release given ``x`` mixes two rows, and
``P(j | x) <= max_k P(j | x_k) <= e^ε min_k' P(j | x_k') <= e^ε P(j | x')``:
the mixing weight may carry any rounding error without affecting the bound.

Hooks for a new mechanism (the generic path): define ``_cdf``/``_sf`` (masses
left and right of an output edge given an input) and, for unbounded output,
``_output_window``; sampling is then exact inversion of the cumulative masses
with lazy uniforms (:mod:`tracs.mechanisms.lattice_kernels`), one bisection
over the cells per draw.  Piecewise-constant mechanisms (banded law), Laplace,
Staircase and Purkayastha (discrete offsets on an aligned lattice) override the
rows and the sampler with compiled closed-form kernels.
"""

from __future__ import annotations

import math
import numbers
from typing import NamedTuple

import numpy as np

from .._validation import NotRealError
from ..errors import InputError, InputTypeError
from ..random import resolve_streams
from . import lattice_kernels as lk

__all__ = ["Lattice", "lattice_point", "fit_spacing", "DEFAULT_RESOLUTION", "check_resolution", "LatticeMixin",
           "row_from_thresholds", "snap_indices", "TABLE_LIMIT", "check_table_bytes"]

#: default spacing as a fraction of the input domain's width (the circle: of its
#: period): 2^-20, about 1 mm on a 1 km side; utility is unchanged to 3
#: significant digits (``docs/privacy.md``)
DEFAULT_RESOLUTION = 2.0 ** -20
_MAX_CELLS = 2 ** 40
#: the most memory, in bytes, the tables of one mechanism or perturber may take (1 GiB):
#: a resolution, grid or budget needing more is refused up front (:func:`check_table_bytes`)
TABLE_LIMIT = 2 ** 30


class Lattice(NamedTuple):
    """Public output lattice: the values ``origin + k·spacing`` for ``0 <= k < count``."""

    origin: float
    spacing: float
    count: int

    def points(self, k=None) -> np.ndarray:
        """The lattice values at the indices ``k`` (all of them by default)."""
        return lattice_point(self.origin, self.spacing, np.arange(self.count) if k is None else k)

    def index(self, values) -> np.ndarray:
        """Indices of lattice values (rounded; for values the lattice released)."""
        return np.rint((np.asarray(values, dtype=np.float64) - self.origin) / self.spacing).astype(np.int64)


def lattice_point(origin: float, spacing: float, k) -> np.ndarray:
    """``origin + k·spacing`` in binary64: the one way a lattice value is computed."""
    return origin + np.asarray(k, dtype=np.float64) * spacing


def fit_spacing(low: float, high: float, intervals: int) -> float:
    """``(high − low)/intervals``, lowered by ulps until ``low + intervals·h <= high``.

    So the last lattice point never leaves the interval by a rounding.
    """
    h = (high - low) / intervals
    while low + intervals * h > high:
        h = math.nextafter(h, 0.0)
    return h


def check_resolution(resolution) -> int:
    """The number of input cells ``round(1/resolution)`` for a resolution in ``(0, 1/2]``."""
    if resolution is None:
        resolution = DEFAULT_RESOLUTION
    if isinstance(resolution, numbers.Complex) and not isinstance(resolution, numbers.Real):
        raise NotRealError(f"resolution must be a real number, got {resolution!r}")
    if isinstance(resolution, bool) or not isinstance(resolution, numbers.Real):
        raise InputTypeError(f"resolution must be a real number, got {type(resolution).__name__}")
    value = float(resolution)
    if not (math.isfinite(value) and 0.0 < value <= 0.5):
        raise InputError(f"resolution must lie in (0, 0.5] (a fraction of the domain width), got {value}")
    cells = int(round(1.0 / value))
    if cells > _MAX_CELLS:
        raise InputError(f"resolution {value:g} asks for more than 2^40 cells")
    return cells


def row_from_thresholds(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Realised cell probabilities from masses left (``F``) and right (``S``) of each edge.

    ``left`` and ``right`` have ``count + 1`` entries (edges ``e_0 .. e_count``);
    the ends are forced to ``F_0 = 0, F_count = 1, S_0 = 1, S_count = 0``.  The
    sampler reads ``u < 1/2`` against ``F`` and ``1 − u`` against ``S``, so cell
    ``j`` gets ``|[F_j, F_{j+1}) ∩ [0, ½)| + |[S_{j+1}, S_j) ∩ [0, ½)|``.
    """
    f = np.array(left, dtype=np.float64)
    s = np.array(right, dtype=np.float64)
    f[..., 0], f[..., -1], s[..., 0], s[..., -1] = 0.0, 1.0, 1.0, 0.0
    f, s = np.minimum(f, 0.5), np.minimum(s, 0.5)
    return np.maximum(0.0, f[..., 1:] - f[..., :-1]) + np.maximum(0.0, s[..., :-1] - s[..., 1:])


def snap_indices(t: np.ndarray, n: int, bits: np.ndarray) -> np.ndarray:
    """NumPy twin of :func:`tracs.mechanisms.lattice_kernels.snap` (same rule, same numbers)."""
    i = np.clip(np.floor(t), 0.0, n - 1.0)
    return (i + (bits < (t - i) * lk.SNAP_SCALE)).astype(np.int64)


def snap_weights(t: float, n: int) -> tuple[int, float]:
    """``(i, λ)``: a snapped input is ``i + 1`` with probability ``λ``, else ``i`` (realised law)."""
    i = min(max(math.floor(t), 0), n - 1)
    return int(i), min(1.0, math.ceil(max(t - i, 0.0) * lk.SNAP_SCALE) / lk.SNAP_SCALE)


def _size(nbytes: int) -> str:
    for unit, scale in (("TiB", 2 ** 40), ("GiB", 2 ** 30), ("MiB", 2 ** 20)):
        if nbytes >= scale:
            return f"{nbytes / scale:.3g} {unit}"
    return f"{nbytes} bytes"


def check_table_bytes(nbytes: int, what: str) -> None:
    """Refuse tables of more than :data:`TABLE_LIMIT` bytes, naming the limit and the size needed.

    Raises
    ------
    ValueError
        ``"<what> needs <size> of tables, more than the limit of 1 GiB ..."``.
    """
    if nbytes > TABLE_LIMIT:
        raise InputError(f"{what} needs {_size(int(nbytes))} of tables, more than the limit of "
                         f"{_size(TABLE_LIMIT)} (tracs.mechanisms.lattice.TABLE_LIMIT); use a coarser resolution")


def _check_enumerable(count: int) -> None:
    # two float64 values per lattice point (the cumulative masses and the row)
    check_table_bytes(16 * count, f"enumerating the lattice's {count} values (lattice_pmf, lattice_row)")


class _Draws:
    """Per-element randomness of a 1-D ``sample`` call: stream 0, index = position."""

    def __init__(self, rng, n: int):
        ks = resolve_streams(rng, None, 1)
        self.kind, self.key, self.stream = ks.kind, ks.key, np.uint64(ks.streams[0])
        self.first = np.empty(n, dtype=np.uint64)
        self.bits = np.empty(n, dtype=np.float64)
        lk.first_words(self.kind, self.key, self.stream, n, 0, self.first, self.bits)

    def below(self, idx: np.ndarray, c: np.ndarray, flip: bool) -> np.ndarray:
        """``u < c`` (exact) for the elements ``idx``; ``flip`` reads ``1 − u`` instead."""
        first = self.first[idx]
        if flip:
            first = first ^ lk.MASK53
        t = np.asarray(c, dtype=np.float64) * lk.TWO53
        top = np.floor(t)
        f = first.astype(np.float64)
        out = f < top
        tie = (f == top) & (t > 0.0) & (t < lk.TWO53)
        if tie.any():
            res = np.empty(int(tie.sum()), dtype=np.bool_)
            lk.resolve_ties(self.kind, self.key, self.stream, idx[tie].astype(np.uint64),
                            (t - top)[tie], np.full(res.size, flip), 1, res)
            out[tie] = res
        return out


class LatticeMixin:
    """Lattice API of the continuous mechanisms (mixed into :class:`Mechanism`)."""

    #: largest ε whose every lattice probability stays a normal double
    max_epsilon: float = 700.0
    #: smallest ε: 1e-100 where the number of cells does not grow with 1/ε; 1e-3 for
    #: mechanisms whose output window does (``docs/privacy.md``, "Extreme ε")
    min_epsilon: float = 1e-100

    # -- public lattice -----------------------------------------------------------------
    def _cells(self) -> int:
        return check_resolution(getattr(self, "resolution", None))

    @property
    def input_lattice(self) -> Lattice:
        """The public points inputs are snapped to (ends of an interval included)."""
        dom, n = self.input_domain, self._cells()
        if self._on_circle():
            return Lattice(0.0, dom.period / n, n)
        return Lattice(dom.low, dom.width / n, n + 1)

    def _on_circle(self) -> bool:
        return hasattr(self.input_domain, "period")

    def _output_window(self) -> tuple[float, float]:
        """``(A, B)``: the public interval the output cells tile (bounded outputs: the domain)."""
        dom = self.output_domain
        return float(dom.low), float(dom.high)

    def _grid(self) -> tuple[float, float, float, float, int]:
        """``(A, B, G, h, count)`` of the output cells: inner edges ``G + j·h``, ends ``A``, ``B``.

        On an interval the lattice points are ``A + j·h`` for ``j = 0..count−1`` with
        ``A + (count − 1)·h <= B`` (the ends included), each the centre of its cell
        (half cells at the ends); on a circle the points are ``j·h`` and the cells
        ``[(j − ½)h, (j + ½)h)``.
        """
        dom, n = self.input_domain, self._cells()
        if self._on_circle():
            h = dom.period / n
            return -h / 2.0, dom.period - h / 2.0, -h / 2.0, h, n
        A, B = self._output_window()
        intervals = min(_MAX_CELLS, max(1, int(round((B - A) / (dom.width / n)))))
        h = fit_spacing(A, B, intervals)
        return A, B, A - h / 2.0, h, intervals + 1

    @property
    def lattice(self) -> Lattice:
        """``(origin, spacing, count)`` of every value :meth:`sample` releases (public)."""
        A, _, _, h, count = self._grid()
        return Lattice(0.0 if self._on_circle() else A, h, count)

    # -- exact law ------------------------------------------------------------------------
    def _snap_t(self, x):
        inp = self.input_lattice
        return (np.asarray(x, dtype=np.float64) - inp.origin) / inp.spacing

    def _input_point(self, k) -> np.ndarray:
        inp = self.input_lattice
        if self._on_circle():
            return lattice_point(0.0, inp.spacing, np.mod(k, inp.count))
        return np.minimum(lattice_point(inp.origin, inp.spacing, k), self.input_domain.high)

    def lattice_row(self, k: int) -> np.ndarray:
        """``P(j | x_k)`` for every output index ``j``: the realised law at input lattice point ``k``."""
        inp = self.input_lattice
        if isinstance(k, bool) or not isinstance(k, numbers.Integral) or not 0 <= k < inp.count:
            raise InputError(f"k must be an input lattice index in 0..{inp.count - 1}, got {k!r}")
        return self._row(int(k))

    def _search(self):
        """``(A, B, G, h, count, left(e, x_k), right(e, x_k), finish(k, cell))`` of the generic path.

        On an interval the cells are the output cells and the masses the cdf and
        sf; on a circle the cells are offsets ``d = j − k`` (the window
        ``[(dmin − ½)h, (dmin − ½)h + period)``) and the masses come from
        ``_offset_masses(e, A)``.
        """
        if not self._on_circle():
            A, B, G, h, count = self._grid()
            return (A, B, G, h, count, self._cdf, self._sf, lambda k, cell: cell)
        n = self._cells()
        h = self.input_domain.period / n
        dmin = -(n // 2)
        A = (dmin - 0.5) * h
        return (A, A + self.input_domain.period, A, h, n,
                lambda e, xk: self._offset_masses(e, A)[0], lambda e, xk: self._offset_masses(e, A)[1],
                lambda k, cell: np.mod(k + dmin + cell, n))

    def _row(self, k: int) -> np.ndarray:
        """Generic row from the masses left and right of the cell edges."""
        A, B, G, h, count, left, right, finish = self._search()
        _check_enumerable(count)
        edges = self._edges(np.arange(count + 1), A, B, G, h, count)
        xk = np.full(edges.shape, float(self._input_point(k)))
        cells = row_from_thresholds(left(edges, xk), right(edges, xk))
        row = np.empty(count)
        row[finish(k, np.arange(count))] = cells
        return row

    def lattice_pmf(self, x) -> np.ndarray:
        """The exact probability of every lattice value given the scalar input ``x``.

        The mixture of the rows of the two input lattice points around ``x`` with
        the snapping weights the sampler realises.  Costs ``O(count)``: meant for
        small lattices (tests, audits).
        """
        x = self.input_domain.validate(x, "x")
        if x.ndim:
            raise InputError("lattice_pmf() takes one input value")
        n = self._cells()
        i, lam = snap_weights(float(self._snap_t(x)), n)
        inp = self.input_lattice
        row = (1.0 - lam) * self._row(i % inp.count)
        if lam > 0.0:
            row = row + lam * self._row((i + 1) % inp.count)
        return row

    def lattice_cumulative(self, b, k) -> np.ndarray:
        """``P(index < b | x_k)``: the row of input lattice point ``k`` summed below cell ``b``.

        ``b`` (boundaries, ``0 … count``) and ``k`` (input lattice indices) are 1-D;
        the result has shape ``(len(b), len(k))``.  Equal to cumulative sums of
        :meth:`lattice_row` without building the rows (the estimators' transition
        matrices use it on the default lattice).  This generic version evaluates the
        mechanism's cdf at the cell boundaries (the law of the generic path).
        """
        b = np.asarray(b, dtype=np.int64).reshape(-1)
        x = self._input_point(np.asarray(k, dtype=np.int64).reshape(-1))
        lat = self.lattice
        cum = np.empty((b.size, x.size))
        inner = (b > 0) & (b < lat.count)
        cum[b <= 0], cum[b >= lat.count] = 0.0, 1.0
        if inner.any():
            cum[inner] = self.cdf((lat.origin + (b[inner] - 0.5) * lat.spacing)[:, None], x[None, :])
            if self._on_circle():
                # cell 0 wraps: [−h/2, h/2); its part above period − h/2 lies below every boundary
                top = lat.origin + (lat.count - 0.5) * lat.spacing
                cum[inner] += 1.0 - self.cdf(np.full(x.shape, top), x)
        return np.clip(cum, 0.0, 1.0)

    # -- sampling -------------------------------------------------------------------------
    def sample_index(self, x, *, rng=None) -> np.ndarray:
        """Lattice indices of one release per entry of ``x`` (int64, same shape)."""
        x = self.input_domain.validate(x, "x")
        flat = np.ascontiguousarray(x, dtype=np.float64).reshape(-1)
        if flat.size >= 2 ** 32:
            raise InputError("at most 2^32 - 1 inputs per call")
        return self._sample_indices(flat, rng).reshape(x.shape)

    def _sample_indices(self, flat: np.ndarray, rng) -> np.ndarray:
        """Generic exact inversion: bisection over the cells with lazy uniforms."""
        draws = _Draws(rng, flat.size)
        k = snap_indices(self._snap_t(flat), self._cells(), draws.bits)
        xk = self._input_point(k)
        A, B, G, h, count, left_mass, right_mass, finish = self._search()
        out = np.empty(flat.size, dtype=np.int64)
        left = draws.first < np.uint64(lk.HALF53)
        for flip, sel in ((False, np.flatnonzero(left)), (True, np.flatnonzero(~left))):
            lo = np.zeros(sel.size, dtype=np.int64)
            hi = np.full(sel.size, count - 1, dtype=np.int64)
            while True:
                act = np.flatnonzero(lo < hi)
                if not act.size:
                    break
                if not flip:  # smallest j with u < F(e_{j+1})
                    mid = (lo[act] + hi[act]) // 2
                    c = left_mass(self._edges(mid + 1, A, B, G, h, count), xk[sel[act]])
                    less = draws.below(sel[act], c, False)
                    hi[act] = np.where(less, mid, hi[act])
                    lo[act] = np.where(less, lo[act], mid + 1)
                else:  # largest j with 1 − u < S(e_j)
                    mid = (lo[act] + hi[act] + 1) // 2
                    c = right_mass(self._edges(mid, A, B, G, h, count), xk[sel[act]])
                    less = draws.below(sel[act], c, True)
                    lo[act] = np.where(less, mid, lo[act])
                    hi[act] = np.where(less, hi[act], mid - 1)
            out[sel] = lo
        return finish(k, out)

    @staticmethod
    def _edges(j, A, B, G, h, count):
        return np.where(j <= 0, A, np.where(j >= count, B, G + j * h))

    def sample(self, x, *, rng=None) -> np.ndarray:
        """One private release per entry of ``x``: values of :attr:`lattice` (float, same shape).

        Parameters
        ----------
        x : array_like
            Inputs of any shape, inside :attr:`input_domain`.
        rng : None, int, SeedSequence, numpy.random.Generator, "secure" or tracs.random.Secure
            Source of randomness (:func:`tracs.random.resolve_streams`); element
            ``i`` of the flattened input uses point index ``i`` of stream 0.

        Returns
        -------
        numpy.ndarray
            ``origin + k·spacing`` of :attr:`lattice`, bit for bit.
        """
        lat = self.lattice
        return lattice_point(lat.origin, lat.spacing, self.sample_index(x, rng=rng))
