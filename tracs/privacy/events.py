"""Output events for the audit: a partition of the output space into cells.

Cells are built from the *selection* half of the draws only (never from the
draws that are later used for the bound):

* **atoms** — output values (1-D) or points (2-D) that carry mass of their
  own: an end-point mass, a category, a POI, or an input returned verbatim.  Up
  to ``max_atoms`` values, each seen at least ``atom_min_count`` times *and* in
  at least a share ``atom_share`` of the pooled draws — so that fine lattice
  points that merely collide by chance in the selection half (and would not
  recur in the other half) are left to the histogram bins.
* **bins** — every other value falls in a histogram bin with quantile edges of
  the remaining pooled selection draws (per axis in 2-D), the outer bins
  extending to infinity.

An audit *event* is a set of cells; the candidates are every single cell and,
for each ordered input pair, the unions of the cells ranked by their estimated
likelihood ratio (the threshold events of the Neyman–Pearson lemma, as in
DP-Sniper).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Cells", "build_cells", "ranked_unions"]


def _as_keys(values: np.ndarray) -> np.ndarray:
    """1-D float keys for exact comparison: the values, or ``x + iy`` for 2-D points."""
    values = np.asarray(values, dtype=np.float64)
    if values.ndim == 1:
        return values + 0.0  # folds -0.0 onto 0.0
    return (values[:, 0] + 0.0) + 1j * (values[:, 1] + 0.0)


@dataclass(frozen=True)
class Cells:
    """A partition of the output space: ``atoms`` first, then histogram bins.

    Attributes
    ----------
    atoms : numpy.ndarray
        Sorted keys of the atoms (float, or complex ``x + iy`` in 2-D).
    edges : tuple of numpy.ndarray
        Interior bin edges per axis (one axis in 1-D, two in 2-D).
    """

    atoms: np.ndarray
    edges: tuple

    @property
    def n_bins(self) -> int:
        return int(np.prod([len(e) + 1 for e in self.edges]))

    @property
    def size(self) -> int:
        return len(self.atoms) + self.n_bins

    def assign(self, values) -> np.ndarray:
        """Cell index of every output (atoms ``0..a-1``, then bins), vectorised."""
        values = np.asarray(values, dtype=np.float64)
        keys = _as_keys(values)
        a = len(self.atoms)
        cols = values[:, None] if values.ndim == 1 else values
        bin_id = np.zeros(len(values), dtype=np.int64)
        for axis, edges in enumerate(self.edges):
            bin_id = bin_id * (len(edges) + 1) + np.searchsorted(edges, cols[:, axis], side="right")
        if a == 0:
            return bin_id
        pos = np.minimum(np.searchsorted(self.atoms, keys), a - 1)
        is_atom = self.atoms[pos] == keys
        return np.where(is_atom, pos, a + bin_id)

    def describe(self, cells) -> str:
        """A short human description of a set of cells."""
        cells = np.sort(np.asarray(cells, dtype=np.int64))
        a = len(self.atoms)
        atoms = [self.atoms[c] for c in cells if c < a]
        bins = [int(c - a) for c in cells if c >= a]
        parts = []
        if atoms:
            shown = ", ".join(_fmt(v) for v in atoms[:3]) + (", …" if len(atoms) > 3 else "")
            parts.append(f"Y = {shown}" if len(atoms) == 1 else f"Y ∈ {{{shown}}} ({len(atoms)} values)")
        if bins:
            if len(self.edges) == 1 and len(bins) <= 2:
                parts.extend(self._interval(b) for b in bins)
            else:
                parts.append(f"{len(bins)} of {self.n_bins} histogram bins")
        return " or ".join(parts)

    def _interval(self, b: int) -> str:
        edges = self.edges[0]
        lo = edges[b - 1] if b > 0 else -np.inf
        hi = edges[b] if b < len(edges) else np.inf
        return f"{_fmt(lo)} <= Y < {_fmt(hi)}"


def _fmt(v) -> str:
    if isinstance(v, complex) or np.iscomplexobj(v):
        return f"({v.real:.6g}, {v.imag:.6g})"
    return f"{float(v):.6g}"


def build_cells(pooled, *, bins: int = 48, max_atoms: int = 256, atom_min_count: int = 8,
                atom_share: float = 1e-4) -> Cells:
    """Cells from the pooled selection draws (shape ``(n,)`` or ``(n, 2)``).

    ``bins`` is the number of histogram bins in 1-D and per axis in 2-D (then
    ``ceil(sqrt(bins))`` per axis, to keep the cells populated).
    """
    pooled = np.asarray(pooled, dtype=np.float64)
    keys = _as_keys(pooled)
    uniq, counts = np.unique(keys, return_counts=True)
    frequent = np.flatnonzero(counts >= max(atom_min_count, atom_share * len(keys)))
    if len(frequent) > max_atoms:
        frequent = frequent[np.argsort(-counts[frequent], kind="stable")[:max_atoms]]
    atoms = np.sort(uniq[frequent])
    if len(atoms):
        pos = np.minimum(np.searchsorted(atoms, keys), len(atoms) - 1)
        rest = pooled[atoms[pos] != keys]
    else:
        rest = pooled
    cols = rest[:, None] if rest.ndim == 1 else rest
    per_axis = bins if pooled.ndim == 1 else max(2, int(np.ceil(np.sqrt(bins))))
    edges = []
    for axis in range(cols.shape[1]):
        if len(cols) == 0:
            edges.append(np.empty(0))
            continue
        q = np.quantile(cols[:, axis], np.linspace(0.0, 1.0, per_axis + 1)[1:-1])
        edges.append(np.unique(q))
    return Cells(atoms=atoms, edges=tuple(edges))


def ranked_unions(c1: np.ndarray, c2: np.ndarray):
    """Candidate events for the pair ``(x1, x2)`` from selection counts per cell.

    Returns ``(order, cum1, cum2)``: cells sorted by the smoothed ratio
    ``(c1 + ½)/(c2 + ½)`` (largest first) and the cumulative counts of the
    unions of the first ``j + 1`` cells.
    """
    ratio = (c1 + 0.5) / (c2 + 0.5)
    order = np.argsort(-ratio, kind="stable")
    return order, np.cumsum(c1[order]), np.cumsum(c2[order])
