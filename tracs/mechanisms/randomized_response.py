"""Mechanisms with a discrete output: k-ary randomized response and Duchi's mechanism.

Both offer ``pmf(y, x)``, vectorised ``sample(x, *, rng=None)``,
``expected_error(x, p)`` and ``worst_case_error(p)``.  Their guarantee is the
discrete form of ε-LDP: ``pmf(y, x1) <= e^ε · pmf(y, x2)`` for every output ``y``
and inputs ``x1, x2``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from numba import njit

from .._numba_cache import key_on_sources
from .._validation import MAX_EPSILON, as_float_array, check_epsilon, check_integer
from ..errors import InputError
from ..random import resolve_streams
from . import lattice_kernels as lk
from ..random.kernels import draw_u64_pair
from .band import threshold_compiled, uniform_below
from ._duchi_kernel import plus_minus_many, snapped_duchi
from ._base import check_error_power
from .closed_forms import lie_probability
from ._docs import MECHANISM_PARAMETERS, fill_doc
from ._domain import Categories, Interval
from ._numeric import logistic, rare_probability
from ._params import check_interval
from .lattice import Lattice, check_resolution, lattice_point, snap_weights



#: k-RR's words: 0 and 1 (one block) decide the lie and the other value; ties of the
#: lie extend from word 2, rejected integers are redrawn from word 64
_KRR_TIE, _KRR_REDRAW = 2, 64


@njit(cache=True, nogil=True)
def _krr_kernel(x, k, lie, kind, key, stream):  # pragma: no cover
    """k-RR over ``x`` (index = position), in two passes.

    Word 0's first 53 bits decide ``u < lie`` exactly (:func:`lk.below`); the low 32
    bits of word 1 give the other value, an exactly uniform one of ``0 … k − 2``
    (Lemire's multiply-and-reject, :func:`tracs.mechanisms.band.uniform_below`),
    shifted past ``x``.  A first pass without branches (vector code) settles every
    element whose draw needs no further word; the rest (a tie of ``u < lie`` or a
    possibly rejected integer: about ``(k − 1)·2^-32`` of them) take the exact
    scalar path with the same words, so both passes give the same numbers.
    """
    n = x.shape[0]
    out = np.empty(n, dtype=np.int64)
    top, fraction = threshold_compiled(lie)
    m = np.uint64(k - 1)
    wide = k - 1 >= 4294967296
    for i in range(n):
        w0, w1 = draw_u64_pair(kind, key, stream, i, 0)
        first, _ = lk.split_word(w0)
        prod = (w1 & np.uint64(0xFFFFFFFF)) * m
        r = np.int64(prod >> np.uint64(32))
        y = (r + 1 if r >= x[i] else r) if first < top else x[i]
        unsure = ((first == top) and fraction) or ((prod & np.uint64(0xFFFFFFFF)) < m) or wide
        out[i] = -1 if unsure else y
    for i in range(n):
        if out[i] < 0:
            w0, w1 = draw_u64_pair(kind, key, stream, i, 0)
            first, _ = lk.split_word(w0)
            y = x[i]
            if lk.below(first, lie, kind, key, stream, i, _KRR_TIE, False):
                other = uniform_below(k - 1, w1, kind, key, stream, i, _KRR_REDRAW)
                y = other + 1 if other >= x[i] else other
            out[i] = y
    return out


__all__ = ["KRR", "Duchi"]


@fill_doc(MECHANISM_PARAMETERS)
@dataclass(frozen=True, kw_only=True)
class KRR:
    """k-ary randomized response over the values ``0, 1, …, k-1``.

    Keeps the true value with probability ``e^ε/(e^ε + k − 1)``; otherwise reports
    one of the ``k − 1`` *other* values chosen uniformly, so each other value has
    probability ``1/(e^ε + k − 1)`` and the total lie probability is
    ``(k − 1)/(e^ε + k − 1)``.  The ratio of the two probabilities is exactly
    ``e^ε``: ε-LDP.  The value ``k`` itself is never returned.

    %(epsilon_parameters)s
    k : int
        Number of values, ``>= 2`` (integral floats such as ``6.0`` are accepted).

    Notes
    -----
    Errors use the 0/1 distance: ``expected_error(x, p)`` is the probability of
    reporting a wrong value, for either ``p``.  Probabilities are written as
    ``1/(1 + (k − 1)e^{-ε})`` and ``e^{-ε}/(1 + (k − 1)e^{-ε})``: no overflow for
    any ε.

    Sampling lies with probability exactly :attr:`lie_probability` (an exact
    comparison of a lazily read uniform, :mod:`tracs.mechanisms.lattice`), so lying
    stays possible and the realised ratio is ``e^ε`` up to one rounding, for every
    ε up to 700.

    References
    ----------
    Kairouz, Oh & Viswanath, "Extremal mechanisms for local differential
    privacy", NeurIPS 2014 (k-RR); ``docs/mechanisms.md`` §4.
    """

    epsilon: float
    k: int

    #: budgets accepted (ValueError beyond, naming the limit)
    min_epsilon = 1e-100
    max_epsilon = MAX_EPSILON

    def __post_init__(self):
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon, maximum=MAX_EPSILON))
        object.__setattr__(self, "k", check_integer(self.k, "k", 2, integral_floats=True))

    @property
    def input_domain(self) -> Categories:
        return Categories(self.k)

    @property
    def output_domain(self) -> Categories:
        return Categories(self.k)

    @property
    def keep_probability(self) -> float:
        """``e^ε/(e^ε + k − 1)``: probability of reporting the true value."""
        return 1.0 / (1.0 + (self.k - 1) * math.exp(-self.epsilon))

    @property
    def other_probability(self) -> float:
        """``1/(e^ε + k − 1)``: probability of each particular wrong value."""
        e = math.exp(-self.epsilon)
        return e / (1.0 + (self.k - 1) * e)

    @property
    def lie_probability(self) -> float:
        """``(k − 1)/(e^ε + k − 1)``: probability of reporting a wrong value."""
        return lie_probability(self.epsilon, self.k)

    @property
    def lie_threshold(self) -> float:
        """The uniform threshold of the lie branch (``u < lie_threshold``).

        :attr:`lie_probability` made representable: never 0, so lying stays
        possible however large ε is (see the class notes).
        """
        return rare_probability(self.lie_probability)

    def pmf(self, y, x) -> np.ndarray:
        """``P(Y = y | x)`` (broadcast over ``y`` and ``x``)."""
        x = self.input_domain.validate(x, "x")
        y = self.output_domain.validate(y, "y")
        return np.where(y == x, self.keep_probability, self.other_probability)

    @property
    def lattice(self) -> Lattice:
        """``(0, 1, k)``: reports are the integers ``0..k-1``."""
        return Lattice(0.0, 1.0, self.k)

    def lattice_pmf(self, x) -> np.ndarray:
        """The realised probability of every report given the category ``x``."""
        x = self.input_domain.validate(x, "x")
        row = np.full(self.k, self.lie_probability / (self.k - 1))
        row[int(x)] = 1.0 - self.lie_probability
        return row

    def sample(self, x, *, rng=None) -> np.ndarray:
        """One report per entry of ``x`` (int64 array of the same shape, values in ``0..k-1``).

        Lies with probability exactly :attr:`lie_probability` (an exact comparison
        of a lazily extended uniform), then reports a uniform one of the other
        ``k − 1`` values (Lemire's multiply-and-reject, exact); one compiled
        branch-free pass and an exact pass for the rare draws that need more words.
        """
        x = self.input_domain.validate(x, "x")
        flat = np.ascontiguousarray(x, dtype=np.int64).reshape(-1)
        ks = resolve_streams(rng, None, 1)
        out = _krr_kernel(flat, self.k, self.lie_probability, ks.kind, ks.key, np.uint64(ks.streams[0]))
        return out.reshape(x.shape)

    def expected_error(self, x, p: int = 1) -> np.ndarray:
        """``P(Y != x)`` (0/1 distance; the same for ``p = 1`` and ``p = 2``)."""
        check_error_power(p)
        x = self.input_domain.validate(x, "x")
        return np.full(x.shape, self.worst_case_error(p))

    def worst_case_error(self, p: int = 1) -> float:
        """``(k − 1)/(e^ε + k − 1)``, the same for every input."""
        check_error_power(p)
        return self.lie_probability


@fill_doc(MECHANISM_PARAMETERS)
@dataclass(frozen=True, kw_only=True)
class Duchi:
    """Duchi et al.'s binary mechanism for a value in ``[low, high]`` (default ``[-1, 1]``).

    On ``[-1, 1]`` the output is ``±C`` with ``C = (e^ε + 1)/(e^ε − 1) = 1/tanh(ε/2)``
    and ``P(+C | x) = 1/2 + x·tanh(ε/2)/2``; ``E[Y] = x`` (unbiased).  Other
    intervals are mapped affinely (``x' = (2x − low − high)/(high − low)``) and
    the output mapped back.

    Guarantee: ``P(y | x1) <= e^ε · P(y | x2)``; the probabilities are convex
    combinations ``w·σ(ε) + (1 − w)·σ(−ε)`` of the two logistic values, so the
    bound holds in floating point for every ε (``1 − tanh`` is never formed).
    The input is snapped to the public input lattice by randomised rounding and the
    less likely output chosen with exactly its probability (an exact comparison), so
    both outputs stay reachable for every input and every ε.

    %(interval_parameters)s

    References
    ----------
    Duchi, Jordan & Wainwright, "Minimax optimal procedures for locally private
    estimation", JASA 2018; ``docs/mechanisms.md`` §4.
    """

    epsilon: float
    low: float = -1.0
    high: float = 1.0
    resolution: float | None = None

    #: budgets accepted (ValueError beyond, naming the limit)
    min_epsilon = 1e-100
    max_epsilon = MAX_EPSILON

    def __post_init__(self):
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon, maximum=MAX_EPSILON))
        check_interval(self)
        check_resolution(self.resolution)

    @property
    def input_domain(self) -> Interval:
        return Interval(self.low, self.high)

    def _ends(self) -> tuple[float, float]:
        mid, half = (self.low + self.high) / 2.0, (self.high - self.low) / 2.0
        c = 1.0 / math.tanh(self.epsilon / 2.0)
        return mid - half * c, mid + half * c

    @property
    def outputs(self) -> tuple[float, float]:
        """The two possible outputs ``(mid − half·C, mid + half·C)``, as lattice values."""
        lo, step, _ = self.lattice
        return lo, float(lattice_point(lo, step, 1))

    @property
    def output_domain(self) -> Interval:
        return Interval(*self.outputs)

    def _plus_minus(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        w = (x - self.low) / (self.high - self.low)
        hi, lo = logistic(self.epsilon), logistic(-self.epsilon)
        return w * hi + (1.0 - w) * lo, w * lo + (1.0 - w) * hi

    def pmf(self, y, x) -> np.ndarray:
        """``P(Y = y | x)``; 0 for any ``y`` that is not one of :attr:`outputs`."""
        x = self.input_domain.validate(x, "x")
        y = as_float_array(y, "y")
        y, x = np.broadcast_arrays(y, x)
        plus, minus = self._plus_minus(x)
        lo, hi = self.outputs
        return np.where(y == hi, plus, np.where(y == lo, minus, 0.0))

    @property
    def input_lattice(self) -> Lattice:
        """The public points inputs are snapped to (randomised rounding)."""
        n = check_resolution(self.resolution)
        return Lattice(self.low, (self.high - self.low) / n, n + 1)

    @property
    def lattice(self) -> Lattice:
        """``(low output, high − low output, 2)``."""
        lo, hi = self._ends()
        return Lattice(lo, hi - lo, 2)

    def _plus_at(self, k) -> tuple[np.ndarray, np.ndarray]:
        """``(P+, P−)`` at the input lattice points ``k``: the doubles the sampler compares against."""
        inp = self.input_lattice
        k = np.asarray(k, dtype=np.int64).reshape(-1)
        pm = plus_minus_many(k, self.low, self.high, inp.spacing, logistic(self.epsilon), logistic(-self.epsilon))
        return pm[:, 0], pm[:, 1]

    def lattice_pmf(self, x) -> np.ndarray:
        """``[P(low output | x), P(high output | x)]``, the realised law (snapping included)."""
        x = self.input_domain.validate(x, "x")
        inp = self.input_lattice
        i, lam = snap_weights(float((x - inp.origin) / inp.spacing), inp.count - 1)
        rows = [np.array([m, p]) for p, m in (self._plus_at(np.array([i])), self._plus_at(np.array([i + 1])))]
        return ((1.0 - lam) * rows[0] + lam * rows[1]).reshape(2)

    def sample_index(self, x, *, rng=None) -> np.ndarray:
        """Lattice indices (0: the low output, 1: the high one) of :meth:`sample` (same draws).

        The input is snapped to :attr:`input_lattice`; the less likely output is
        then chosen with exactly its probability (an exact comparison), one
        compiled pass (:func:`tracs.mechanisms._duchi_kernel.snapped_duchi`).
        """
        x = self.input_domain.validate(x, "x")
        flat = np.ascontiguousarray(x, dtype=np.float64).reshape(-1)
        if flat.size >= 2 ** 32:
            raise InputError("at most 2^32 - 1 inputs per call")
        ks = resolve_streams(rng, None, 1)
        inp = self.input_lattice
        idx = snapped_duchi(flat, inp.count - 1, self.low, self.high, inp.spacing, logistic(self.epsilon),
                            logistic(-self.epsilon), ks.kind, ks.key, np.uint64(ks.streams[0]))
        return idx.reshape(x.shape)

    def sample(self, x, *, rng=None) -> np.ndarray:
        """One output per entry of ``x``: each entry is one of the two :attr:`outputs`.

        The values of :attr:`lattice` at :meth:`sample_index` (the same draws).
        """
        return lattice_point(*self.lattice[:2], self.sample_index(x, rng=rng))

    def expected_error(self, x, p: int = 1) -> np.ndarray:
        """``E|Y − x|^p`` in closed form."""
        p = check_error_power(p)
        x = self.input_domain.validate(x, "x")
        plus, minus = self._plus_minus(x)
        lo, hi = self.outputs
        return plus * np.abs(hi - x) ** p + minus * np.abs(x - lo) ** p

    def worst_case_error(self, p: int = 1) -> float:
        """Attained at the centre of the interval: ``(half·C)^p``."""
        p = check_error_power(p)
        return float(self.expected_error(np.array([(self.low + self.high) / 2.0]), p)[0])


key_on_sources(globals())  # cached kernels follow every source they compile in
