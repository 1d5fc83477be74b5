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
    length_cdf = np.cumsum(model.lengths)
    lengths = np.searchsorted(length_cdf, gen.random(n) * length_cdf[-1], side="right")
    lengths = np.minimum(lengths, len(length_cdf) - 1)
    offsets = np.r_[0, np.cumsum(lengths)].astype(np.int64)
    total = int(offsets[-1])
    # step-major buffer: the trajectories sorted longest first, so those still running at step t
    # are a prefix and every step reads and writes contiguous slices
    order = np.argsort(-lengths, kind="stable")
    running = np.searchsorted(-lengths[order], -np.arange(1, int(lengths.max(initial=0)) + 1), side="right")
    step_start = np.r_[0, np.cumsum(running)].astype(np.int64)
    u = gen.random(total)
    buf = np.empty(total, dtype=np.int64)
    start_cdf = np.cumsum(model.start)
    first = int(running[0]) if len(running) else 0  # every trajectory with a point
    buf[:first] = np.minimum(np.searchsorted(start_cdf, u[:first] * start_cdf[-1], side="right"), c - 1)
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
