"""The ``tracs`` command: perturb files, evaluate methods, run the demo, draw maps.

``main(argv)`` parses the arguments, runs one subcommand and returns its exit
status.  Bad input (an unknown method, ε ≤ 0, a missing file, an unwritable output,
empty data: a :class:`~tracs.errors.TracsError` or an ``OSError``) ends with a
one-line message on standard error and status 1, never a traceback.  Any other
exception is a bug in tracs: it is shown with its traceback and the status is
:data:`BUG_STATUS`.  ``TRACS_DEBUG=1`` lets every exception propagate.
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager

from ..errors import TracsError
from ._common import BUG_STATUS, CLIError, Parser, fail, report_bug

__all__ = ["main", "build_parser", "CLIError", "BUG_STATUS"]

#: subcommand name -> its module, relative to this package (each offers add_parser(subparsers) and run(args))
_COMMANDS = {"perturb": ".perturb", "evaluate": ".evaluate", "demo": ".demo", "estimate": ".estimate",
             "denoise": ".denoise", "synthesize": ".synthesize", "serve": ".serve", "simulate": ".simulate",
             "audit": ".audit", "warmup": "tracs.warmup", "regions": ".regions"}


def build_parser() -> Parser:
    """The argument parser of the ``tracs`` command and all its subcommands."""
    from importlib import import_module
    from importlib.util import find_spec

    from .. import __version__

    parser = Parser(
        prog="tracs",
        description="Trajectory collection under local differential privacy: perturb "
                    "check-in files with TraCS-D / TraCS-C and baselines, measure the error in "
                    "metres, reproduce the paper's results.",
        epilog="Run 'tracs COMMAND --help' for the options of a command.",
    )
    parser.add_argument("--version", action="version", version=f"tracs {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for module in _COMMANDS.values():
        import_module(module, __name__).add_parser(subparsers)
    if find_spec(f"{__name__}.map_command") is not None:  # the map command lives in its own module
        import_module(f"{__name__}.map_command").add_parser(subparsers)
    for sub in subparsers.choices.values():  # every command can be told to show no progress bar
        if not any(action.dest == "quiet" for action in sub._actions):
            sub.add_argument("-q", "--quiet", action="store_true",
                             help="no progress bar (there is none either when standard error is not a terminal)")
    return parser


def _dispatch(args) -> int:
    from importlib import import_module

    from . import _startup

    if args.command != "perturb":  # only the perturb command resumes collection later
        _startup.resume()
    if args.command == "map":
        from . import map_command

        return int(map_command.run(args) or 0)
    return int(import_module(_COMMANDS[args.command], __name__).run(args) or 0)


def main(argv=None) -> int:
    """Run the ``tracs`` command with ``argv`` (default: ``sys.argv[1:]``); return the exit status.

    Without ``argv`` (the ``tracs`` command itself, whose process ends next) the objects
    left at the end are frozen out of the garbage collector: the interpreter's last
    collections then skip the modules and compiled kernels loaded (pandas, numba), and
    nothing else changes (exit handlers still run).  While a command starts up,
    automatic collection is paused (:mod:`tracs.cli._startup`).
    """
    from . import _startup

    _startup.pause(freeze=argv is None)  # until the command's imports are done (tracs.cli._startup)
    try:
        return _main(argv)
    finally:
        _startup.resume()
        if argv is None:
            import gc

            gc.disable()
            gc.freeze()


@contextmanager
def _one_line_warnings(command: str):
    """Show a library warning as one line of the command (``tracs perturb: warning: ...``),
    never with its file, line and source code."""
    import warnings

    def show(message, category, filename, lineno, file=None, line=None):
        print(f"tracs {command}: warning: {' '.join(str(message).split())}", file=sys.stderr)

    with warnings.catch_warnings():
        warnings.showwarning = show
        yield


def _main(argv) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version and usage errors
        return int(exc.code or 0) if not isinstance(exc.code, str) else 2
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    from .._progress import silenced

    try:
        with silenced(bool(getattr(args, "quiet", False) or getattr(args, "no_progress", False))), \
                _one_line_warnings(args.command):
            return _dispatch(args)
    except KeyboardInterrupt:
        print("tracs: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `tracs evaluate ... | head`
        return 0
    except (TracsError, OSError) as exc:
        if os.environ.get("TRACS_DEBUG"):
            raise
        return fail(args.command, exc)
    except Exception as exc:  # noqa: BLE001 - anything else is a bug: shown with its traceback
        if os.environ.get("TRACS_DEBUG"):
            raise
        return report_bug(args.command, exc)
