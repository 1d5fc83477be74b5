"""The cyclic garbage collector paused while a command starts up.

Starting ``tracs perturb`` imports numpy, pyarrow, pandas, numba, scipy and
pyproj: about 2·10^5 objects that live until the process ends.  While they are
being created the collector runs again and again and walks them all (its oldest
generation too), which costs 0.15–0.2 s of a two-second run.  The command pauses
it (:func:`pause`) until its imports are done and its kernels loaded, then
(:func:`resume`) freezes what exists — ``gc.freeze``: never examined again, as
nothing imported is ever freed — and collects normally from there on.  Called
in-process (``main(argv)``, tests), nothing is frozen: the state is only put back.
"""

from __future__ import annotations

import gc

_state = {"paused": False, "freeze": False}


def pause(*, freeze: bool) -> None:
    """Stop automatic collection if it runs; :func:`resume` (with a freeze if ``freeze``) undoes it."""
    if gc.isenabled():
        gc.disable()
        _state.update(paused=True, freeze=freeze)


def resume() -> None:
    """Restart automatic collection after :func:`pause` (a no-op otherwise)."""
    if _state["paused"]:
        if _state["freeze"]:
            gc.freeze()
        _state["paused"] = False
        gc.enable()
