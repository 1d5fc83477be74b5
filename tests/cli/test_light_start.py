"""The command's start stays light: what ``tracs perturb`` on a Parquet file needs, no more.

Each case runs a fresh interpreter (``sys.modules`` of the test process is shared by
every test) with this checkout first on ``PYTHONPATH`` and lists the heavy packages
imported: importing :mod:`tracs.cli`, building its whole parser and ``tracs perturb
--help`` import none of them; a real ``tracs perturb`` of a small Parquet file
imports pandas, pyarrow and numba (it needs them) but no geopandas, shapely,
matplotlib or folium; ``import tracs`` and ``import data_loaders`` import neither
pandas nor geopandas, and their public names still resolve on first use.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("pandas", "geopandas", "shapely", "pyproj", "scipy", "sklearn", "numba", "matplotlib", "folium",
         "pyarrow")

pytestmark = pytest.mark.slow  # a new interpreter per case


def imported_after(code: str, cwd=None) -> set:
    """The packages of ``HEAVY`` in ``sys.modules`` after running ``code`` in a new interpreter."""
    probe = (code + "\nimport sys, json\nprint(json.dumps(sorted({m.split('.')[0] for m in sys.modules} "
             f"& set({HEAVY!r}))))")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=180, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize("code", [
    "import tracs.cli",
    "import tracs.cli as c; c.build_parser()",
    "import tracs.cli as c, contextlib, io\nwith contextlib.redirect_stdout(io.StringIO()):\n"
    "    assert c.main(['perturb', '--help']) == 0",
], ids=["import", "parser", "perturb-help"])
def test_the_parser_imports_nothing_heavy(code):
    assert imported_after(code) == set()


def test_perturbing_a_parquet_file_needs_no_geopandas(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"uid": [1, 1, 2, 2], "datetime": ["2012-04-03T10:00:00Z"] * 4,
                             "lat": [35.6, 35.61, 35.7, 35.71], "lng": [139.6, 139.61, 139.7, 139.71]}),
                   tmp_path / "in.parquet")
    code = ("import tracs.cli as c\nassert c.main(['perturb', 'in.parquet', '-o', 'out.parquet', '-m', 'tracs-c', "
            "'-e', '2', '--region', 'tky', '--seed', '1', '-q']) == 0")
    loaded = imported_after(code, cwd=tmp_path)
    assert (tmp_path / "out.parquet").is_file()
    assert {"pandas", "pyarrow", "numba"} <= loaded  # what the run needs
    assert loaded.isdisjoint({"geopandas", "shapely", "matplotlib", "folium", "sklearn"}), loaded


@pytest.mark.parametrize("code, names", [
    ("import tracs", ("TraCSC", "Rectangle", "io", "evaluation")),
    ("import tracs.evaluation as e", ("METHODS", "MethodContext", "summarise", "runner")),
    ("import data_loaders as d", ("SOURCE_COLUMNS", "LoadReport", "load_checkins", "to_trajectories")),
], ids=["tracs", "tracs.evaluation", "data_loaders"])
def test_packages_load_their_names_on_first_use(code, names):
    assert imported_after(code).isdisjoint({"pandas", "geopandas", "shapely", "matplotlib", "folium"})
    module = code.split(" as ")[-1] if " as " in code else "tracs"
    uses = "\n".join(f"assert {module}.{name} is not None and {name!r} in dir({module})" for name in names)
    imported_after(f"{code}\n{uses}")  # raises when a name does not resolve


@pytest.mark.parametrize("argv, freezes", [(None, True), (["perturb", "in.parquet"], False)],
                         ids=["command", "in-process"])
def test_collection_is_paused_only_while_the_command_starts(tmp_path, argv, freezes):
    """``tracs perturb`` pauses the cyclic collector during its imports, then resumes it; only the
    command's own process freezes the objects it imported."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"uid": [1, 1, 2, 2], "datetime": ["2012-04-03T10:00:00Z"] * 4,
                             "lat": [35.6, 35.61, 35.7, 35.71], "lng": [139.6, 139.61, 139.7, 139.71]}),
                   tmp_path / "in.parquet")
    args = "['perturb', 'in.parquet', '-o', 'out.parquet', '-m', 'tracs-c', '-e', '2', '--region', 'tky', '-q']"
    code = ("import gc, sys\nimport tracs.cli as c, tracs.release.files as f\nseen = {}\nrun = f.release_file\n"
            "def spy(*a, **k):\n    seen['during'] = gc.isenabled()\n    out = run(*a, **k)\n"
            "    seen['after'] = (gc.isenabled(), gc.get_freeze_count() > 0)\n    return out\n"
            "f.release_file = spy\n"
            + (f"sys.argv = ['tracs'] + {args}\nrc = c.main()\n" if argv is None
               else f"rc = c.main({args})\n")
            + "assert rc == 0, rc\nassert seen['during'] is False, seen\n"
              f"assert seen['after'] == (True, {freezes}), seen\nassert gc.isenabled() is {not freezes}\n")
    imported_after(code, cwd=tmp_path)
