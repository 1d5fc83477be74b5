"""The one base of every error tracs raises on purpose.

Every exception class of ``tracs`` and ``data_loaders`` derives from
:class:`TracsError` in addition to the built-in class it has always been
(``ValueError``, ``TypeError``, ``RuntimeError`` …), so ``except ValueError``
keeps working and ``except tracs.TracsError`` catches them all.
"""

from __future__ import annotations

__all__ = ["TracsError"]


class TracsError(Exception):
    """An error tracs raises on purpose: bad input, refused parameters, unreadable files.

    The base of every exception class defined in ``tracs`` and ``data_loaders``;
    each also keeps its built-in base (``TimeFormatError`` is a ``TracsError``
    and a ``ValueError``).  Errors raised as plain built-in classes (a bare
    ``ValueError`` for ε ≤ 0, for instance) are not ``TracsError``.

    Examples
    --------
    >>> import tracs
    >>> from tracs.io.times import TimeFormatError
    >>> issubclass(TimeFormatError, tracs.TracsError), issubclass(TimeFormatError, ValueError)
    (True, True)
    """
