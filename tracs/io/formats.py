"""The one table of file formats: which reader a path needs, which writer an output name.

Every command reads and writes through this table (:data:`FORMATS`): ``tracs
perturb``, ``map``, ``estimate`` and ``evaluate`` read any entry with a reader;
``tracs perturb`` writes any entry with a writer, chosen by the output's extension.

Adding a format is its module plus one entry
-------------------------------------------
A reader is ``read(path, request) -> RawColumns`` (:mod:`tracs.io.raw`):
``request.plan(names, roles=..., profile=..., need_coords=...)`` says which of the
file's columns to read and how to convert them batch by batch; the reader returns
the columns, the line or row of each record and, in ``roles``, the column names
its layout implies (``{"user": "uid", "time": "time", "traj": "trajectory"}`` for
GPX), so the generic column finder and the loaders' checks do the rest.  A writer
is ``write(tables, path, *, bbox, progress)``: ``tables`` yields Arrow tables of
released rows (``uid``, ``trajectory``, ``datetime``, the source position,
``lat``, ``lng``, ``epsilon_point``, ``epsilon_trajectory``), in batches of
``batch_rows`` rows (all at once when ``None``), times as text when
``text_times``; ``bbox`` is the WGS84 bounds of all rows.

Then one entry::

    register_format(Format(
        "Geolife PLT", key="geolife", suffixes=(".plt",),
        read="tracs.io.geolife:read_geolife", detect="tracs.io.layouts:is_geolife",
        selectable=True))

``read``, ``write``, ``detect`` and ``blocks`` are callables or ``"module:function"`` names
(imported on first use, so the table costs nothing to import).  ``detect(path)
-> bool`` recognises a layout the extension does not tell (a folder of Geolife
``Data/<user>/Trajectory/*.plt`` files, headerless T-Drive text, a Porto CSV with a
``POLYLINE`` column); detected layouts are tried first, in the table's order, and
``directories=True`` lets a format read a folder.  ``blocks(path, request)``
reads a file too large to read whole block by block: a ``RawColumns`` per block of
about ``request.chunk_bytes`` of text, each with its own notes (the Porto CSV;
:meth:`Format.block_reader`).  ``selectable=True`` offers
the key to ``--input-format`` (:func:`input_formats`).  ``parameters(path)`` gives
the JSON text of the release parameters a file of the format embeds (the writer
finds them in the tables' schema metadata ``tracs``:
:func:`tracs.io.write.with_parameters`), or None; the shipped formats' are read by
:func:`tracs.io.parameters.embedded_parameters` itself.  A format of another
package is named by an entry point of the group ``tracs.formats``
(:mod:`tracs._plugins`; ``docs/extending.md``).

Otherwise the container is told by the file's first bytes and its extension
(:func:`container_of`), as the entries declare: ``signature`` (magic bytes a file
begins with, e.g. ``PAR1``: they win over the extension) and ``sniff(first bytes)
-> bool`` (asked when the extension names no container other than delimited text:
GPX and KML by their XML root, GeoJSON by its ``{``, GeoPackage by its SQLite header).  A format of another package
declares its own and is recognised the same way.  Anything else is one
:class:`UnsupportedFormatError` naming the file and :data:`SUPPORTED`.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .._plugins import load_group
from .._plugins import resolve as _resolve
from ..errors import InputError, InputTypeError, TracsError
from .profiles import PROFILES

__all__ = ["FORMATS", "Format", "SUPPORTED", "UnsupportedFormatError", "binary_at", "container_of",
           "format_of", "input_formats", "output_format", "register_format", "supported"]


@dataclass(frozen=True)
class Format:
    """One entry of the table (see the module docstring)."""

    name: str
    key: str
    suffixes: tuple = ()
    read: Callable | str | None = None
    write: Callable | str | None = None
    detect: Callable | str | None = None
    label: str | None = None            # how :data:`SUPPORTED` names it (default: ``name``)
    text_times: bool = False            # the writer takes times as text
    batch_rows: int | None = None       # the writer takes batches of this many rows (None: one table)
    selectable: bool = False            # offered by --input-format
    directories: bool = False           # reads a folder
    geometry: tuple = field(default=("points",))  # what the writer can write: points, lines
    time_ns: int = 1                    # the writer keeps times to this many nanoseconds (floor)
    parameters: Callable | str | None = None  # parameters(path) -> the JSON text a file embeds, or None
    signature: tuple = ()               # magic bytes a file of the format begins with: they win over its extension
    sniff: Callable | str | None = None  # sniff(first bytes) -> bool, asked when the extension names no
    #                                     other container than delimited text
    blocks: Callable | str | None = None  # blocks(path, request) -> a RawColumns per block of about
    #                                      request.chunk_bytes of text, in file order (bounded memory)

    def reader(self) -> Callable:
        return _resolve(self.read)

    def writer(self) -> Callable:
        return _resolve(self.write)

    def block_reader(self) -> Callable:
        """The reader of the file block by block (:attr:`blocks`); a format without one reads it whole."""
        if self.blocks is None:
            raise UnsupportedFormatError(f"{self.name} files are read whole, not in blocks")
        return _resolve(self.blocks)

    def embedded(self, path: Path):
        """The JSON text of the release parameters ``path`` embeds, or None."""
        return None if self.parameters is None else _resolve(self.parameters)(path)

    def detects(self, path: Path) -> bool:
        return self.detect is not None and bool(_resolve(self.detect)(path))

    def signed(self, head: bytes) -> bool:
        """Whether ``head`` (a file's first bytes) begins with the format's :attr:`signature`."""
        return any(head.startswith(magic) for magic in self.signature)

    def sniffs(self, head: bytes) -> bool:
        """Whether the format's :attr:`sniff` recognises ``head`` (a file's first bytes)."""
        return self.sniff is not None and bool(_resolve(self.sniff)(head))


#: every format, in detection order: key -> :class:`Format` (the formats of installed extensions,
#: entry-point group ``tracs.formats``, join it when a lookup below first asks: :func:`installed`)
FORMATS: dict[str, Format] = {}


def installed() -> dict:
    """:data:`FORMATS`, with the formats of installed extensions (:mod:`tracs._plugins`) registered on
    the first call."""
    load_group("tracs.formats", register_format, Format)
    return FORMATS


def register_format(fmt: Format) -> Format:
    """Add ``fmt`` to :data:`FORMATS` (or replace the entry of its key); return it."""
    if not isinstance(fmt, Format):
        raise InputTypeError(f"register_format takes a Format, got {type(fmt).__name__}")
    taken = {s: f.key for f in FORMATS.values() for s in f.suffixes if f.key != fmt.key}
    clash = [s for s in fmt.suffixes if s in taken]
    if clash:
        raise InputError(f"the extension {clash[0]} is already the format {taken[clash[0]]!r}")
    FORMATS[fmt.key] = fmt
    return fmt


def text_start(head: bytes) -> bytes:
    """The first bytes of a text file without its byte-order mark and leading blanks."""
    return head.lstrip(b"\xef\xbb\xbf \t\r\n")


def xml_root(root: str) -> Callable:
    """A :attr:`Format.sniff` of XML whose document element is ``<root>`` (GPX, KML)."""
    def sniff(head: bytes) -> bool:
        text = text_start(head)
        return (text.startswith(b"<?xml") or text.startswith(b"<" + root.encode())) and b"<" + root.encode() in head
    sniff.xml_root = root
    return sniff


def json_object(head: bytes) -> bool:
    """A :attr:`Format.sniff` of JSON text holding one object (GeoJSON)."""
    return text_start(head).startswith(b"{")


def geopackage(head: bytes) -> bool:
    """A :attr:`Format.sniff` of a GeoPackage: an SQLite database whose application id (bytes
    68-71 of its header) is GeoPackage's (any other SQLite file is no GeoPackage)."""
    return head.startswith(b"SQLite format 3\x00") and head[68:72] in (b"GPKG", b"GP10", b"GP11")


