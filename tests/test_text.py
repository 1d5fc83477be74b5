"""One wording for counts in messages and reports."""

import pytest

from tracs._text import counted, given, plus_minus, significant


@pytest.mark.parametrize("n,noun,expected", [
    (1, "trajectory", "1 trajectory"), (0, "trajectory", "0 trajectories"),
    (2345, "trajectory", "2,345 trajectories"), (1, "point", "1 point"), (10_000, "point", "10,000 points"),
    (2, "key", "2 keys"), (3, "datum", "3 data"),
])
def test_counted(n, noun, expected):
    assert counted(n, noun, "data" if noun == "datum" else None) == expected


@pytest.mark.parametrize("x, digits, expected", [
    (0.40251, 3, "0.403"), (0.5, 3, "0.5"), (2.60, 3, "2.6"), (34.89, 3, "34.9"), (132.4, 3, "132"), (17917.04, 3, "17,917"),
    (1.176e4, 3, "11,760"), (0.000231, 3, "0.000231"), (0.9996, 3, "1"), (0.09996, 3, "0.1"), (99.96, 3, "100"), (0, 3, "0"),
    (-0.0207, 3, "-0.0207"), (0.0014, 2, "0.0014"), (0.001, 2, "0.001"), (-0.0, 3, "0"), (103.2, 2, "103"),
    (float("nan"), 3, "nan"), (float("inf"), 3, "∞"),
])
def test_significant(x, digits, expected):
    assert significant(x, digits) == expected


@pytest.mark.parametrize("x, expected", [(0.5, "0.5"), (4.0, "4"), (3138.0, "3,138"), (1e-3, "0.001")])
def test_given(x, expected):
    assert given(x) == expected


def test_plus_minus():
    assert plus_minus(0.45312, 0.00141) == "0.453 ± 0.0014"
    assert plus_minus(9825.3, 103.4) == "9,825 ± 103"
