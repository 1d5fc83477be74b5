"""One wording for counts in messages and reports."""

import pytest

from tracs._text import counted


@pytest.mark.parametrize("n,noun,expected", [
    (1, "trajectory", "1 trajectory"), (0, "trajectory", "0 trajectories"),
    (2345, "trajectory", "2,345 trajectories"), (1, "point", "1 point"), (10_000, "point", "10,000 points"),
    (2, "key", "2 keys"), (3, "datum", "3 data"),
])
def test_counted(n, noun, expected):
    assert counted(n, noun, "data" if noun == "datum" else None) == expected
