"""Threads over chunks of work whose results are combined in a fixed order."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

__all__ = ["run_chunks"]


def run_chunks(function, count: int, workers: int) -> list:
    """``[function(i) for i in range(count)]``, on ``workers`` threads when more than one.

    The compiled kernels release the GIL; results come back in chunk order, so
    sums over them are the same for every number of workers.
    """
    if workers <= 1 or count <= 1:
        return [function(i) for i in range(count)]
    with ThreadPoolExecutor(max_workers=min(workers, count)) as pool:
        return list(pool.map(function, range(count)))
