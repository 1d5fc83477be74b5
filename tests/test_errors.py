"""One error family: every exception class of ``tracs`` and ``data_loaders`` is a ``TracsError``.

Every module of both packages is imported (modules needing an optional extra that is not
installed are skipped by name), every exception class it defines is found, and each must
derive from :class:`tracs.TracsError` as well as keep its built-in base.  A table of real
refusals then checks that ``except TracsError`` catches them and that the built-in
``except`` clause their callers already use still does.
"""

from __future__ import annotations

import importlib
import json
import pkgutil

import pytest

import data_loaders
import tracs
from tracs.errors import TracsError

#: libraries of the optional extras (``tracs[plots]``, ``[dask]``, ``[movingpandas]``, ``[collect]``)
OPTIONAL = {"matplotlib", "dask", "distributed", "dask_geopandas", "movingpandas", "starlette", "uvicorn",
            "httpx", "psycopg"}

#: classes the walk must find (so it cannot pass by finding nothing)
KNOWN = {"tracs._validation.NotRealError", "tracs.io.times.TimeFormatError", "tracs.io.columns.MissingColumnsError",
         "tracs.io.formats.UnsupportedFormatError", "tracs.collect.published.ParameterError",
         "tracs.collect.device.BudgetExhausted", "tracs.collect.collector.Refused", "tracs.cli._common.CLIError"}


def _module_names() -> list[str]:
    names = []
    for package in (tracs, data_loaders):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + ".", onerror=lambda name: None):
            if info.name.rpartition(".")[2] != "__main__":  # `python -m` entry points run on import
                names.append(info.name)
    return [tracs.__name__, data_loaders.__name__, *sorted(names)]


