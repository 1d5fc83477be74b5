"""The one base of every error tracs raises on purpose, and the classes it raises.

Every exception class of ``tracs`` and ``data_loaders`` derives from
:class:`TracsError` in addition to the built-in class it has always been
(``ValueError``, ``TypeError``, ``RuntimeError`` …), so ``except ValueError``
keeps working and ``except tracs.TracsError`` catches them all.  A refusal with
no class of its own is one of :class:`InputError` (a bad value),
:class:`InputTypeError` (a wrong type), :class:`MissingExtraError` (an optional
extra not installed) or :class:`MemoryLimitError` (a step above the memory budget given).  The ``tracs`` command prints a ``TracsError`` as one line;
any other exception is a bug in tracs and is shown with its traceback.
"""

from __future__ import annotations

__all__ = ["TracsError", "InputError", "InputTypeError", "MissingExtraError", "MemoryLimitError"]


class TracsError(Exception):
    """An error tracs raises on purpose: bad input, refused parameters, unreadable files.

    The base of every exception class defined in ``tracs`` and ``data_loaders``;
    each also keeps its built-in base (``TimeFormatError`` is a ``TracsError``
    and a ``ValueError``).  An exception that is not a ``TracsError`` (a bare
    ``ValueError`` from a library, an ``IndexError``) is a bug in tracs.

    Examples
    --------
    >>> import tracs
    >>> from tracs.io.times import TimeFormatError
    >>> issubclass(TimeFormatError, tracs.TracsError), issubclass(TimeFormatError, ValueError)
    (True, True)
    """


class InputError(TracsError, ValueError):
    """A value tracs refuses: a parameter out of range (ε ≤ 0), data that cannot be used
    (an empty file, a point outside the region), options that do not go together.

    Examples
    --------
    >>> from tracs._validation import check_epsilon
    >>> try:
    ...     check_epsilon(-1)
    ... except ValueError as exc:
    ...     print(type(exc).__name__, exc)
    InputError epsilon must be > 0, got -1.0
    """


class InputTypeError(TracsError, TypeError):
    """An argument of the wrong type (a string where a number is needed, a float count)."""


class MissingExtraError(TracsError, ModuleNotFoundError):
    """A feature needs an optional extra that is not installed; the message names the
    ``pip install`` line.  A ``ModuleNotFoundError``, so ``except ImportError`` catches it too."""


class MemoryLimitError(TracsError, MemoryError):
    """A step would need more memory than the budget the caller gave (``memory=``,
    ``--memory``); the message names both and what to change."""
