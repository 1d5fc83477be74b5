"""Exact one-dimensional transition matrices from a mechanism's public law.

``A[j, i] = P(Y ∈ output bin j | X uniform in input cell i)``, computed from the
mechanism's ``cdf`` (cell masses: ``cdf(e_{j+1}, x) − cdf(e_j, x)``, point masses
included) averaged over ``x`` inside the cell (midpoint rule with ``nodes``
sub-points, exact for the piecewise-linear parts of the cdf up to the kinks).  The
outermost output bins reach to ``±∞``, so every column sums to 1 (the sum
telescopes to ``1 − 0``; columns are renormalised to remove rounding, to 1e-15).

Discrete mechanisms (``Duchi``, ``KRR``) use their ``pmf``.  Mechanisms release
values on a fine public lattice (``mechanism.lattice``); output bins hold many
lattice points each, so the cdf masses match the lattice law up to one lattice
spacing at the bin edges.
"""

from __future__ import annotations

import numpy as np

from ..mechanisms import KRR, Circle, Duchi, RealLine

__all__ = ["input_edges", "output_edges", "transition_matrix", "bin_reports"]

#: sub-points per input cell when averaging the cdf over the cell
NODES = 16


def input_edges(mechanism, bins: int) -> np.ndarray:
    """``bins + 1`` equal cell edges over the mechanism's input domain."""
    dom = mechanism.input_domain
    if isinstance(dom, Circle):
        return np.linspace(0.0, dom.period, bins + 1)
    return np.linspace(dom.low, dom.high, bins + 1)


def output_edges(mechanism, reports: np.ndarray, bins: int) -> np.ndarray:
    """Edges of the output bins: ``bins`` equal bins over a bounded output domain;
    over the real line, equal bins over the span of the input domain widened to the
    reports' range (public post-processing of the reports), plus two infinite tails."""
    dom = mechanism.output_domain
    if isinstance(mechanism, Duchi):
        lo, hi = mechanism.outputs
        return np.array([-np.inf, 0.5 * (lo + hi), np.inf])
    if isinstance(dom, Circle):
        return np.linspace(0.0, dom.period, bins + 1)
    if isinstance(dom, RealLine):
        ind = mechanism.input_domain
        lo = min(ind.low, float(np.min(reports))) if len(reports) else ind.low
        hi = max(ind.high, float(np.max(reports))) if len(reports) else ind.high
        inner = np.linspace(lo, hi, bins + 1)
        return np.concatenate([[-np.inf], inner[1:-1], [np.inf]])
    edges = np.linspace(dom.low, dom.high, bins + 1)
    edges[0], edges[-1] = -np.inf, np.inf
    return edges


def bin_reports(reports: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Counts of reports per output bin ``(e_j, e_{j+1}]`` (the cdf's convention)."""
    idx = np.searchsorted(edges, reports, side="left") - 1
    idx = np.clip(idx, 0, len(edges) - 2)
    return np.bincount(idx, minlength=len(edges) - 1).astype(np.float64)


def _cell_nodes(edges: np.ndarray, nodes: int) -> np.ndarray:
    """Midpoints of ``nodes`` equal sub-cells of every cell, shape (cells, nodes)."""
    t = (np.arange(nodes) + 0.5) / nodes
    return edges[:-1, None] + np.diff(edges)[:, None] * t[None, :]


def transition_matrix(mechanism, in_edges, out_edges, *, nodes: int = NODES) -> np.ndarray:
    """``A[j, i] = P(Y ∈ (e_j, e_{j+1}] | X uniform in cell i)``; columns sum to 1.

    Parameters
    ----------
    mechanism : a continuous mechanism of :mod:`tracs.mechanisms` or ``Duchi``
    in_edges, out_edges : numpy.ndarray
        Cell edges of the input domain and bin edges of the output domain (the
        outer output edges may be infinite).
    nodes : int
        Sub-points per input cell.

    Returns
    -------
    numpy.ndarray, shape (len(out_edges) − 1, len(in_edges) − 1)
    """
    in_edges = np.asarray(in_edges, dtype=np.float64)
    out_edges = np.asarray(out_edges, dtype=np.float64)
    x = _cell_nodes(in_edges, nodes)
    dom = mechanism.input_domain
    if not isinstance(dom, Circle):
        x = np.clip(x, dom.low, dom.high)
    else:
        x = np.mod(x, dom.period)
    if isinstance(mechanism, Duchi):
        lo, hi = mechanism.outputs
        probs = np.stack([mechanism.pmf(np.full(x.shape, lo), x), mechanism.pmf(np.full(x.shape, hi), x)])
        return _normalise(probs.mean(axis=2))
    # cdf at every finite edge for every node: (edges, cells, nodes)
    finite = np.isfinite(out_edges)
    cdf = np.empty((len(out_edges),) + x.shape)
    cdf[~finite & (out_edges < 0)] = 0.0
    cdf[~finite & (out_edges > 0)] = 1.0
    if isinstance(mechanism.output_domain, Circle):
        cdf[0] = 0.0
        cdf[-1] = 1.0
        inner = np.arange(1, len(out_edges) - 1)
    else:
        inner = np.flatnonzero(finite)
    if len(inner):
        cdf[inner] = mechanism.cdf(out_edges[inner, None, None], x[None])
    masses = np.clip(np.diff(cdf, axis=0), 0.0, None).mean(axis=2)
    return _normalise(masses)


def krr_matrix(mechanism: KRR) -> np.ndarray:
    """The exact k×k matrix of k-RR: ``A[j, i] = P(Y = j | X = i)``."""
    k = mechanism.k
    y, x = np.meshgrid(np.arange(k), np.arange(k), indexing="ij")
    return _normalise(mechanism.pmf(y, x))


def _normalise(masses: np.ndarray) -> np.ndarray:
    return masses / masses.sum(axis=0, keepdims=True)


def default_output_bins(bins: int) -> int:
    """Output bins used with ``bins`` input cells: four per cell, at least 64."""
    return max(64, 4 * int(bins))


def check_bins(bins, name: str = "bins") -> int:
    """A positive number of bins (``TypeError`` / ``ValueError`` otherwise)."""
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(bins).__name__}")
    if bins < 2:
        raise ValueError(f"{name} must be >= 2, got {bins}")
    return int(bins)

