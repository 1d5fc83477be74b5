"""Safe output for the commands: never overwrite an input, never leave half a file, report every drop.

The checks and the atomic writing are :mod:`tracs.release.paths`'s, the report of the
rows read :mod:`tracs.release.notes`'s: these give them the command's name and options.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ._common import CLIError


def add_arguments(p) -> None:
    """The ``--strict`` option."""
    p.add_argument("--strict", action="store_true",
                   help="exit with an error if any input row is dropped or changed (bad values, "
                        "rows outside the region)")


def check_not_input(output: Path, *inputs) -> None:
    """Refuse an output that is one of the inputs (:func:`tracs.release.paths.check_not_input`)."""
    from ..release.paths import check_not_input as check

    check(Path(output), *inputs)




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




def report_drops(command: str, report, *, strict: bool, quiet: bool = False, extra=(), others=()) -> None:
    """Print what the reader dropped and its notes (:func:`tracs.release.notes.report_read`); with
    ``strict`` any drop is an error."""
    from ..release.notes import printer, report_read

    report_read(report, say=printer(f"tracs {command}"), strict=strict, quiet=quiet, extra=extra, others=others,
                strict_flag="--strict")
