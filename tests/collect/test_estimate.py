"""The collector's TraCS-C estimate, kept up to date from counts per lattice value, against
``tracs estimate`` of the collector's export with the same options."""

from __future__ import annotations

import io
import time

import httpx
import numpy as np
import pandas as pd
import pytest

from tracs.cli import main

from .conftest import ADMIN, make_collector
from .test_server import enrolled_device, walk


def _export_estimate(url, tmp_path, grid) -> pd.DataFrame:
    headers = {"Authorization": f"Bearer {ADMIN}"}
    (tmp_path / "export.parquet").write_bytes(httpx.get(url + "/v1/export?format=parquet", headers=headers, timeout=60).content)
    (tmp_path / "export.parquet.tracs.json").write_bytes(httpx.get(url + "/v1/export?format=sidecar", headers=headers, timeout=60).content)
    assert main(["estimate", str(tmp_path / "export.parquet"), "--grid", str(grid), "-o",
                 str(tmp_path / "est.csv")]) == 0
    return pd.read_csv(tmp_path / "est.csv")


def _assert_close(served: bytes, expected: pd.DataFrame) -> None:
    got = pd.read_csv(io.BytesIO(served))
    assert list(got.columns) == list(expected.columns)
    np.testing.assert_array_equal(got[["i", "j"]].to_numpy(), expected[["i", "j"]].to_numpy())
    top = expected.probability.max()
    np.testing.assert_allclose(got.probability, expected.probability, rtol=0, atol=1e-6 * top)
    np.testing.assert_allclose(got[["min_lng", "min_lat", "max_lng", "max_lat"]], expected[
        ["min_lng", "min_lat", "max_lng", "max_lat"]], rtol=0, atol=1e-12)


# ε = 1: plain EM, refreshed after a second batch; ε = 2: the held-out smoothing weight and a finer grid
@pytest.mark.parametrize("epsilon, batches", [(1.0, [60, 45]), (2.0, [80])])
def test_estimate_from_counts_equals_tracs_estimate_of_the_export(serve, tmp_path, epsilon, batches):
    running, collector = serve(method="tracs-c", epsilon=epsilon)
    assert collector.density.applies
    for k, n in enumerate(batches):
        device = enrolled_device(running.url, collector.parameters, f"c{k}", tmp_path / f"c{k}.sqlite", seed=k)
        walk(device, n, seed=k)
        assert device.upload(running.url)["accepted"] == n
        served = httpx.get(running.url + "/v1/estimate?grid=8&format=csv&exact=1", timeout=60)
        assert served.status_code == 200, served.text
        assert served.headers["X-Tracs-Fit"] == "exact" and served.headers["X-Tracs-Reports"] == str(sum(batches[:k + 1]))
        _assert_close(served.content, _export_estimate(running.url, tmp_path, 8))  # refreshed after each batch
    assert collector.density._grids[8].counted == sum(batches) == collector.density._grids[8].counts.sum()
    # a collector started on the same database counts the reports again from it
    again = make_collector(tmp_path / "reports.sqlite", method="tracs-c", epsilon=epsilon)
    assert again.density.estimate_csv(8) == collector.density.estimate_csv(8, exact=True)
    assert again.density._grids[8].counted == sum(batches) == again.density._grids[8].counts.sum()
    for grid in (2, 3, 4, 5, 6):  # the fits of the last 4 grids asked for are kept
        again.density.estimate_csv(grid)
    assert list(again.density._grids) == [3, 4, 5, 6]


def _served_after(running, collector, tmp_path, sizes, grid=8, query=""):
    """Upload batches of ``sizes`` reports, the estimate asked for after each: the fine-grid
    estimate before the last batch, and the answer to the last request."""
    before = None
    for k, n in enumerate(sizes):
        before = None if collector.density._grids.get(grid) is None else collector.density._grids[grid].theta
        device = enrolled_device(running.url, collector.parameters, f"w{k}", tmp_path / f"w{k}.sqlite", seed=k)
        walk(device, n, seed=10 + k)
        assert device.upload(running.url)["accepted"] == n
        served = httpx.get(running.url + f"/v1/estimate?grid={grid}&format=csv{query}", timeout=60)
        assert served.status_code == 200, served.text
    return before, served


