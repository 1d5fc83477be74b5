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
from .events import build_cells, ranked_unions
from .lattice_check import off_lattice
from .audit_report import AuditReport

__all__ = ["run_audit", "check_audit_arguments", "METHOD"]

METHOD = ("sample splitting: the input pair and output event (single histogram / lattice-point cells "
          "and likelihood-ratio-ranked unions of them) are chosen on one half of the draws; the "
          "one-sided Clopper–Pearson bounds at (1 − confidence)/2 each are computed on the other half")

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


def _seed_sequence(rng) -> np.random.SeedSequence:
    if isinstance(rng, np.random.SeedSequence):
        return rng
    if rng is None:
        return np.random.SeedSequence()
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool) and rng >= 0:
        return np.random.SeedSequence(int(rng))
    raise TypeError(f"rng must be None, a non-negative int or a numpy.random.SeedSequence, got {rng!r}")


def _pair_scores(ca, n, confidence):
    """Best (score, i, j, cells) over ordered pairs from the selection counts ``ca`` (inputs × cells)."""
    best = (-np.inf, 0, 1, np.array([0]))
    m = ca.shape[0]
    for i in range(m):
        for j in range(m):
            if i == j:
                continue
            single = epsilon_lower_bound(ca[i], n, ca[j], n, confidence)
            order, cum1, cum2 = ranked_unions(ca[i], ca[j])
            unions = epsilon_lower_bound(cum1, n, cum2, n, confidence)
            s, u = int(np.argmax(single)), int(np.argmax(unions))
            if single[s] > best[0]:
                best = (float(single[s]), i, j, np.array([s]))
            if unions[u] > best[0]:
                best = (float(unions[u]), i, j, order[: u + 1])
    return best


def run_audit(draw, inputs, epsilon, *, samples, confidence, lattice, rng, bins, label):
    """Run the audit with ``draw(x, n, generator) -> (outputs, vectorised)``.

    ``inputs`` is a list of candidate inputs (scalars or points); ``label(x)``
    turns one into the value shown in the report.
    """
    ss = _seed_sequence(rng)
    gens = [np.random.Generator(np.random.PCG64(s)) for s in ss.spawn(2 * len(inputs))]
    n_a = samples // 2
    n_b = samples - n_a
    halves_a, halves_b, vectorised = [], [], True
    off, example, non_finite = 0, None, 0
    for idx, x in enumerate(inputs):
        for n, gen, store in ((n_a, gens[2 * idx], halves_a), (n_b, gens[2 * idx + 1], halves_b)):
            y, vec = draw(x, n, gen)
            vectorised &= vec
            non_finite += int(np.count_nonzero(~np.isfinite(y)))
            if lattice is not None:
                bad, first = off_lattice(y, lattice)
                off += bad
                example = first if example is None else example
            store.append(y)
    cells = build_cells(np.concatenate(halves_a), bins=bins)
    ca = np.stack([np.bincount(cells.assign(y), minlength=cells.size) for y in halves_a])
    cb = np.stack([np.bincount(cells.assign(y), minlength=cells.size) for y in halves_b])
    _, i, j, event = _pair_scores(ca, n_a, confidence)
    k1, k2 = int(cb[i, event].sum()), int(cb[j, event].sum())
    bound = float(epsilon_lower_bound(k1, n_b, k2, n_b, confidence))
    bound = max(bound, 0.0)
    reasons = []
    if bound > epsilon:
        reasons.append(f"privacy loss above the claim: ε ≥ {bound:.4f} > {epsilon:g} "
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
    return AuditReport(
        epsilon=epsilon, epsilon_lower_bound=bound, confidence=confidence,
        violation=bool(bound > epsilon or off > 0 or non_finite > 0), unverifiable_low_bits=lattice is None,
        worst_pair=(label(inputs[i]), label(inputs[j])), worst_event=cells.describe(event),
        counts=(k1, n_b, k2, n_b), off_lattice=off, off_lattice_example=example,
        samples=samples, inputs=len(inputs), vectorised=vectorised, method=METHOD,
        reasons=tuple(reasons),
    )