for _entry in (
    Format("CSV", "csv", (".csv", ".txt", ".dat"), read="tracs.io.table_readers:read_delimited",
           write="tracs.io.write:write_csv_file", text_times=True, batch_rows=1 << 17),
    Format("TSV", "tsv", (".tsv", ".tab"), read="tracs.io.table_readers:read_delimited",
           write="tracs.io.write:write_tsv_file", text_times=True, batch_rows=1 << 17),
    Format("GeoJSON", "geojson", (".geojson", ".json"), read="tracs.io.table_readers:read_vector",
           write="tracs.io.write:write_geojson", geometry=("points", "lines"), time_ns=1_000_000,
           sniff=json_object),
    Format("GeoParquet", "parquet", (".parquet", ".geoparquet", ".pq"), read="tracs.io.table_readers:read_parquet",
           write="tracs.io.write:write_geoparquet", batch_rows=1 << 16, label="GeoParquet, Parquet",
           geometry=("points", "lines"), signature=(b"PAR1",)),
    Format("GeoPackage", "gpkg", (".gpkg",), read="tracs.io.table_readers:read_vector",
           write="tracs.io.write:write_geopackage", geometry=("points", "lines"), time_ns=1_000_000,
           sniff=geopackage),
    Format("Shapefile", "shp", (".shp",), read="tracs.io.table_readers:read_vector"),
    Format("FlatGeobuf", "fgb", (".fgb",), read="tracs.io.table_readers:read_vector", signature=(b"fgb\x03",)),
    Format("GPX", "gpx", (".gpx",), read="tracs.io.gpx:read_gpx", write="tracs.io.write:write_gpx_file",
           time_ns=1_000, sniff=xml_root("gpx")),
    Format("KML", "kml", (".kml",), read="tracs.io.kml:read_kml", sniff=xml_root("kml")),
    # the public trajectory data sets, recognised by their layout (tracs.io.layouts)
    Format("Geolife PLT", "geolife", (".plt",), read="tracs.io.geolife:read_geolife",
           detect="tracs.io.layouts:is_geolife", selectable=True, directories=True),
    Format("T-Drive", "tdrive", read="tracs.io.tdrive:read_tdrive", detect="tracs.io.layouts:is_tdrive",
           selectable=True, directories=True),
    Format("Porto taxi CSV", "porto", read="tracs.io.porto:read_porto", detect="tracs.io.layouts:is_porto",
           selectable=True, blocks="tracs.io.porto:read_porto_blocks"),
    Format("Cabspotting", "cabspotting", read="tracs.io.cabspotting:read_cabspotting",
           detect="tracs.io.layouts:is_cabspotting", selectable=True, directories=True),
    # a folder of Parquet files, as tracs perturb --engine dask reads and writes (tracs.io.parquet_folder)
    Format("Parquet folder", "parquet-folder", read="tracs.io.parquet_folder:read_parquet_folder",
           detect="tracs.io.parquet_folder:is_parquet_folder", directories=True),
):
    register_format(_entry)
