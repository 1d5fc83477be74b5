"""The collector over HTTP on 127.0.0.1: enrolment, idempotent uploads, checks by reason, refusals,
export read by tracs estimate, metrics."""

from __future__ import annotations

import json

import httpx
import numpy as np
import pandas as pd
import pytest

from tracs.cli import main
from tracs.collect import Device, Parameters
from tracs.collect.storage import STORED

from .conftest import ADMIN

ADMIN_HEADERS = {"Authorization": f"Bearer {ADMIN}"}


def enrolled_device(url, params, device_id, state, seed=5):
    answer = httpx.post(url + "/v1/devices", json={"device": device_id}, headers=ADMIN_HEADERS)
    assert answer.status_code == 200, answer.text
    return Device(params, device_id, seed, state, token=answer.json()["token"])


def walk(device, n, trajectory=None, start="2024-03-01T08:00Z", seed=0):
    rng = np.random.default_rng(seed)
    t0 = pd.Timestamp(start)
    with device.transaction():  # one commit for the walk
        return [device.report(rng.uniform(35.55, 35.85), rng.uniform(139.55, 139.95),
                              t0 + pd.Timedelta(minutes=k), trajectory=trajectory) for k in range(n)]


def test_upload_is_stored_once_and_export_is_a_release(serve, tmp_path):
    running, collector = serve()
    params = Parameters.from_json(httpx.get(running.url + "/v1/parameters").content)
    assert params == collector.parameters
    device = enrolled_device(running.url, params, "007", tmp_path / "d.sqlite")
    walk(device, 30)
    batch = device.batch()
    totals = device.upload(running.url, batch_size=7)
    assert totals == {"sent": 30, "accepted": 30, "rejected": {}}
    assert device.queued()["sequence"] == []
    # the same batch again (an answer lost on the way): acknowledged, stored once
    again = httpx.post(running.url + "/v1/reports", json=batch, headers={"Authorization": f"Bearer {device.token}"})
    assert again.status_code == 200
    assert again.json()["accepted"] == 0
    assert {r["reason"] for r in again.json()["rejected"]} == {"already stored"}
    assert httpx.get(running.url + "/v1/health").json() == {"status": "ok", "stored": 30}
    # the export is a release tracs estimate reads; the estimate endpoint equals it
    for fmt in ("parquet", "csv"):
        answer = httpx.get(running.url + f"/v1/export?format={fmt}", headers=ADMIN_HEADERS, timeout=60)
        assert answer.status_code == 200, answer.text
        (tmp_path / f"export.{fmt}").write_bytes(answer.content)
    sidecar = httpx.get(running.url + "/v1/export?format=sidecar", headers=ADMIN_HEADERS, timeout=60).json()
    assert sidecar["method"] == "tracs-d" and sidecar["epsilon"] == 1.5
    (tmp_path / "export.tracs.json").write_text(json.dumps(sidecar))
    frame = pd.read_parquet(tmp_path / "export.parquet")
    assert list(frame.columns[:6]) == ["uid", "trajectory", "point", "datetime", "lat", "lng"]
    assert frame.uid.tolist() == ["007"] * 30
    assert main(["estimate", str(tmp_path / "export.parquet"), "--grid", "16", "-o", str(tmp_path / "est.csv")]) == 0
    served = httpx.get(running.url + "/v1/estimate?grid=16&format=csv", timeout=60)
    assert served.status_code == 200
    assert served.content == (tmp_path / "est.csv").read_bytes()
    density = httpx.get(running.url + "/v1/estimate?grid=16", timeout=60).json()
    assert density["stored"] == 30 and len(density["cells"]["probability"]) == 256
    metrics = httpx.get(running.url + "/metrics").text
    assert "tracs_reports_stored 30" in metrics
    assert 'tracs_reports_rejected_total{reason="already stored"} 30' in metrics
    assert 'tracs_batch_seconds_count 6' in metrics
    # the estimate is kept while nothing new is stored, fitted again after a batch
    walk(device, 5, seed=9)
    device.upload(running.url)
    after = httpx.get(running.url + "/v1/estimate?grid=16&format=csv", timeout=60).content
    assert after != served.content


