"""tracs simulate: a file replayed as devices; the collector's export equals tracs perturb of the file."""

from __future__ import annotations

import httpx
import numpy as np
import pandas as pd

from tracs.cli import main

from .conftest import ADMIN
from .test_device import BOX, checkins


def test_simulate_then_export_equals_tracs_perturb(serve, tmp_path, capsys):
    running, _ = serve(caps={"day": 30.0})  # 20 points a day
    frame = checkins(n_users=3, per_user=25)
    source = tmp_path / "in.csv"
    frame.to_csv(source, index=False)
    assert main(["simulate", str(source), "--server", running.url, "--seed", "11", "--admin-token", ADMIN,
                 "--state", str(tmp_path / "state")]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert line.startswith("sent 60, accepted 60, rejected 0 (none), withheld 15 (day: 15), ")
    assert line.endswith(" reports/s")
    export = httpx.get(running.url + "/v1/export?format=parquet", headers={"Authorization": f"Bearer {ADMIN}"}, timeout=60)
    (tmp_path / "export.parquet").write_bytes(export.content)
    got = pd.read_parquet(tmp_path / "export.parquet")
    assert main(["perturb", str(source), "-m", "tracs-d", "-e", "1.5", "--seed", "11", "--quiet", "--region",
                 ",".join(str(v) for v in BOX.bounds), "-o", str(tmp_path / "batch.parquet")]) == 0
    want = pd.read_parquet(tmp_path / "batch.parquet")
    for uid, rows in got.groupby("uid"):
        first = want[want.uid == uid].iloc[:20]  # the day cap withheld each user's last 5 fixes
        np.testing.assert_array_equal(rows.lat.to_numpy(), first.lat.to_numpy())
        np.testing.assert_array_equal(rows.lng.to_numpy(), first.lng.to_numpy())
        assert (rows.datetime.to_numpy() == first.datetime.to_numpy()).all()
