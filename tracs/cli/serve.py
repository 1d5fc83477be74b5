"""``tracs serve``: the collector of a collection (pip install 'tracs[collect]')."""

from __future__ import annotations

import argparse
import contextlib
import io
import tempfile
from pathlib import Path
import base64
import os
import pickle

from ._common import CLIError, anchor_arg, positive_float

DESCRIPTION = """\
Run the collector of a collection: publish the public parameters (GET /v1/parameters),
receive the devices' reports (POST /v1/reports), check every one against the
parameters and each device's budget ledger, store each once (SQLite file --db), export
them as a release that 'tracs estimate' reads and estimate the density from them.
Devices are enrolled by the admin (POST /v1/devices with 'Authorization: Bearer T',
or offline with --issue-token DEVICE).  Listens on 127.0.0.1 unless --host says
otherwise; serve it behind a reverse proxy with TLS (docs/collect.md).
"""


def add_parser(subparsers) -> None:
    from . import _public

    p = subparsers.add_parser("serve", help="run the collector: receive, check and store devices' reports",
                              description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-m", "--method", required=True, metavar="METHOD",
                   help="the perturber every device releases with (tracs-d, tracs-c, ...)")
    p.add_argument("-e", "--epsilon", required=True, type=positive_float, metavar="E",
                   help="privacy parameter per point, > 0")
    p.add_argument("--region", required=True, type=_public.region_arg, metavar="BOX", help=_public.region_help())
    p.add_argument("--anchor", type=anchor_arg, default="center",
                   help="TraCS-D's public first reference: center (default), corner or X,Y in metres")
    for cap in ("trajectory", "day", "lifetime"):
        p.add_argument(f"--cap-{cap}", type=positive_float, default=None, metavar="E",
                       help=f"most ε a device may spend per {cap}" if cap != "lifetime" else
                       "most ε a device may spend in its lifetime")
    p.add_argument("--db", default="reports.sqlite", metavar="DB",
                   help="SQLite file of the reports (default reports.sqlite), or a PostgreSQL database "
                        "postgresql://USER@HOST:PORT/NAME")
    p.add_argument("--synchronous", choices=("normal", "full"), default="normal",
                   help="SQLite: normal (default) — an answered batch survives the collector's crash; full — "
                        "it also survives a power loss (one fsync per commit, slower)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    p.add_argument("--workers", type=_workers, default=1, metavar="N",
                   help="collector processes (uvicorn workers) sharing the port (default 1); more than 1 needs "
                        "a PostgreSQL --db (one process writes a SQLite file)")
    p.add_argument("--admin-token", default=None, metavar="T",
                   help="bearer token of the admin endpoints (enrolment, export); without it they are closed")
    p.add_argument("--issue-token", default=None, metavar="DEVICE",
                   help="enrol DEVICE in --db, print its upload token and exit")


def _workers(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"a whole number of processes >= 1 is needed, got {text!r}")
    return int(text)


#: the environment variable that hands the options to each worker process (pickled, base64)
_OPTIONS = "TRACS_SERVE_OPTIONS"


def worker_app():
    """The application of one worker process of ``tracs serve --workers N`` (its own collector on
    the shared PostgreSQL database, built from the options the parent process handed down)."""
    from ..collect.server import create_app

    return create_app(collector_of(pickle.loads(base64.b64decode(os.environ[_OPTIONS]))), estimate_csv=estimate_csv)


def collector_of(args):
    """The :class:`tracs.collect.collector.Collector` the options describe."""
    from ..collect.collector import Collector
    from ..collect.published import ParameterError, Parameters
    from ..collect.postgres import open_store
    from ..collect.storage import StoreError

    caps = {cap: getattr(args, f"cap_{cap}") for cap in ("trajectory", "day", "lifetime")}
    try:
        params = Parameters.build(args.method, args.epsilon, args.region, anchor=args.anchor, caps=caps)
        store = open_store(args.db, params, synchronous=args.synchronous)
    except (ParameterError, StoreError, ValueError) as exc:
        raise CLIError(str(exc)) from None
    return Collector(params, store, args.admin_token)


def run(args) -> int:
    from ..collect.postgres import is_postgres

    if args.workers > 1 and not is_postgres(args.db):
        raise CLIError(f"--workers {args.workers}: a SQLite database is written by one process; run one worker "
                       "or give a PostgreSQL database (--db postgresql://USER@HOST:PORT/NAME)")
    collector = collector_of(args)
    if args.issue_token is not None:
        print(collector.enroll(args.issue_token))
        return 0
    try:
        import uvicorn
    except ImportError:
        raise CLIError("tracs serve needs the collect extra: pip install 'tracs[collect]'") from None
    from ..collect.server import create_app

    print(f"tracs serve: {collector.parameters.method} at ε = {args.epsilon:g} per point over {args.region}, "
          f"{collector.store.count():,} reports in {args.db}, on http://{args.host}:{args.port}")
    if args.workers == 1:
        uvicorn.run(create_app(collector, estimate_csv=estimate_csv), host=args.host, port=args.port,
                    log_level="warning")
        return 0
    collector.store.close()  # each worker opens its own
    os.environ[_OPTIONS] = base64.b64encode(pickle.dumps(args)).decode()
    uvicorn.run("tracs.cli.serve:worker_app", factory=True, workers=args.workers, host=args.host, port=args.port,
                log_level="warning")
    return 0


def estimate_csv(store, parameters, grid: int) -> bytes:
    """The CSV ``tracs estimate --grid GRID -o est.csv`` writes for the export of the stored reports
    (:func:`tracs.collect.export.write_export`): the collector's estimate of a method whose
    density is not kept from counts, recomputed on each call."""
    from ..collect.export import write_export
    from . import main

    with tempfile.TemporaryDirectory() as folder:
        release = write_export(store, parameters, Path(folder) / "reports.parquet")
        out = Path(folder) / "est.csv"
        with contextlib.redirect_stdout(io.StringIO()):
            status = main(["estimate", str(release), "--grid", str(int(grid)), "-o", str(out)])
        if status != 0:
            raise RuntimeError(f"tracs estimate failed on the stored reports (status {status})")
        return out.read_bytes()
