"""Which public trajectory data set a path holds, from its layout (no file is parsed).

:func:`detect_track_format` tells Geolife (a folder of ``Data/<user>/Trajectory/*.plt``
or a ``.plt`` file), T-Drive (headerless ``taxi_id,datetime,lon,lat`` lines, one
file per taxi), Cabspotting (headerless ``lat lon occupancy epoch`` lines, one file
per cab) and the Porto taxi CSV (a ``POLYLINE`` column) apart; it reads at
most the first 4 KiB of one file.  Imported by the command line's reading path, so
it needs nothing beyond the standard library.
"""

from __future__ import annotations

import re
from pathlib import Path

from .._validation import column_key

__all__ = ["cabspotting_line", "detect_track_format", "geolife_files_of", "is_cabspotting",
           "is_geolife", "is_porto", "is_tdrive", "tdrive_line"]

_CAB_LINE = re.compile(r"^-?\d+(\.\d+)? -?\d+(\.\d+)? [01] \d{9,10}$")

_TDRIVE_LINE = re.compile(r"^\s*[^,\s][^,]*,\s*\d{4}-\d{2}-\d{2} \d{1,2}:\d{2}:\d{2}\s*,\s*-?[\d.]+\s*,\s*-?[\d.]+\s*$")


def _first_line(path: Path) -> str:
    with open(path, "rb") as fh:
        head = fh.read(4096)
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff")
    return next((ln for ln in text.splitlines() if ln.strip()), "")


def geolife_files_of(path: Path) -> list:
    """The ``.plt`` files of a Geolife folder (``Data/<user>/Trajectory/*.plt`` below ``path``,
    ``<user>/Trajectory/*.plt`` or ``Trajectory/*.plt``), sorted; empty when it is none."""
    for pattern in ("Data/*/Trajectory/*.plt", "*/Trajectory/*.plt", "Trajectory/*.plt"):
        found = sorted(path.glob(pattern))
        if found:
            return found
    return []


def tdrive_line(line: str) -> bool:
    """Whether a line has T-Drive's layout: ``taxi_id,YYYY-MM-DD hh:mm:ss,lon,lat``."""
    return bool(_TDRIVE_LINE.match(line))


def cabspotting_line(line: str) -> bool:
    """Whether a line has Cabspotting's layout: ``lat lon occupancy epoch`` (one space apart)."""
    return bool(_CAB_LINE.match(line.strip()))


def detect_track_format(path) -> str | None:
    """``"geolife"``, ``"tdrive"``, ``"porto"``, ``"cabspotting"`` or None, from the layout of ``path``.

    A folder holding ``Data/*/Trajectory/*.plt`` (or ``*/Trajectory/*.plt``) or a
    ``.plt`` file: Geolife.  A text file (or a folder of ``.txt`` files, the first
    not beginning with ``_``) whose first line is ``taxi_id,YYYY-MM-DD hh:mm:ss,lon,lat``
    without a header: T-Drive; ``lat lon occupancy epoch``: Cabspotting.  A CSV whose
    header has a ``POLYLINE`` column: Porto.
    """
    path = Path(path)
    if path.is_dir():
        if geolife_files_of(path):
            return "geolife"
        texts = sorted(path.glob("*.txt"))
        first = next((p for p in texts if p.stat().st_size > 0 and not p.name.startswith("_")), None)
        line = _first_line(first) if first is not None else ""
        if tdrive_line(line):
            return "tdrive"
        return "cabspotting" if cabspotting_line(line) else None
    if not path.is_file():
        return None
    if path.suffix.lower() == ".plt":
        return "geolife"
    if path.suffix.lower() not in {".csv", ".txt", ".tsv", ".dat", ""}:
        return None
    line = _first_line(path)
    names = {column_key(f) for f in line.split(",")}
    if "polyline" in names:
        return "porto"
    if tdrive_line(line):
        return "tdrive"
    return "cabspotting" if cabspotting_line(line) else None


def is_geolife(path) -> bool:
    """A Geolife folder or ``.plt`` file (:func:`detect_track_format`)."""
    return detect_track_format(path) == "geolife"


def is_tdrive(path) -> bool:
    """A T-Drive file or folder of them (:func:`detect_track_format`)."""
    return detect_track_format(path) == "tdrive"


def is_porto(path) -> bool:
    """A CSV with a ``POLYLINE`` column (:func:`detect_track_format`)."""
    return detect_track_format(path) == "porto"


def is_cabspotting(path) -> bool:
    """A Cabspotting file or folder of them (:func:`detect_track_format`)."""
    return detect_track_format(path) == "cabspotting"
