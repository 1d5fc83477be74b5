"""The audit procedure shared by the 1-D and the 2-D audits.

1. For every candidate input ``x``, draw ``samples`` outputs in two independent
   halves (``A`` and ``B``), each through one vectorised call of the sampler.
2. From half ``A`` only: build the output cells (:mod:`.events`) and, for every
   ordered input pair, score every single cell and every union of cells ranked
   by estimated likelihood ratio with the Clopper–Pearson ε lower bound.  Keep
   the best (pair, event).
3. On half ``B`` only: count that one event at its two inputs and report the
   Clopper–Pearson ε lower bound at the requested confidence.

Because the (pair, event) is chosen on draws independent of half ``B``, the
bound of step 3 is a single test: no multiple-comparison correction is needed
and its confidence is exact (sample splitting).  Every output of both halves
is also checked against the declared lattice.
"""

from __future__ import annotations

import numbers

import numpy as np

from .._validation import check_epsilon
from .bounds import epsilon_lower_bound
from .audit_report import AuditReport
from .events import partitions
from .lattice_check import off_lattice, release_indices

__all__ = ["run_audit", "check_audit_arguments", "METHOD", "seed_sequence", "input_generator"]

METHOD = ("sample splitting: the input pair and output event (single cells and likelihood-ratio-ranked "
          "unions of cells of one partition: histogram / lattice-point cells of the values, of the "
          "indices, or the indices' low bits) are chosen on one half of the draws; the one-sided "
          "Clopper–Pearson bounds at (1 − confidence)/2 each are computed on the other half")

#: fewest draws per input the audit accepts (two halves of 50)
MIN_SAMPLES = 100


def check_audit_arguments(epsilon, samples, confidence):
    """Validate the common arguments; return them normalised."""
    epsilon = check_epsilon(epsilon)
    if isinstance(samples, bool) or not isinstance(samples, numbers.Integral):
        raise TypeError(f"samples must be an int, got {type(samples).__name__}")
    if samples < MIN_SAMPLES:
        raise ValueError(f"samples must be >= {MIN_SAMPLES} (draws per input), got {samples}")
    if isinstance(confidence, bool) or not isinstance(confidence, numbers.Real):
        raise TypeError(f"confidence must be a real number, got {type(confidence).__name__}")
    confidence = float(confidence)
    if not 0.5 <= confidence < 1.0:
        raise ValueError(f"confidence must be in [0.5, 1), got {confidence}")
    return epsilon, int(samples), confidence


def seed_sequence(rng) -> np.random.SeedSequence:
    if isinstance(rng, np.random.SeedSequence):
        return rng
    if rng is None:
        return np.random.SeedSequence()
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool) and rng >= 0:
        return np.random.SeedSequence(int(rng))
    raise TypeError(f"rng must be None, a non-negative int or a numpy.random.SeedSequence, got {rng!r}")


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


def _best_event(ca, n, allowed, excess, z, unions=True):
    """Best ``(score, i, j, cells)`` of one partition over the allowed ordered pairs.

    ``ca`` is ``(inputs, cells)`` selection counts; the events are every single cell
    and (with ``unions``) the unions of cells ranked by ``(c_i + ½)/(c_j + ½)``; the
    score is the selection bound minus the claim of the pair (``excess[i]``).
    """
    m, c = ca.shape
    a = np.broadcast_to(ca[:, None, :], (m, m, c))
    b = np.broadcast_to(ca[None, :, :], (m, m, c))
    penalty = np.where(allowed, -excess[:, None], -np.inf)[:, :, None]
    single = _selection_scores(a, b, n, z) + penalty
    best = int(np.argmax(single))
    i, j, cell = np.unravel_index(best, single.shape)
    result = (float(single.flat[best]), int(i), int(j), np.array([cell]))
    if unions:
        order = np.argsort(-(a + 0.5) / (b + 0.5), axis=2, kind="stable")
        ranked = _selection_scores(np.cumsum(np.take_along_axis(a, order, 2), axis=2),
                                   np.cumsum(np.take_along_axis(b, order, 2), axis=2), n, z) + penalty
        best = int(np.argmax(ranked))
        if ranked.flat[best] > result[0]:
            i, j, cell = np.unravel_index(best, ranked.shape)
            result = (float(ranked.flat[best]), int(i), int(j), order[i, j, : cell + 1])
    return result


