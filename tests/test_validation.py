"""The shared checks of ``tracs._validation``: offsets, coordinate pairs, integers, column keys and
the memory budget, each one function that every caller uses.

A table of refusals (error class and message) and a table of accepted values; then the callers
that used to carry their own copy give the same answers through the shared one.
"""

from __future__ import annotations

import numpy as np
import pytest

from tracs._validation import (NotRealError, as_points, check_integer, check_memory_budget, check_offsets,
                               column_key)
from tracs.errors import InputError, InputTypeError

# (id, call, error class, message fragment)
REFUSALS = [
    ("offsets-float", lambda: check_offsets([0.0, 2.0], 2), InputTypeError,
     "offsets must be an integer array, got dtype float64"),
    ("offsets-bool", lambda: check_offsets(np.array([False, True]), 1), InputTypeError, "got dtype bool"),
    ("offsets-2d", lambda: check_offsets([[0, 2]], 2), InputError, "offsets must be a 1-D array of length T+1 >= 2"),
    ("offsets-one", lambda: check_offsets([0], 0), InputError, "offsets must be a 1-D array of length T+1 >= 2"),
    ("offsets-end", lambda: check_offsets([0, 1], 2), InputError, "offsets must run from 0 to N=2, got 0 .. 1"),
    ("offsets-start", lambda: check_offsets([1, 2], 2), InputError, "offsets must run from 0 to N=2, got 1 .. 2"),
    ("offsets-order", lambda: check_offsets([0, 3, 1, 3], 3), InputError, "offsets must be non-decreasing"),
    ("offsets-empty", lambda: check_offsets([0, 0, 2, 2, 3], 3, empty=False), InputError,
     "2 trajectory(ies) are empty (two equal offsets): each needs at least one point"),
    ("points-shape", lambda: as_points(np.zeros((3, 3))), InputError, "points must have shape (n, 2), got (3, 3)"),
    ("points-flat", lambda: as_points([1.0, 2.0], "coords"), InputError, "coords must have shape (n, 2), got (2,)"),
    ("points-leading", lambda: as_points(np.zeros((2, 2, 3)), leading=True), InputError,
     "points must have shape (..., 2), got (2, 2, 3)"),
    ("points-scalar", lambda: as_points(1.0, leading=True), InputError, "points must have shape (..., 2), got ()"),
    ("points-nan", lambda: as_points([[0.0, np.nan], [np.inf, 1.0]]), InputError,
     "points contains NaN or infinite values (2 of 4)"),
    ("points-complex", lambda: as_points([[1 + 1j, 0]]), NotRealError, "points must be real, got complex values"),
    ("points-text", lambda: as_points([["a", "b"]]), InputTypeError, "points must be numeric, got list"),
    ("int-bool", lambda: check_integer(True, "users"), InputTypeError, "users must be an integer, got bool"),
    ("int-float", lambda: check_integer(2.0, "users"), InputTypeError, "users must be an integer, got float"),
    ("int-fraction", lambda: check_integer(2.5, "k", 2, integral_floats=True), InputError,
     "k must be an integer, got 2.5"),
    ("int-nan", lambda: check_integer(float("nan"), "k", 2, integral_floats=True), InputError,
     "k must be an integer, got nan"),
    ("int-text", lambda: check_integer("3", "k", 2, integral_floats=True), InputTypeError,
     "k must be an integer, got str"),
    ("int-low", lambda: check_integer(0, "users"), InputError, "users must be >= 1, got 0"),
    ("int-low-minimum", lambda: check_integer(1.0, "k", 2, integral_floats=True), InputError, "k must be >= 2, got 1"),
    ("memory-unit", lambda: check_memory_budget("2XB"), InputError,
     "memory must be a number of bytes or a size such as '2GB', got '2XB'"),
    ("memory-type", lambda: check_memory_budget([1]), InputTypeError, "got list"),
    ("memory-bool", lambda: check_memory_budget(True), InputTypeError, "got bool"),
    ("memory-zero", lambda: check_memory_budget(0), InputError, "memory must be a positive size, got 0"),
    ("memory-inf", lambda: check_memory_budget(float("inf")), InputError, "memory must be a positive size, got inf"),
]