def _import(name: str):
    """The module ``name``, or None when it needs an optional extra that is not installed."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] in OPTIONAL:
            return None
        raise


def _exception_classes() -> dict[str, type]:
    found = {}
    for name in _module_names():
        module = _import(name)
        if module is None:
            continue
        for obj in list(vars(module).values()):  # not dir(): a package root lists names it loads lazily
            if isinstance(obj, type) and issubclass(obj, BaseException) and obj.__module__ == name:
                found[f"{name}.{obj.__qualname__}"] = obj
    return found


def test_every_exception_class_is_a_tracs_error():
    found = _exception_classes()
    assert KNOWN <= set(found), f"the walk missed {sorted(KNOWN - set(found))}"
    outside = sorted(name for name, cls in found.items() if not issubclass(cls, TracsError))
    assert not outside, f"exception classes not derived from TracsError: {outside}"


def test_every_exception_class_keeps_its_builtin_base():
    """``except ValueError`` (or ``TypeError``, ``RuntimeError``) around a call keeps catching it."""
    found = _exception_classes()
    expected = {"tracs._validation.NotRealError": (TypeError, ValueError),
                "tracs.io.times.TimeFormatError": (ValueError,),
                "tracs.io.columns.MissingColumnsError": (ValueError,),
                "tracs.io.formats.UnsupportedFormatError": (ValueError,),
                "tracs.collect.published.ParameterError": (ValueError,),
                "tracs.collect.device.BudgetExhausted": (RuntimeError,),
                "tracs.collect.storage.StoreError": (RuntimeError,)}
    for name, bases in expected.items():
        assert issubclass(found[name], bases), name


def test_tracs_error_is_a_root_name():
    assert tracs.TracsError is TracsError
    assert "TracsError" in tracs.__all__ and "TracsError" in dir(tracs)
    assert issubclass(TracsError, Exception) and not issubclass(TracsError, ValueError)


# -- real refusals ------------------------------------------------------------------------------


def _complex_epsilon(tmp_path):
    from tracs._validation import check_epsilon

    check_epsilon(1 + 2j)


def _bad_time(tmp_path):
    from tracs.io.times import parse_times

    parse_times(["yesterday at noon", "today"])


def _missing_column(tmp_path):
    from tracs.io.columns import resolve_columns

    resolve_columns(["a", "b", "c"], source="f.csv")


def _image_as_checkins(tmp_path):
    from tracs.io import read_checkins

    path = tmp_path / "image.png"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    read_checkins(path)


def _unknown_cap(tmp_path):
    from tracs.collect import Parameters
    from tracs.public import LonLatBox

    data = json.loads(Parameters.build("tracs-d", 1.5, LonLatBox(139.5, 35.5, 140.0, 35.9)).to_json())
    data["caps"]["week"] = 1.0
    Parameters.from_json(json.dumps(data))


# (id, call(tmp_path), tracs class, built-in class, message fragment)
REFUSALS = [
    ("complex-epsilon", _complex_epsilon, "NotRealError", TypeError, "epsilon must be a real number"),
    ("bad-time", _bad_time, "TimeFormatError", ValueError, "tried ISO 8601"),
    ("missing-column", _missing_column, "MissingColumnsError", ValueError, "Columns found: a, b, c"),
    ("image-file", _image_as_checkins, "UnsupportedFormatError", ValueError, "cannot read image.png"),
    ("unknown-cap", _unknown_cap, "ParameterError", ValueError, "unknown budget cap(s) 'week'"),
]


@pytest.mark.parametrize("call, name, builtin, fragment", [r[1:] for r in REFUSALS], ids=[r[0] for r in REFUSALS])
def test_refusals_are_caught_as_tracs_errors(call, name, builtin, fragment, tmp_path):
    with pytest.raises(TracsError) as info:
        call(tmp_path)
    assert type(info.value).__name__ == name
    assert isinstance(info.value, builtin)
    assert fragment in str(info.value)
    with pytest.raises(builtin):  # the clause callers already use still catches it
        call(tmp_path)


# -- no plain built-in refusal left in the source -------------------------------------------------

#: raises of a plain ValueError / TypeError / KeyError that are not refusals of the user's input:
#: (file relative to the repository, class, fragment of the raised expression)
PLAIN_RAISES = {
    # the Mapping protocol of the registry's views: a name of another kind is simply not a key there
    ("tracs/methods/_registry.py", "KeyError", "KeyError(name)"),
    # an invariant of the reader (times are parsed before they reach this point), not a user's error
    ("tracs/io/checkins.py", "TypeError", "internal: time must be parsed"),
    # a kernel of tracs given to tracs._jit.helper with a parameter it lacks: a mistake in tracs' own source,
    # raised when the module is imported, never an answer to anything a user gives
    ("tracs/_jit.py", "TypeError", "has no parameters"),
}

PLAIN = {"ValueError", "TypeError", "KeyError"}


def _raises(classes=PLAIN):
    """(file, class, source of the raised expression) of every ``raise`` of one of ``classes``."""
    import ast
    from pathlib import Path

    root = Path(tracs.__file__).resolve().parent.parent
    found = []
    for package in ("tracs", "data_loaders"):
        for path in sorted((root / package).rglob("*.py")):
            source = path.read_text(encoding="utf-8")
            for node in ast.walk(ast.parse(source)):
                if not isinstance(node, ast.Raise) or node.exc is None:
                    continue
                target = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
                # a class chosen by a conditional expression, ``raise (A if c else B)(...)``: both
                targets = [target.body, target.orelse] if isinstance(target, ast.IfExp) else [target]
                for one in targets:
                    if isinstance(one, ast.Name) and one.id in classes:
                        found.append((path.relative_to(root).as_posix(), one.id,
                                      ast.get_source_segment(source, node.exc)))
    return found


def test_no_plain_builtin_raise_outside_the_allow_list():
    """A deliberate refusal raises a TracsError class (``InputError``, ``InputTypeError`` …): the
    command line shows those as one line and any other exception as a bug, with its traceback."""
    found = _raises()
    allowed = [(path, name, text) for path, name, text in found
               if any(path == p and name == n and fragment in text for p, n, fragment in PLAIN_RAISES)]
    outside = sorted(set(found) - set(allowed))
    assert not outside, "raise a class of tracs.errors instead of:\n" + "\n".join(
        f"{path}: raise {text}" for path, name, text in outside)
    assert len(allowed) == len(PLAIN_RAISES), "an allow-list entry matches no raise: remove it"


def test_the_source_walk_sees_raises():
    """The walk reads every file (a changed layout cannot make the test above pass by finding nothing)."""
    found = _raises({"InputError", "InputTypeError"})
    assert len(found) >= 500 and {"tracs/_validation.py", "data_loaders/generic.py"} <= {f for f, _, _ in found}
