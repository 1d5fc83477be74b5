"""The collector as an ASGI application (Starlette), served by ``tracs serve`` with uvicorn.

Endpoints (JSON unless said):

``GET /v1/parameters``      the public parameters (:class:`tracs.collect.Parameters`)
``POST /v1/devices``        admin: enrol ``{"device": ID}``, answer its upload token
``POST /v1/reports``        a device's batch (bearer: its token; JSON or Arrow IPC): accepted count,
                            rejections
``GET /v1/export``          admin: ``?format=parquet|csv`` the reports as a release,
                            ``?format=sidecar`` its parameters (``tracs estimate`` reads both)
``GET /v1/estimate``        ``?grid=64``: the density of ``tracs estimate`` (``&format=csv``: its CSV);
                            ``fit`` says ``exact`` (equal to ``tracs estimate`` of the export of the
                            first ``reports`` stored) or ``warm`` (provisional, warm-started; the
                            exact fit follows once batches pause); ``&exact=1`` waits for the exact
                            fit (see :mod:`tracs.collect.lattice_counts`)
``GET /v1/health``          liveness and the stored count
``GET /v1/stats``           stored and rejected counts, rejections by reason
``GET /metrics``            Prometheus text: stored, rejected by reason, batch latency
``GET /``                   the live page (:mod:`tracs.collect.live_page`)

A request refused gets a 4xx status and ``{"error": reason}``; the server keeps serving.
"""

from __future__ import annotations

import io
import asyncio
import json
import shutil
import tempfile
from pathlib import Path

from ..estimate.sidecar import sidecar_path
from .collector import Refused
from .export import write_export
from .lattice_counts import ServedEstimate
from .live_page import live_page
from .protocol import ARROW_TYPE, BATCH_FIELDS, COLUMNS, decode_arrow, encode_arrow

__all__ = ["create_app", "MAX_BODY"]

#: the largest request body accepted (bytes); larger ones get 413
MAX_BODY = 16 * 1024 * 1024
_EXPORTS = {"parquet": ("reports.parquet", "application/vnd.apache.parquet"), "csv": ("reports.csv", "text/csv")}