@pytest.mark.parametrize("call, error, fragment", [r[1:] for r in REFUSALS], ids=[r[0] for r in REFUSALS])
def test_refusals(call, error, fragment):
    with pytest.raises(error) as info:
        call()
    assert fragment in str(info.value), str(info.value)


# (id, call, expected value)
ACCEPTED = [
    ("offsets-empty-allowed", lambda: check_offsets([0, 0, 2], 2).tolist(), [0, 0, 2]),
    ("offsets-int32", lambda: check_offsets(np.array([0, 1, 3], np.int32), 3).dtype, np.dtype(np.int64)),
    ("points-list", lambda: as_points([[1, 2], [3, 4]]).tolist(), [[1.0, 2.0], [3.0, 4.0]]),
    ("points-empty", lambda: as_points(np.zeros((0, 2))).shape, (0, 2)),
    ("points-nan-allowed", lambda: int(np.isnan(as_points([[np.nan, 0.0]], finite=False)).sum()), 1),
    ("points-leading", lambda: as_points(np.zeros((2, 3, 2)), leading=True).shape, (2, 3, 2)),
    ("points-contiguous", lambda: as_points(np.zeros((4, 2))[::2]).flags.c_contiguous, True),
    ("int-numpy", lambda: check_integer(np.int64(3), "users"), 3),
    ("int-integral-float", lambda: check_integer(6.0, "k", 2, integral_floats=True), 6),
    ("key-spaces", lambda: column_key("User ID"), "userid"),
    ("key-underscore", lambda: column_key(" Lat_Deg "), "latdeg"),
    ("key-not-text", lambda: column_key(7), "7"),
    ("memory-none", lambda: check_memory_budget(None), None),
    ("memory-gb", lambda: check_memory_budget(" 2 GB "), 2_000_000_000),
    ("memory-gib", lambda: check_memory_budget("1.5GiB"), 3 << 29),
    ("memory-bytes", lambda: check_memory_budget(np.float32(1e6)), 1_000_000),
]


@pytest.mark.parametrize("call, expected", [a[1:] for a in ACCEPTED], ids=[a[0] for a in ACCEPTED])
def test_accepted(call, expected):
    assert call() == expected


def test_offsets_are_a_new_array():
    given = np.array([0, 2, 3], dtype=np.int64)
    out = check_offsets(given, 3)
    out[1] = 1
    assert given.tolist() == [0, 2, 3]


def test_the_callers_share_the_checks():
    """Trajectories, the metrics and the batch of the engine refuse the same offsets in the same words."""
    from tracs import Trajectories
    from tracs._validation import as_batch
    from tracs.metrics import trajectory_errors

    pts = np.zeros((3, 2))
    with pytest.raises(InputError, match=r"offsets must run from 0 to N=3, got 0 \.\. 2"):
        as_batch(pts, [0, 2])
    with pytest.raises(InputError, match=r"offsets must run from 0 to N=3, got 0 \.\. 2"):
        trajectory_errors(pts, pts, [0, 2])
    with pytest.raises(InputError, match=r"1 trajectory\(ies\) are empty"):
        trajectory_errors(pts, pts, [0, 0, 3])
    with pytest.raises(InputError, match=r"1 trajectory\(ies\) are empty"):
        Trajectories.from_arrays(pts, [0, 0, 3])
    assert as_batch(pts, [0, 0, 3])[1].tolist() == [0, 0, 3]  # the engine takes empty trajectories
    frozen = Trajectories.from_arrays(pts, [0, 1, 3]).offsets
    assert frozen.tolist() == [0, 1, 3] and not frozen.flags.writeable
