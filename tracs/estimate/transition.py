"""Exact one-dimensional transition matrices from a mechanism's public lattice law.

``A[j, i] = P(Y ∈ output bin j | X uniform in input cell i)``.  Every mechanism
releases values of its public lattice (``mechanism.lattice``) after snapping its
input to the public input lattice (``mechanism.input_lattice``); the law of a
release at input lattice point ``x_k`` is the row ``mechanism.lattice_row(k)``.
Here

* an output bin is a run of consecutive lattice indices: the requested bin edges
  are moved to the nearest boundaries between lattice cells (:func:`snap_edges`),
  so every released value falls in exactly one bin and the reports are binned by
  their lattice value;
* a column is the mean, over ``nodes`` input lattice points spread evenly through
  the input cell, of the lattice row summed over every bin.  The sums over runs of
  a row are differences of the mechanism's cumulative masses at the lattice cell
  boundaries (how the rows are defined, :mod:`tracs.mechanisms.lattice`), so no
  row of a million lattice points is ever built; the tests compare every shipped
  mechanism with sums of ``lattice_row`` on coarse lattices (1e-12).

The outermost bins take all the lattice cells beyond them, so every column sums
to 1 (the sum telescopes; columns are renormalised to remove rounding, to 1e-15).
Discrete mechanisms (``Duchi``, ``KRR``) use their ``pmf``; a mechanism without a
lattice falls back to its continuous ``cdf`` over the bins.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError, InputTypeError
from ..mechanisms import KRR, Circle, Duchi, RealLine

__all__ = ["input_edges", "output_edges", "snap_edges", "transition_matrix", "bin_reports",
           "binned_rows", "input_nodes", "output_grid", "bin_index"]

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
    reports' range (public post-processing of the reports), plus two infinite tails.
    On a lattice the inner edges are moved to boundaries between lattice cells
    (:func:`snap_edges`)."""
    dom = mechanism.output_domain
    if isinstance(mechanism, Duchi):
        lo, hi = mechanism.outputs
        return np.array([-np.inf, 0.5 * (lo + hi), np.inf])
    if isinstance(dom, Circle):
        edges = np.linspace(0.0, dom.period, bins + 1)
    elif isinstance(dom, RealLine):
        ind = mechanism.input_domain
        lo = min(ind.low, float(np.min(reports))) if len(reports) else ind.low
        hi = max(ind.high, float(np.max(reports))) if len(reports) else ind.high
        inner = np.linspace(lo, hi, bins + 1)
        edges = np.concatenate([[-np.inf], inner[1:-1], [np.inf]])
    else:
        edges = np.linspace(dom.low, dom.high, bins + 1)
        edges[0], edges[-1] = -np.inf, np.inf
    return snap_edges(mechanism, edges)


def _on_lattice(mechanism) -> bool:
    return (not isinstance(mechanism, (Duchi, KRR)) and hasattr(mechanism, "lattice")
            and hasattr(mechanism, "input_lattice") and hasattr(mechanism, "cdf"))


def _boundaries(mechanism, edges: np.ndarray) -> np.ndarray:
    """Lattice index where every bin starts: the number of lattice values below each edge."""
    lat = mechanism.lattice
    b = np.ceil((edges - lat.origin) / lat.spacing - 1e-9)
    if isinstance(mechanism.output_domain, Circle):
        b[0], b[-1] = 0, lat.count
        return np.clip(b, 0, lat.count).astype(np.int64)
    b = np.clip(np.where(np.isfinite(edges), b, 0), 1, lat.count - 1)
    b[0], b[-1] = 0, lat.count
    return b.astype(np.int64)


def snap_edges(mechanism, edges) -> np.ndarray:
    """Bin edges moved to the nearest-above boundaries between the mechanism's lattice cells.

    The bin ``(e_j, e_{j+1}]`` then holds exactly the lattice values with indices
    ``b_j <= k < b_{j+1}`` (boundary ``origin + (b − ½)·spacing``); the outer
    edges (``±∞``, or ``0`` and the period on a circle) stay.  Mechanisms without a
    lattice get ``edges`` back.
    """
    edges = np.asarray(edges, dtype=np.float64)
    if not _on_lattice(mechanism):
        return edges
    lat = mechanism.lattice
    b = _boundaries(mechanism, edges)
    out = lat.origin + (b - 0.5) * lat.spacing
    out[0], out[-1] = edges[0], edges[-1]
    return out


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
    if _on_lattice(mechanism):
        return _lattice_matrix(mechanism, in_edges, out_edges, nodes)
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


def input_nodes(mechanism, in_edges: np.ndarray, nodes: int) -> np.ndarray:
    """Input lattice indices of ``nodes`` evenly spread points of every input cell: (cells, nodes)."""
    inp = mechanism.input_lattice
    k = np.rint((_cell_nodes(in_edges, nodes) - inp.origin) / inp.spacing).astype(np.int64)
    if isinstance(mechanism.input_domain, Circle):
        return np.mod(k, inp.count)
    return np.clip(k, 0, inp.count - 1)


def input_points(mechanism, k: np.ndarray) -> np.ndarray:
    """The input lattice values ``x_k`` (inside the input domain)."""
    x = mechanism.input_lattice.points(k)
    dom = mechanism.input_domain
    return x if isinstance(dom, Circle) else np.minimum(x, dom.high)


def binned_rows(mechanism, k: np.ndarray, out_edges: np.ndarray) -> np.ndarray:
    """``Σ_{j in bin} lattice_row(k)[j]`` for every bin and input index: (bins, len(k)).

    Differences of the mechanism's cumulative lattice masses
    (:meth:`~tracs.mechanisms.lattice.LatticeMixin.lattice_cumulative`) at the lattice
    cell boundaries that start the bins (:func:`snap_edges`).
    """
    b = _boundaries(mechanism, out_edges)
    cum = mechanism.lattice_cumulative(b, np.asarray(k).reshape(-1))
    return np.clip(np.diff(cum, axis=0), 0.0, None)


def _lattice_matrix(mechanism, in_edges, out_edges, nodes) -> np.ndarray:
    k = input_nodes(mechanism, in_edges, nodes)
    uniq, inverse = np.unique(k, return_inverse=True)
    rows = binned_rows(mechanism, uniq, snap_edges(mechanism, out_edges))
    masses = rows[:, inverse.reshape(k.shape)].mean(axis=2)
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
        raise InputTypeError(f"{name} must be an int, got {type(bins).__name__}")
    if bins < 2:
        raise InputError(f"{name} must be >= 2, got {bins}")
    return int(bins)


def output_grid(edges_cells: np.ndarray, output_bins) -> np.ndarray:
    """Edges of ``output_bins`` equal bins over the cells' span (default 2 per cell)."""
    n = 2 * (len(edges_cells) - 1) if output_bins is None else int(output_bins)
    if n < 2:
        raise InputError(f"output_bins must be >= 2, got {output_bins}")
    return np.linspace(edges_cells[0], edges_cells[-1], n + 1)


def bin_index(values, edges) -> np.ndarray:
    """Bin of every value: ``(e_j, e_{j+1}]``, the outer bins taking everything beyond."""
    return np.clip(np.searchsorted(edges, values, side="left") - 1, 0, len(edges) - 2)
