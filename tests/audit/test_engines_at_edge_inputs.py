"""At the nasty inputs the released points are the public map of the released lattice
indices, and the (φ, u) fed to the mechanisms always lies in their input domains.

The mechanisms are ε-LDP for *every* ``(φ, u) ∈ [0, 2π) × [0, 1]``, so the guarantee
survives any geometry as long as the computed pair stays in that box.  The inputs below
are the ones where it could escape: the reference on an edge or a corner, ``τ == o``,
``τ`` on the boundary, and (polygons) ``τ`` up to the containment tolerance *outside* an
edge, which validation accepts.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from tracs.perturbers import Strawman, TraCSD
from tracs.region import ConvexRegion, Rectangle

UNIT = Rectangle(0.0, 0.0, 1.0, 1.0)
HEXAGON = ConvexRegion([(math.cos(a), math.sin(a)) for a in np.arange(6) * math.pi / 3])


def edge_points(region):
    """Vertices, edge midpoints, the centre, and midpoints pushed out by the tolerance."""
    v = region.vertices
    mid = 0.5 * (v + np.roll(v, -1, axis=0))
    normals, _ = region.halfplanes
    out = mid + 0.9 * region.tolerance * normals
    pts = np.concatenate([v, mid, [region.center], out])
    return pts[region.contains(pts)]


@pytest.mark.parametrize("region", [UNIT, HEXAGON], ids=["unit", "hexagon"])
def test_direction_distance_stays_in_the_mechanisms_domains(region):
    pts = edge_points(region)
    o, tau = (a.reshape(-1, 2) for a in np.broadcast_arrays(pts[:, None, :], pts[None, :, :]))
    phi, u = region.direction_distance(o, tau)
    assert np.all((phi >= 0.0) & (phi < 2 * math.pi))
    assert np.all((u >= 0.0) & (u <= 1.0))
    same = np.all(o == tau, axis=1)
    assert np.all(phi[same] == 0.0) and np.all(u[same] == 0.0)  # τ == o: fixed direction, u = 0


def replay(p, region, traj, off, idx):
    """Released points recomputed in NumPy from the lattice indices and public parameters only."""
    lat = p.lattice
    out = np.empty_like(traj)
    for t in range(len(off) - 1):
        ref = np.asarray(p.anchor_point)
        for i in range(off[t], off[t + 1]):
            unit = lat.unit_vectors([idx[i, 0]])  # the lattice's public (cos, sin) of the angle
            phi = float(lat.direction.points(idx[i, 0]))
            assert np.allclose(unit[0], [math.cos(phi), math.sin(phi)], rtol=0, atol=1e-15)
            reach = float(region._exit_distance(ref[None], unit[:, 0], unit[:, 1])[0])
            step = float(lat.distance.points(idx[i, 1])) * reach
            point = ref + step * unit[0]
            out[i] = region._clamp_from(ref[None], point[None])[0]
            ref = out[i]
    return out


@pytest.mark.parametrize("cls, region", [(TraCSD, UNIT), (TraCSD, HEXAGON), (Strawman, UNIT)],
                         ids=["tracsd-unit", "tracsd-hexagon", "strawman-unit"])
@pytest.mark.parametrize("eps", [1e-6, 1.0, 50.0])
def test_releases_are_a_function_of_the_indices_at_edge_inputs(cls, region, eps):
    pts = edge_points(region)
    for anchor in pts[::2]:  # trajectories start at corners, edges, the centre, ...
        p = cls(region, eps, anchor=tuple(anchor))
        # trajectories: every point alone, then a walk along all of them (τ == o happens)
        traj = np.concatenate([pts, pts, pts[::-1]])
        off = np.concatenate([np.arange(len(pts) + 1), [len(traj)]])
        a = p.perturb_many(traj, off, rng=9)
        idx = p.lattice_indices(traj, off, rng=9)
        assert np.allclose(a, replay(p, region, traj, off, idx), rtol=0, atol=1e-9 * region.diameter)
        assert np.all(region.contains(a))
