"""Edge zones: where the reports cannot say where the mass lies, and the prior that places it.

The optimal classical mechanism clamps its high-probability band to the domain:
every input within a band's half-width of an end of the axis has *the same*
output distribution (the band sits against that end).  On a grid, the cells of
such an *edge zone* have identical transition columns, so the likelihood of the
reports depends only on the zone's total mass, never on how it is split among
the zone's cells: all splits are maximum-likelihood estimates.  Plain EM keeps
the split it started from (uniform), because its update multiplies every cell
of a zone by the same factor.

A split must therefore come from a prior.  :func:`place_edge_mass` uses a
density that decays across the zone from its inner boundary (next to the cells
the reports do resolve) towards the region's edge, ``∝ exp(−κ·u)`` with ``u``
the position across the zone (0 at the inner boundary, 1 at the region's
edge), integrated over each cell.  The assumption behind it: the region is a
public box drawn *around* the data, so the data thin out towards its rim;
``κ = 0`` gives back the uniform split.  The likelihood is unchanged (the zone
totals are), so the estimate stays a fit of the same quality to the reports;
only the within-zone shape is the prior's (``docs/estimation.md`` measures
what it gains and where it costs).
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError, InputTypeError

__all__ = ["DEFAULT_EDGE_DECAY", "check_edge_decay", "zone_labels", "zone_weights", "edge_axes",
           "place_edge_mass"]

#: default ``κ`` of :func:`place_edge_mass`: the prior density falls by e⁻⁴ across a zone
DEFAULT_EDGE_DECAY = 4.0

#: columns whose entries differ by no more than this (their sums are 1) are identical
_SAME = 1e-12


def check_edge_decay(edge_decay) -> float:
    """``edge_decay`` as a float ``κ ≥ 0`` (finite), or a clear error."""
    if isinstance(edge_decay, bool) or not isinstance(edge_decay, (int, float, np.integer, np.floating)):
        raise InputTypeError(f"edge_decay must be a number >= 0, got {type(edge_decay).__name__}")
    value = float(edge_decay)
    if not np.isfinite(value) or value < 0:
        raise InputError(f"edge_decay must be a finite number >= 0, got {edge_decay!r}")
    return value


def zone_labels(*matrices) -> np.ndarray:
    """Label the input cells of one axis by runs of identical transition columns.

    Parameters
    ----------
    *matrices : numpy.ndarray, shape (outputs, cells)
        Transition matrices of the axis (one per distinct ε); cells are in axis
        order.  Two neighbouring cells share a label when their columns agree (to
        1e-12) in every matrix.

    Returns
    -------
    numpy.ndarray of int, shape (cells,)
        Non-decreasing labels ``0, 1, …``; a run of equal labels is a zone.
    """
    cells = matrices[0].shape[1]
    differs = np.zeros(max(cells - 1, 0), dtype=bool)
    for m in matrices:
        differs |= np.abs(np.diff(m, axis=1)).max(axis=0) > _SAME
    return np.concatenate([[0], np.cumsum(differs)])


def zone_weights(labels: np.ndarray, edge_decay: float) -> np.ndarray:
    """Within-zone shares of every cell (each zone's shares sum to 1).

    A zone that touches an end of the axis gets the decaying profile
    ``∫ exp(−κ·u) du`` over each cell's span of ``u`` (``u = 0`` at the zone's
    inner boundary, ``1`` at the end of the axis); a zone touching both ends
    (nothing is resolved) and a zone inside the axis are split uniformly; a
    single cell keeps everything.
    """
    labels = np.asarray(labels)
    shares = np.ones(len(labels))
    for label in np.unique(labels):
        cells = np.flatnonzero(labels == label)
        k = len(cells)
        if k == 1:
            continue
        low_end, high_end = cells[0] == 0, cells[-1] == len(labels) - 1
        if edge_decay == 0 or low_end == high_end:
            shares[cells] = 1.0 / k
            continue
        u = np.arange(k + 1) / k  # cell edges across the zone, 0 at the inner boundary
        mass = -np.diff(np.exp(-edge_decay * u))  # ∫ e^{-κu} du over each cell, up to 1/κ
        mass = mass / mass.sum()
        shares[cells] = mass[::-1] if low_end else mass
    return shares


def edge_axes(matrices_per_axis, edge_decay: float) -> list:
    """``(labels, shares)`` of every axis, for :func:`place_edge_mass`.

    ``matrices_per_axis`` holds, per axis, the transition matrices of that axis
    (one per distinct ε): :func:`zone_labels` of them all, then
    :func:`zone_weights` at ``edge_decay``.
    """
    axes = []
    for matrices in matrices_per_axis:
        labels = zone_labels(*matrices)
        axes.append((labels, zone_weights(labels, edge_decay)))
    return axes


def place_edge_mass(theta: np.ndarray, axes) -> np.ndarray:
    """Split every zone's mass by its shares, axis by axis.

    Parameters
    ----------
    theta : numpy.ndarray
        Cell probabilities, one axis per entry of ``axes``.
    axes : sequence of (labels, shares)
        Per axis: :func:`zone_labels` and :func:`zone_weights` (:func:`edge_axes`).

    Returns
    -------
    numpy.ndarray
        Same total mass on every zone (of every axis, for every position on
        the other axes) as ``theta``, split by ``shares``.  The likelihood of
        reports whose transition columns are equal within each zone is
        unchanged.
    """
    out = np.asarray(theta, dtype=np.float64)
    for axis, (labels, shares) in enumerate(axes):
        labels = np.asarray(labels)
        if labels[-1] == len(labels) - 1:  # every cell resolved: nothing to place
            continue
        moved = np.moveaxis(out, axis, 0)
        totals = np.zeros((labels[-1] + 1,) + moved.shape[1:])
        np.add.at(totals, labels, moved)
        placed = totals[labels] * np.asarray(shares).reshape((-1,) + (1,) * (moved.ndim - 1))
        out = np.moveaxis(placed, 0, axis)
    return np.ascontiguousarray(out)
