"""Engine and Dask tests need perturbers that draw from per-trajectory keyed streams.

Bit-identity across workers rests on each trajectory's own stream
(``perturb_many(..., keys=...)``); where the perturbers do not take ``keys`` yet,
the tests that perturb are skipped with that reason (the key-hash tests still run).
"""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from tracs.perturbers import TraCSD

KEYED = "keys" in inspect.signature(TraCSD.perturb_many).parameters
HERE = Path(__file__).resolve().parent
NEEDS_KEYED = ("test_engine.py", "test_dask.py", "test_cli_dask.py", "test_dask_release.py", "test_benchmarks.py")


def pytest_collection_modifyitems(config, items):
    if KEYED:
        return
    skip = pytest.mark.skip(reason="the perturbers take no keys= (per-trajectory keyed streams) in this tree")
    for item in items:
        if item.path.parent == HERE and item.path.name in NEEDS_KEYED:
            item.add_marker(skip)
