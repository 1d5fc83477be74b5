"""The collector on PostgreSQL: a throwaway server (initdb, pg_ctl) in a temporary folder."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile

import httpx
import numpy as np
import pytest

from .conftest import free_port, make_collector
from .test_server import uncapped_device, walk

pytest.importorskip("psycopg", reason="psycopg is not installed (tracs[collect])")


def _binaries():
    for folder in ["/usr/local/bin", *sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)]:
        initdb, pg_ctl = os.path.join(folder, "initdb"), os.path.join(folder, "pg_ctl")
        if os.access(initdb, os.X_OK) and os.access(pg_ctl, os.X_OK):
            return initdb, pg_ctl
    return None


@pytest.fixture(scope="module")
def postgres_url():
    found = _binaries()
    if found is None:
        pytest.skip("no PostgreSQL: initdb and pg_ctl are in neither /usr/local/bin nor /usr/lib/postgresql/*/bin")
    initdb, pg_ctl = found
    run_as = []
    folder = tempfile.mkdtemp(prefix="tracs-pg-")
    if os.geteuid() == 0:  # PostgreSQL refuses to run as root
        runuser = shutil.which("runuser") or shutil.which("su")
        if runuser is None:
            pytest.skip("running as root without runuser or su to start PostgreSQL as another user")
        shutil.chown(folder, "postgres")
        run_as = [runuser, "-u", "postgres", "--"]
    data, port = os.path.join(folder, "data"), free_port()
    subprocess.run([*run_as, initdb, "-D", data, "-A", "trust", "-U", "tracs", "--no-sync"], check=True,
                   capture_output=True)
    options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off"
    subprocess.run([*run_as, pg_ctl, "-D", data, "-o", options, "-l", os.path.join(folder, "log"), "-w", "start"],
                   check=True, capture_output=True)
    try:
        yield f"postgresql://tracs@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run([*run_as, pg_ctl, "-D", data, "-m", "immediate", "stop"], capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)


def test_postgres_stores_each_report_once_and_keeps_the_ledger(postgres_url, tmp_path):
    from tracs.collect.server import create_app

    from .conftest import Running

    collector = make_collector(postgres_url, caps={"trajectory": 15.0})  # 10 points per trajectory
    running = Running(create_app(collector))
    try:
        device = uncapped_device(running.url, collector.parameters, "pg-1", tmp_path / "d.sqlite")
        walk(device, 12)  # a modified device: two points over the trajectory cap
        body = dict(device.batch(), parameters=collector.parameters.digest)
        token = {"Authorization": f"Bearer {device.token}"}
        first = httpx.post(running.url + "/v1/reports", json=body, headers=token).json()
        assert first["accepted"] == 10
        assert [x["reason"] for x in first["rejected"]] == ["trajectory cap spent"] * 2
        again = httpx.post(running.url + "/v1/reports", json=body, headers=token).json()
        assert again["accepted"] == 0
        assert {r["reason"] for r in again["rejected"]} == {"already stored", "trajectory cap spent"}
        export = httpx.get(running.url + "/v1/export?format=csv", headers={"Authorization": "Bearer admin-secret-for-tests"}, timeout=60)
        assert len(export.text.strip().splitlines()) == 1 + 10
    finally:
        running.stop()
    # a second collector process on the same database: same secret, same reports, same ledger
    other = make_collector(postgres_url, caps={"trajectory": 15.0})
    assert other.store.count() == 10 and other.token("pg-1") == device.token
    assert other.store.rejections() == {"already stored": 10, "trajectory cap spent": 4}
    devices, stored = other.store.reports()  # every value exactly as sent
    assert devices == ["pg-1"] * 10
    for name in ("sequence", "trajectory", "index", "time", "x", "y", "i", "j", "epsilon"):
        np.testing.assert_array_equal(stored[name], np.array(body["reports"][name][:10]))


def test_serve_runs_worker_processes_on_postgresql(postgres_url, tmp_path):
    from .conftest import ADMIN
    from .test_faults import start_collector
    from .test_server import enrolled_device

    db = postgres_url.rsplit("/", 1)[0] + "/workers"
    _createdb(postgres_url, "workers")
    port = free_port()
    proc = start_collector(db, port, "--workers", "2")
    try:
        url = f"http://127.0.0.1:{port}"
        params = make_collector(db).parameters
        for k in range(4):
            device = enrolled_device(url, params, f"w{k}", tmp_path / f"w{k}.sqlite", seed=k)
            walk(device, 30, seed=k)
            assert device.upload(url, batch_size=7)["accepted"] == 30
        assert httpx.get(url + "/v1/health").json()["stored"] == 120
        assert httpx.get(url + "/v1/export?format=csv", headers={"Authorization": f"Bearer {ADMIN}"}, timeout=60).text.count(
            "\n") == 121
    finally:
        proc.terminate()
        proc.wait(30)


def _createdb(url: str, name: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as db:
        db.execute(f"CREATE DATABASE {name}")


def test_tracs_c_estimate_on_postgresql_counts_every_process_s_reports(postgres_url, tmp_path):
    from tracs.collect import Device

    _createdb(postgres_url, "counts")
    db = postgres_url.rsplit("/", 1)[0] + "/counts"
    first, second = (make_collector(db, method="tracs-c", epsilon=1.0) for _ in range(2))
    alone = make_collector(tmp_path / "alone.sqlite", method="tracs-c", epsilon=1.0)
    for k, collector in enumerate((first, second, first)):  # two processes writing the same database
        device = Device(first.parameters, f"p{k}", k, tmp_path / f"p{k}.sqlite", token=first.enroll(f"p{k}"))
        alone.enroll(f"p{k}")
        walk(device, 40, seed=k)
        batch = device.batch()
        assert collector.ingest(batch, f"Bearer {device.token}")["accepted"] == 40
        assert alone.ingest(batch, f"Bearer {alone.token(f'p{k}')}")["accepted"] == 40
        assert first.density.estimate_csv(8, exact=True) == alone.density.estimate_csv(8, exact=True)
    assert first.density._grids[8].counted == 120


_PG_ROWS_TABLE = ("CREATE TABLE reports (device TEXT NOT NULL, sequence BIGINT NOT NULL, "
                  "trajectory BIGINT NOT NULL, idx BIGINT NOT NULL, time BIGINT NOT NULL, x DOUBLE PRECISION NOT NULL, "
                  "y DOUBLE PRECISION NOT NULL, i BIGINT NOT NULL, j BIGINT NOT NULL, epsilon DOUBLE PRECISION NOT NULL, "
                  "PRIMARY KEY (device, sequence))")


def test_a_postgresql_database_of_one_row_per_report_is_converted(postgres_url, tmp_path):
    import psycopg

    from tracs.collect.storage import STORED

    from .test_server import check_conversion_of_one_row_per_report

    _createdb(postgres_url, "rows")
    db = postgres_url.rsplit("/", 1)[0] + "/rows"

    def to_old_layout(devices, columns):
        with psycopg.connect(db, autocommit=True) as conn:  # the layout of an earlier collector
            conn.execute("DELETE FROM batches")
            conn.execute("DROP TABLE last_points")
            conn.execute("DELETE FROM meta WHERE name = 'last points'")
            conn.execute(_PG_ROWS_TABLE)
            with conn.cursor() as cursor:
                cursor.executemany("INSERT INTO reports VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                                   list(zip(devices, *(columns[name].tolist() for name in STORED))))

    check_conversion_of_one_row_per_report(db, tmp_path, to_old_layout)
    with psycopg.connect(db, autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'reports'"
                            ).fetchone() == (0,)
