"""The audit procedure shared by the 1-D and the 2-D audits: select, then confirm.

1. **Search (stage 1).**  For every candidate input ``x``, draw ``samples``
   outputs through one vectorised call of the sampler.  From these draws only:
   build the output cells (:mod:`.events`) and, for every ordered input pair of
   one scenario, score every single cell and every union of cells ranked by
   estimated likelihood ratio (a Wilson-bound estimate of the ε lower bound minus
   the pair's claim).  Keep the :data:`CONFIRM` best (pair, event) hypotheses
   (each pair's best event, over every partition).
2. **Confirm (stage 2).**  Draw ``samples`` *fresh* outputs at each input of the
   kept hypotheses (new generators, never used in stage 1), count each event at
   its two inputs and bound its ε from below with one-sided Clopper–Pearson bounds
   at ``(1 − confidence) / (2·K)`` each, ``K`` the number of hypotheses confirmed.

The search may try tens of thousands of (pair, event) hypotheses; they meet the
fresh draws only as ``K`` fixed hypotheses, chosen independently of those draws.
By the union bound (Bonferroni) over the ``K`` of them and the two one-sided bounds
of each, all ``K`` bounds hold together with probability at least ``confidence``:
an ε-LDP sampler is flagged with probability at most ``1 − confidence``, however
many candidates the search tried.  Every output of both stages is also checked
against the declared lattice.
"""

from __future__ import annotations

import numbers

import numpy as np

from .._validation import check_epsilon
from ..errors import InputError, InputTypeError
from .bounds import epsilon_lower_bound
from .audit_report import AuditReport
from .events import partitions
from .lattice_check import off_lattice, release_indices

__all__ = ["run_audit", "check_audit_arguments", "METHOD", "seed_sequence", "input_generator"]

METHOD = ("select, then confirm: the input pairs and output events (single cells and likelihood-ratio-ranked "
          "unions of cells of one partition: histogram / lattice-point cells of the values, of the "
          "indices, or the indices' low bits) are searched on one set of draws, and the K best are "
          "bounded on fresh draws with one-sided Clopper–Pearson bounds at (1 − confidence)/(2K) each "
          "(Bonferroni over the K hypotheses and both bounds)")

#: (pair, event) hypotheses of the search confirmed on fresh draws
CONFIRM = 4

#: fewest draws per input the audit accepts (two halves of 50)
MIN_SAMPLES = 100


def check_audit_arguments(epsilon, samples, confidence):
    """Validate the common arguments; return them normalised."""
    epsilon = check_epsilon(epsilon)
    if isinstance(samples, bool) or not isinstance(samples, numbers.Integral):
        raise InputTypeError(f"samples must be an int, got {type(samples).__name__}")
    if samples < MIN_SAMPLES:
        raise InputError(f"samples must be >= {MIN_SAMPLES} (draws per input), got {samples}")
    if isinstance(confidence, bool) or not isinstance(confidence, numbers.Real):
        raise InputTypeError(f"confidence must be a real number, got {type(confidence).__name__}")
    confidence = float(confidence)
    if not 0.5 <= confidence < 1.0:
        raise InputError(f"confidence must be in [0.5, 1), got {confidence}")
    return epsilon, int(samples), confidence


def seed_sequence(rng) -> np.random.SeedSequence:
    if isinstance(rng, np.random.SeedSequence):
        return rng
    if rng is None:
        return np.random.SeedSequence()
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool) and rng >= 0:
        return np.random.SeedSequence(int(rng))
    raise InputTypeError(f"rng must be None, a non-negative int or a numpy.random.SeedSequence, got {rng!r}")


