"""The memory budget of an estimate: ``memory=`` / ``tracs estimate --memory``."""

from __future__ import annotations

import re

import numpy as np

__all__ = ["check_memory", "refuse_above"]

_UNITS = {"": 1, "b": 1, "k": 1e3, "kb": 1e3, "m": 1e6, "mb": 1e6, "g": 1e9, "gb": 1e9,
          "t": 1e12, "tb": 1e12, "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30}


def check_memory(memory) -> int | None:
    """A budget in bytes from ``None``, a positive number of bytes or a string such as ``"2GB"``.

    Units: B, kB, MB, GB, TB (powers of 1000) and KiB, MiB, GiB (powers of 1024), any case.
    """
    if memory is None:
        return None
    if isinstance(memory, str):
        match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z]*)\s*", memory)
        if match is None or match.group(2).lower() not in _UNITS:
            raise ValueError(f"memory must be a number of bytes or a size such as '2GB', got {memory!r}")
        value = float(match.group(1)) * _UNITS[match.group(2).lower()]
    elif isinstance(memory, bool) or not isinstance(memory, (int, float, np.integer, np.floating)):
        raise TypeError(f"memory must be a number of bytes or a size such as '2GB', got "
                        f"{type(memory).__name__}")
    else:
        value = float(memory)
    if not np.isfinite(value) or value <= 0:
        raise ValueError(f"memory must be a positive size, got {memory!r}")
    return int(value)


def refuse_above(need: int, memory, what: str) -> None:
    """``MemoryError`` naming the budget when ``need`` bytes exceed ``memory`` (``None``: no budget)."""
    if memory is not None and need > memory:
        raise MemoryError(f"{what} needs at least {need / 1e9:.3g} GB, above the budget "
                          f"memory={memory / 1e9:.3g} GB: use a coarser grid or a larger budget")
