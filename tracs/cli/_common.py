"""Helpers shared by the subcommands: one-line errors, argument types, output checks."""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
from pathlib import Path

from ..errors import TracsError

#: options whose value may begin with a minus sign: coordinates west of Greenwich or south of
#: the equator (``--region -74.3,40.45,-73.65,41``, ``--anchor -500,20``) or a file so named
NEGATIVE_VALUE_OPTIONS = ("--region", "--pois", "--anchor")
_NEGATIVE_VALUE = re.compile(r"-[0-9.]")


class CLIError(TracsError):
    """A user error with a message fit for one line of standard error."""


class Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line (no usage block) and exit 2.

    ``epilog`` may be a function returning the text: it is called only when the help
    is shown, so a command whose help lists what a heavy module holds does not import
    that module on every run.
    """

    def parse_known_args(self, args=None, namespace=None):  # noqa: D102 - argparse hook
        if args is None:
            args = sys.argv[1:]
        return super().parse_known_args(join_negative_values(list(args)), namespace)

    def error(self, message):  # noqa: D102 - argparse hook
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")

    def format_help(self):  # noqa: D102 - argparse hook
        if callable(self.epilog):
            self.epilog = self.epilog()
        return super().format_help()


def join_negative_values(argv: list) -> list:
    """``--region -74.3,40.45,...`` as ``--region=-74.3,40.45,...``, for argparse.

    argparse takes a word starting with ``-`` for an option unless it is a single
    number, so a box or a point west of Greenwich or south of the equator given as a
    separate word would be refused ("expected one argument").  After each option of
    :data:`NEGATIVE_VALUE_OPTIONS`, a next word that starts with a minus sign and a
    digit or a point is joined to it.  Nothing after ``--`` is touched.
    """
    out = []
    words = iter(argv)
    for word in words:
        out.append(word)
        if word == "--":
            out.extend(words)
            break
        if word in NEGATIVE_VALUE_OPTIONS:
            value = next(words, None)
            if value is None:
                break
            if isinstance(value, str) and _NEGATIVE_VALUE.match(value):
                out[-1] = f"{word}={value}"
            else:
                out.append(value)
    return out


#: the exit status of a command that ends in a bug of tracs (an exception that is not a
#: :class:`~tracs.errors.TracsError` or an ``OSError``): EX_SOFTWARE of sysexits.h.  1 is a
#: refused input, 2 a usage error, 3 an audit that could not verify every bit
BUG_STATUS = 70


def fail(command: str, exc: BaseException) -> int:
    """Print ``exc`` (a refused input or an unreadable file) as one line on standard error; return 1."""
    if isinstance(exc, FileNotFoundError) and exc.filename and not exc.args[1:]:
        message = f"no such file: {exc.filename}"
    elif isinstance(exc, OSError) and exc.strerror and exc.filename:
        message = f"{exc.strerror}: {exc.filename}"
    else:
        message = str(exc) or type(exc).__name__
    message = " ".join(message.split())  # one line, whatever the exception said
    print(f"tracs {command}: error: {message}", file=sys.stderr)
    return 1


def report_bug(command: str, exc: BaseException) -> int:
    """Print ``exc`` with its traceback as a bug in tracs; return :data:`BUG_STATUS`."""
    import traceback

    traceback.print_exception(exc, file=sys.stderr)
    print(f"tracs {command}: this is a bug in tracs, not a problem with the input: the "
          f"{type(exc).__name__} above was not expected; please report it with the traceback",
          file=sys.stderr)
    return BUG_STATUS


def positive_float(text: str) -> float:
    """argparse type: a finite number > 0 (a privacy parameter)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text!r}")
    return value


def _int_at_least(minimum: int, what: str):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = minimum - 1
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}")
        return value

    return parse


#: argparse type: an integer >= 1 (counts)
positive_int = _int_at_least(1, "an integer >= 1")
#: argparse type: a non-negative integer (seeds)
seed_int = _int_at_least(0, "a non-negative integer")


def anchor_arg(text: str):
    """argparse type: ``center``, ``corner`` or ``X,Y`` (metres / region units)."""
    if text in ("center", "centre", "corner"):
        return "center" if text == "centre" else text
    try:
        x, y = (float(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be 'center', 'corner' or 'X,Y', got {text!r}") from None
    return (x, y)


def writable_dir(path) -> Path:
    """Create ``path`` if needed and check that files can be written into it."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise CLIError(f"output folder {path} exists and is not a folder")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CLIError(f"cannot create output folder {path}: {exc.strerror or exc}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise CLIError(f"output folder {path} is not writable")
    return path


def writable_file(path) -> Path:
    """Check, before any work is done, that ``path`` can be written (:func:`tracs.release.paths.writable_file`)."""
    from ..release.paths import writable_file as check

    return check(path)


def check_release_path(path: Path) -> None:
    """Refuse a release that is neither a file nor a folder of Parquet parts (what
    ``tracs perturb --engine dask`` writes), naming which."""
    from ..io.parquet_folder import is_parquet_folder

    if not (path.is_file() or is_parquet_folder(path)):
        raise CLIError(f"no such file: {path}" if not path.exists() else
                       f"{path} is not a file, nor a folder of Parquet parts ('tracs perturb --engine dask')")


def release_methods():
    """The registered methods that release trajectories (perturbers and baselines), by name."""
    from ..methods import BASELINE, PERTURBER, view

    return view(PERTURBER, BASELINE)


def method_help() -> str:
    return "; ".join(f"{method.name}: {method.help}" for method in release_methods().values())


def workers_arg(text: str) -> int:
    """argparse type for --workers: a whole number of workers >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of workers >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of workers >= 1, got {text!r}")
    return value
