"""Methods, formats and estimators installed as other packages: the entry-point groups.

A package extends tracs by declaring, in its ``pyproject.toml``::

    [project.entry-points."tracs.methods"]
    my-perturber = "my_package.perturber:METHOD"

    [project.entry-points."tracs.formats"]
    my-format = "my_package.format:FORMAT"

    [project.entry-points."tracs.estimators"]
    my-estimator = "my_package.estimator:ESTIMATOR"

Each entry names a :class:`tracs.methods.Method`, a :class:`tracs.io.Format` or a
:class:`tracs.estimate.estimators.Estimator` (or a list of them), which the
registry of its group registers.  A group is read once per process, when its
registry is first asked for its names (the command line's choices and help
included), never when tracs is imported.  An entry that cannot be loaded or
registered gives one warning naming it; the others are registered.
"""

from __future__ import annotations

import warnings

from .errors import InputError, InputTypeError, TracsError

__all__ = ["GROUPS", "add", "load_group", "resolve", "PluginWarning"]

#: the entry-point groups tracs reads
GROUPS = ("tracs.methods", "tracs.formats", "tracs.estimators")

#: the groups read in this process
loaded: set = set()


class PluginWarning(TracsError, UserWarning):
    """An installed extension of tracs that could not be loaded or registered."""


def load_group(group: str, register, kind: type) -> int:
    """Register every object the entry points of ``group`` name, once per process.

    Parameters
    ----------
    group : str
        One of :data:`GROUPS`.
    register : callable
        The registry's ``register(obj)`` (which refuses a name already taken).
    kind : type
        The class every named object (or every item of a named list) must be.

    Returns
    -------
    int
        The number of objects registered now.
    """
    if group in loaded:
        return 0
    loaded.add(group)  # first: a plugin's own imports may ask the registry again
    from importlib import metadata

    done = 0
    for entry in metadata.entry_points(group=group):
        try:
            value = entry.load()
            items = list(value) if isinstance(value, (list, tuple)) else [value]
            for item in items:
                if not isinstance(item, kind):
                    raise InputTypeError(f"it names a {type(item).__name__}, not a {kind.__name__}")
                register(item)
                done += 1
        except Exception as exc:  # noqa: BLE001  (a broken extension must not stop the command)
            warnings.warn(f"tracs: the extension {entry.name} = {entry.value} (entry point group {group}) "
                          f"is not loaded: {type(exc).__name__}: {exc}", PluginWarning, stacklevel=2)
    return done


def resolve(ref):
    """A callable as given, or the object a ``"module:name"`` reference names (imported now)."""
    if ref is None or callable(ref):
        return ref
    module, _, name = ref.partition(":")
    from importlib import import_module

    return getattr(import_module(module), name)


def add(table: dict, entry, kind: type, *, takes: str, named: str):
    """Put ``entry`` (a ``kind`` with a ``name``) into a registry's ``table``; return it.

    ``TypeError`` ("``takes``, got str") for another type, ``ValueError`` ("``named`` 'x' is
    already registered") for a name already taken.
    """
    if not isinstance(entry, kind):
        raise InputTypeError(f"{takes}, got {type(entry).__name__}")
    if entry.name in table:
        raise InputError(f"{named} {entry.name!r} is already registered")
    table[entry.name] = entry
    return entry