@pytest.mark.parametrize("epsilon", [1.0, 2.0])
def test_estimate_after_a_small_batch_is_warm_started_from_the_previous_one(serve, tmp_path, epsilon):
    from tracs.collect.lattice_counts import plan_of

    running, collector = serve(method="tracs-c", epsilon=epsilon)
    collector.density.QUIET, collector.density.REFIT = 3600.0, 10.0  # no exact fit in the background
    before, served = _served_after(running, collector, tmp_path, [200, 15])
    assert served.headers["X-Tracs-Fit"] == "warm" and served.headers["X-Tracs-Reports"] == "215"
    fit = collector.density._grids[8]
    assert fit.exact_at == 200 and fit.counted == fit.served_at == 215
    # the same fit made independently: the blocks of every stored report, the weight of the exact
    # fit, EM from the estimate before the batch to the same stopping rule
    _, c = collector.store.reports()
    model = collector.parameters.perturber()
    plan = plan_of(model, 8)
    blocks = plan.blocks(np.column_stack([c["x"], c["y"]]), None, c["epsilon"])
    np.testing.assert_array_equal(blocks[0].counts, fit.counts)
    if epsilon >= 2:
        import dataclasses

        assert plan.smoothing == "cv" and fit.exact.weight is not None
        plan = dataclasses.replace(plan, smoothing=fit.exact.weight)
    expected = plan.fit(blocks, lambda: None, initial=before).to_table(collector.parameters.crs)
    _assert_close(served.content, expected)
    # asked for exact: the fit afresh, which is tracs estimate of the export, and then served by default
    exact = httpx.get(running.url + "/v1/estimate?grid=8&format=csv&exact=1", timeout=60)
    assert exact.headers["X-Tracs-Fit"] == "exact" and exact.headers["X-Tracs-Reports"] == "215"
    _assert_close(exact.content, _export_estimate(running.url, tmp_path, 8))
    again = httpx.get(running.url + "/v1/estimate?grid=8", timeout=60).json()
    assert again["fit"] == "exact" and again["reports"] == again["stored"] == 215


@pytest.mark.parametrize("epsilon", [1.0, 2.0])
def test_the_exact_fit_follows_in_the_background_once_batches_pause(serve, tmp_path, epsilon):
    running, collector = serve(method="tracs-c", epsilon=epsilon)
    collector.density.QUIET = 0.05
    _, served = _served_after(running, collector, tmp_path, [200, 15])
    assert served.headers["X-Tracs-Reports"] == "215"  # warm or already exact: the background races the request
    deadline = time.monotonic() + 60
    while True:
        answer = httpx.get(running.url + "/v1/estimate?grid=8", timeout=60).json()
        if answer["fit"] == "exact" or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert answer["fit"] == "exact" and answer["reports"] == 215
    csv = httpx.get(running.url + "/v1/estimate?grid=8&format=csv", timeout=60)
    assert csv.headers["X-Tracs-Fit"] == "exact"
    _assert_close(csv.content, _export_estimate(running.url, tmp_path, 8))
    deadline = time.monotonic() + 10
    while collector.density._worker is not None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert collector.density._worker is None  # nothing left to fit: the thread ended


def test_the_background_fits_afresh_once_the_reports_grew_by_the_refit_share(serve, tmp_path):
    running, collector = serve(method="tracs-c", epsilon=1.0)
    collector.density.QUIET, collector.density.REFIT = 3600.0, 0.0  # grown at once: no pause needed
    _served_after(running, collector, tmp_path, [200, 15])
    deadline = time.monotonic() + 60
    while collector.density._grids[8].exact_at != 215 and time.monotonic() < deadline:
        time.sleep(0.05)
    served = httpx.get(running.url + "/v1/estimate?grid=8&format=csv", timeout=60)
    assert served.headers["X-Tracs-Fit"] == "exact"
    _assert_close(served.content, _export_estimate(running.url, tmp_path, 8))


@pytest.mark.parametrize("query, reason", [("exact=yes", "exact must be 0 or 1, got 'yes'"),
                                           ("grid=1", "grid must be a whole number from 2 to 1024, got '1'"),
                                           ("format=xml", "format must be json or csv, got 'xml'")])
def test_bad_estimate_requests_are_refused_by_reason(serve, query, reason):
    running, collector = serve(method="tracs-c", epsilon=1.0)
    answer = httpx.get(running.url + "/v1/estimate?" + query, timeout=60)
    assert answer.status_code == 400 and answer.json() == {"error": reason}
