"""The release sidecar and the 'tracs estimate' command."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from tracs import Rectangle
from tracs.cli import main
from tracs.estimate import read_sidecar, sidecar_path, write_sidecar
from tracs.estimate.sidecar import perturber_from_sidecar
from tracs.perturbers import TraCSD


def test_sidecar_round_trip(tmp_path):
    region = Rectangle(0, 0, 10, 5)
    pert = TraCSD(region, 2.0, anchor="corner")
    release = tmp_path / "out.csv"
    path = write_sidecar(release, method="tracs-d", epsilon=2.0, per_trajectory=False, region=region,
                         crs="EPSG:32654", perturber=pert)
    assert path == sidecar_path(release) and path.name == "out.csv.tracs.json"
    text = path.read_text()
    assert "seed" not in text
    data = read_sidecar(release)
    assert data["region"] == region and data["crs"] == "EPSG:32654"
    again = perturber_from_sidecar(data)
    assert again.anchor_point == pert.anchor_point and again.epsilon == 2.0
    assert again.direction_share == pytest.approx(pert.direction_share)


@pytest.mark.parametrize("content, exc, fragment", [
    (None, FileNotFoundError, "no sidecar"),
    ("{", ValueError, "not valid JSON"),
    (json.dumps({"format": "other"}), ValueError, "not a tracs"),
    (json.dumps({"format": "tracs-release", "method": "tracs-d"}), ValueError, "lacks"),
])
def test_bad_sidecars(tmp_path, content, exc, fragment):
    release = tmp_path / "r.csv"
    if content is not None:
        sidecar_path(release).write_text(content)
    with pytest.raises(exc, match=fragment):
        read_sidecar(release)


_VALID = {"format": "tracs-release", "method": "em", "epsilon": 2.0, "per_trajectory": False,
          "region": {"type": "rectangle", "bounds": [0, 0, 10, 5]}}


@pytest.mark.parametrize("records, fragment", [
    ({"pois_sha256": "ab" * 32}, "r.csv.tracs.json: pois_sha256 and pois_count are recorded together, got only "
                                 "pois_sha256"),
    ({"pois_count": 20}, "got only pois_count"),
    ({"pois_sha256": "AB" * 32, "pois_count": 20}, "pois_sha256 must be 64 lowercase hex digits, got 'ABAB"),
    ({"pois_sha256": "ab" * 31, "pois_count": 20}, "pois_sha256 must be 64 lowercase hex digits"),
    ({"pois_sha256": 7, "pois_count": 20}, "pois_sha256 must be 64 lowercase hex digits, got '7'"),
    ({"pois_sha256": "ab" * 32, "pois_count": 1}, "pois_count must be an int >= 2 (the distinct POIs), got 1"),
    ({"pois_sha256": "ab" * 32, "pois_count": True}, "pois_count must be an int >= 2 (the distinct POIs), got True"),
    ({"pois_sha256": "ab" * 32, "pois_count": 20.0}, "pois_count must be an int >= 2 (the distinct POIs), got 20.0"),
])
def test_bad_poi_records(tmp_path, records, fragment):
    """A sidecar's digest and count of the POI space, checked where it is read."""
    from tracs.errors import InputError

    release = tmp_path / "r.csv"
    sidecar_path(release).write_text(json.dumps({**_VALID, **records}))
    with pytest.raises(InputError) as info:
        read_sidecar(release)
    assert fragment in str(info.value)


def test_poi_records_round_trip(tmp_path):
    """``write_sidecar(pois=...)`` records the space's digest and count; a sidecar without them is read too."""
    from tracs.poi_space import POISpace

    region = Rectangle(0, 0, 10, 5)
    space = POISpace([[1.0, 1.0], [2.0, 3.0], [1.0, 1.0], [9.0, 4.0]], region=region)
    write_sidecar(tmp_path / "a.csv", method="em", epsilon=2.0, per_trajectory=False, region=region, pois=space)
    data = read_sidecar(tmp_path / "a.csv")
    assert data["pois_sha256"] == space.digest() and data["pois_count"] == 3
    write_sidecar(tmp_path / "b.csv", method="em", epsilon=2.0, per_trajectory=False, region=region)
    assert "pois_sha256" not in read_sidecar(tmp_path / "b.csv")


def test_perturb_then_estimate(tmp_path, tky_path, capsys):
    release = tmp_path / "rel.csv"
    assert main(["perturb", str(tky_path), "-m", "tracs-c", "-e", "4", "--seed", "1", "--region", "tky",
                 "-o", str(release)]) == 0
    assert sidecar_path(release).is_file()
    boxes = tmp_path / "boxes.csv"
    pd.DataFrame({"min_lng": [130.0], "min_lat": [30.0], "max_lng": [150.0], "max_lat": [40.0]}).to_csv(boxes)
    out = tmp_path / "est.csv"
    assert main(["estimate", str(release), "--grid", "8", "--queries", str(boxes), "-o", str(out)]) == 0
    cells = pd.read_csv(out)
    assert len(cells) == 64 and cells.probability.sum() == pytest.approx(1.0)
    answers = pd.read_csv(tmp_path / "est.queries.csv")
    assert answers.estimate.iloc[0] == pytest.approx(1.0)  # the box holds the whole region
    geo = tmp_path / "est.geojson"
    assert main(["estimate", str(release), "--grid", "4", "-o", str(geo)]) == 0
    # --edge-decay reaches the estimator: 0 is plain EM's even split of the edge zones
    flat = tmp_path / "flat.csv"
    assert main(["estimate", str(release), "--grid", "8", "--edge-decay", "0", "-o", str(flat)]) == 0
    from tracs.cli.estimate import estimate_release

    expected = estimate_release(release, 8, edge_decay=0.0)[0].probabilities.ravel()
    np.testing.assert_allclose(np.sort(pd.read_csv(flat).probability), np.sort(expected), rtol=1e-12)
    assert np.isclose(sum(f["properties"]["probability"] for f in json.loads(geo.read_text())["features"]), 1)


