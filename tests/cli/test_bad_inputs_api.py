"""Bad arguments to the library API: the exact exception class, a message fragment, inputs untouched.

The table covers the keyed-randomness arguments of every perturber and baseline
(``rng``, ``keys``, ``key``), their batch validation, and the public-parameter
helpers of :mod:`tracs.public` (region boxes, presets, POI files).  Each case
asserts the exception class and a fragment of its message, and that the caller's
arrays are unchanged.
"""

from __future__ import annotations

import numpy as np
import pytest

from tracs.baselines import ATP, LSRR, TP, ExponentialMechanism, NGram
from tracs.poi_space import POISpace
from tracs.perturbers import PlanarLaplace, Strawman, TraCSC, TraCSD
from tracs.random import resolve_streams
from tracs.region import Rectangle

REGION = Rectangle(0.0, 0.0, 100.0, 100.0)
POIS = POISpace(np.random.default_rng(3).uniform(0, 100, (30, 2)), region=REGION)
PTS = np.array([[10.0, 10.0], [20.0, 30.0], [50.0, 50.0], [70.0, 20.0]])
OFF = np.array([0, 2, 4])

PERTURBERS = {
    "TraCSD": lambda: TraCSD(REGION, 2.0),
    "TraCSC": lambda: TraCSC(REGION, 2.0),
    "Strawman": lambda: Strawman(REGION, 2.0),
    "PlanarLaplace": lambda: PlanarLaplace(REGION, 2.0),
    "EM": lambda: ExponentialMechanism(POIS, 2.0),
    "NGram": lambda: NGram(POIS, 2.0),
    "LSRR": lambda: LSRR(POIS, 2.0),
    "TP": lambda: TP(POIS, 2.0),
    "ATP": lambda: ATP(POIS, 2.0),
}
CONTINUOUS = ("TraCSD", "TraCSC", "Strawman", "PlanarLaplace")

# (id, call(perturber, points, offsets), exception class, fragment)
CALLS = [
    ("rng-word", lambda p, x, o: p.perturb_many(x, o, rng="seed"), ValueError, "only string accepted is 'secure'"),
    ("rng-float", lambda p, x, o: p.perturb_many(x, o, rng=1.5), TypeError, "rng must be None"),
    ("rng-negative", lambda p, x, o: p.perturb_many(x, o, rng=-1), ValueError, "non-negative"),
    ("rng-bool", lambda p, x, o: p.perturb_many(x, o, rng=True), TypeError, "rng must be None"),
    ("keys-too-few", lambda p, x, o: p.perturb_many(x, o, rng=1, keys=["a"]), ValueError,
     "keys has 1 entries for 2 trajectories"),
    ("keys-too-many", lambda p, x, o: p.perturb_many(x, o, rng=1, keys=[1, 2, 3]), ValueError,
     "keys has 3 entries for 2 trajectories"),
    ("keys-string", lambda p, x, o: p.perturb_many(x, o, rng=1, keys="ab"), TypeError,
     "one key per trajectory"),
    ("keys-scalar", lambda p, x, o: p.perturb_many(x, o, rng=1, keys=5), TypeError, "one key per trajectory"),
    ("keys-none-entry", lambda p, x, o: p.perturb_many(x, o, rng=1, keys=["a", None]), ValueError,
     "user key is missing"),
    ("keys-nan-entry", lambda p, x, o: p.perturb_many(x, o, rng=1, keys=np.array([1.0, np.nan])), ValueError,
     "missing or not finite"),
    ("keys-bool-entry", lambda p, x, o: p.perturb_many(x, o, rng=1, keys=["a", True]), TypeError, "not a bool"),
    ("keys-2d", lambda p, x, o: p.perturb_many(x, o, rng=1, keys=np.array([[1, 2]])), ValueError,
     "one-dimensional"),
    ("keys-object", lambda p, x, o: p.perturb_many(x, o, rng=1, keys=["a", object()]), TypeError,
     "a user key must be an int, str or bytes"),
    ("keys-with-streams", lambda p, x, o: p.perturb_many(x, o, rng=resolve_streams(1, None, 2), keys=[1, 2]),
     TypeError, "not both"),
    ("streams-wrong-count", lambda p, x, o: p.perturb_many(x, o, rng=resolve_streams(1, None, 3)), ValueError,
     "3 streams for 2 trajectories"),
    ("key-list", lambda p, x, o: p.perturb(x, rng=1, key=[1, 2]), TypeError, "the key of one user"),
    ("key-nan", lambda p, x, o: p.perturb(x, rng=1, key=float("nan")), ValueError, "not finite"),
    ("empty-points", lambda p, x, o: p.perturb(np.empty((0, 2)), rng=1), ValueError, "points is empty"),
    ("offsets-short", lambda p, x, o: p.perturb_many(x, [0, 2, 3], rng=1), ValueError, "offsets must run from 0"),
    ("offsets-decreasing", lambda p, x, o: p.perturb_many(x, [0, 3, 2, 4], rng=1), ValueError, "non-decreasing"),
    ("offsets-float", lambda p, x, o: p.perturb_many(x, [0.0, 4.0], rng=1), TypeError, "integer array"),
    ("offsets-missing", lambda p, x, o: p.perturb_many(x, rng=1), TypeError, "offsets is required"),
    ("points-nan", lambda p, x, o: p.perturb([[1.0, np.nan]], rng=1), ValueError, "NaN or infinite"),
    ("points-shape", lambda p, x, o: p.perturb([1.0, 2.0], rng=1), ValueError, "shape (n, 2)"),
    ("points-text", lambda p, x, o: p.perturb([["a", "b"]], rng=1), TypeError, "must be numeric"),
    ("empty-list", lambda p, x, o: p.perturb_many([], rng=1), ValueError, "empty list"),
]


