"""Safe output for the commands: never overwrite an input, never leave half a file, report every drop."""

from __future__ import annotations

import os
import re
import sys
import tempfile
from pathlib import Path

from ._common import CLIError
from tracs._text import counted

_SHOW = 5


def add_arguments(p) -> None:
    """The ``--strict`` option."""
    p.add_argument("--strict", action="store_true",
                   help="exit with an error if any input row is dropped or changed (bad values, "
                        "rows outside the region)")


def check_not_input(output: Path, *inputs) -> None:
    """Refuse an output that is one of the inputs (any spelling, ``..``, symlink or hard link)."""
    out_real = os.path.realpath(output)
    for source in inputs:
        if source is None:
            continue
        source = Path(source)
        same = os.path.realpath(source) == out_real
        if not same and output.exists() and source.exists():
            try:
                same = os.path.samefile(source, output)
            except OSError:
                same = False
        if same:
            raise CLIError(f"the output {output} is the input file {source}: writing it would overwrite "
                           "the input; choose another output name")


def check_pois_not_input(pois, source) -> None:
    """Refuse a ``--pois`` file that is the input (any spelling or link) or has the same content.

    The points of interest shape every release, so they must be public, fixed in
    advance: the check-ins themselves would make every visited place public.
    ``source`` may be a folder (``--engine dask``): its Parquet files are compared.
    """
    if pois is None:
        return
    pois, source = Path(pois), Path(source)
    if not pois.is_file():
        return  # reported where the file is read
    inputs = sorted(source.glob("*.parquet")) if source.is_dir() else [source]
    for candidate in inputs:
        how = None
        if os.path.realpath(candidate) == os.path.realpath(pois) or _same_file(candidate, pois):
            how = "the same file as"
        elif _same_content(candidate, pois):
            how = "a copy of"
        if how is not None:
            raise CLIError(f"--pois {pois} is {how} the input {candidate}: the points of interest must be "
                           "public and fixed in advance, not taken from the check-ins (every place a user "
                           "visited would become public); give a public POI file")


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _same_content(a: Path, b: Path, block: int = 1 << 20) -> bool:
    """Whether two files hold the same bytes (sizes first, then block by block)."""
    try:
        if a.stat().st_size != b.stat().st_size:
            return False
        with open(a, "rb") as fa, open(b, "rb") as fb:
            while True:
                x, y = fa.read(block), fb.read(block)
                if x != y:
                    return False
                if not x:
                    return True
    except OSError:
        return False