def run_audit(draw, inputs, epsilon, *, samples, confidence, lattice, rng, bins, label,
              groups=None, claims=None, describe=None, index_cells=False, index_names=("k",)):
    """Run the audit with ``draw(x, n, generator) -> (outputs, vectorised, indices or None)``.

    ``inputs`` is a list of candidate inputs (scalars or scenarios); ``label(x)``
    turns one into the value shown in the report.  ``groups[i]`` names the scenario
    of input ``i`` (only inputs of one scenario are compared) and ``claims[g]`` its
    claimed ε (default: ``epsilon`` for all); ``describe(x)`` adds the scenario to
    the event's description.  ``indices`` are the released lattice indices
    ``(n, d)`` (``None``: computed from ``lattice``, or the bits of the outputs).
    """
    ss = seed_sequence(rng)
    gens = [np.random.Generator(np.random.PCG64(s)) for s in ss.spawn(2 * len(inputs))]
    groups = np.zeros(len(inputs), dtype=np.int64) if groups is None else np.asarray(groups, dtype=np.int64)
    claims = np.full(int(groups.max()) + 1, epsilon) if claims is None else np.asarray(claims, dtype=float)
    n_a = samples // 2
    n_b = samples - n_a
    halves_a, halves_b, vectorised = [], [], True
    off, example, non_finite = 0, None, 0
    for idx, x in enumerate(inputs):
        for n, gen, store in ((n_a, gens[2 * idx], halves_a), (n_b, gens[2 * idx + 1], halves_b)):
            y, vec, ind = draw(x, n, gen)
            vectorised &= vec
            non_finite += int(np.count_nonzero(~np.isfinite(y)))
            if lattice is not None:
                bad, first = off_lattice(y, lattice)
                off += bad
                example = first if example is None else example
            store.append((y, release_indices(y, lattice) if ind is None else ind))
    parts = partitions(np.concatenate([y for y, _ in halves_a]), np.concatenate([k for _, k in halves_a]),
                       bins=bins, index_cells=index_cells, names=index_names)
    allowed = (groups[:, None] == groups[None, :]) & ~np.eye(len(inputs), dtype=bool)
    excess = claims[groups]
    z = float(_norm_ppf(1.0 - (1.0 - confidence) / 2.0))
    best = (-np.inf, 0, 1, np.array([0]), parts[0])
    for part in parts:
        ca = np.stack([np.bincount(part.assign(y, k), minlength=part.size) for y, k in halves_a])
        score, i, j, event = _best_event(ca, n_a, allowed, excess, z, unions=part.unions)
        if score > best[0]:
            best = (score, i, j, event, part)
    _, i, j, event, part = best
    in_event = np.zeros(part.size, dtype=bool)
    in_event[event] = True
    k1 = int(np.count_nonzero(in_event[part.assign(*halves_b[i])]))
    k2 = int(np.count_nonzero(in_event[part.assign(*halves_b[j])]))
    bound = float(epsilon_lower_bound(k1, n_b, k2, n_b, confidence))
    bound = max(bound, 0.0)
    claim = float(excess[i])
    reasons = []
    if bound > claim:
        reasons.append(f"privacy loss above the claim: ε ≥ {bound:.4f} > {claim:g} "
                       f"with confidence {confidence:g}")
    if off:
        reasons.append(f"off-lattice output (low-bit leak): {off} output(s) not on the declared "
                       f"lattice, e.g. {example!r}")
    if non_finite:
        reasons.append(f"{non_finite} output(s) are NaN or infinite")
    if lattice is None:
        reasons.append("unverifiable low bits: the sampler declares no output lattice")
    if not vectorised:
        reasons.append("the sampler rejected arrays, so it was called once per draw")
    event_text = part.describe(event)
    if describe is not None:
        event_text = describe(inputs[i]) + event_text
    return AuditReport(
        epsilon=claim, epsilon_lower_bound=bound, confidence=confidence,
        violation=bool(bound > claim or off > 0 or non_finite > 0), unverifiable_low_bits=lattice is None,
        worst_pair=(label(inputs[i]), label(inputs[j])), worst_event=event_text,
        counts=(k1, n_b, k2, n_b), off_lattice=off, off_lattice_example=example,
        samples=samples, inputs=len(inputs), vectorised=vectorised, method=METHOD,
        reasons=tuple(reasons),
    )


def _norm_ppf(q):
    from scipy.stats import norm

    return norm.ppf(q)
