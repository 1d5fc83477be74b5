"""The one-point release of the device (the perturbers' ``release_at``) against the batch path.

Every point of every trajectory, released alone at its stream position with the
previous release as its reference, equals bit for bit the batch release of the
whole trajectories, lattice indices included; a continued point without its
reference is refused.
"""

from __future__ import annotations

import numpy as np
import pytest

from tracs.collect import Parameters
from tracs.collect.published import ParameterError, supported_methods
from tracs.methods import GRID, PERTURBER, POLAR, Method, get, registered
from tracs.collect.protocol import stream_of
from tracs.perturbers._base import KeyedSource, batch_streams
from tracs.public import LonLatBox
from tracs.random import resolve_key

BOX = LonLatBox(139.5, 35.5, 140.0, 35.9)


def test_the_registry_says_which_methods_a_device_releases():
    assert supported_methods() == ("tracs-d", "tracs-c", "strawman", "tracs-d-paper")
    assert not get("planar-laplace").pointwise  # its per-point streams take no single stream position
    with pytest.raises(ParameterError, match="method 'planar-laplace' cannot be collected point by point"):
        Parameters.build("planar-laplace", 1.5, BOX)


@pytest.mark.parametrize("lattice, pointwise, supported", [(GRID, True, True), (POLAR, True, True),
                                                           (GRID, False, False), (None, True, False)])
def test_a_registered_pointwise_method_on_a_checked_lattice_is_collected(lattice, pointwise, supported):
    entry = get("tracs-c")
    extra = Method("tracs-c-copy", "copy", PERTURBER, entry.factory, model=entry.model, lattice=lattice,
                   pointwise=pointwise)
    with registered(extra):
        assert ("tracs-c-copy" in supported_methods()) is supported


@pytest.mark.parametrize("method", supported_methods())
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
            released, indices = model.release_at(coords[row], key, stream_of("007", t), k, previous)
            np.testing.assert_array_equal(released, batch[row])
            np.testing.assert_array_equal(indices, batch_indices[row])
            previous = released


@pytest.mark.parametrize("index, previous, message", [
    (-1, None, "index must be >= 0, with the previous release when it is not 0; got -1"),
    (3, None, "index must be >= 0, with the previous release when it is not 0; got 3"),
])
def test_a_continued_point_needs_its_reference(index, previous, message):
    model = Parameters.build("tracs-d", 1.5, BOX).perturber()
    with pytest.raises(ValueError, match=message):
        model.release_at(model.anchor_point, resolve_key(1), stream_of("u", 0), index, previous)
