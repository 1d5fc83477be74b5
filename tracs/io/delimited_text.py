"""Reading delimited text files: path checks, format sniffing, encodings, line numbers.

One reading path: delimited text is read by the streaming Arrow reader of
``tracs.io`` (:func:`tracs.io.table_readers.read_delimited`, the format table's), its
columns given the types pandas' inference would by :func:`_infer`
(:mod:`tracs.io.records`); the pandas reader (:func:`read_table_pandas`) reads only
files that are not valid UTF-8 and, for the loaders, files with a line of too few
fields (which it pads with missing values, so such a line is dropped for its missing
value rather than for its field count).

Encoding: by default a file is read as UTF-8; if it is not valid UTF-8 (the
original Foursquare files are latin-1, and some files mix both) it is read again
with every byte sequence that is not valid UTF-8 decoded as latin-1, so nothing is
lost and valid UTF-8 text (e.g. ``Café`` written as UTF-8) stays intact.  An
explicit ``encoding`` is used strictly.

Line numbers: 1-based physical lines, the header (if any) being line 1, counting
one record per line (true for every supported format; a quoted field spanning
several lines would shift the numbers after it).
"""

from __future__ import annotations

import codecs
import csv
import os
import re
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .._validation import column_key
from ..errors import InputError, InputTypeError

_FALLBACK = "tracs-utf8-latin1"


def _latin1_fallback(error: UnicodeDecodeError):
    return error.object[error.start:error.end].decode("latin-1"), error.end


try:
    codecs.lookup_error(_FALLBACK)
except LookupError:
    codecs.register_error(_FALLBACK, _latin1_fallback)

_SNIFF_BYTES = 1 << 16
#: the words pandas and Arrow read as missing by default: a number column holding one has a gap
#: there, a text column (ids) keeps the word (only an empty field is a missing id)
NA_WORDS = ("#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN", "<NA>",
            "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null")
_BAD_LINE = re.compile(r"Skipping line (\d+)")


def check_path(path) -> Path:
    """Return ``path`` as a :class:`~pathlib.Path` of an existing regular file."""
    if not isinstance(path, (str, os.PathLike)):
        raise InputTypeError(f"path must be a str or os.PathLike, got {type(path).__name__}")
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"no such file: {p}")
    if not p.is_file():
        raise InputError(f"not a regular file: {p}")
    return p


def decode(data: bytes, encoding: str | None = None) -> str:
    """Decode bytes as the text readers do (UTF-8 with a latin-1 fallback)."""
    if encoding is not None:
        return data.decode(encoding)
    return data.decode("utf-8", errors=_FALLBACK)


@dataclass(frozen=True)
class Head:
    """The first non-blank line of a text file, split on the detected delimiter."""

    line: str
    sep: str
    fields: list


def sniff(path: Path, *, what: str, delimiters: str = "\t,", encoding: str | None = None) -> Head:
    """Read the start of ``path``; reject empty or binary files; detect the delimiter.

    The delimiter is the candidate of ``delimiters`` occurring most often in the first
    non-blank line (earlier candidates win ties).
    """
    with open(path, "rb") as fh:
        data = fh.read(_SNIFF_BYTES)
    if not data.strip():
        raise InputError(f"{path} is empty: expected a {what} file")
    if b"\x00" in data:
        offset = data.index(b"\x00")
        line = data.count(b"\n", 0, offset) + 1
        raise InputError(f"{path} is a binary file, not a {what} text file (NUL byte at byte offset "
                         f"{offset}, line {line})")
    try:
        text = decode(data, encoding).lstrip("\ufeff")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path} cannot be decoded as {encoding}: {exc}") from exc
    lines = [ln for ln in text.splitlines() if ln.strip()]
    first = lines[0]
    counts = [first.count(d) for d in delimiters]
    if max(counts) == 0:
        raise InputError(f"{path} is not a {what} file: no delimiter "
                         f"({' or '.join(map(repr, delimiters))}) in its first line {first[:80]!r}")
    sep = delimiters[int(np.argmax(counts))]
    fields = next(csv.reader([first], delimiter=sep))  # quoted as the rows are, whatever the delimiter
    return Head(line=first, sep=sep, fields=[f.strip() for f in fields])


def map_header(fields, aliases: dict, required, *, path, what: str) -> dict:
    """Map header fields to canonical names through ``aliases`` (normalised name -> canonical).

    Returns ``{original column name: canonical name}``; raises ValueError naming the
    missing canonical columns.
    """
    mapping = {}
    for name in fields:
        canonical = aliases.get(column_key(name))
        if canonical is not None and canonical not in mapping.values():
            mapping[name] = canonical
    missing = [c for c in required if c not in mapping.values()]
    if missing:
        raise InputError(f"{path} is not a {what} file: its header {fields} lacks "
                         f"column(s) for {missing}")
    return mapping


@dataclass
class Table:
    """Raw records of a text file with the physical line number of each."""

    frame: pd.DataFrame
    lines: np.ndarray
    bad_lines: np.ndarray
    blank_lines: np.ndarray
    notes: list


