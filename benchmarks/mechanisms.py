"""Samples per second of every one-dimensional mechanism, against a naive per-sample loop.

``python -m benchmarks mechanisms [--quick]``: 10^7 inputs per mechanism (10^5
with ``--quick``).  The naive baseline is a plain Python loop drawing with
``random.random`` per sample (the textbook implementation of the same
mechanism), timed on 2·10^4 items in the same run; the ratio is
vectorised rate / naive rate.
"""

from __future__ import annotations

import math
import random

import numpy as np

from benchmarks._timing import Row, best_time, print_table
from tracs import mechanisms as m

NAIVE_ITEMS = 20_000


# -- naive per-sample samplers (pure Python, random.random) ------------------------------
def _naive_piecewise(mech):
    """Two-uniform sampler of a piecewise-constant mechanism, one sample at a time.

    Every such mechanism here places its central piece at ``l(x) = αx + β``,
    clamped to ``[l(low), l(high)]``; α and β are read off two inner inputs.
    """
    A, B = mech._support()
    width, mass = mech._central_width(), mech._central_mass()
    low, high = mech.input_domain.low, mech.input_domain.high
    x1, x2 = low + 0.4 * (high - low), low + 0.6 * (high - low)
    l1, l2 = (float(v) for v in mech._central_left(np.array([x1, x2])))
    alpha = (l2 - l1) / (x2 - x1)
    beta = l1 - alpha * x1
    floor, ceiling = (float(v) for v in mech._central_left(np.array([low, high])))

    def draw(x):
        left = min(max(alpha * x + beta, floor), ceiling)
        v = random.random()
        if random.random() < mass:
            return left + v * width
        z = A + v * ((B - A) - width)
        return z if z < left else z + width

    return draw


def _naive_circular(mech):
    c, period = mech.half_width, mech.period
    mass = 1.0 / (1.0 + math.exp(-mech.epsilon / 2.0))

    def draw(x):
        v = random.random()
        y = x - c + v * 2 * c if random.random() < mass else x + c + v * (period - 2 * c)
        y %= period
        return 0.0 if y >= period else y

    return draw


def _naive_purkayastha(mech):
    kappa, e = mech.concentration, math.expm1(-mech.epsilon)

    def draw(x):
        d = -math.log1p(random.random() * e) / kappa
        y = (x + d if random.random() < 0.5 else x - d) % mech.period
        return 0.0 if y >= mech.period else y

    return draw


def _naive_laplace(mech):
    scale = mech.scale

    def draw(x):
        u = random.random() - 0.5
        return x - scale * math.copysign(1.0, u) * math.log1p(-2.0 * abs(u))

    return draw


def _naive_staircase(mech):
    g, eps, d = mech.step_fraction, mech.epsilon, mech.sensitivity
    inner = mech._inner_probability()

    def draw(x):
        steps = math.floor(random.expovariate(1.0) / eps)
        u = random.random()
        offset = g * u if random.random() < inner else g + (1 - g) * u
        sign = -1.0 if random.random() < 0.5 else 1.0
        return x + sign * d * (steps + offset)

    return draw


def _naive_duchi(mech):
    lo, hi = mech.outputs

    top, bottom = 1.0 / (1.0 + math.exp(-mech.epsilon)), 1.0 / (1.0 + math.exp(mech.epsilon))

    def draw(x):
        w = (x - mech.low) / (mech.high - mech.low)
        return hi if random.random() < w * top + (1.0 - w) * bottom else lo

    return draw


def _naive_bounded_laplace(mech):
    b, low, high = mech.scale, mech.low, mech.high

    def draw(x):  # Laplace(x, b) redrawn until it lands in [low, high] (the renormalised density)
        while True:
            u = random.random() - 0.5
            y = x - b * math.copysign(1.0, u) * math.log1p(-2.0 * abs(u))
            if low <= y <= high:
                return y

    return draw


def _naive_ii_ptt(mech):
    mid, half, k, a, B, q0 = mech._params()
    floor = 2.0 * B * q0

    def draw(x):  # the floor (uniform on [−B, B]) or the triangle (sum of two uniforms) at k·t
        if random.random() < floor:
            u = -B + 2.0 * B * random.random()
        else:
            u = k * (x - mid) / half + a * (random.random() + random.random() - 1.0)
        return mid + half * u

    return draw


def _naive_krr(mech):
    keep, k = mech.keep_probability, mech.k

    def draw(x):
        if random.random() < keep:
            return x
        other = random.randrange(k - 1)
        return other + (other >= x)

    return draw


def _naive(mech):
    if isinstance(mech, m.Truncated):
        inner, dom = _naive(mech.mechanism), mech.output_domain
        return lambda x: min(max(inner(x), dom.low), dom.high)
    if isinstance(mech, m.Compressed):
        inner = _naive(mech.mechanism)
        a, A, factor = mech.output_domain.low, mech.mechanism.output_domain.low, mech._factor()
        return lambda x: a + (inner(x) - A) * factor
    if isinstance(mech, m.PiecewiseConstantMechanism):
        return _naive_piecewise(mech)
    table = {m.OptimalCircular: _naive_circular, m.Purkayastha: _naive_purkayastha,
             m.Laplace: _naive_laplace, m.Staircase: _naive_staircase, m.Duchi: _naive_duchi,
             m.KRR: _naive_krr, m.BoundedLaplace: _naive_bounded_laplace, m.IIPTT: _naive_ii_ptt}
    return table[type(mech)](mech)


