"""Lattice API of the mechanisms whose cdf is compiled (:mod:`tracs.mechanisms._cdf_kernels`).

:class:`CompiledInversion` gives ``_cdf``/``_sf`` (the compiled masses, so the
generic rows of :mod:`tracs.mechanisms.lattice` are built from them), the exact
``lattice_cumulative`` of those rows and the compiled sampler, which realises the
same law as the generic bisection (proof in :mod:`tracs.mechanisms._cdf_kernels`).
"""

from __future__ import annotations

import numpy as np

from ..random import resolve_streams
from . import _cdf_kernels as ck

__all__ = ["CompiledInversion"]


class CompiledInversion:
    """Mixin (before :class:`~tracs.mechanisms._base.Mechanism`): an interval mechanism with a compiled cdf.

    Subclasses set ``_LAW`` (a code of :mod:`~tracs.mechanisms._cdf_kernels`) and
    define ``_law_parameters()``, the float64 parameter vector of that law.
    """

    _LAW: int

    def _law_parameters(self) -> np.ndarray:  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    def _masses(self, right: bool, y, x) -> np.ndarray:
        y, x = np.broadcast_arrays(np.asarray(y, dtype=np.float64), np.asarray(x, dtype=np.float64))
        out = ck.masses(self._LAW, right, np.ascontiguousarray(y).reshape(-1), np.ascontiguousarray(x).reshape(-1),
                        self._law_parameters())
        return out.reshape(y.shape)

    def _cdf(self, y, x):
        """``P(Y <= y | x)``: :func:`tracs.mechanisms._cdf_kernels.cdf` (the sampler's thresholds)."""
        return self._masses(False, y, x)

    def _sf(self, y, x):
        """``P(Y > y | x)``: :func:`tracs.mechanisms._cdf_kernels.sf` (the sampler's thresholds)."""
        return self._masses(True, y, x)

    def lattice_cumulative(self, b, k) -> np.ndarray:
        """``P(index < b | x_k)`` of the realised rows: ``min(F_b, ½) + ½ − min(S_b, ½)``.

        ``F_b``, ``S_b`` are the masses left and right of edge ``b`` (the sampler's
        thresholds); summing the cells of
        :func:`~tracs.mechanisms.lattice.row_from_thresholds` below ``b`` gives
        this.  Shape ``(len(b), len(k))``.
        """
        b = np.asarray(b, dtype=np.int64).reshape(-1)
        x = self._input_point(np.asarray(k, dtype=np.int64).reshape(-1))
        A, B, G, h, count = self._grid()
        edges = self._edges(b, A, B, G, h, count)[:, None]
        cum = (np.minimum(self._cdf(edges, x[None, :]), 0.5) + 0.5
               - np.minimum(self._sf(edges, x[None, :]), 0.5))
        cum = np.where((b <= 0)[:, None], 0.0, np.where((b >= count)[:, None], 1.0, cum))
        return np.clip(cum, 0.0, 1.0)

    def _sample_indices(self, flat, rng):
        """The compiled sampler (:func:`tracs.mechanisms._cdf_kernels.snapped_inversion`)."""
        ks = resolve_streams(rng, None, 1)
        _, _, G, h, count = self._grid()
        inp = self.input_lattice
        return ck.snapped_inversion(flat, self._LAW, self._law_parameters(), self._cells(), inp.origin,
                                    inp.spacing, float(self.input_domain.high), G, h, count, ks.kind, ks.key,
                                    np.uint64(ks.streams[0]))
