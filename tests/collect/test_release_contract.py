"""The one-point release of the device (``release_one``) against the batch path it reuses.

``release_one`` calls the perturber's compiled ``_release`` on one point with the
offsets ``[0, −index, 1]`` and the previous release as the one row of ``out`` (the
kernel reads it as ``out[−1]``).  These tests pin that contract: every point of
every trajectory, released alone at its stream position, equals bit for bit the
batch release of the whole trajectories, lattice indices included.
"""

from __future__ import annotations

import numpy as np
import pytest

from tracs.collect import Parameters
from tracs.collect.protocol import release_one, stream_of
from tracs.perturbers._base import KeyedSource, batch_streams
from tracs.public import LonLatBox
from tracs.random import resolve_key

BOX = LonLatBox(139.5, 35.5, 140.0, 35.9)


@pytest.mark.parametrize("method", ["tracs-d", "tracs-c", "tracs-d-paper", "strawman"])
def test_each_point_released_alone_equals_the_batch_release(method):
    model = Parameters.build(method, 1.5, BOX).perturber()
    (x0, y0, x1, y1) = model.region.bounds
    rng = np.random.default_rng(4)  # seed of the test points
    lengths = [7, 1, 5]
    offsets = np.r_[0, np.cumsum(lengths)].astype(np.int64)
    coords = np.column_stack([rng.uniform(x0, x1, offsets[-1]), rng.uniform(y0, y1, offsets[-1])])
    coords = coords[model.region.contains(coords)][:offsets[-1]]
    assert len(coords) == offsets[-1]
    keys = ["007"] * len(lengths)  # one user's successive trajectories
    batch = model.perturb_many(coords, offsets, rng=11, keys=keys)
    _, batch_indices = model._release(coords, offsets, KeyedSource(batch_streams(11, keys, len(lengths)), offsets))
    key = resolve_key(11)
    for t in range(len(lengths)):
        previous = None
        for k, row in enumerate(range(offsets[t], offsets[t + 1])):
            released, indices = release_one(model, coords[row], key, stream_of("007", t), k, previous)
            np.testing.assert_array_equal(released, batch[row])
            np.testing.assert_array_equal(indices, batch_indices[row])
            previous = released
