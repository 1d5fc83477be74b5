"""Named data sets (Tokyo, New York, Chicago, synthetic) and format detection.

The real check-in files are not part of the package.  Everything that reads them
(the loaders, ``tracs demo``, ``tracs evaluate``, the tests) looks in the same
places, in this order (:func:`data_dirs`):

1. the folder named by the ``TRACS_DATA_DIR`` environment variable;
2. ``shared/datasets`` beside a source checkout of the project (``../shared/datasets``
   seen from the repository);
3. the user cache folder ``$XDG_CACHE_HOME/tracs/datasets`` (default
   ``~/.cache/tracs/datasets``): copy the files there once to use them from anywhere.

A folder (or a path) given explicitly always wins.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from tracs.io.formats import FORMATS, format_of
from tracs.io.profiles import HEADERLESS, headerless_profile, profile_of
from tracs.errors import InputError
from tracs.io.delimited_text import check_path, sniff

from .foursquare import load_foursquare
from .generic import load_checkins
from .gowalla import load_gowalla
from .synthetic import synthetic_checkins

__all__ = ["DATASETS", "dataset_path", "data_dirs", "load_dataset", "load_any", "detect_format"]

#: name -> (file name in the data folder, loader, description)
DATASETS = {
    "tky": ("foursquare_tky_101users.csv", load_foursquare,
            "Foursquare TSMC2014 Tokyo, first 101 users: 29,114 check-ins"),
    "nyc": ("foursquare_nyc_subset.csv", load_foursquare,
            "Foursquare TSMC2014 New York, first 101 users: 21,081 check-ins"),
    "chi": ("gowalla_chi_subset.csv", load_gowalla,
            "Gowalla (SNAP) Chicago, 1,000 locations: 36,094 check-ins"),
}
ENV = "TRACS_DATA_DIR"
#: ``shared/datasets`` beside a source checkout (this file is ``<repo>/data_loaders/datasets.py``)
CHECKOUT_DATA_DIR = Path(__file__).resolve().parents[2] / "shared" / "datasets"


def user_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/tracs/datasets`` (default ``~/.cache/tracs/datasets``)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tracs" / "datasets"


def data_dirs() -> list[Path]:
    """The folders searched for the real data files, in order (see the module docstring)."""
    folders = []
    if os.environ.get(ENV):
        folders.append(Path(os.environ[ENV]))
    folders += [CHECKOUT_DATA_DIR, user_cache_dir()]
    return folders


def dataset_path(name: str, data_dir=None) -> Path:
    """Path of a named data set file (``"tky"``, ``"nyc"``, ``"chi"``).

    Parameters
    ----------
    name : str
        A key of :data:`DATASETS`.
    data_dir : str or os.PathLike, optional
        The folder holding the files; default the first of :func:`data_dirs` that
        holds the file.

    Raises
    ------
    ValueError
        Unknown name.
    FileNotFoundError
        The file is in none of the folders searched (the message lists them).
    """
    key = str(name).lower()
    if key not in DATASETS:
        raise InputError(f"unknown data set {name!r}; choose from {sorted(DATASETS)} or 'synthetic'")
    file_name = DATASETS[key][0]
    if data_dir is not None:
        path = Path(data_dir) / file_name
        if not path.is_file():
            raise FileNotFoundError(f"{path} not found ({DATASETS[key][2]})")
        return path
    folders = data_dirs()
    for folder in folders:
        if (folder / file_name).is_file():
            return folder / file_name
    raise FileNotFoundError(
        f"where is the {key} data ({file_name})? looked in: {', '.join(str(f) for f in folders)}; "
        f"set {ENV} to the folder holding it, copy it into {user_cache_dir()}, or pass its path")


def detect_format(path) -> str:
    """``"foursquare"``, ``"gowalla"`` or ``"table"`` (any other file of the format table).

    A delimited text file (:data:`tracs.io.formats.FORMATS`) is Foursquare's or Gowalla's
    when its first line is the original headerless file's or its header has the
    profile's names and as many fields (:mod:`tracs.io.profiles`)."""
    path = check_path(path)
    if format_of(path).read != FORMATS["csv"].read:
        return "table"
    head = sniff(path, what="check-in", delimiters="\t,;|")
    profile = headerless_profile(head, "auto") or profile_of(head.fields)
    return profile if len(head.fields) == len(HEADERLESS.get(profile, ())) else "table"


def load_any(path_or_frame, **kwargs):
    """Load check-ins in any supported format, detected from the data.

    Foursquare and Gowalla files go to :func:`load_foursquare` /
    :func:`load_gowalla`; anything else (any format of :data:`tracs.io.formats.FORMATS`,
    frames) to :func:`load_checkins` with ``kwargs`` (column names, ...).
    """
    if isinstance(path_or_frame, pd.DataFrame):
        return load_checkins(path_or_frame, **kwargs)
    kind = detect_format(path_or_frame)
    loader = {"foursquare": load_foursquare, "gowalla": load_gowalla}.get(kind, load_checkins)
    return loader(path_or_frame, **kwargs)


def load_dataset(name: str = "synthetic", *, data_dir=None, users: int = 200, seed=0, **kwargs):
    """Load a named data set: ``"tky"``, ``"nyc"``, ``"chi"`` or ``"synthetic"``.

    ``"synthetic"`` (the default, needing no file) is
    :func:`synthetic_checkins` with ``users`` and ``seed`` (and ``kwargs``); the
    others are read from :func:`dataset_path` with their loader (``kwargs`` go to
    it, e.g. ``strict=True``).  A path to a file is loaded with :func:`load_any`.
    """
    key = str(name).lower()
    if key == "synthetic":
        return synthetic_checkins(users=users, seed=seed, **kwargs)
    if key in DATASETS:
        return DATASETS[key][1](dataset_path(key, data_dir), **kwargs)
    if os.path.sep in str(name) or Path(str(name)).suffix:
        return load_any(name, **kwargs)
    raise InputError(f"unknown data set {name!r}; choose from {sorted(DATASETS)}, 'synthetic' "
                     "or give a file path")