def uncapped_device(url, capped, device_id, state):
    """A modified device: it releases with the published method and ε but ignores the caps."""
    free = Parameters.build(capped.method, capped.epsilon, capped.lonlat_box())
    return enrolled_device(url, free, device_id, state)


def test_modified_reports_are_rejected_by_reason(serve, tmp_path):
    running, collector = serve(caps={"trajectory": 4.5})  # 3 points per trajectory
    device = uncapped_device(running.url, collector.parameters, "m", tmp_path / "m.sqlite")
    walk(device, 3, trajectory="a")
    walk(device, 5, trajectory="b", seed=1)
    body = dict(device.batch(), parameters=collector.parameters.digest)
    r = body["reports"]
    r["epsilon"][0] = 3.0  # claims another ε
    r["i"][1] = 10**9  # off the lattice
    r["x"][2] += 1.0  # moved off its release about the report before it
    r["sequence"][4] = r["sequence"][3]  # repeated in the batch
    token = {"Authorization": f"Bearer {device.token}"}
    answer = httpx.post(running.url + "/v1/reports", json=body, headers=token).json()
    reasons = {x["sequence"]: x["reason"] for x in answer["rejected"]}
    assert reasons == {0: "epsilon is not the published one", 1: "not on the published lattice",
                       2: "not on the published lattice", 3: "repeated in the batch",
                       7: "trajectory cap spent"}  # b's fourth point kept: 3, 5, 6 (its copy of 3 rejected)
    assert answer["accepted"] == 3
    # a report whose reference the collector does not hold: checked on the lattice's ranges and the region
    lone = {name: [values[-1]] for name, values in r.items()}
    lone.update(sequence=[50], trajectory=[7], index=[5], x=[-1.0])
    answer = httpx.post(running.url + "/v1/reports", json=dict(body, reports=lone), headers=token).json()
    assert answer["rejected"] == [{"sequence": 50, "reason": "outside the region"}]
    stats = httpx.get(running.url + "/v1/stats").json()
    assert stats["stored"] == 3 and stats["rejected"] == 6


@pytest.mark.parametrize("method", ["tracs-d", "strawman"])
def test_a_report_continuing_a_stored_trajectory_is_checked_about_the_last_stored_report(serve, tmp_path, method):
    running, collector = serve(method=method)
    device = enrolled_device(running.url, collector.parameters, "t", tmp_path / "t.sqlite")
    walk(device, 4, trajectory="a")
    assert device.upload(running.url, batch_size=1)["accepted"] == 4  # each report about the stored one before it
    walk(device, 3, trajectory="a", seed=1)
    body = device.batch()
    r = body["reports"]
    token = {"Authorization": f"Bearer {device.token}"}
    cases = [  # (what is changed in the batch, the first report's reason)
        (lambda r: r["x"].__setitem__(0, r["x"][0] + 1.0), "not on the published lattice"),  # moved off its release
        (lambda r: [r[k].__setitem__(0, v) for k, v in (("index", 5), ("sequence", 40))],  # index 4 never came
         "the report before it in its trajectory is not stored"),
        (lambda r: r["trajectory"].__setitem__(0, 9), "the report before it in its trajectory is not stored"),
    ]
    for change, reason in cases:  # the batch's first report alone, changed
        sent = {k: [v[0]] for k, v in r.items()}
        change(sent)
        answer = httpx.post(running.url + "/v1/reports", json=dict(body, reports=sent), headers=token).json()
        assert answer == {"accepted": 0, "rejected": [{"sequence": sent["sequence"][0], "reason": reason}]}
    assert device.upload(running.url)["accepted"] == 3
    assert httpx.get(running.url + "/v1/stats").json()["stored"] == 7


_ROWS_TABLE = """CREATE TABLE reports (device TEXT NOT NULL, sequence INTEGER NOT NULL,
    trajectory INTEGER NOT NULL, idx INTEGER NOT NULL, time INTEGER NOT NULL, x REAL NOT NULL,
    y REAL NOT NULL, i INTEGER NOT NULL, j INTEGER NOT NULL, epsilon REAL NOT NULL,
    PRIMARY KEY (device, sequence)) WITHOUT ROWID"""


