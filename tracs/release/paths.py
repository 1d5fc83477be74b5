"""The files of a release: an input that exists, an output that is neither an input nor half written.

An output is checked before any work is done (:func:`writable_file`,
:func:`check_not_input`); the points of interest are never the input itself
(:func:`check_pois_not_input`); a release is written to a temporary file renamed into
place (:func:`write_atomically`), and the leftovers of an interrupted run are removed
by the next run to the same target (:func:`remove_stale`).
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

from ..errors import InputError
from ..io.formats import UnsupportedFormatError, format_of

__all__ = ["TEMPORARY", "check_input", "writable_file", "check_not_input", "check_pois_not_input",
           "stale_temporaries", "remove_stale", "write_atomically"]

#: the temporary names of a run writing ``TARGET`` (:func:`write_atomically`): a hidden folder
#: ``.TARGET.tracs-tmp-XXXXXXXX`` holding ``TARGET``; the sidecar's ``.TARGET.tracs.json.tracs-tmp-XXXXXXXX.tmp``
#: (:func:`tracs.estimate.sidecar.write_sidecar_data`); and, from older versions,
#: ``.STEM.XXXXXXXX.SUFFIX`` with SQLite's ``-journal`` / ``-wal`` / ``-shm`` files
TEMPORARY = ".tracs-tmp-"
_RANDOM = "[a-z0-9_]{8}"


def check_input(source: Path, input_format: str = "auto") -> None:
    """Refuse an input that is neither a file nor a folder of a public trajectory data set."""
    if source.is_file():
        return
    if not source.exists():
        raise InputError(f"no such file: {source}")
    try:
        format_of(source, input_format)
    except UnsupportedFormatError:
        raise InputError(f"{source} is not a file: a folder, but not one of a known data set (Geolife: "
                         "Data/<user>/Trajectory/*.plt; T-Drive: <taxi id>.txt files) nor a folder of .parquet "
                         "files") from None


def writable_file(path) -> Path:
    """Check, before any work is done, that ``path`` can be written."""
    path = Path(path)
    parent = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise InputError(f"output {path} is a folder; give a file name")
    if not parent.is_dir():
        raise InputError(f"cannot write {path}: folder {parent} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise InputError(f"cannot write {path}: permission denied")
    return path


def check_not_input(output: Path, *inputs) -> None:
    """Refuse an output that is one of the inputs (any spelling, ``..``, symlink or hard link)."""
    out_real = os.path.realpath(output)
    for source in inputs:
        if source is None:
            continue
        source = Path(source)
        same = os.path.realpath(source) == out_real
        if not same and output.exists() and source.exists():
            same = _same_file(source, output)
        if same:
            raise InputError(f"the output {output} is the input file {source}: writing it would overwrite "
                             "the input; choose another output name")


def check_pois_not_input(pois, source, flag: str = "pois=") -> None:
    """Refuse a POI file that is the input (any spelling or link) or has the same content.

    The points of interest shape every release, so they must be public, fixed in
    advance: the check-ins themselves would make every visited place public.
    ``source`` may be a folder (a partitioned input): its Parquet files are compared.
    ``flag`` names the POI file in the message.
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
            raise InputError(f"{flag} {pois} is {how} the input {candidate}: the points of interest must be "
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


def remove_stale(path: Path, say=None) -> None:
    """Remove the leftovers of interrupted runs writing ``path`` (:func:`stale_temporaries`),
    each with a line to ``say`` naming it."""
    for entry in stale_temporaries(path):
        try:
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
        except OSError as exc:
            if say is not None:
                say(f"warning: could not remove {entry.name}, left by an interrupted run: {exc.strerror or exc}")
            continue
        if say is not None:
            say(f"note: removed {entry.name}, left by an interrupted run writing {path.name}")


def write_atomically(path: Path, write, *, before_rename=None, say=None, clean: bool = False) -> None:
    """Call ``write(tmp)`` on a temporary file, then rename it to ``path``.

    The temporary file has ``path``'s own name, in a hidden folder
    ``.NAME.tracs-tmp-XXXXXXXX`` beside it (so a file's name inside it, such as a
    GeoJSON's ``name``, is the target's).  A crash or an error leaves ``path`` as it was
    (absent or the old file), never half written; the folder is removed, and with
    ``clean`` leftovers of an interrupted earlier run to the same target are removed
    first (each named to ``say``).  ``before_rename(tmp)`` runs after the write, before
    the rename: a release's sidecar is written there, so it is in place first.
    """
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    if clean:
        remove_stale(path, say)
    work = Path(tempfile.mkdtemp(prefix=f".{path.name}{TEMPORARY}", dir=folder))
    tmp = work / path.name
    try:
        write(tmp)
        if before_rename is not None:
            before_rename(tmp)
        os.replace(tmp, path)
    finally:
        shutil.rmtree(work, ignore_errors=True)