def quiet_warnings(command: str, func, *args, **kwargs):
    """Call ``func``; print its warnings as one ``tracs COMMAND: warning: ...`` line each."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = func(*args, **kwargs)
    for warning in caught:
        print(f"tracs {command}: warning: {' '.join(str(warning.message).split())}", file=sys.stderr)
    return result


def check_html_output(output: Path) -> None:
    """Refuse a map output whose name does not say it is an HTML page."""
    if output.suffix.lower() not in (".html", ".htm"):
        raise CLIError(f"tracs map writes an HTML page: give an output name ending in .html, got {output.name}")


#: the temporary names of a run writing ``TARGET`` (:func:`write_atomically`): a hidden folder
#: ``.TARGET.tracs-tmp-XXXXXXXX`` holding ``TARGET``; the sidecar's ``.TARGET.tracs.json.tracs-tmp-XXXXXXXX.tmp``
#: (:func:`tracs.estimate.sidecar.write_sidecar_data`); and, from older versions,
#: ``.STEM.XXXXXXXX.SUFFIX`` with SQLite's ``-journal`` / ``-wal`` / ``-shm`` files
TEMPORARY = ".tracs-tmp-"
_RANDOM = "[a-z0-9_]{8}"


def stale_temporaries(path: Path) -> list:
    """The leftovers of interrupted runs writing ``path``: only names of the patterns of
    :data:`TEMPORARY` for this very target, never anything else."""
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    name, stem, suffix = map(re.escape, (path.name, path.stem, path.suffix))
    patterns = [rf"\.{name}{re.escape(TEMPORARY)}{_RANDOM}",
                rf"\.{name}\.tracs\.json{re.escape(TEMPORARY)}{_RANDOM}\.tmp",
                rf"\.{stem}\.{_RANDOM}{suffix}(-journal|-wal|-shm)?"]
    pattern = re.compile("|".join(f"(?:{p})" for p in patterns))
    try:
        entries = sorted(folder.iterdir())
    except OSError:
        return []
    return [entry for entry in entries if pattern.fullmatch(entry.name) and entry != path]


def remove_stale(command: str, path: Path) -> None:
    """Remove the leftovers of interrupted runs writing ``path`` (:func:`stale_temporaries`),
    with a note naming them."""
    import shutil

    for entry in stale_temporaries(path):
        try:
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
        except OSError as exc:
            print(f"tracs {command}: warning: could not remove {entry.name}, left by an interrupted run: "
                  f"{exc.strerror or exc}", file=sys.stderr)
            continue
        print(f"tracs {command}: note: removed {entry.name}, left by an interrupted run writing {path.name}",
              file=sys.stderr)


def write_atomically(path: Path, write, *, before_rename=None, command: str | None = None) -> None:
    """Call ``write(tmp)`` on a temporary file, then rename it to ``path``.

    The temporary file has ``path``'s own name, in a hidden folder
    ``.NAME.tracs-tmp-XXXXXXXX`` beside it (so a file's name inside it, such as a
    GeoJSON's ``name``, is the target's).  A crash or an error leaves ``path`` as it was
    (absent or the old file), never half written; the folder is removed, and leftovers of
    an interrupted earlier run to the same target are removed first (with a note, when
    ``command`` names the command).  ``before_rename(tmp)`` runs after the write, before
    the rename: 'tracs perturb' writes the sidecar there, so it is in place first.
    """
    import shutil

    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    if command is not None:
        remove_stale(command, path)
    work = Path(tempfile.mkdtemp(prefix=f".{path.name}{TEMPORARY}", dir=folder))
    tmp = work / path.name
    try:
        write(tmp)
        if before_rename is not None:
            before_rename(tmp)
        os.replace(tmp, path)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def report_drops(command: str, report, *, strict: bool, quiet: bool = False, extra=(), others=()) -> None:
    """Print what the loader dropped (count and first lines per reason) and its notes.

    Always prints a summary line; ``extra`` lists more ``(what, labels)`` pairs (rows
    clipped or dropped for the region); ``others`` names the input's columns and
    elements that are not written (``not released: speed, <ele>``), even when ``quiet``.  With ``strict`` any drop is an error; ``quiet``
    leaves out the notes (never the drops or the summary).
    """
    lines = []
    dropped = 0
    if report is not None:
        word = "line" if report.get("position", "line") == "line" else "row"
        for reason, where in report.dropped.items():
            dropped += len(where)
            shown = ", ".join(str(int(v)) for v in where[:_SHOW]) + (", ..." if len(where) > _SHOW else "")
            lines.append(f"dropped {len(where):,} row(s): {report.describe_drop(reason)}: "
                         f"{word}{'s' if len(where) > 1 else ''} {shown}")
        untimed = report.get("untimed", [])
        if len(untimed):
            shown = ", ".join(str(int(v)) for v in untimed[:_SHOW]) + (", ..." if len(untimed) > _SHOW else "")
            lines.append(f"kept {counted(len(untimed), 'point')} without a time in the file's order "
                         f"(written without a time): {word}{'s' if len(untimed) > 1 else ''} {shown}")
        lines.extend(f"note: {note}" for note in (() if quiet else report.notes))
        if not quiet and str(report.format).startswith("gowalla") and not any("timezone" in n for n in report.notes):
            lines.append("note: Gowalla times carry no timezone: they were read as UTC (the format's convention)")
    changed = sum(len(labels) for _, labels in extra)
    outside = ""
    for what, labels in extra:
        if labels:
            shown = ", ".join(labels[:_SHOW]) + (", ..." if len(labels) > _SHOW else "")
            lines.append(f"{what} {len(labels):,} row(s) outside the region: {shown}")
            outside += f", {what} {len(labels):,} outside the region"
    if others:
        lines.append("not released: " + ", ".join(str(o) for o in others))
    for line in lines:
        print(f"tracs {command}: {line}", file=sys.stderr)
    if report is not None:
        left = report.rows_kept - sum(len(labels) for what, labels in extra if what == "dropped")
        print(f"tracs {command}: read {counted(report.rows_read, 'row')}: dropped {dropped:,} for bad "
              f"values{outside}; {left:,} kept", file=sys.stderr)
    if strict and (dropped or changed):
        raise CLIError(f"--strict: {dropped:,} row(s) dropped for bad values and {changed:,} outside "
                       "the region (listed above); nothing was written")
