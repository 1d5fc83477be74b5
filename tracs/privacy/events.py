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

Besides the values, the audit partitions the released *indices* (the lattice
index of a value, the direction and distance indices of TraCS-D; the bits of the
double for a sampler without lattice): by their low bits (``k mod 2^b`` per
axis, ``b = 1 … 8``, and jointly in 2-D) and, for indexed releases, by the index
values themselves.  A leak into the parity or the low bits of a fine lattice index
moves no histogram bin; it shows in these cells (:func:`partitions`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Cells", "build_cells", "partitions", "ValueCells", "IndexCells", "BitCells",
           "BIT_DEPTHS"]

#: low-bit partitions: ``k mod 2^b`` for these ``b``
BIT_DEPTHS = (1, 2, 3, 4, 6, 8)


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


class ValueCells:
    """The released values' cells (:class:`Cells`)."""

    #: events are single cells and likelihood-ratio-ranked unions of them
    unions = True

    def __init__(self, cells: Cells):
        self.cells = cells
        self.size = cells.size

    def assign(self, values, indices) -> np.ndarray:
        return self.cells.assign(values)

    def describe(self, cells) -> str:
        return self.cells.describe(cells)


class IndexCells(ValueCells):
    """Cells of the released indices taken as values (atoms and quantile bins)."""

    def assign(self, values, indices) -> np.ndarray:
        idx = indices.astype(np.float64)
        return self.cells.assign(idx[:, 0] if idx.shape[1] == 1 else idx)

    def describe(self, cells) -> str:
        return "index " + self.cells.describe(cells).replace("Y", "K")


class BitCells:
    """Cells by the low ``bits`` bits of the released indices on ``axes`` (jointly).

    Events are single cells only: a low-bit channel puts its mass on one residue,
    and unions of many small residues would only fit the selection half's noise.
    """

    unions = False

    def __init__(self, axes, bits: int, names):
        self.axes, self.bits, self.names = tuple(axes), int(bits), names
        self.size = (1 << self.bits) ** len(self.axes)

    def assign(self, values, indices) -> np.ndarray:
        mask = (1 << self.bits) - 1
        cell = np.zeros(len(indices), dtype=np.int64)
        for axis in self.axes:
            cell = (cell << self.bits) | (indices[:, axis] & mask)
        return cell

    def describe(self, cells) -> str:
        cells = np.sort(np.asarray(cells, dtype=np.int64))
        mask = (1 << self.bits) - 1
        combos = []
        for c in cells[:4]:
            parts = [(c >> (self.bits * (len(self.axes) - 1 - n))) & mask for n in range(len(self.axes))]
            combos.append("(" + ", ".join(str(int(v)) for v in parts) + ")" if len(parts) > 1 else str(int(parts[0])))
        keys = ", ".join(f"{self.names[a]} mod {1 << self.bits}" for a in self.axes)
        more = ", …" if len(cells) > 4 else ""
        return f"index low bits: ({keys}) ∈ {{{', '.join(combos)}{more}}} ({len(cells)} of {self.size})"


def partitions(values, indices, *, bins: int, index_cells: bool, names) -> list:
    """Every partition the audit scores, built from the pooled selection draws only.

    ``values`` ``(n,)`` or ``(n, 2)``; ``indices`` ``(n, d)`` int64 (lattice indices,
    or the bits of the values); ``names`` the index axes' names.
    """
    parts = [ValueCells(build_cells(values, bins=bins))]
    d = indices.shape[1]
    if index_cells:
        idx = indices.astype(np.float64)
        parts.append(IndexCells(build_cells(idx[:, 0] if d == 1 else idx, bins=bins)))
    for bits in BIT_DEPTHS:
        parts.extend(BitCells((axis,), bits, names) for axis in range(d))
    if d == 2:
        parts.extend(BitCells((0, 1), bits, names) for bits in (1, 2, 3))
    return parts