def check_conversion_of_one_row_per_report(db, tmp_path, to_old_layout):
    """A collection stored in ``db``, put back in the layout of one row per report by
    ``to_old_layout(devices, columns)``, is converted when opened and keeps every report; the
    conversion's last points check the next reports of each trajectory."""
    from tracs.collect.collector import Collector
    from tracs.collect.postgres import open_store

    from .conftest import make_collector

    collector = make_collector(db)
    device = Device(collector.parameters, "007", 5, tmp_path / "old.sqlite", token=collector.enroll("007"))
    walk(device, 5, trajectory="a")
    walk(device, 2, trajectory="b", seed=1)
    assert collector.ingest(device.batch(), f"Bearer {device.token}")["accepted"] == 7
    devices, columns = collector.store.reports()
    collector.store.close()
    to_old_layout(devices, columns)
    reopened = Collector(collector.parameters, open_store(db, collector.parameters))
    assert reopened.store.count() == 7
    again_devices, again = reopened.store.reports()
    assert again_devices == devices == ["007"] * 7
    for name in STORED:
        np.testing.assert_array_equal(again[name], columns[name])
    device.acknowledge(range(7))
    walk(device, 2, trajectory="a", seed=2)  # each checked about the last converted report of its trajectory
    walk(device, 1, trajectory="b", seed=3)
    walk(device, 1, trajectory="b", seed=4)
    body = device.batch()
    body["reports"]["sequence"][-1] = 3  # stored before the conversion
    assert reopened.ingest(body, f"Bearer {device.token}") == {
        "accepted": 3, "rejected": [{"sequence": 3, "reason": "already stored"}]}
    reopened.store.close()