async def _body(request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise Refused(413, f"the body of {int(declared):,} bytes is over the limit of {limit:,} bytes")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise Refused(413, f"the body is over the limit of {limit:,} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def _kind(request) -> str:
    return request.headers.get("content-type", "").split(";")[0].strip().lower()


async def _json(request, limit: int):
    kind = request.headers.get("content-type", "")
    if _kind(request) != "application/json":
        raise Refused(415, f"the body must be application/json, got {kind or 'no content type'!r}")
    body = await _body(request, limit)
    from starlette.concurrency import run_in_threadpool

    return await run_in_threadpool(_decode, body)


async def _batch(request, limit: int):
    """A batch of reports: JSON, or Arrow IPC (:data:`tracs.collect.protocol.ARROW_TYPE`)."""
    if _kind(request) != ARROW_TYPE:
        kind = request.headers.get("content-type", "")
        if _kind(request) != "application/json":
            raise Refused(415, f"the body must be application/json or {ARROW_TYPE}, got "
                               f"{kind or 'no content type'!r}")
        return await _json(request, limit)
    body = await _body(request, limit)
    try:
        return decode_arrow(body)
    except ValueError as exc:
        raise Refused(400, str(exc)) from None


def _decode(body: bytes):
    """The JSON of a body (off the event loop: a batch of 1,000 reports takes milliseconds)."""
    try:
        return json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise Refused(400, f"the body is not valid JSON: {exc}") from None


def create_app(collector, *, max_body: int = MAX_BODY, estimate_csv=None):
    """The Starlette application of ``collector`` (:class:`tracs.collect.collector.Collector`).

    ``estimate_csv(store, parameters, grid) -> bytes`` answers ``GET /v1/estimate`` for a method whose
    density is not kept from counts (``tracs serve`` passes :func:`tracs.cli.serve.estimate_csv`:
    ``tracs estimate`` of the export); without it such a request is refused (501)."""
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.background import BackgroundTask
    from starlette.responses import FileResponse, HTMLResponse, JSONResponse, PlainTextResponse, Response
    from starlette.routing import Route

    # what decoding an Arrow batch loads (pyarrow, and pandas through it) loaded now, not in the first
    # batch's answer (a second on a busy machine)
    decode_arrow(encode_arrow({**dict.fromkeys(BATCH_FIELDS, ""), "reports": {name: [] for name in COLUMNS}}))
    params_json = collector.parameters.to_json()
    estimates = {}  # grid -> ServedEstimate: the estimates of methods other than TraCS-C

    def refused(exc: Refused):
        return JSONResponse({"error": exc.reason}, status_code=exc.status)

    def guarded(handler):
        async def endpoint(request):
            try:
                return await handler(request)
            except Refused as exc:
                return refused(exc)
        return endpoint

    async def parameters(request):
        return Response(params_json, media_type="application/json")

    async def devices(request):
        collector.check_admin(request.headers.get("authorization"))
        body = await _json(request, 4096)
        device = body.get("device") if isinstance(body, dict) else None
        token = await run_in_threadpool(collector.enroll, device)
        return JSONResponse({"device": device, "token": token})

    async def reports(request):
        batch = await _batch(request, max_body)
        authorization = request.headers.get("authorization")
        if _kind(request) == ARROW_TYPE and collector.known(batch.get("device")):  # no database read: on the loop
            future, columns, start = collector.submit(batch, authorization)
        else:
            future, columns, start = await run_in_threadpool(collector.submit, batch, authorization)
        return JSONResponse(collector.answer(await asyncio.wrap_future(future), columns, start))

    async def export(request):
        collector.check_admin(request.headers.get("authorization"))
        fmt = request.query_params.get("format", "parquet")
        if fmt == "sidecar":
            return await run_in_threadpool(_sidecar, collector)
        if fmt not in _EXPORTS:
            raise Refused(400, f"format must be parquet, csv or sidecar, got {fmt!r}")
        name, media = _EXPORTS[fmt]
        folder = tempfile.mkdtemp(prefix="tracs-export-")
        try:
            path = await run_in_threadpool(_export_file, collector, Path(folder) / name)
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        return FileResponse(path, media_type=media, filename=name,
                            background=BackgroundTask(shutil.rmtree, folder, ignore_errors=True))

    async def estimate(request):
        grid = request.query_params.get("grid", "64")
        if not grid.isdigit() or not 2 <= int(grid) <= 1024:
            raise Refused(400, f"grid must be a whole number from 2 to 1024, got {grid!r}")
        fmt = request.query_params.get("format", "json")
        if fmt not in ("json", "csv"):
            raise Refused(400, f"format must be json or csv, got {fmt!r}")
        exact = request.query_params.get("exact", "0")
        if exact not in ("0", "1"):
            raise Refused(400, f"exact must be 0 or 1, got {exact!r}")
        if collector.store.count() == 0:
            raise Refused(409, "no reports stored yet: nothing to estimate")
        if collector.density.applies:
            served = await run_in_threadpool(collector.density.estimate, int(grid), exact=exact == "1")
        elif estimate_csv is None:
            raise Refused(501, f"this collector estimates {collector.parameters.method} from the export only: "
                               "tracs estimate of GET /v1/export")
        else:
            served = await run_in_threadpool(_estimate_of_export, collector, estimates, int(grid), estimate_csv)
        fit = "exact" if served.exact else "warm"
        if fmt == "csv":
            return Response(served.csv, media_type="text/csv",
                            headers={"X-Tracs-Fit": fit, "X-Tracs-Reports": str(served.reports)})
        import pandas as pd

        return JSONResponse({"grid": int(grid), "stored": collector.store.count(), "reports": served.reports,
                             "fit": fit, "cells": pd.read_csv(io.BytesIO(served.csv)).to_dict(orient="list")})

    async def health(request):
        return JSONResponse({"status": "ok", "stored": await run_in_threadpool(collector.store.count)})

    async def stats(request):
        reasons = await run_in_threadpool(collector.store.rejections)
        return JSONResponse({"stored": await run_in_threadpool(collector.store.count),
                             "rejected": sum(reasons.values()), "reasons": reasons})

    async def metrics(request):
        text = await run_in_threadpool(collector.metrics)
        return PlainTextResponse(text, media_type="text/plain; version=0.0.4")

    async def page(request):
        return HTMLResponse(live_page(collector.parameters))

    routes = [Route("/v1/parameters", guarded(parameters)), Route("/v1/devices", guarded(devices), methods=["POST"]),
              Route("/v1/reports", guarded(reports), methods=["POST"]), Route("/v1/export", guarded(export)),
              Route("/v1/estimate", guarded(estimate)), Route("/v1/health", guarded(health)),
              Route("/v1/stats", guarded(stats)),
              Route("/metrics", guarded(metrics)), Route("/", guarded(page))]
    return Starlette(routes=routes)


def _estimate_of_export(collector, estimates: dict, grid: int, estimate_csv) -> ServedEstimate:
    """``tracs estimate`` of the export on ``grid`` (``estimate_csv``, given to :func:`create_app`), kept
    in ``estimates`` while the stored count does not change (the last 4 grids asked for)."""
    stored = collector.store.count()
    kept = estimates.pop(grid, None)
    if kept is None or kept.reports != stored:  # counted before the export: a batch during it is fitted next time
        kept = ServedEstimate(estimate_csv(collector.store, collector.parameters, grid), stored, True)
    estimates[grid] = kept
    while len(estimates) > 4:
        del estimates[next(iter(estimates))]
    return kept


def _export_file(collector, path: Path) -> Path:
    """The export written to ``path`` (sent from the file, then removed: never whole in memory)."""
    return write_export(collector.store, collector.parameters, path)


def _sidecar(collector):
    from starlette.responses import Response

    with tempfile.TemporaryDirectory() as folder:
        path = write_export(collector.store, collector.parameters, Path(folder) / "reports.csv")
        return Response(sidecar_path(path).read_bytes(), media_type="application/json")
