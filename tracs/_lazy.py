"""Lazy names of a package: ``module.__getattr__`` and ``__dir__`` importing on first use.

A package lists its public names as ``{name: submodule}`` (a dotted name is a module
of another package, for names a package re-exports); the submodule is
imported the first time the name is read and the value is then kept in the
package's namespace (later reads cost nothing).  Importing the package stays
cheap: commands that need only part of it never import the rest.
"""

from __future__ import annotations

import sys
from importlib import import_module

__all__ = ["lazy_names"]


def lazy_names(package: str, exports: dict, submodules=()):
    """``(__getattr__, __dir__)`` for ``package`` serving ``exports`` and the ``submodules``
    (returned as attributes, as when the package imported them all)."""
    submodules = frozenset(submodules)

    def __getattr__(name: str):
        if name in submodules:
            return import_module(f"{package}.{name}")
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(module if "." in module else f"{package}.{module}"), name)
        vars(sys.modules[package])[name] = value
        return value

    def __dir__():
        return sorted(set(vars(sys.modules[package])) | set(exports) | submodules)

    return __getattr__, __dir__
