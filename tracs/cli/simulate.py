"""``tracs simulate``: replay a file as devices reporting to a collector (pip install 'tracs[collect]')."""

from __future__ import annotations

import argparse

from ._common import CLIError, seed_int

DESCRIPTION = """\
Replay any file 'tracs perturb' reads as devices of a running collector ('tracs serve'):
one device per user, enrolled with the admin token, which releases its rows one by one
in time order (each trajectory its own) under the collector's public parameters and
uploads them in batches.  Prints one line: reports sent, accepted, rejected by reason,
withheld by the budget caps (or outside the region), and reports per second.  Each
device's reports equal 'tracs perturb' of that user with the same --seed.
"""


def add_parser(subparsers) -> None:
    from . import _columns

    p = subparsers.add_parser("simulate", help="replay a file as devices reporting to a collector",
                              description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("input", metavar="FILE", help="any file 'tracs perturb' reads")
    p.add_argument("--server", required=True, metavar="URL", help="the collector, e.g. http://127.0.0.1:8000")
    p.add_argument("--seed", type=seed_int, required=True, metavar="S", help="the devices' random key")
    p.add_argument("--admin-token", required=True, metavar="T", help="the collector's admin token (enrolment)")
    p.add_argument("--state", default=None, metavar="DIR",
                   help="folder of the devices' state files (default: a temporary folder)")
    p.add_argument("--rate", type=float, default=None, metavar="N", help="at most N reports per second")
    p.add_argument("--batch", type=int, default=1000, metavar="B", help="reports per upload (default 1000)")
    p.add_argument("--split-gap", default=None, metavar="GAP",
                   help="start a new trajectory after a gap longer than GAP (as 'tracs perturb')")
    _columns.add_input_arguments(p, quiet=True)


def _replay(points, params, args, client, folder):
    """Each user's rows through its device; returns the totals."""
    import time
    from pathlib import Path

    import numpy as np

    from ..collect import BudgetExhausted, Device
    from ..io.batch_files import trajectory_ids

    totals = {"sent": 0, "accepted": 0, "rejected": {}, "withheld": {}}
    users = points.trajectory_keys()
    ids = np.asarray(trajectory_ids(points))
    lonlat, times = points.coords, points.column("time")
    headers = {"Authorization": f"Bearer {args.admin_token}"}
    start, made = time.perf_counter(), 0
    first = 0
    offsets = points.offsets
    while first < len(users):
        last = first
        while last < len(users) and str(users[last]) == str(users[first]):
            last += 1
        uid = str(users[first])
        answer = client.post(args.server.rstrip("/") + "/v1/devices", json={"device": uid}, headers=headers)
        if answer.status_code != 200:
            raise CLIError(f"enrolling device {uid!r}: HTTP {answer.status_code}: {answer.text[:300]}")
        device = Device(params, uid, args.seed, Path(folder) / f"device-{first}.sqlite", token=answer.json()["token"])
        with device.transaction():
            for t in range(first, last):
                for row in range(offsets[t], offsets[t + 1]):
                    try:
                        device.report(lonlat[row, 1], lonlat[row, 0], times[row],
                                      trajectory=str(ids[t]))
                    except BudgetExhausted as exc:
                        totals["withheld"][exc.cap] = totals["withheld"].get(exc.cap, 0) + 1
                    except ValueError:
                        totals["withheld"]["outside"] = totals["withheld"].get("outside", 0) + 1
                    made += 1
                    if args.rate:
                        wait = made / args.rate - (time.perf_counter() - start)
                        if wait > 0:
                            time.sleep(wait)
        sent = device.upload(args.server, batch_size=args.batch, client=client)
        device.close()
        totals["sent"] += sent["sent"]
        totals["accepted"] += sent["accepted"]
        for reason, count in sent["rejected"].items():
            totals["rejected"][reason] = totals["rejected"].get(reason, 0) + count
        first = last
    return totals, time.perf_counter() - start


def run(args) -> int:
    import tempfile
    from pathlib import Path

    try:
        import httpx
    except ImportError:
        raise CLIError("tracs simulate needs the collect extra: pip install 'tracs[collect]'") from None
    from ..collect import ParameterError, Parameters
    from ..io.batch_files import read_points
    from . import _columns

    source = Path(args.input)
    _columns.check_input(source, args)
    with httpx.Client(timeout=60) as client:
        try:
            params = Parameters.from_json(client.get(args.server.rstrip("/") + "/v1/parameters").content)
        except httpx.TransportError as exc:
            raise CLIError(f"no collector at {args.server}: {exc}") from None
        except ParameterError as exc:
            raise CLIError(f"the collector's parameters: {exc}") from None
        points = read_points(source, split_gap=args.split_gap, **_columns.read_options(args))
        if args.state is not None:
            Path(args.state).mkdir(parents=True, exist_ok=True)
            totals, seconds = _replay(points, params, args, client, args.state)
        else:
            with tempfile.TemporaryDirectory() as folder:
                totals, seconds = _replay(points, params, args, client, folder)
    from .._text import whole

    def by_reason(counts):
        return ", ".join(f"{reason}: {whole(n)}" for reason, n in sorted(counts.items())) or "none"

    print(f"sent {whole(totals['sent'])}, accepted {whole(totals['accepted'])}, rejected "
          f"{whole(sum(totals['rejected'].values()))} ({by_reason(totals['rejected'])}), withheld "
          f"{whole(sum(totals['withheld'].values()))} ({by_reason(totals['withheld'])}), "
          f"{whole(totals['sent'] / max(seconds, 1e-9))} reports/s")
    return 0
