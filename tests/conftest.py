"""Shared fixtures.

Real check-in files are read in place from ``TRACS_DATA_DIR`` or, when it is not
set, from ``../shared/datasets`` beside the project.  Without them, data tests skip
with a message; in CI (``CI`` set to a true value) a missing file is a failure,
never a skip.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

DATA_FILES = {
    "tky": "foursquare_tky_101users.csv",
    "nyc": "foursquare_nyc_subset.csv",
    "chi": "gowalla_chi_subset.csv",
}


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}


def _missing(message: str):
    if in_ci():
        pytest.fail(f"{message} (CI must run every data test)")
    pytest.skip(message)


# no "compiling the ... kernels once" line on stderr: which test compiles a family first depends on
# the order and the worker (pytest -n auto), and tests compare standard error (one test checks the line)
os.environ.setdefault("TRACS_COMPILE_NOTICE", "0")

SIBLING_DATA_DIR = Path(__file__).resolve().parents[2] / "shared" / "datasets"
if not os.environ.get("TRACS_DATA_DIR") and SIBLING_DATA_DIR.is_dir():
    # let every test (and the subprocesses it starts) find the sibling data folder
    os.environ["TRACS_DATA_DIR"] = str(SIBLING_DATA_DIR)


def dataset_path(key: str) -> Path:
    """Path of a real data file, or skip (fail in CI) when it is not available."""
    root = os.environ.get("TRACS_DATA_DIR")
    if not root:
        _missing("TRACS_DATA_DIR is not set and ../shared/datasets is absent: real-data test skipped")
    path = Path(root) / DATA_FILES[key]
    if not path.is_file():
        _missing(f"{path} not found: real-data test skipped")
    return path


@pytest.fixture
def tky_path() -> Path:
    return dataset_path("tky")


@pytest.fixture
def nyc_path() -> Path:
    return dataset_path("nyc")


@pytest.fixture
def chi_path() -> Path:
    return dataset_path("chi")


@pytest.fixture
def artifacts_dir(request) -> Path:
    """A per-test folder under ``tests/_artifacts`` for screenshots and files worth keeping."""
    path = Path(__file__).parent / "_artifacts" / request.node.name.replace("/", "_")
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture
def no_data_dirs(monkeypatch, tmp_path):
    """No real data anywhere tracs looks: TRACS_DATA_DIR unset, no checkout folder, an empty cache."""
    import data_loaders.datasets as datasets

    monkeypatch.delenv("TRACS_DATA_DIR", raising=False)
    monkeypatch.setattr(datasets, "CHECKOUT_DATA_DIR", tmp_path / "no-checkout-data")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "empty-cache"))
