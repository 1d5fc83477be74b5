"""``tracs.audit``: check empirically that a one-dimensional sampler is ε-LDP.

The audit looks for a pair of inputs and an output event whose probabilities
differ by more than ``e^ε``, and bounds the privacy loss from below with exact
binomial confidence bounds (the approach of DP-Sniper, StatDP and Delta-Siege).
It can prove a sampler *wrong* (with the stated confidence); it cannot prove
it right — a pass means no evidence was found with the given budget.  It also
checks every output against the sampler's declared lattice, which rules out
leaks through the low-order bits of floating-point outputs.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ..errors import InputError, InputTypeError
from ._engine import check_audit_arguments, input_generator, run_audit, seed_sequence
from .candidates import circle_inputs, interval_inputs
from .lattice_check import declared_lattice

__all__ = ["audit", "sampler_call"]


def sampler_call(sampler, method: str):
    """``f(x, rng)`` for an object with ``method(x, rng=...)`` or a callable ``(x, rng) -> y``."""
    bound = getattr(sampler, method, None)
    if callable(bound):
        return lambda x, rng: bound(x, rng=rng)
    if callable(sampler):
        return sampler
    raise InputTypeError(
        f"sampler must have a {method}(x, rng=...) method or be a callable (x, rng) -> y, "
        f"got {type(sampler).__name__}"
    )


def draw_vectorised(call, batch, n, gen, shape, one):
    """Draw ``n`` outputs with one call on ``batch``; fall back to ``n`` calls of ``one()`` (each
    one value, or one trajectory's rows).

    Returns ``(outputs, vectorised)``.  The fallback is taken only when the
    array call raises ``TypeError``/``ValueError`` or returns the wrong shape.
    """
    try:
        out = np.asarray(call(batch, gen), dtype=np.float64)
        if out.shape == shape:
            return out, True
    except (TypeError, ValueError):
        pass
    out = np.concatenate([np.asarray(one(gen), dtype=np.float64).reshape((-1, *shape[1:])) for _ in range(n)])
    return out.reshape(shape), False


def _spacing(sampler, lattice):
    """The input lattice's spacing (half a cell apart is a candidate pair), else the declared one's."""
    inp = getattr(sampler, "input_lattice", None)
    if inp is not None and hasattr(inp, "spacing"):
        return float(inp.spacing)
    if lattice is not None and hasattr(lattice, "spacing"):
        return float(lattice.spacing)
    if isinstance(lattice, tuple) and len(lattice) == 3 and np.ndim(lattice[1]) == 0:
        return float(lattice[1])
    return None


def _domain_inputs(sampler, domain, spacing, gen):
    if domain is not None:
        try:
            lo, hi = (float(v) for v in domain)
        except (TypeError, ValueError) as exc:
            raise InputTypeError(f"domain must be a pair (lo, hi) of numbers, got {domain!r}") from exc
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            raise InputError(f"domain must be finite with lo < hi, got {domain!r}")
        return interval_inputs(lo, hi, spacing, gen)
    dom = getattr(sampler, "input_domain", None)
    if dom is None:
        raise InputTypeError("domain=(lo, hi) is required for a sampler without an input_domain")
    if hasattr(dom, "k"):  # categories 0..k-1: all pairs alike up to relabelling
        return [float(c) for c in range(min(int(dom.k), 4))]
    if hasattr(dom, "period"):  # circle [0, period): antipodes included
        return circle_inputs(float(dom.period), spacing, gen)
    return interval_inputs(float(dom.low), float(dom.high), spacing, gen)


def _check_inputs(inputs):
    arr = np.asarray(inputs, dtype=np.float64)
    if arr.ndim != 1 or len(arr) < 2:
        raise InputError(f"inputs must be a 1-D sequence of at least 2 values, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise InputError("inputs must be finite")
    return list(arr)


def audit(sampler, epsilon, *, domain=None, inputs=None, samples: int = 100_000,
          confidence: float = 0.99, lattice=None, bins: int = 48, rng=0):
    """Audit a one-dimensional sampler claimed to be ε-LDP.

    Parameters
    ----------
    sampler : object with ``sample(x, *, rng)``, or callable ``(x, rng) -> y``
        Called with an array ``np.full(n, x)`` and a ``numpy.random.Generator``
        once per input and half; a callable that rejects arrays (raises
        ``TypeError``/``ValueError`` or returns another shape) is called once per
        draw instead, and the report says so.
    epsilon : float
        The claimed budget.
    domain : (lo, hi), optional
        Input domain.  Inferred from ``sampler.input_domain`` for tracs mechanisms.
        On an interval or a circle the candidates are evenly spaced points (both
        ends included; the circle: four, antipodes included), 64 stratified random
        points (one in each 64th of the domain), adjacent doubles at both ends and
        at random points, a low-bit ladder, points half an input cell apart and
        points close to both ends (:mod:`.candidates`); categories: up to four.
    inputs : sequence of float, optional
        Candidate inputs to use instead.
    samples : int
        Draws per input in the search, and fresh draws per input of each of the
        (pair, event) hypotheses it keeps, to confirm them (:mod:`._engine`).
    confidence : float
        Confidence of the lower bound, in ``[0.5, 1)``.
    lattice : (origin, spacing, count) or object with ``contains``, optional
        Declared output lattice; default ``sampler.lattice``.  Without one the
        report has ``unverifiable_low_bits=True`` and never passes.
    bins : int
        Histogram bins for the non-atomic outputs.  Events also include the
        released lattice indices' low bits and parity (:mod:`.events`).
    rng : int, SeedSequence or None
        Seed of the audit's own draws (default 0: reproducible).

    Returns
    -------
    AuditReport
        ``violation`` is ``True`` when ``epsilon_lower_bound > epsilon`` — then
        the sampler is not ε-LDP, with probability at least ``confidence`` —
        or when an output is off the lattice.

    Notes
    -----
    Statistical guarantee: if the sampler is ε-LDP, a violation of the ε claim
    is reported with probability at most ``1 − confidence``, however many pairs
    and events the search tried (select on one set of draws, confirm the few
    best on fresh draws with exact Clopper–Pearson bounds, Bonferroni over them;
    see :mod:`tracs.privacy._engine`).
    """
    epsilon, samples, confidence = check_audit_arguments(epsilon, samples, confidence)
    if isinstance(bins, bool) or not isinstance(bins, numbers.Integral) or bins < 1:
        raise InputError(f"bins must be an int >= 1, got {bins!r}")
    call = sampler_call(sampler, "sample")
    lattice = declared_lattice(sampler, lattice)
    ss = seed_sequence(rng)
    candidates = (_check_inputs(inputs) if inputs is not None
                  else _domain_inputs(sampler, domain, _spacing(sampler, lattice), input_generator(ss)))

    def draw(x, n, gen):
        return (*draw_vectorised(call, np.full(n, x), n, gen, (n,), lambda g: call(x, g)), None)

    return run_audit(draw, candidates, epsilon, samples=samples, confidence=confidence,
                     lattice=lattice, rng=ss, bins=int(bins), label=float)
