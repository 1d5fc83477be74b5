"""An EM pass budget chosen on held-out trajectories (early stopping by cross-validation).

At small ε the likelihood of TraCS-D reports is flat over many densities: EM's
path from the uniform start first picks up the broad shape of the data and then,
long before the stopping rule of :mod:`tracs.estimate.expectation_maximisation` fires, fits the
reports' noise.  The number of passes is therefore a smoothing parameter, and it
is chosen here the way ``smoothing="cv"`` chooses the EMS weight: by how well the
fits predict reports they have not seen.

The trajectories are dealt into :data:`FOLDS` folds by a fixed permutation (seed
:data:`FOLD_SEED`: the choice is a fixed function of the reports and the public
parameters).  For every fold, EM runs on the other folds' reports (same algorithm,
same stopping rule) and every iterate it examines is scored by the
log-likelihood of the held-out fold's reports.  Whole trajectories are held out,
so a held-out report's true point is not a neighbour of a training report's.
The scores are interpolated on the pass count and summed over the folds; the
budget is the pass count with the highest sum.  When that is where the training
fits stop anyway, no budget is set (the stopping rule decides).

Every report's likelihood is conditional on its public reference (the previous
report), so a fold's log-likelihood is the sum of its reports' terms: no term of
a held-out report depends on a training report's true point.
"""

from __future__ import annotations

import numpy as np

from . import expectation_maximisation as fitting

__all__ = ["FOLDS", "FOLD_SEED", "trajectory_folds", "choose_passes"]

#: folds of trajectories
FOLDS = 3
#: seed of the permutation that deals trajectories into folds
FOLD_SEED = 0


def trajectory_folds(offsets, folds: int = FOLDS, seed=None) -> np.ndarray | None:
    """Fold index of every report: trajectories dealt round-robin after a fixed permutation.

    ``seed`` of the permutation defaults to :data:`FOLD_SEED` (read at the call).
    Returns ``None`` when there are fewer than ``2·folds`` non-empty trajectories
    (too few to hold any out).
    """
    offsets = np.asarray(offsets, dtype=np.int64)
    lengths = np.diff(offsets)
    if np.count_nonzero(lengths) < 2 * folds:
        return None
    order = np.random.default_rng(FOLD_SEED if seed is None else seed).permutation(len(lengths))
    fold = np.empty(len(lengths), dtype=np.int64)
    fold[order] = np.arange(len(lengths)) % folds
    return np.repeat(fold, lengths)


def _part(blocks, keep):
    """The blocks restricted to the reports where ``keep`` holds (blocks left empty dropped)."""
    out = []
    for block in blocks:
        k = keep[block.rows]
        if k.any():
            out.append(block.subset(k))
    return out


def choose_passes(blocks, support, fold, *, smoothing=None, tol=fitting.DEFAULT_TOL, max_iterations=None,
                  accelerate: bool = True, lines=None) -> int | None:
    """The EM pass budget that best predicts held-out trajectories, or ``None`` (the rule decides).

    Parameters
    ----------
    blocks : sequence of blocks
        Blocks with ``rows`` (their reports' indices) and ``subset(keep)``.
    support : numpy.ndarray of bool
        As in :func:`tracs.estimate.expectation_maximisation.run_em`.
    fold : numpy.ndarray of int
        Fold of every report (:func:`trajectory_folds`).
    smoothing, tol, max_iterations, accelerate, lines
        As in :func:`tracs.estimate.expectation_maximisation.run_em` (the training fits use the same).

    Returns
    -------
    int or None
    """
    curves, folds = [], int(fold.max()) + 1
    for k in range(folds):
        if lines is not None:
            lines.stage = f"held-out fold {k + 1} of {folds}"
        held_mask = fold == k
        train, held = _part(blocks, ~held_mask), _part(blocks, held_mask)
        if not train or not held:
            return None
        passes, scores = [], []

        def observe(theta, maps, held=held):
            passes.append(maps)
            scores.append(sum(b.predict_and_back(theta)[0] for b in held))

        fitting.run_em(train, support, smoothing=smoothing, tol=tol, max_iterations=max_iterations,
                   accelerate=accelerate, observe=observe, lines=lines)
        del train, held
        if not passes:
            return None
        curves.append((np.asarray(passes), np.asarray(scores)))
    last = min(p[-1] for p, _ in curves)
    grid = np.arange(1, max(p[-1] for p, _ in curves) + 1)
    total = sum(np.interp(grid, p, s) for p, s in curves)
    best = int(grid[int(np.argmax(total))])
    return None if best >= last else best
