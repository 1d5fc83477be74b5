"""Collection as a protocol: devices release their fixes as they happen, a collector receives them.

* :class:`Parameters` (:mod:`tracs.collect.published`) — the public parameters a
  collector publishes (``GET /v1/parameters``) and a device configures itself from;
* :class:`Device` (:mod:`tracs.collect.device`) — releases each fix with the
  library's perturber at its stream position, keeps its state in SQLite, uploads;
* the collector (:mod:`tracs.collect.server`, ``tracs serve``) checks every report,
  stores it once, exports the reports as a release and estimates from them.

The names are loaded on first use (``import tracs.collect`` imports nothing heavy).
"""

from __future__ import annotations

from .._lazy import lazy_names

__all__ = ["Parameters", "ParameterError", "PROTOCOL_VERSION", "Device", "BudgetExhausted", "UploadError"]

__getattr__, __dir__ = lazy_names(__name__, {
    "Parameters": "published", "ParameterError": "published", "PROTOCOL_VERSION": "published",
    "Device": "device", "BudgetExhausted": "device", "UploadError": "device",
})
