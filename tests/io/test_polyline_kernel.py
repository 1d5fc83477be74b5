"""The compiled Porto polyline parser: grammar table, exact numbers, and the Arrow fallback."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from tracs.io.polyline_kernel import BAD, EMPTY, OK, SLOW, parse_polylines
from tracs.io.porto import _arrow_pairs, _pairs


@pytest.mark.parametrize("text, status, pairs", [
    ("[[-8.618643,41.141412],[-8.618499,41.141376]]", OK, [[-8.618643, 41.141412], [-8.618499, 41.141376]]),
    ("[]", EMPTY, []),
    (" [ [ -8.5 , 41.0 ] ] ", OK, [[-8.5, 41.0]]),
    ("[[+1,-0.0]]", OK, [[1.0, -0.0]]),
    ("[[1e3,2]]", SLOW, []),
    ("[[-8.6186431234567891,41]]", SLOW, []),  # 17 digits: left to Arrow
    ("[[1,2]", BAD, []),
    ("[[1.,2]]", BAD, []),
    ("[[1,2],]", BAD, []),
    ("[[1,2],[3,4]] x", BAD, []),
    ("[[1,2,3]]", BAD, []),
    ("[[a,2]]", BAD, []),
    ("", BAD, []),
    (None, BAD, []),
])
def test_grammar(text, status, pairs):
    lonlat, counts, got = parse_polylines(pa.array([text], pa.string()))
    assert got.tolist() == [status]
    assert lonlat.tolist() == pairs and counts.tolist() == [len(pairs)]


def test_numbers_are_exactly_float_of_their_text():
    rng = np.random.default_rng(7)
    values = rng.uniform(-180, 180, 20_000)
    texts = [repr(round(float(v), int(d))) for v, d in zip(values, rng.integers(0, 9, 20_000))]
    texts = [t for t in texts if "e" not in t][:19_000]
    line = "[" + ",".join(f"[{a},{b}]" for a, b in zip(texts[0::2], texts[1::2])) + "]"
    lonlat, counts, status = parse_polylines(pa.array([line]))
    assert status.tolist() == [OK]
    np.testing.assert_array_equal(lonlat.ravel(), np.array([float(t) for t in texts]))


def test_slow_trips_are_read_by_arrow_in_place():
    texts = ["[[1,2],[3,4]]", "[[1e1,2.5e-1]]", "[]", "[[5,6]]", "[[x]]"]
    lonlat, counts, empty, bad = _pairs(pa.array(texts))
    assert lonlat.tolist() == [[1, 2], [3, 4], [10, 0.25], [5, 6]]
    assert counts.tolist() == [2, 1, 0, 1, 0] and empty.tolist() == [False, False, True, False, False]
    assert bad.tolist() == [False, False, False, False, True]


def test_kernel_equals_arrow_on_well_formed_polylines():
    rng = np.random.default_rng(3)
    texts = []
    for n in rng.integers(0, 30, 500):
        xy = np.round(np.column_stack([-8.7 + 0.2 * rng.random(n), 41.1 + 0.1 * rng.random(n)]), 6)
        texts.append("[" + ",".join(f"[{x!r},{y!r}]" for x, y in xy.tolist()) + "]")
    column = pa.array(texts)
    fast, arrow = _pairs(column), _arrow_pairs(column)
    for a, b in zip(fast, arrow):
        np.testing.assert_array_equal(a, b)