del _entry


def supported(table=None) -> str:
    """The formats that can be read, for messages (``"CSV, TSV, GeoJSON, ..."``)."""
    return ", ".join(f.label or f.name for f in (table or installed()).values() if f.read is not None)


def __getattr__(name: str):
    """``SUPPORTED``: :func:`supported` when it is read (formats registered since included)."""
    if name == "SUPPORTED":
        return supported()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def input_formats() -> tuple:
    """The choices of ``--input-format``: ``auto``, the column profiles and the selectable layouts."""
    return ("auto", *PROFILES, *(f.key for f in installed().values() if f.selectable and f.key not in PROFILES))


#: first bytes of common binary files that are no check-in table
_MAGIC = {b"PK\x03\x04": "a ZIP archive (a spreadsheet?)", b"\x89PNG": "a PNG image",
          b"\x1f\x8b\x08\x00": "a gzip archive", b"%PDF": "a PDF document"}


class UnsupportedFormatError(TracsError, ValueError):
    """A file in none of the supported formats."""


def unsupported(path, why: str = "") -> UnsupportedFormatError:
    why = f" ({why})" if why else ""
    return UnsupportedFormatError(f"cannot read {Path(path).name}{why}: supported formats: {supported()}")


def _by_suffix(path: Path) -> Format | None:
    suffix = path.suffix.lower()
    return next((f for f in installed().values() if suffix in f.suffixes and f.read is not None), None)