def input_generator(ss: np.random.SeedSequence) -> np.random.Generator:
    """The generator of the random candidate inputs: a child of ``ss`` that the draws never use."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(ss.entropy,
                                                                      spawn_key=(*ss.spawn_key, 2 ** 32 - 1))))


def _selection_scores(k1, k2, n, z):
    """``ln(lower(k1)/upper(k2))`` with Wilson score bounds: the cheap selection score.

    Only the selection half uses it (any score keeps the guarantee, which rests on
    the held-out half and exact Clopper–Pearson bounds); ``-inf`` where ``k1 == 0``.
    """
    z2 = z * z

    def bound(k, sign):
        p = k / n
        centre = p + z2 / (2 * n)
        spread = z * np.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
        return (centre + sign * spread) / (1 + z2 / n)

    with np.errstate(divide="ignore", invalid="ignore"):
        low = np.where(k1 > 0, bound(k1, -1.0), 0.0)
        return np.log(np.maximum(low, 0.0)) - np.log(bound(k2, 1.0))


def _pair_events(ca, n, claim, z, unions=True, keep=CONFIRM):
    """The ``keep`` best ``(score, i, j, cells)`` of one partition and one scenario, one per pair.

    ``ca`` is ``(inputs, cells)`` search counts; each ordered pair's events are every
    single cell and (with ``unions``) the unions of cells ranked by
    ``(c_i + ½)/(c_j + ½)``; the score is the selection bound minus ``claim``.
    """
    m, c = ca.shape
    a = np.broadcast_to(ca[:, None, :], (m, m, c))
    b = np.broadcast_to(ca[None, :, :], (m, m, c))
    off = np.where(np.eye(m, dtype=bool), -np.inf, -claim)
    single = _selection_scores(a, b, n, z)
    best, cell = single.max(axis=2) + off, single.argmax(axis=2)
    order = ranked_best = ranked_cut = None
    if unions:
        order = np.argsort(-(a + 0.5) / (b + 0.5), axis=2, kind="stable")
        ranked = _selection_scores(np.cumsum(np.take_along_axis(a, order, 2), axis=2),
                                   np.cumsum(np.take_along_axis(b, order, 2), axis=2), n, z)
        ranked_best, ranked_cut = ranked.max(axis=2) + off, ranked.argmax(axis=2)
    score = best if ranked_best is None else np.maximum(best, ranked_best)
    flat = np.argsort(-score, axis=None, kind="stable")[:keep]
    out = []
    for f in flat:
        i, j = np.unravel_index(int(f), (m, m))
        if not np.isfinite(score[i, j]):
            continue
        cells = (order[i, j, :ranked_cut[i, j] + 1] if ranked_best is not None and ranked_best[i, j] > best[i, j]
                 else np.array([cell[i, j]]))
        out.append((float(score[i, j]), int(i), int(j), cells))
    return out


class _Checks:
    """What every draw of both stages is checked for: the lattice, finiteness, vectorisation."""

    def __init__(self, lattice):
        self.lattice, self.off, self.example, self.non_finite, self.vectorised = lattice, 0, None, 0, True

    def __call__(self, drawn):
        y, vec, ind = drawn
        self.vectorised &= vec
        self.non_finite += int(np.count_nonzero(~np.isfinite(y)))
        if self.lattice is not None:
            bad, first = off_lattice(y, self.lattice)
            self.off += bad
            self.example = first if self.example is None else self.example
        return y, release_indices(y, self.lattice) if ind is None else ind


def _pool(draws, cap=1_000_000):
    """The search draws pooled (every ``s``-th row of each input's, at most about ``cap`` rows)."""
    step = max(1, -(-sum(len(y) for y, _ in draws) // cap))
    return np.concatenate([y[::step] for y, _ in draws]), np.concatenate([k[::step] for _, k in draws])


def _search(first, groups, claims, parts, n, z):
    """The :data:`CONFIRM` best ``(score, partition, i, j, cells)`` over scenarios and partitions."""
    found = []
    for p, part in enumerate(parts):
        counts = np.stack([np.bincount(part.assign(y, k), minlength=part.size) for y, k in first])
        for g in np.unique(groups):
            rows = np.flatnonzero(groups == g)
            if len(rows) < 2:
                continue
            found.extend((score, p, int(rows[i]), int(rows[j]), cells) for score, i, j, cells
                         in _pair_events(counts[rows], n, float(claims[g]), z, unions=part.unions))
    found.sort(key=lambda h: -h[0])
    return found[:CONFIRM]


def run_audit(draw, inputs, epsilon, *, samples, confidence, lattice, rng, bins, label,
              groups=None, claims=None, describe=None, index_cells=False, index_names=("k",)):
    """Run the audit with ``draw(x, n, generator) -> (outputs, vectorised, indices or None)``.

    ``inputs`` is a list of candidate inputs (scalars or scenarios); ``label(x)``
    turns one into the value shown in the report.  ``groups[i]`` names the scenario
    of input ``i`` (only inputs of one scenario are compared) and ``claims[g]`` its
    claimed ε (default: ``epsilon`` for all); ``describe(x)`` adds the scenario to
    the event's description.  ``indices`` are the released lattice indices
    ``(n, d)`` (``None``: computed from ``lattice``, or the bits of the outputs).
    ``samples`` draws per input in the search, and again per input of a confirmed
    hypothesis.
    """
    ss = seed_sequence(rng)
    gens = [np.random.Generator(np.random.PCG64(s)) for s in ss.spawn(2 * len(inputs))]
    groups = np.zeros(len(inputs), dtype=np.int64) if groups is None else np.asarray(groups, dtype=np.int64)
    claims = np.full(int(groups.max()) + 1, epsilon) if claims is None else np.asarray(claims, dtype=float)
    check = _Checks(lattice)
    first = [check(draw(x, samples, gens[2 * i])) for i, x in enumerate(inputs)]
    parts = partitions(*_pool(first), bins=bins, index_cells=index_cells, names=index_names)
    z = float(_norm_ppf(1.0 - (1.0 - confidence) / 2.0))
    hypotheses = _search(first, groups, claims, parts, samples, z)
    del first
    fresh = {}
    best = None
    for _, p, i, j, cells in hypotheses:
        for t in (i, j):
            if t not in fresh:
                fresh[t] = check(draw(inputs[t], samples, gens[2 * t + 1]))
        part = parts[p]
        in_event = np.zeros(part.size, dtype=bool)
        in_event[cells] = True
        k1 = int(np.count_nonzero(in_event[part.assign(*fresh[i])]))
        k2 = int(np.count_nonzero(in_event[part.assign(*fresh[j])]))
        bound = max(float(epsilon_lower_bound(k1, samples, k2, samples,
                                              1.0 - (1.0 - confidence) / len(hypotheses))), 0.0)
        claim = float(claims[groups[i]])
        if best is None or bound - claim > best[0] - best[1]:
            best = (bound, claim, i, j, part, cells, (k1, samples, k2, samples))
    if best is None:  # no scenario with two inputs: nothing to compare
        best = (0.0, float(claims[groups[0]]), 0, 0, parts[0], np.empty(0, dtype=np.int64), (0, samples, 0, samples))
    bound, claim, i, j, part, event, counts = best
    reasons = []
    if bound > claim:
        reasons.append(f"privacy loss above the claim: ε ≥ {bound:.4f} > {claim:g} "
                       f"with confidence {confidence:g}")
    if check.off:
        reasons.append(f"off-lattice output (low-bit leak): {check.off} output(s) not on the declared "
                       f"lattice, e.g. {check.example!r}")
    if check.non_finite:
        reasons.append(f"{check.non_finite} output(s) are NaN or infinite")
    if lattice is None:
        reasons.append("unverifiable low bits: the sampler declares no output lattice (a perturber's "
                       "`lattice` property: docs/extending.md)")
    if not check.vectorised:
        reasons.append("the sampler rejected arrays, so it was called once per draw")
    event_text = part.describe(event) if len(event) else "none (no two inputs of one scenario)"
    if describe is not None:
        event_text = describe(inputs[i]) + event_text
    return AuditReport(
        epsilon=claim, epsilon_lower_bound=bound, confidence=confidence,
        violation=bool(bound > claim or check.off > 0 or check.non_finite > 0),
        unverifiable_low_bits=lattice is None,
        worst_pair=(label(inputs[i]), label(inputs[j])), worst_event=event_text,
        counts=counts, off_lattice=check.off, off_lattice_example=check.example,
        samples=samples, inputs=len(inputs), vectorised=check.vectorised, method=METHOD,
        reasons=tuple(reasons), confirmed=len(hypotheses),
    )


def _norm_ppf(q):
    from scipy.stats import norm

    return norm.ppf(q)
