"""Likelihood blocks of TraCS-D and the Strawman (see :mod:`tracs.estimate._coded`).

Each report's reference is public post-processing of earlier reports: the
previous report of its trajectory, or the perturber's public anchor for the first.
"""

from __future__ import annotations

import numpy as np

from ..mechanisms import OptimalCircular, OptimalClassical
from ..perturbers import Strawman
from . import _coded
from . import _expectation_maximisation as fitting

#: reports per chunk of codes: CHUNK × cells bytes each
CHUNK = 1 << 14
#: directions used to integrate over the outward arc of a boundary reference
_ARC_NODES = 3600


def references(reports: np.ndarray, offsets: np.ndarray, anchor) -> np.ndarray:
    """The public reference of every report: the previous report, or the anchor."""
    refs = np.empty_like(reports)
    refs[1:] = reports[:-1]
    starts = offsets[:-1][np.diff(offsets) > 0]
    refs[starts] = np.asarray(anchor, dtype=np.float64)
    return refs


def _split(perturber, eps):
    """Per-report (ε_φ, ε_r) and the per-report index into the distinct pairs."""
    values, inverse = np.unique(eps, return_inverse=True)
    eps_dir = perturber.shares(values) * values
    return eps_dir, values - eps_dir, inverse


def directional_blocks(reports, offsets, perturber, eps, points, sub, workers: int = 1):
    """EM blocks for TraCS-D / Strawman reports: a coded block and, where needed, a dense one.

    Every block's ``rows`` holds the indices of its reports (for held-out splits).
    """
    region = perturber.region
    refs = references(reports, offsets, perturber.anchor_point)
    eps_dir, eps_dist, inverse = _split(perturber, eps)
    half_r = np.array([OptimalClassical(epsilon=float(e), low=0.0, high=1.0).half_width
                       for e in eps_dist])[inverse]
    sectors = perturber.sectors if isinstance(perturber, Strawman) else 1
    mode = _coded.MODE_SECTORS if isinstance(perturber, Strawman) else _coded.MODE_ARC
    if mode == _coded.MODE_ARC:
        cos_half = np.cos([OptimalCircular(epsilon=float(e)).half_width for e in eps_dir])[inverse]
    else:
        cos_half = np.zeros(len(eps_dir))[inverse]
    normals, hb = region.halfplanes
    nx, ny, hb = (np.ascontiguousarray(normals[:, 0]), np.ascontiguousarray(normals[:, 1]),
                  np.ascontiguousarray(hb, dtype=np.float64))
    same = np.all(reports == refs, axis=1)
    regular = np.flatnonzero(~same)
    special = np.flatnonzero(same)
    blocks = []
    if len(regular):
        rep, ref = np.ascontiguousarray(reports[regular]), np.ascontiguousarray(refs[regular])
        cos_r, half_rr = np.ascontiguousarray(cos_half[regular]), np.ascontiguousarray(half_r[regular])
        starts = list(range(0, len(regular), CHUNK))

        def code(i):
            start = starts[i]
            stop = min(len(regular), start + CHUNK)
            out = np.empty((stop - start, len(points)), dtype=_coded.code_dtype(points.shape[1]))
            _coded.code_reports(rep, ref, start, stop, points, nx, ny, hb, mode, cos_r, sectors,
                                half_rr, out)
            return start, out

        chunks = _coded.run_chunks(code, len(starts), workers)
        tables = _coded.code_table(eps_dir, eps_dist, points.shape[1])
        blocks.append(_coded.CodedBlock(chunks, inverse[regular].astype(np.int64), tables, workers))
        blocks[-1].rows = regular
    if len(special):
        lik = _special_likelihood(refs[special], perturber, eps_dir[inverse[special]],
                                  eps_dist[inverse[special]], points, region)
        blocks.append(fitting.DenseBlock(lik))
        blocks[-1].rows = special
    return blocks


def _special_likelihood(refs, perturber, eps_dir, eps_dist, points, region) -> np.ndarray:
    """Reports equal to their reference (up to a factor per report).

    On the boundary the ray may leave at once (``R(o, φ') = 0``): the report is
    ``o`` with probability ``P(φ' outward | φ)`` (plus the zero-probability event
    ``u' = 0``).  Inside, ``y = o`` means ``u' = 0``: likelihood ``g(0 | u)``.
    """
    K, S = points.shape[0], points.shape[1]
    flat = points.reshape(-1, 2)
    grid = (np.arange(_ARC_NODES) + 0.5) * (2 * np.pi / _ARC_NODES)
    lik = np.empty((len(refs), K))
    for r, o in enumerate(refs):
        phi, u = region._direction_distance(np.broadcast_to(o, flat.shape), flat)
        half = OptimalClassical(epsilon=float(eps_dist[r]), low=0.0, high=1.0).half_width
        left = np.clip(u - half, 0.0, 1.0 - 2 * half)
        g0 = np.where(left <= 0.0, 1.0, np.exp(-eps_dist[r]))
        exit_ = region._exit_distance(np.broadcast_to(o, grid.shape + (2,)), np.cos(grid), np.sin(grid))
        outward = exit_ <= 0.0
        if not outward.any():
            lik[r] = g0.reshape(K, S).mean(axis=1)
            continue
        low = np.exp(-eps_dir[r])
        if isinstance(perturber, Strawman):
            k = perturber.sectors
            high = (np.minimum((phi / (2 * np.pi / k)).astype(np.int64), k - 1)[:, None]
                    == np.minimum((grid / (2 * np.pi / k)).astype(np.int64), k - 1)[None, :])
        else:
            c = OptimalCircular(epsilon=float(eps_dir[r])).half_width
            d = np.abs(phi[:, None] - grid[None, :]) % (2 * np.pi)
            high = np.minimum(d, 2 * np.pi - d) < c
        dens = np.where(high, 1.0, low)
        mass = (dens[:, outward].sum(axis=1) / dens.sum(axis=1))
        lik[r] = mass.reshape(K, S).mean(axis=1)
    return lik