def format_of(path, input_format: str = "auto") -> Format:
    """The format to read ``path`` with: the layout named by ``input_format`` when it names one,
    else the first layout whose ``detect`` recognises the file, else the container
    (:func:`container_of`).

    Raises
    ------
    FileNotFoundError, UnsupportedFormatError
    """
    path = Path(path)
    named = installed().get(input_format)
    if named is not None and named.selectable:
        return named
    for fmt in FORMATS.values():
        if fmt.detect is not None and (path.is_file() or fmt.directories) and fmt.detects(path):
            return fmt
    if path.is_dir():
        raise unsupported(path, "a folder in none of the layouts read as a whole")
    return FORMATS[container_of(path)]


def container_of(path) -> str:
    """The key of the container of a file: ``"csv"`` or ``"tsv"`` (delimited text; the delimiter
    is sniffed when read), ``"parquet"``,
    ``"geojson"``, ``"gpx"``, ``"kml"``, ``"gpkg"``, ... (:data:`FORMATS`).

    The table's entries are asked in order: a :attr:`Format.signature` the file begins with
    wins over its extension; an extension naming a container other than delimited text
    comes next; then a :attr:`Format.sniff` recognising the first bytes; then delimited text.

    Raises
    ------
    UnsupportedFormatError
        Anything else (a spreadsheet, an image, an archive, an empty file).
    """
    path = Path(path)
    fmt = _by_suffix(path)
    with open(path, "rb") as fh:
        head = fh.read(4096)
    if not head.strip():
        raise unsupported(path, "the file is empty")
    readable = [f for f in installed().values() if f.read is not None]
    signed = next((f for f in readable if f.signed(head)), None)
    if signed is not None:
        return signed.key
    if fmt is not None and not delimited(fmt):
        return fmt.key
    sniffed = next((f for f in readable if f.sniffs(head)), None)
    if sniffed is not None:
        return sniffed.key
    if text_start(head).startswith(b"<?xml"):
        xml = [f.name for f in readable if hasattr(f.sniff, "xml_root")]
        raise unsupported(path, "an XML file that is neither " + " nor ".join(xml))
    if head[:4] in _MAGIC:
        raise unsupported(path, f"a binary file: {_MAGIC[head[:4]]} from byte offset 0, line 1")
    if b"\x00" in head:
        offset = head.index(b"\x00")
        line = head.count(b"\n", 0, offset) + 1
        raise unsupported(path, f"a binary file: NUL byte at byte offset {offset}, line {line}")
    first = text_start(head).split(b"\n", 1)[0]
    if not any(d in first for d in (b",", b"\t", b";", b"|")):
        raise unsupported(path, "no delimiter (tab, comma, semicolon or pipe) in its first line")
    return fmt.key if fmt is not None else "csv"  # delimited text: the entry its extension names


def delimited(fmt: Format) -> bool:
    """Whether ``fmt`` is read as delimited text (the reader of the CSV entry: CSV, TSV, ...)."""
    return fmt.read == FORMATS["csv"].read


def binary_at(path, *, utf8: bool = True):
    """``(byte offset, line)`` of the first NUL byte (or, with ``utf8``, the first byte that is
    not valid UTF-8) of a file, or None: where a text reader must give up.  Reads in blocks."""
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


def output_format(path, *, geometry: str = "points") -> Format:
    """The format an output name asks for (by its extension), able to write ``geometry``."""
    suffix = Path(path).suffix.lower()
    fmt = next((f for f in installed().values() if suffix in f.suffixes and f.write is not None), None)
    if fmt is None:
        raise UnsupportedFormatError(f"cannot tell the output format of {Path(path).name}: use "
                                     f"{written(geometry)}")
    if geometry not in fmt.geometry:
        raise UnsupportedFormatError(f"{fmt.name} cannot hold {geometry}: for {geometry} use {written(geometry)}")
    return fmt


def written(geometry: str) -> str:
    """``".csv, .tsv, ... or .gpx"``: the extensions of the writers of ``geometry``."""
    names = [f.suffixes[0] for f in installed().values() if f.write is not None and geometry in f.geometry]
    return ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else names[0]
