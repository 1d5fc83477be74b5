"""File formats: which reader a path needs, and the one message for anything else.

Supported: CSV and TSV (any delimiter among comma, tab, semicolon, pipe),
GeoJSON, GeoParquet and Parquet, GPX.  The container is told by the extension
and, when that says nothing, by the first bytes (``PAR1``, ``<gpx``, ``{``).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["SUPPORTED", "UnsupportedFormatError", "binary_at", "container_of", "output_format"]

SUPPORTED = "CSV, TSV, GeoJSON, GeoParquet, Parquet, GPX"

_BY_SUFFIX = {".csv": "text", ".tsv": "text", ".txt": "text", ".dat": "text", ".tab": "text",
              ".parquet": "parquet", ".pq": "parquet", ".geoparquet": "parquet",
              ".geojson": "geojson", ".json": "geojson", ".gpx": "gpx",
              ".gpkg": "vector", ".fgb": "vector", ".shp": "vector"}
#: output extension -> format name
OUTPUTS = {".csv": "CSV", ".tsv": "TSV", ".geojson": "GeoJSON", ".json": "GeoJSON",
           ".parquet": "GeoParquet", ".geoparquet": "GeoParquet", ".gpx": "GPX"}


#: first bytes of common binary files that are no check-in table
_MAGIC = {b"PK\x03\x04": "a ZIP archive (a spreadsheet?)", b"\x89PNG": "a PNG image",
          b"\x1f\x8b\x08\x00": "a gzip archive", b"%PDF": "a PDF document"}


class UnsupportedFormatError(ValueError):
    """A file in none of the supported formats."""


def unsupported(path, why: str = "") -> UnsupportedFormatError:
    why = f" ({why})" if why else ""
    return UnsupportedFormatError(f"cannot read {Path(path).name}{why}: supported formats: {SUPPORTED}")


def container_of(path) -> str:
    """``"text"``, ``"parquet"``, ``"geojson"``, ``"gpx"`` or ``"vector"`` (GeoPackage, ...).

    Raises
    ------
    UnsupportedFormatError
        Anything else (a spreadsheet, an image, an archive, an empty file).
    """
    path = Path(path)
    kind = _BY_SUFFIX.get(path.suffix.lower())
    with open(path, "rb") as fh:
        head = fh.read(4096)
    if not head.strip():
        raise unsupported(path, "the file is empty")
    if head.startswith(b"PAR1"):
        return "parquet"
    if kind is not None and kind != "text":
        return kind
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text.startswith(b"<?xml") or text.startswith(b"<gpx"):
        if b"<gpx" in head:
            return "gpx"
        raise unsupported(path, "an XML file that is not GPX")
    if text.startswith(b"{") and kind is None:
        return "geojson"
    if head[:4] in _MAGIC:
        raise unsupported(path, f"a binary file: {_MAGIC[head[:4]]} from byte offset 0, line 1")
    if b"\x00" in head:
        offset = head.index(b"\x00")
        line = head.count(b"\n", 0, offset) + 1
        raise unsupported(path, f"a binary file: NUL byte at byte offset {offset}, line {line}")
    first = text.split(b"\n", 1)[0]
    if not any(d in first for d in (b",", b"\t", b";", b"|")):
        raise unsupported(path, "no column delimiter in its first line")
    return "text"


def binary_at(path, *, utf8: bool = True):
    """``(byte offset, line)`` of the first NUL byte (or, with ``utf8``, the first byte that is
    not valid UTF-8) of a file, or None: where a text reader must give up.  Reads in blocks."""
    import codecs

    decoder = codecs.getincrementaldecoder("utf-8")()
    offset, line = 0, 1
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            bad = block.find(b"\x00")
            if utf8:
                try:
                    decoder.decode(block if bad < 0 else block[:bad])
                except UnicodeDecodeError as exc:
                    bad = exc.start if bad < 0 else min(bad, exc.start)
            if bad >= 0:
                return offset + bad, line + block.count(b"\n", 0, bad)
            offset += len(block)
            line += block.count(b"\n")
    return None


def output_format(path) -> str:
    """The output format named by an extension (``"CSV"``, ``"GeoJSON"``, ...)."""
    fmt = OUTPUTS.get(Path(path).suffix.lower())
    if fmt is None:
        raise UnsupportedFormatError(f"cannot tell the output format of {Path(path).name}: "
                                     "use .csv, .tsv, .geojson, .parquet or .gpx")
    return fmt
