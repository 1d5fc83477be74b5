"""The sampler of :func:`tracs.estimate.synthesize.synthesize` as it was before its compiled
kernel: one vectorised NumPy pass per step.  Only the benchmark and the tests use it, as
the reference the kernel is timed and compared against (same generator, same output).
"""

from __future__ import annotations

import numpy as np

from tracs._validation import as_generator
from tracs.estimate import synthesize as synthesis

__all__ = ["synthesize"]


def synthesize(model, n: int, *, rng=None):
    """:func:`tracs.estimate.synthesize.synthesize` with its former step loop (one NumPy pass per
    step over the trajectories still running, then the cells reordered from the step-major buffer)."""
    gen = as_generator(rng)
    gx, gy = model.shape
    c = gx * gy
    offsets, order, running, step_start, u, first_cells = synthesis._steps(model, n, gen)
    lengths, total = np.diff(offsets), int(offsets[-1])
    buf = np.empty(total, dtype=np.int64)
    buf[:len(first_cells)] = first_cells
    prob, alias = synthesis._alias_tables(model.transition)
    for step in range(1, len(running)):
        m, here, before = running[step], step_start[step], step_start[step - 1]
        x = u[here: here + m] * c
        k = np.minimum(x.astype(np.int64), c - 1)
        at = buf[before: before + m] * c + k
        buf[here: here + m] = np.where(x - k < prob[at], k, alias[at])
    position = np.empty(n, dtype=np.int64)
    position[order] = np.arange(n)
    within = np.arange(total) - np.repeat(offsets[:-1], lengths)
    cells = buf[step_start[within] + np.repeat(position, lengths)]
    ix, iy = cells // gy, cells % gy
    w = gen.random((total, 2))
    x = model.xe[ix] + w[:, 0] * (model.xe[ix + 1] - model.xe[ix])
    y = model.ye[iy] + w[:, 1] * (model.ye[iy + 1] - model.ye[iy])
    return synthesis.Synthetic(np.column_stack([x, y]), offsets, cells, model.crs)
