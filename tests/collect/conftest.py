"""A collector on a real port of 127.0.0.1 (uvicorn in a thread, stopped by the fixture)."""

from __future__ import annotations

import socket
import threading
import time

import pytest

pytest.importorskip("starlette", reason="tracs[collect] is not installed")
pytest.importorskip("uvicorn", reason="tracs[collect] is not installed")
pytest.importorskip("httpx", reason="tracs[collect] is not installed")

ADMIN = "admin-secret-for-tests"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Running:
    """A uvicorn server of an app in a thread: ``url``, ``stop()``."""

    def __init__(self, app, port=None):
        import uvicorn

        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="error"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the test collector did not start")
            time.sleep(0.02)

    def stop(self):
        self.server.should_exit = True
        self.thread.join(10)


def make_collector(db, method="tracs-d", epsilon=1.5, caps=None, admin=ADMIN):
    from tracs.collect.collector import Collector
    from tracs.collect.published import Parameters
    from tracs.collect.postgres import open_store
    from tracs.public import LonLatBox

    params = Parameters.build(method, epsilon, LonLatBox(139.5, 35.5, 140.0, 35.9), caps=caps)
    return Collector(params, open_store(db, params), admin)


@pytest.fixture
def serve(tmp_path):
    """``serve(**options) -> (Running, Collector)``; every server started is stopped at the end
    (``estimator=False``: no estimate of the export, as ``create_app`` without ``estimate_csv``)."""
    from tracs.cli.serve import estimate_csv
    from tracs.collect.server import create_app

    running = []

    def start(db=None, max_body=1 << 20, estimator=True, **options):
        collector = make_collector(db or tmp_path / "reports.sqlite", **options)
        running.append(Running(create_app(collector, max_body=max_body,
                                          estimate_csv=estimate_csv if estimator else None)))
        return running[-1], collector

    yield start
    for r in running:
        r.stop()
