"""Delimited text through pyarrow's streaming CSV reader (:func:`read_text`), into a
:class:`~tracs.io.raw.RawColumns`.

Every column is read as text and converted batch by batch, so the text of a whole
file is never held in memory; the line of each record, the lines the parser skipped
and the blank ones are kept.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from .._progress import progress_bar
from ..errors import TracsError
from .raw import RawColumns

__all__ = ["ShortLineError", "TextParseError", "read_text", "BLOCK_BYTES", "THREADS"]


class TextParseError(TracsError, ValueError):
    """A text file whose records cannot be told apart (the message names the file and line)."""


#: bytes of text per streamed block (bounds the memory of a read)
BLOCK_BYTES = 2 << 20
#: parse blocks on several threads
THREADS = True


class ShortLineError(TracsError, ValueError):
    """A line has fewer fields than the header (raised by :func:`read_text` when asked)."""


def read_text(path: Path, *, sep: str, names, header: bool, include, encoding, convert=None,
               short_lines: str = "skip") -> RawColumns:
    """Delimited text through pyarrow's streaming CSV reader: every column read as text,
    each batch converted at once (``convert``: column -> function of an Arrow array), so
    the text of the whole file is never held in memory.

    Only an empty field is missing (``NA``, ``null``, ``None`` are text: ids as
    written); a field that begins with ``"`` is quoted, in CSV and TSV alike.
    Lines with a wrong number of fields are skipped and listed in ``bad_lines``;
    with ``short_lines="raise"`` a line with too few fields raises
    :class:`ShortLineError` instead (for readers that pad such lines).  A
    progress bar of the bytes read appears when the read lasts (:mod:`tracs._progress`).
    """
    import pyarrow as pa
    import pyarrow.csv as pcsv

    convert = convert or {}
    block = BLOCK_BYTES

    def read(threads: bool):
        bad, short = [], []

        def skip(row):
            if short_lines == "raise" and row.actual_columns < row.expected_columns:
                short.append(row.number)
                return "error"
            bad.append(row.number)
            if row.text is not None and ("\n" in row.text or "\r" in row.text) and not spans:
                spans.append((row.number, len(row.text.splitlines())))
            return "skip"

        chunks = {c: [] for c in include}
        blanks = []
        try:
            reader = pcsv.open_csv(
                path,
                read_options=pcsv.ReadOptions(use_threads=threads, block_size=block, column_names=list(names),
                                              skip_rows=1 if header else 0, encoding=encoding or "utf8"),
                parse_options=pcsv.ParseOptions(delimiter=sep, ignore_empty_lines=False,
                                                invalid_row_handler=skip),
                convert_options=pcsv.ConvertOptions(
                    include_columns=list(include), column_types={c: pa.string() for c in include},
                    null_values=[""], strings_can_be_null=True, quoted_strings_can_be_null=True))
            for batch in reader:
                blank = np.ones(batch.num_rows, dtype=bool)
                for column in batch.columns:
                    blank &= column.is_null().to_numpy(zero_copy_only=False)
                blanks.append(blank)
                for name in include:
                    column = batch.column(name)
                    chunks[name].append(convert[name](column) if name in convert else column)
                bar.update(min(block, max(size - bar.n, 0)))
        except pa.ArrowInvalid:
            if short:
                raise ShortLineError(f"{path.name}: line {short[0]} has too few fields") from None
            raise
        return chunks, np.concatenate(blanks) if blanks else np.zeros(0, bool), bad

    spans = []  # the first skipped record that runs over several lines (an unclosed quote)
    size = path.stat().st_size
    with progress_bar(size, desc=f"read {path.name}", unit="B", unit_scale=True) as bar:
        chunks, blank, bad = _quietly(read, THREADS)
        if any(b is None for b in bad) or (spans and spans[0][0] is None):  # line numbers: one thread only
            spans.clear()
            bar.reset(size)
            chunks, blank, bad = _quietly(read, False)
    if spans:
        line, count = spans[0]
        raise TextParseError(f"{path.name}: line {line}: a quoted field is not closed: the record that starts "
                             f"there runs over {count:,} lines" + (" to the end of the file" if line + count - 1 >=
                                                                  _last_line(path) else "") +
                             "; close the quote or remove it")
    table = pa.table({name: pa.chunked_array(parts, type=parts[0].type if parts else pa.string())
                      for name, parts in chunks.items()})
    first = 2 if header else 1
    bad_lines = np.asarray(sorted(bad), dtype=np.int64)
    all_lines = np.arange(first, first + table.num_rows + len(bad_lines), dtype=np.int64)
    lines = all_lines[~np.isin(all_lines, bad_lines)] if len(bad_lines) else all_lines
    blank_lines = lines[blank]
    if blank.any():
        table, lines = table.filter(pa.array(~blank)), lines[~blank]
    fmt = {"\t": "tsv", ",": "csv"}.get(sep, "delimited text")
    return RawColumns(table, lines, "line", fmt, bad_lines, blank_lines)


def _quietly(read, threads):
    """``read(threads)`` without the tracebacks pyarrow prints when a skipped line is not
    valid UTF-8 (it reports them as unraisable; the read then fails and the caller explains)."""
    hook = sys.unraisablehook
    sys.unraisablehook = lambda unraisable: None
    try:
        return read(threads)
    finally:
        sys.unraisablehook = hook


def _last_line(path: Path) -> int:
    """Number of lines of a text file (read in blocks; only on the error path)."""
    count, last = 0, b"\n"
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            count += block.count(b"\n")
            last = block[-1:]
    return count + (last != b"\n")
