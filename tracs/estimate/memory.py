"""The memory budget of an estimate (``memory=`` / ``tracs estimate --memory``, read by
:func:`tracs._validation.check_memory_budget`): refusing a step above it."""

from __future__ import annotations

from ..errors import MemoryLimitError

__all__ = ["refuse_above"]


def refuse_above(need: int, memory, what: str) -> None:
    """:class:`~tracs.errors.MemoryLimitError` (a ``MemoryError``) naming the budget when
    ``need`` bytes exceed ``memory`` (``None``: no budget)."""
    if memory is not None and need > memory:
        raise MemoryLimitError(f"{what} needs at least {need / 1e9:.3g} GB, above the budget "
                               f"memory={memory / 1e9:.3g} GB: use a coarser grid or a larger budget")
