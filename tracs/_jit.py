"""``helper``: the decorator of tracs' small compiled helpers, typed once, inlined by LLVM.

numba's ``inline="always"`` copies a helper's code into every caller before typing
it, so each call site types and lowers the helper (and every helper it calls)
again: most of the compile time of tracs' kernels went there.  A helper without
it is compiled once per argument types, but numba marks it ``noinline``, so a
loop calling it makes a call per element and loses its vector code (three to five
times slower).  :func:`helper` takes the middle way: numba compiles the helper
once per argument types with ``forceinline`` (LLVM's ``alwaysinline``), and LLVM
inlines that one compiled body into each caller, which gives the machine code of
``inline="always"``.

A constant argument (``draw_u64(..., 0)``, ``below(..., EXT_FIRST, False)``)
would also make numba compile one copy per constant value (its literal type).
The helper is typed with the constant's plain type (``int64``, ``bool``) instead:
one compiled copy serves every constant, and LLVM folds the value after inlining.

Helpers compile with numba's ``numpy`` error model, whatever their caller's: a
division by zero gives ``inf``/``nan`` (``0`` for integers) instead of raising, so
no exception branch stops a caller's loop from becoming vector code (numba would
otherwise give a helper the error model of the first kernel that compiled it).
The parameters a helper divides by are checked at the public boundary (ε > 0,
spacings and counts > 0) before any kernel runs.
"""

from __future__ import annotations

import inspect

from numba import njit, types

__all__ = ["helper"]


def helper(func=None, *, uint64=()):
    """``numba.njit(cache=True, nogil=True, forceinline=True, error_model="numpy")(func)``, typed on plain
    argument types.

    The numbers a helper computes are those of the same function under
    ``inline="always"`` (the same operations, inlined by LLVM instead of numba) wherever it divides by no zero.

    Parameters
    ----------
    uint64 : tuple of str
        Parameters typed ``uint64`` whatever integer type a caller passes (``@helper(uint64=("stream",
        "index"))``), so callers passing ``int64`` and ``uint64`` share one compiled copy.  Only for
        parameters the helper converts with ``np.uint64(...)`` before any other use, or passes on to one
        that does: the caller's value is converted to ``uint64`` at the call (the same bits), and the
        numbers computed are the same.
    """
    if func is None:
        return lambda f: helper(f, uint64=uint64)
    dispatcher = njit(cache=True, nogil=True, forceinline=True, error_model="numpy")(func)
    typed = type(dispatcher).get_call_template
    names = list(inspect.signature(func).parameters)
    unknown = sorted(set(uint64) - set(names))
    if unknown:
        raise TypeError(f"{func.__qualname__} has no parameters {unknown}")
    unsigned = {names.index(name) for name in uint64}

    def plain(a, unsigned_here):
        a = types.unliteral(a)
        return types.uint64 if unsigned_here and isinstance(a, types.Integer) else a

    def get_call_template(args, kws):
        return typed(dispatcher, tuple(plain(a, i in unsigned) for i, a in enumerate(args)),
                     {name: plain(a, name in uint64) for name, a in kws.items()})

    dispatcher.get_call_template = get_call_template
    return dispatcher
