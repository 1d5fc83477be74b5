"""What a report carries, how a batch of them is written, and the stream a device's trajectory draws from.

A report is one released point: ``sequence`` (the device's count of reports, from
0: never reused), ``trajectory`` (the number of the device's trajectory, from 0),
``index`` (the point's position in it: its stream position), ``time`` (UTC,
nanoseconds since 1970), the released ``x``, ``y`` (metres, in the parameters'
CRS), the lattice indices ``i``, ``j`` they are made of and the ``epsilon`` spent.
A batch is one device's reports as columns::

    {"device": "007", "protocol": 1, "parameters": "<sha-256>", "method": "tracs-d",
     "reports": {"sequence": [...], "trajectory": [...], "index": [...], "time": [...],
                 "x": [...], "y": [...], "i": [...], "j": [...], "epsilon": [...]}}

The same batch may travel as Arrow IPC (``Content-Type:
application/vnd.apache.arrow.stream``, what :meth:`tracs.collect.Device.upload` sends
by default): one stream of record batches whose columns are the report columns
(``int64`` and ``float64``) and whose schema metadata holds ``device``, ``protocol``,
``parameters`` and ``method`` (:func:`encode_arrow`, :func:`decode_arrow`).

The true point never leaves the device: a report is a function of the lattice
indices, the previous report of its trajectory and public parameters.
"""

from __future__ import annotations

import hashlib
import hmac
import json

import numpy as np

from ..errors import InputError

__all__ = ["COLUMNS", "INTEGER_COLUMNS", "ARROW_TYPE", "BATCH_FIELDS", "encode_arrow", "decode_arrow",
           "device_token", "stream_of"]

#: the columns of a batch of reports, and their types
COLUMNS = ("sequence", "trajectory", "index", "time", "x", "y", "i", "j", "epsilon")
INTEGER_COLUMNS = ("sequence", "trajectory", "index", "time", "i", "j")
#: the content type of a batch as Arrow IPC, and the batch fields its schema metadata holds
ARROW_TYPE = "application/vnd.apache.arrow.stream"
BATCH_FIELDS = ("device", "protocol", "parameters", "method")


def encode_arrow(batch: dict) -> bytes:
    """A batch (the JSON layout above) as an Arrow IPC stream: columns ``int64``/``float64``,
    the batch fields as JSON text in the schema metadata."""
    import pyarrow as pa

    reports = batch["reports"]
    arrays = [pa.array(np.asarray(reports[name], dtype=np.int64 if name in INTEGER_COLUMNS else np.float64))
              for name in COLUMNS]
    metadata = {name: json.dumps(batch[name]) for name in BATCH_FIELDS}
    table = pa.Table.from_arrays(arrays, names=list(COLUMNS)).replace_schema_metadata(metadata)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def decode_arrow(body: bytes) -> dict:
    """The batch of an Arrow IPC stream: its fields, and ``reports`` as NumPy columns (a column
    missing or of another type is left to the collector's checks, which name it).

    Raises ``ValueError`` when the body is not an Arrow stream with the batch fields."""
    import pyarrow as pa

    try:
        table = pa.ipc.open_stream(pa.py_buffer(body)).read_all()
        meta = {k.decode(): json.loads(v) for k, v in (table.schema.metadata or {}).items()}
    except (pa.ArrowException, ValueError, UnicodeDecodeError) as exc:
        raise InputError(f"the body is not an Arrow IPC stream of a batch: {exc}") from None
    reports = {}
    for name in table.column_names:
        column = table.column(name)
        if pa.types.is_integer(column.type) or pa.types.is_floating(column.type):
            reports[name] = column.to_numpy() if column.null_count == 0 else None
        else:
            reports[name] = None
    return {**{name: meta.get(name) for name in BATCH_FIELDS}, "reports": reports}


def stream_of(user: str, trajectory: int) -> np.ndarray:
    """The keyed stream of ``user``'s trajectory number ``trajectory`` (its ``trajectory``-th,
    from 0), as ``tracs perturb --seed`` names it: :func:`tracs.random.stream_ids` of the user's
    key repeated once per trajectory (:func:`tracs.release.user_keys` keys users by their id)."""
    from ..random import stream_ids

    return stream_ids([user] * (trajectory + 1))[-1:]


def device_token(secret: bytes, device: str) -> str:
    """The upload token of ``device``: HMAC-SHA-256 of its id under the collector's secret (hex)."""
    return hmac.new(secret, b"tracs.device\x00" + device.encode("utf-8"), hashlib.sha256).hexdigest()