def na_words_missing(values):
    """Text that is no id (times, numbers) with the words of :data:`NA_WORDS` as missing values: an
    Arrow text array or a pandas Series; any other type is returned as it is."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(values, pd.Series):
        if pd.api.types.is_string_dtype(values.dtype) or values.dtype == object:
            return values.mask(values.isin(NA_WORDS))
        return values
    if pa.types.is_string(values.type) or pa.types.is_large_string(values.type):
        return pc.if_else(pc.is_in(values, value_set=pa.array(NA_WORDS, values.type)),
                          pa.scalar(None, values.type), values)
    return values


def _header_names(path: Path, sep: str, encoding) -> list:
    """The names of a header line exactly as pandas reads them (not stripped)."""
    line = sniff(path, what="table", delimiters=sep, encoding=encoding).line
    return next(csv.reader([line], delimiter=sep))


def _infer(column, text: bool) -> pd.Series:
    """An Arrow text column as pandas would infer it: int64, float64 or bool where every
    value is one (int with gaps: float64), else text (``text``: always text)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not text:  # a number column: pandas' missing words are gaps
        column = na_words_missing(column)
    kinds = () if text or column.null_count == len(column) else _likely_types(column)
    if kinds:
        if isinstance(column, pa.ChunkedArray):
            column = column.combine_chunks()
        for kind in kinds:
            values = None
            for source in (column, None):  # surrounding spaces (rare) only when the plain cast fails
                try:
                    values = (source if source is not None else pc.utf8_trim_whitespace(column)).cast(kind)
                    break
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                    continue
            if values is None:
                continue
            if values.null_count and kind == pa.bool_():
                break  # pandas keeps booleans with gaps as text
            if values.null_count and kind == pa.int64():
                values = values.cast(pa.float64())  # as pandas: integers with gaps are floats
            return pd.Series(values.to_numpy(zero_copy_only=False), copy=False)
    return column.to_pandas()


_INT = r"^\s*[-+]?\d+\s*$"
_NUMBER = r"^\s*([-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?|[-+]?(inf|nan))\s*$"
_BOOL = r"^\s*(true|false)\s*$"


def _likely_types(column) -> tuple:
    """The types worth a full cast, from the first non-missing values (a cheap test:
    a cast is slow to fail on text): ``(int64, float64)``, ``(float64,)``, ``(bool,)``
    or ``()`` (text)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    sample = pc.drop_null(column.slice(0, 4096))
    sample = (sample if len(sample) else pc.drop_null(column)).slice(0, 64)

    def every(pattern):
        return bool(pc.all(pc.match_substring_regex(sample, pattern, ignore_case=True)).as_py())

    if every(_INT):
        return pa.int64(), pa.float64()
    if every(_NUMBER):
        return (pa.float64(),)
    return (pa.bool_(),) if every(_BOOL) else ()


def read_table_pandas(path: Path, *, sep: str, header: bool, names=None, text=(),
                      encoding: str | None = None) -> Table:
    """Read a delimited file with pandas' C parser, keeping track of line numbers.

    Lines with too many fields are skipped by the parser and returned in
    ``bad_lines``; lines with too few are padded with missing values (the caller's
    checks then drop them with a reason); blank lines are removed and returned in
    ``blank_lines``.  Columns named in ``text`` (ids) are kept as the exact text of
    the file (only an empty field is missing): if type inference made numbers of
    them, the file is read again with those columns as strings (reading everything as
    strings up front is ~4x slower).  ``text=True``: every column is text.
    """
    kwargs = dict(sep=sep, header=0 if header else None, names=names,
                  skip_blank_lines=False, on_bad_lines="warn", low_memory=False, quoting=csv.QUOTE_MINIMAL)
    if text is True:
        kwargs.update(dtype=str, keep_default_na=False, na_values=[""])
        text = ()
    elif text:
        columns = names if names is not None else _header_names(path, sep, encoding)
        kwargs.update(keep_default_na=False,
                      na_values={c: [""] if c in text else list(NA_WORDS) + [""] for c in columns})
    notes = []

    def parse(**extra):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", pd.errors.ParserWarning)
            frame = pd.read_csv(path, **kwargs, **extra)
        bad = [int(m) for w in caught if issubclass(w.category, pd.errors.ParserWarning)
               for m in _BAD_LINE.findall(str(w.message))]
        return frame, bad

    try:
        if encoding is None:
            try:
                frame, bad = parse(encoding="utf-8")
            except UnicodeDecodeError:
                frame, bad = parse(encoding="utf-8", encoding_errors=_FALLBACK)
                notes.append("not valid UTF-8: bytes that are not UTF-8 were read as latin-1")
        else:
            frame, bad = parse(encoding=encoding)
        numeric = [c for c in text if c in frame.columns and not pd.api.types.is_string_dtype(frame[c].dtype)]
        if numeric:
            kwargs["dtype"] = {c: str for c in numeric}
            frame, bad = parse(encoding=encoding or "utf-8",
                               **({"encoding_errors": _FALLBACK} if notes else {}))
    except UnicodeDecodeError as exc:
        raise InputError(f"{path} cannot be decoded as {encoding}: {exc}") from exc
    except pd.errors.EmptyDataError as exc:
        raise InputError(f"{path} has no data") from exc
    except pd.errors.ParserError as exc:
        raise InputError(f"{path} cannot be parsed: {exc}") from exc

    bad_lines = np.asarray(sorted(bad), dtype=np.int64)
    first = 2 if header else 1
    all_lines = np.arange(first, first + len(frame) + len(bad_lines), dtype=np.int64)
    lines = all_lines[~np.isin(all_lines, bad_lines)] if len(bad_lines) else all_lines
    blank = frame.isna().all(axis=1).to_numpy()
    if blank.any():
        frame = frame.loc[~blank].reset_index(drop=True)
        blank_lines, lines = lines[blank], lines[~blank]
    else:
        blank_lines = np.empty(0, np.int64)
    return Table(frame=frame, lines=lines, bad_lines=bad_lines, blank_lines=blank_lines, notes=notes)
