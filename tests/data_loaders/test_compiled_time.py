"""The compiled Foursquare time parser gives the NumPy parser's timestamps, row for row (no tolerance)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa

from tracs.io.foursquare_time import _parse_numpy, parse_foursquare_time

EDGES = ["Sat Dec 08 05:56:34 +0000 2012", "Tue Feb 29 23:59:59 -0130 2000", "Mon Feb 29 10:00:00 +0000 1900",
         "Mon Feb 29 10:00:00 +0000 2004", "Sun Jan 01 00:00:00 +0000 1678", "Sun Dec 31 23:59:59 +0000 2261",
         "Sun Dec 31 23:59:59 +0000 2262", "Sun dec 31 23:59:59 +0000 2011", "Sun Dec 31 24:00:00 +0000 2011",
         "Sun Dec 32 12:00:00 +0000 2011", "Sun Dec 00 12:00:00 +0000 2011", "Sun Apr 31 12:00:00 +0000 2011",
         "Sun Apr 30 12:00:00 +0060 2011", "Sun Apr 30 12:00:00 +0959 2011", "S1n Apr 30 12:00:00 +0000 2011",
         "Sun Apr 30 12:00:00 *0000 2011", "Sun Apr 30 12:00:00 +0000 2011 ", "", None,
         "Sun Apr 30 12:00:00 +0000 201\u00e9", "SUN APR 30 12:00:00 +0000 2011", "Sun Apr 30 12:60:00 +0000 2011",
         "Sun Apr 30 12:00:60 +0000 2011", "Sun Apr 30 12-00:00 +0000 2011"]


def test_compiled_parser_equals_the_numpy_parser():
    rng = np.random.default_rng(0)  # fields drawn past their limits, so that many rows are invalid
    months = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split()
    random = [f"Wed {months[rng.integers(12)]} {rng.integers(0, 33):02d} {rng.integers(0, 25):02d}:"
              f"{rng.integers(0, 61):02d}:{rng.integers(0, 61):02d} {'+-'[rng.integers(2)]}"
              f"{rng.integers(0, 15):02d}{rng.integers(0, 61):02d} {rng.integers(1670, 2270)}" for _ in range(20_000)]
    values = pd.Series(pd.arrays.ArrowStringArray(pa.array(EDGES + random, pa.large_string())))
    compiled = parse_foursquare_time(values)
    reference = _parse_numpy(values, len(values))
    pd.testing.assert_series_equal(compiled, reference)
    assert 0 < compiled.isna().sum() < len(values)  # both kinds of row occur
    assert compiled[0] == pd.Timestamp("2012-12-08 05:56:34", tz="UTC")
    assert compiled[1] == pd.Timestamp("2000-03-01 01:29:59", tz="UTC")  # the offset is applied
    assert compiled[2:3].isna().all() and compiled[3] == pd.Timestamp("2004-02-29 10:00:00", tz="UTC")


def test_sliced_arrow_input():
    arr = pa.array(EDGES * 3, pa.large_string()).slice(5, 40)
    values = pd.Series(pd.arrays.ArrowStringArray(arr))
    pd.testing.assert_series_equal(parse_foursquare_time(values), _parse_numpy(values, len(values)))