def _mechanisms(epsilon: float):
    return [
        ("OptimalClassical", m.OptimalClassical(epsilon=epsilon)),
        ("OptimalCircular", m.OptimalCircular(epsilon=epsilon)),
        ("OptimalUnbiased", m.OptimalUnbiased(epsilon=epsilon)),
        ("PiecewiseMechanism", m.PiecewiseMechanism(epsilon=epsilon)),
        ("SquareWave", m.SquareWave(epsilon=epsilon)),
        ("PTT", m.PTT(epsilon=epsilon)),
        ("Duchi", m.Duchi(epsilon=epsilon)),
        ("Laplace", m.Laplace(epsilon=epsilon)),
        ("Staircase", m.Staircase(epsilon=epsilon)),
        ("Purkayastha", m.Purkayastha(epsilon=epsilon)),
        ("BoundedLaplace", m.BoundedLaplace(epsilon=epsilon)),
        ("IIPTT", m.IIPTT(epsilon=epsilon)),
        ("KRR (k=6)", m.KRR(epsilon=epsilon, k=6)),
        ("Compressed(PM)", m.Compressed(m.PiecewiseMechanism(epsilon=epsilon))),
        ("Compressed(SW)", m.Compressed(m.SquareWave(epsilon=epsilon))),
        ("Truncated(PM)", m.Truncated(m.PiecewiseMechanism(epsilon=epsilon))),
        ("Truncated(SW)", m.Truncated(m.SquareWave(epsilon=epsilon))),
        ("Truncated(Laplace)", m.Truncated(m.Laplace(epsilon=epsilon))),
        ("Truncated(Staircase)", m.Truncated(m.Staircase(epsilon=epsilon))),
    ]


def _keyed_words(n: int):
    """One keyed Philox word per sample (what every lattice sampler draws at least)."""
    from tracs.mechanisms import lattice_kernels as lk
    from tracs.random import resolve_streams

    ks = resolve_streams(1, None, 1)
    first, bits = np.empty(n, dtype=np.uint64), np.empty(n)
    lk.first_words(ks.kind, ks.key, np.uint64(ks.streams[0]), n, 0, first, bits)
    return first


def _inputs(mech, n: int, rng: np.random.Generator) -> np.ndarray:
    dom = mech.input_domain
    if isinstance(dom, m.Categories):
        return rng.integers(0, dom.k, size=n)
    return dom.low + (dom.high - dom.low) * rng.random(n)  # in [low, high)


def run(quick: bool = False) -> list[Row]:
    """Time every mechanism's ``sample`` at 10^7 inputs (10^5 with ``quick``) and print the table."""
    n = 10**5 if quick else 10**7
    rng = np.random.default_rng(12345)
    random.seed(12345)
    rows = []
    for name, mech in _mechanisms(1.0):
        x = _inputs(mech, n, rng)
        seconds = best_time(lambda: mech.sample(x, rng=rng))
        naive = _naive(mech)
        items = [v.item() for v in x[:NAIVE_ITEMS]]
        naive_seconds = best_time(lambda: [naive(v) for v in items])
        inner = getattr(mech, "mechanism", mech)
        compiled = hasattr(inner, "band") or isinstance(inner, (m.KRR, m.Laplace, m.Staircase, m.Purkayastha,
                                                                m.Duchi, m.BoundedLaplace, m.IIPTT))
        note = "lattice, compiled kernel" if compiled else "lattice, cdf bisection"
        rows.append(Row(name, n, seconds, len(items), naive_seconds, note))
    # the price of exact lattice sampling: the earlier continuous samplers (raw doubles), same run
    from benchmarks.reference.continuous import EARLIER_MECHANISMS

    mechanisms = dict(_mechanisms(1.0))
    for name, (fn, (low, high)) in EARLIER_MECHANISMS.items():
        x = low + (high - low) * rng.random(n)
        lattice = next(row for row in rows if row.name == name)
        seconds = best_time(lambda: fn(x, 1.0, rng, mechanisms[name]))
        rows.append(Row(f"  {name}, continuous (before the lattice)", n, seconds,
                        extra=f"lattice rate / continuous rate = {seconds / lattice.seconds:.2f}×"))
    # the ceilings: numpy's two uniforms per sample; one keyed Philox word per sample
    rows.append(Row("  rng.random(2n) alone", n, best_time(lambda: rng.random(2 * n)), extra="ceiling"))
    rows.append(Row("  keyed word per sample alone", n, best_time(lambda: _keyed_words(n)), extra="ceiling"))
    print_table("mechanisms: sample() at epsilon = 1 (one core)", rows)
    return rows