@pytest.mark.parametrize("call, error, fragment", [c[1:] for c in CALLS], ids=[c[0] for c in CALLS])
@pytest.mark.parametrize("name", sorted(PERTURBERS))
def test_bad_call(name, call, error, fragment):
    perturber = PERTURBERS[name]()
    points, offsets = PTS.copy(), OFF.copy()
    with pytest.raises(error) as info:
        call(perturber, points, offsets)
    assert fragment in str(info.value)
    assert np.array_equal(points, PTS) and np.array_equal(offsets, OFF)  # nothing of the caller's changed


@pytest.mark.parametrize("name", CONTINUOUS)
def test_points_outside_the_region(name):
    with pytest.raises(ValueError, match="outside"):
        PERTURBERS[name]().perturb([[150.0, 50.0]], rng=1, key="u")


@pytest.mark.parametrize("call, error, fragment", [
    (lambda b: b.perturb_indices([0, 99], [0, 2], rng=1), ValueError, "indices must lie in 0"),
    (lambda b: b.perturb_indices([0, -1], [0, 2], rng=1), ValueError, "indices must lie in 0"),
    (lambda b: b.perturb_indices([0.5, 1.0], [0, 2], rng=1), TypeError, "1-D integer array"),
    (lambda b: b.perturb_indices([], [0, 0], rng=1), ValueError, "indices is empty"),
    (lambda b: b.perturb_indices([0, 1], [0, 2], rng=1, keys=["a", "b"]), ValueError, "keys has 2 entries"),
], ids=["index-high", "index-negative", "index-float", "index-empty", "index-keys"])
@pytest.mark.parametrize("name", ["EM", "NGram", "LSRR", "TP", "ATP"])
def test_bad_indices(name, call, error, fragment):
    with pytest.raises(error) as info:
        call(PERTURBERS[name]())
    assert fragment in str(info.value)


@pytest.mark.parametrize("call, error, fragment", [
    (lambda: __import__("tracs.public").public.parse_box("1,2,3"), ValueError, "needs 4 numbers"),
    (lambda: __import__("tracs.public").public.parse_box("x,2,3,4"), ValueError, "needs 4 numbers"),
    (lambda: __import__("tracs.public").public.parse_box("paris"), ValueError, "unknown region preset"),
    (lambda: __import__("tracs.public").public.parse_box(5), TypeError, "preset name"),
    (lambda: __import__("tracs.public").public.LonLatBox(1, 0, 1, 1), ValueError, "the box is empty"),
    (lambda: __import__("tracs.public").public.LonLatBox(2, 0, 1, 1), ValueError, "across the antimeridian"),
    (lambda: __import__("tracs.public").public.LonLatBox(0, 0, 200, 1), ValueError, "longitudes must lie"),
    (lambda: __import__("tracs.public").public.LonLatBox(0, -95, 1, 1), ValueError, "latitudes must lie"),
    (lambda: __import__("tracs.public").public.LonLatBox(0, 0, float("nan"), 1), ValueError, "finite"),
    (lambda: __import__("tracs.public").public.LonLatBox(0, 0, "1", 1), TypeError, "four numbers"),
    (lambda: __import__("tracs.public").public.LonLatBox(True, 0, 1, 1), TypeError, "four numbers"),
    (lambda: __import__("tracs.public").public.city_box("TKYO"), ValueError, "unknown region preset"),
], ids=["box-3", "box-word", "box-preset", "box-int", "box-empty", "box-antimeridian", "box-lon", "box-lat", "box-nan",
        "box-str", "box-bool", "box-typo"])
def test_bad_public_parameters(call, error, fragment):
    with pytest.raises(error) as info:
        call()
    assert fragment in str(info.value)


@pytest.mark.parametrize("text, error, fragment", [
    ("lat,lng\n35.7,139.7\nabc,139.8\n", ValueError, "lines 3"),
    ("name\nx\n", ValueError, "needs a latitude column"),
    ("lat,lng\n35.7,139.7\n", ValueError, "at least two distinct"),
    ("lat,lng\n35.7,139.7\n10.0,10.0\n", ValueError, "outside the region"),
    ("", ValueError, "cannot read it as CSV"),
], ids=["poi-word", "poi-columns", "poi-one", "poi-outside", "poi-empty"])
def test_bad_poi_files(tmp_path, text, error, fragment):
    from tracs.public import CITY_BOXES, read_pois

    path = tmp_path / "pois.csv"
    path.write_text(text)
    with pytest.raises(error) as info:
        read_pois(path, CITY_BOXES["tky"])
    assert fragment in str(info.value)
    assert path.read_text() == text and [p.name for p in tmp_path.iterdir()] == ["pois.csv"]
