"""Where a release's parameters came from: the sidecar says it, readers warn, the input is never the POI file."""

from __future__ import annotations

import json
import os
import shutil

import numpy as np
import pandas as pd
import pytest

from tracs.estimate import read_sidecar, sidecar_path, write_sidecar
from tracs.estimate.sidecar import data_derived
from tracs.public import city_box, read_pois
from tracs.region import Rectangle


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("sources")
    rng = np.random.default_rng(4)
    n = 24
    pd.DataFrame({"uid": np.repeat(["a", "b", "c"], n // 3),
                  "datetime": pd.Timestamp("2012-04-03", tz="UTC") + pd.to_timedelta(np.arange(n) * 600, unit="s"),
                  "lat": 35.6 + 0.1 * rng.random(n), "lng": 139.6 + 0.1 * rng.random(n)}).to_csv(
        root / "in.csv", index=False)
    pd.DataFrame({"lat": 35.6 + 0.1 * rng.random(20), "lng": 139.6 + 0.1 * rng.random(20)}).to_csv(
        root / "pois.csv", index=False)
    return root


@pytest.mark.parametrize("options, sources", [
    (["-m", "tracs-d", "--region", "tky"], {"region": "public", "anchor": "public"}),
    (["-m", "tracs-d", "--region-from-data"], {"region": "data", "anchor": "data"}),
    (["-m", "tracs-d", "--region-from-data", "--anchor", "378000,3946000"], {"region": "data", "anchor": "public"}),
    (["-m", "tracs-c", "--region", "tky"], {"region": "public"}),
    (["-m", "tracs-c", "--region-from-data"], {"region": "data"}),
    (["-m", "em", "--region", "tky", "--pois", "{pois}"], {"region": "public", "pois": "public"}),
    (["-m", "em", "--region-from-data"], {"region": "data", "pois": "data"}),
    (["-m", "tracs-c", "--region", "tky", "--round-to-pois", "--pois", "{pois}"],
     {"region": "public", "pois": "public"}),
])
def test_sidecar_says_where_region_pois_and_anchor_came_from(options, sources, files, cli, tmp_path):
    options = [o.replace("{pois}", str(files / "pois.csv")) for o in options]
    out = tmp_path / "rel.csv"
    done = cli("perturb", files / "in.csv", "-o", out, "-e", "2", "--seed", "1", *options)
    assert done.returncode == 0, done.stderr
    written = json.loads(sidecar_path(out).read_text())
    assert written["sources"] == sources
    assert data_derived(read_sidecar(out)) == [k for k in ("region", "pois", "anchor") if sources.get(k) == "data"]
    # the digest of the POI space: of the public POI file only (nothing of the data's venues)
    if sources.get("pois") == "public":
        space = read_pois(files / "pois.csv", city_box("tky"))
        assert written["pois_sha256"] == space.digest() and written["pois_count"] == len(space) == 20
    else:
        assert "pois_sha256" not in written and "pois_count" not in written


def test_estimate_and_map_warn_about_data_derived_parameters(files, cli, tmp_path):
    private, leaky = tmp_path / "private.csv", tmp_path / "leaky.csv"
    assert cli("perturb", files / "in.csv", "-o", private, "-m", "tracs-c", "-e", "2", "--seed", "1",
               "--region", "tky").returncode == 0
    assert cli("perturb", files / "in.csv", "-o", leaky, "-m", "tracs-c", "-e", "2", "--seed", "1",
               "--region-from-data").returncode == 0
    warning = "warning: the release used parameters computed from the data (region;"
    quiet = cli("estimate", private, "--grid", "4", "-o", tmp_path / "a.csv")
    loud = cli("estimate", leaky, "--grid", "4", "-o", tmp_path / "b.csv")
    assert quiet.returncode == loud.returncode == 0, quiet.stderr + loud.stderr
    assert "warning" not in quiet.stderr
    assert f"tracs estimate: {warning}" in loud.stderr and "NOT private" in loud.stderr
    drawn = cli("map", files / "in.csv", leaky, "-o", tmp_path / "m.html", "--tiles", "none")
    assert drawn.returncode == 0, drawn.stderr
    assert f"tracs map: {warning}" in drawn.stderr
    plain = cli("map", files / "in.csv", private, "-o", tmp_path / "n.html", "--tiles", "none")
    assert plain.returncode == 0 and "computed from the data" not in plain.stderr


def _link(src, dst):
    os.symlink(src, dst)


@pytest.mark.parametrize("make, how", [
    (None, "is the same file as the input"),
    (_link, "is the same file as the input"),
    (shutil.copyfile, "is a copy of the input"),
])
def test_pois_equal_to_the_input_are_refused(make, how, files, cli, tmp_path):
    source = tmp_path / "in.csv"
    shutil.copyfile(files / "in.csv", source)
    pois = source
    if make is not None:
        pois = tmp_path / "pois.csv"
        make(source, pois)
    done = cli("perturb", source, "-o", tmp_path / "out.csv", "-m", "em", "-e", "2", "--region", "tky",
               "--pois", pois)
    assert done.returncode == 1
    assert f"tracs perturb: error: --pois {pois} {how} {source}: the points of interest must be public" \
        in done.stderr
    assert not (tmp_path / "out.csv").exists()


@pytest.mark.parametrize("sources, exc, message", [
    ("public", TypeError, "sources must be a dict, got str"),
    ({"grid": "public"}, ValueError, "sources: unknown parameter 'grid'; one of region, pois, anchor"),
    ({"region": "user"}, ValueError, "sources\\['region'\\] must be 'public' or 'data', got 'user'"),
])
def test_bad_sources_are_refused(sources, exc, message, tmp_path):
    with pytest.raises(exc, match=message):
        write_sidecar(tmp_path / "r.csv", method="tracs-c", epsilon=1.0, per_trajectory=False,
                      region=Rectangle(0, 0, 1, 1), sources=sources)
    path = sidecar_path(tmp_path / "r.csv")
    path.write_text(json.dumps({"format": "tracs-release", "method": "tracs-c", "epsilon": 1.0,
                                "per_trajectory": False, "region": {"type": "rectangle", "bounds": [0, 0, 1, 1]},
                                "sources": sources}))
    with pytest.raises(ValueError, match="r.csv.tracs.json: " + message.split(",")[0]):
        read_sidecar(path)