def test_a_database_of_one_row_per_report_is_converted_and_keeps_every_report(tmp_path):
    import sqlite3

    def to_old_layout(devices, columns):
        with sqlite3.connect(tmp_path / "reports.sqlite") as db:  # the layout of an earlier collector
            db.execute("DELETE FROM batches")
            db.execute("DROP TABLE last_points")
            db.execute("DELETE FROM meta WHERE name = 'last points'")
            db.execute(_ROWS_TABLE)
            db.executemany("INSERT INTO reports VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                           zip(devices, *(columns[name].tolist() for name in STORED)))

    check_conversion_of_one_row_per_report(tmp_path / "reports.sqlite", tmp_path, to_old_layout)


def _arrow_with_text_x(body: dict) -> bytes:
    import pyarrow as pa

    from tracs.collect.protocol import encode_arrow

    table = pa.ipc.open_stream(encode_arrow(body)).read_all()
    table = table.set_column(table.column_names.index("x"), "x", pa.array(["a"] * table.num_rows))
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def _request(case: str, body: dict, token: dict):
    """``(method, path, httpx keyword arguments)`` of a refused request."""
    from tracs.collect.protocol import ARROW_TYPE, encode_arrow

    as_json = {**token, "Content-Type": "application/json"}
    as_arrow = {**token, "Content-Type": ARROW_TYPE}
    reports = body["reports"]
    return {
        "malformed arrow": ("POST", "/v1/reports", dict(content=b"\xff\xff\xff\xff nope", headers=as_arrow)),
        "arrow text column": ("POST", "/v1/reports", dict(content=_arrow_with_text_x(body), headers=as_arrow)),
        "arrow other parameters": ("POST", "/v1/reports", dict(content=encode_arrow(dict(body, parameters="0" * 64)),
                                                                headers=as_arrow)),
        "malformed": ("POST", "/v1/reports", dict(content=b"{nope", headers=as_json)),
        "content type": ("POST", "/v1/reports", dict(content=json.dumps(body), headers={**token,
                                                                                       "Content-Type": "text/plain"})),
        "oversized": ("POST", "/v1/reports", dict(content=b"[" + b"0," * 4000 + b"0]", headers=as_json)),
        "unknown device": ("POST", "/v1/reports", dict(json=dict(body, device="nobody"), headers=token)),
        "no token": ("POST", "/v1/reports", dict(json=body)),
        "wrong token": ("POST", "/v1/reports", dict(json=body, headers={"Authorization": "Bearer " + "0" * 64})),
        "other parameters": ("POST", "/v1/reports", dict(json=dict(body, parameters="0" * 64), headers=token)),
        "not columns": ("POST", "/v1/reports", dict(json=dict(body, reports=[1, 2]), headers=token)),
        "ragged columns": ("POST", "/v1/reports", dict(json=dict(body, reports=dict(reports, x=[])), headers=token)),
        "float sequence": ("POST", "/v1/reports",
                           dict(json=dict(body, reports=dict(reports, sequence=[0.5, 1.0])), headers=token)),
        "admin no token": ("POST", "/v1/devices", dict(json={"device": "x"})),
        "admin wrong token": ("GET", "/v1/export", dict(headers={"Authorization": "Bearer nope"})),
        "export format": ("GET", "/v1/export?format=xls", dict(headers=ADMIN_HEADERS)),
    }[case]


def test_arrow_batches_of_a_known_device_are_checked_as_any(serve, tmp_path):
    from tracs.collect.protocol import ARROW_TYPE, encode_arrow

    running, collector = serve()
    device = enrolled_device(running.url, collector.parameters, "k", tmp_path / "k.sqlite")
    walk(device, 3)
    assert device.upload(running.url)["accepted"] == 3 and collector.known("k")
    walk(device, 2, seed=1)
    body = device.batch()
    cases = [  # (batch fields changed, token, status, message): checked on the event loop as in the thread pool
        ({}, "0" * 64, 403, "wrong token for device 'k'"),
        ({"device": ["k"]}, device.token, 422, "device: the batch must name its device (a non-empty string)"),
        ({"parameters": "0" * 64}, device.token, 422, "the batch was made under other parameters"),
    ]
    for change, token, status, message in cases:
        answer = httpx.post(running.url + "/v1/reports", content=encode_arrow(dict(body, **change)),
                            headers={"Authorization": f"Bearer {token}", "Content-Type": ARROW_TYPE})
        assert answer.status_code == status and message in answer.json()["error"], answer.text
    assert device.upload(running.url)["accepted"] == 2
    assert httpx.get(running.url + "/v1/health").json()["stored"] == 5


@pytest.fixture(scope="module")
def refusing(tmp_path_factory):
    """One collector (bodies up to 4,096 bytes) shared by the refusal cases: none stores anything."""
    from tracs.collect.server import create_app

    from .conftest import Running, make_collector

    collector = make_collector(tmp_path_factory.mktemp("refusing") / "reports.sqlite")
    running = Running(create_app(collector, max_body=4096))
    yield running, collector
    running.stop()


@pytest.mark.parametrize("case, status, message", [
    ("malformed", 400, "the body is not valid JSON"),
    ("malformed arrow", 400, "the body is not an Arrow IPC stream of a batch"),
    ("arrow text column", 422, "reports.x: a list (JSON) or a numeric column without nulls (Arrow) is needed"),
    ("arrow other parameters", 422, "the batch was made under other parameters"),
    ("content type", 415, "the body must be application/json or application/vnd.apache.arrow.stream, got "
                          "'text/plain'"),
    ("oversized", 413, "is over the limit of 4,096 bytes"),
    ("unknown device", 403, "unknown device 'nobody': enrol it first"),
    ("no token", 401, "send its token as 'Authorization: Bearer <token>'"),
    ("wrong token", 403, "wrong token for device 'dev'"),
    ("other parameters", 422, "the batch was made under other parameters"),
    ("not columns", 422, "reports: an object of columns is needed"),
    ("ragged columns", 422, "reports.x has 0 values for 2 reports"),
    ("float sequence", 422, "reports.sequence: integers are needed"),
    ("admin no token", 401, "admin endpoint: send 'Authorization: Bearer <admin token>'"),
    ("admin wrong token", 403, "wrong admin token"),
    ("export format", 400, "format must be parquet, csv or sidecar, got 'xls'"),
])
def test_refusals(refusing, tmp_path, case, status, message):
    running, collector = refusing
    url = running.url
    device = enrolled_device(url, collector.parameters, "dev", tmp_path / "dev.sqlite")
    walk(device, 2)
    method, path, options = _request(case, device.batch(), {"Authorization": f"Bearer {device.token}"})
    answer = httpx.request(method, url + path, **options)
    assert answer.status_code == status
    assert message in answer.json()["error"]
    # nothing changed, and the server keeps serving
    assert httpx.get(url + "/v1/health").json() == {"status": "ok", "stored": 0}
    assert collector.store.enrolled("x") is False


def test_offline_enrolment_and_live_page_is_offline(serve, tmp_path, capsys):
    from tracs.maps.assets import external_assets

    db = tmp_path / "offline.sqlite"
    assert main(["serve", "-m", "tracs-d", "-e", "1.5", "--region", "139.5,35.5,140.0,35.9", "--db", str(db),
                 "--issue-token", "phone-1"]) == 0
    token = capsys.readouterr().out.strip()
    running, collector = serve(db=db)
    assert collector.store.enrolled("phone-1") and token == collector.token("phone-1")
    page = httpx.get(running.url + "/")
    assert page.status_code == 200 and "L.map(" in page.text and external_assets(page.text) == []
    assert httpx.get(running.url + "/v1/estimate?grid=16").status_code == 409  # nothing stored yet



def test_an_application_without_an_estimator_refuses_the_estimate_of_the_export(serve, tmp_path):
    """The density of a method not kept from counts is ``tracs estimate`` of the export, which the
    command gives the application (``create_app(..., estimate_csv=)``); without it: 501, named."""
    running, collector = serve(estimator=False)
    device = enrolled_device(running.url, collector.parameters, "phone-1", tmp_path / "d.sqlite")
    walk(device, 5)
    device.upload(running.url)
    answer = httpx.get(running.url + "/v1/estimate?grid=16&format=csv", timeout=60)
    assert answer.status_code == 501
    assert answer.json() == {"error": "this collector estimates tracs-d from the export only: "
                                      "tracs estimate of GET /v1/export"}

def test_serve_refuses_a_database_of_other_parameters(tmp_path, capsys):
    db = str(tmp_path / "r.sqlite")
    region = ["--region", "139.5,35.5,140.0,35.9", "--db", db, "--issue-token", "x"]
    assert main(["serve", "-m", "tracs-d", "-e", "1.5", *region]) == 0
    assert main(["serve", "-m", "tracs-d", "-e", "2", *region]) != 0
    assert "holds the reports of a collection with other parameters" in capsys.readouterr().err
    assert main(["serve", "-m", "ngram", "-e", "2", *region]) != 0
    assert "cannot be collected point by point" in capsys.readouterr().err
    assert main(["serve", "-m", "tracs-d", "-e", "1.5", *region[:-2], "--workers", "2"]) != 0
    assert "--workers 2: a SQLite database is written by one process" in capsys.readouterr().err
    assert main(["serve", "-m", "tracs-d", "-e", "1.5", *region, "--workers", "0"]) != 0
    assert "a whole number of processes >= 1 is needed, got '0'" in capsys.readouterr().err


def test_concurrent_uploads_are_stored_once_and_share_the_ledger(serve, tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    running, collector = serve(caps={"trajectory": 15.0})  # 10 points per trajectory
    device = uncapped_device(running.url, collector.parameters, "c", tmp_path / "c.sqlite")
    walk(device, 16)
    body = dict(device.batch(), parameters=collector.parameters.digest)
    first = {name: values[:8] for name, values in body["reports"].items()}
    second = {name: values[8:] for name, values in body["reports"].items()}
    posts = [dict(body, reports=first)] * 3 + [dict(body, reports=second)] * 3
    token = {"Authorization": f"Bearer {device.token}"}
    with ThreadPoolExecutor(6) as pool:
        answers = list(pool.map(lambda b: httpx.post(running.url + "/v1/reports", json=b, headers=token).json(),
                                posts))
    assert sum(a["accepted"] for a in answers) == 10  # each report once, and the cap over both halves
    assert collector.store.count() == 10
    reasons = [r["reason"] for a in answers for r in a["rejected"]]
    # a second half that arrives before any first half is stored has no stored reference yet: refused
    # (every TraCS-D report is checked exactly against the report before it), and stored by a later post
    assert reasons.count("trajectory cap spent") >= 6 and set(reasons) <= {
        "already stored", "trajectory cap spent", "the report before it in its trajectory is not stored"}


@pytest.mark.parametrize("level, pragma", [("normal", 1), ("full", 2)])
def test_synchronous_level_of_the_store(tmp_path, level, pragma):
    from tracs.collect.storage import SQLiteStore
    from tracs.public import LonLatBox

    params = Parameters.build("tracs-c", 1.5, LonLatBox(139.5, 35.5, 140.0, 35.9))
    store = SQLiteStore(tmp_path / "s.sqlite", params, synchronous=level)
    assert store._db.execute("PRAGMA synchronous").fetchone()[0] == pragma
    assert store._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    store.close()
    with pytest.raises(ValueError, match="synchronous must be 'normal' or 'full', got 'off'"):
        SQLiteStore(tmp_path / "t.sqlite", params, synchronous="off")


def test_export_streams_whole_trajectories_in_chunks(serve, tmp_path, monkeypatch):
    from functools import partialmethod

    from tracs.collect.export import write_export
    from tracs.collect.storage import Store

    running, collector = serve()
    for name in ("b", "a"):
        device = enrolled_device(running.url, collector.parameters, name, tmp_path / f"{name}.sqlite")
        for k, n in enumerate([5, 9, 3]):
            walk(device, n, trajectory=f"t{k}", start=f"2024-03-0{k + 1}T08:00Z", seed=k)
        assert device.upload(running.url)["accepted"] == 17
    devices, whole = collector.store.reports()
    chunks = list(collector.store.report_chunks(rows=4))
    assert [len(d) for d, _ in chunks] == [5, 9, 3, 5, 9, 3]  # each chunk ends with a whole trajectory
    assert [d for part, _ in chunks for d in part] == devices == ["a"] * 17 + ["b"] * 17
    for name, column in whole.items():
        np.testing.assert_array_equal(np.concatenate([c[name] for _, c in chunks]), column)
    one = write_export(collector.store, collector.parameters, tmp_path / "one.csv").read_bytes()
    one_parquet = pd.read_parquet(write_export(collector.store, collector.parameters, tmp_path / "one.parquet"))
    monkeypatch.setattr(Store, "report_chunks", partialmethod(Store.report_chunks, rows=4))
    assert write_export(collector.store, collector.parameters, tmp_path / "chunked.csv").read_bytes() == one
    chunked = pd.read_parquet(write_export(collector.store, collector.parameters, tmp_path / "chunked.parquet"))
    pd.testing.assert_frame_equal(chunked, one_parquet)
    assert chunked.uid.tolist() == devices
    # every export records the digest of its rows, streamed or not, equal to that of the file read back
    from tracs.estimate.sidecar import sidecar_path
    from tracs.io.parameters import rows_digest
    from tracs.io.release import read_release

    recorded = {name: json.loads(sidecar_path(tmp_path / name).read_text())["rows_sha256"]
                for name in ("one.csv", "chunked.csv", "one.parquet", "chunked.parquet")}
    assert len(set(recorded.values())) == 1
    assert recorded["one.csv"] == rows_digest(read_release(tmp_path / "chunked.csv"))
    # a changed row is found out by the commands that read the export
    text = (tmp_path / "chunked.csv").read_text().splitlines()
    fields = text[3].split(",")
    lat = text[0].split(",").index("lat")
    fields[lat] = str(float(fields[lat]) + 0.001)
    (tmp_path / "chunked.csv").write_text("\n".join(text[:3] + [",".join(fields)] + text[4:]) + "\n")
    assert main(["estimate", str(tmp_path / "chunked.csv"), "--grid", "8", "-o", str(tmp_path / "e.csv")]) == 1