@pytest.mark.parametrize("args, fragment", [
    (["estimate", "missing.csv", "-o", "x.csv"], "no such file"),
    (["estimate", "{release}", "-o", "x.txt"], "output format"),
    (["estimate", "{release}", "--grid", "1", "-o", "x.csv"], "--grid"),
    (["estimate", "{release}", "--edge-decay", "-1", "-o", "x.csv"], "--edge-decay must be a finite number >= 0, got -1"),
    (["estimate", "{release}", "--edge-decay", "nan", "-o", "x.csv"], "--edge-decay must be a finite number >= 0, got nan"),
    (["estimate", "{release}", "--edge-decay", "x", "-o", "x.csv"], "invalid float value: 'x'"),
    (["estimate", "{release}", "--memory", "lots", "-o", "x.csv"],
     "--memory: memory must be a number of bytes or a size such as '2GB', got 'lots'"),
    (["estimate", "{release}", "--memory", "0", "-o", "x.csv"], "--memory: memory must be a positive size"),
    (["estimate", "{release}", "--workers", "0", "-o", "x.csv"], "expected a whole number of workers >= 1"),
    (["estimate", "{release}", "--scheduler", "tcp://h:1", "-o", "x.csv"], "--scheduler goes with --engine dask"),
])
def test_estimate_bad_arguments(tmp_path, args, fragment, capsys):
    release = tmp_path / "rel.csv"
    release.write_text("lat,lng,trajectory\n35.6,139.7,0\n")
    args = [a.replace("{release}", str(release)) for a in args]
    args = [str(tmp_path / a) if a.startswith("x.") else a for a in args]
    assert main(args) != 0
    assert fragment in capsys.readouterr().err


def test_memory_budget_reaches_the_estimator(tmp_path, tky_path, capsys):
    release = tmp_path / "rel.csv"
    assert main(["perturb", str(tky_path), "-m", "tracs-d", "-e", "2", "--seed", "1", "--region", "tky",
                 "-o", str(release)]) == 0
    out = tmp_path / "est.csv"
    assert main(["estimate", str(release), "--grid", "64", "--memory", "10kB", "-o", str(out)]) != 0
    err = capsys.readouterr().err
    assert "above the budget memory=1e-05 GB" in err and not out.exists()
    from tracs.cli.estimate import estimate_release

    kept = estimate_release(release, 8)[0].probabilities
    streamed = estimate_release(release, 8, memory="3.6MB", workers=2)[0].probabilities
    # runs recomputed per smaller chunk: another summation order, 1e-10 after the EM passes
    np.testing.assert_allclose(streamed, kept, rtol=0, atol=1e-9)


@pytest.mark.slow
def test_dask_engine_equals_local(tmp_path, tky_path):
    pytest.importorskip("distributed", reason="tracs[dask] is not installed")
    release = tmp_path / "rel.csv"
    assert main(["perturb", str(tky_path), "-m", "tracs-d", "-e", "2", "--seed", "1", "--region", "tky",
                 "-o", str(release)]) == 0
    local, dask_out = tmp_path / "local.csv", tmp_path / "dask.csv"
    assert main(["estimate", str(release), "--grid", "8", "-o", str(local)]) == 0
    assert main(["estimate", str(release), "--grid", "8", "--engine", "dask", "--workers", "2",
                 "-o", str(dask_out)]) == 0
    np.testing.assert_allclose(pd.read_csv(dask_out).probability, pd.read_csv(local).probability,
                               rtol=0, atol=1e-9)


def test_density_map_layer():
    from tracs.estimate import Density
    from tracs.maps.density import density_layer, density_map

    probs = np.array([[0.5, 0.0], [0.25, 0.25]])
    est = Density(probs, (np.array([380000.0, 381000, 382000]), np.array([3950000.0, 3951000, 3952000])))
    layer = density_layer(est, "EPSG:32654", min_share=0.0)
    assert layer.layer_name == "estimated density"
    html = density_map(est, "EPSG:32654").get_root().render()
    assert "probability" in html


def test_map_with_estimated_density_layer(tmp_path, tky_path, capsys):
    release = tmp_path / "rel.csv"
    assert main(["perturb", str(tky_path), "-m", "tracs-c", "-e", "4", "--seed", "1", "--region", "tky",
                 "-o", str(release)]) == 0
    page = tmp_path / "map.html"
    assert main(["map", str(tky_path), str(release), "--estimate-grid", "8", "--max-users", "2",
                 "-o", str(page)]) == 0
    html = page.read_text(encoding="utf-8")
    assert "estimated density (tracs-c" in html and "probability" in html
    # the layer needs the release (and its sidecar)
    assert main(["map", str(tky_path), "--estimate-grid", "8", "-o", str(tmp_path / "m2.html")]) != 0
    assert "--estimate-grid needs PERTURBED" in capsys.readouterr().err
