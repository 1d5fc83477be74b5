"""``examples/tokyo_map.py`` writes its three pages (synthetic city, and the Tokyo file)."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

from tracs.maps import external_assets

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "tokyo_map.py"


def _run_example(argv) -> None:
    main = runpy.run_path(str(EXAMPLE), run_name="tokyo_map_example")["main"]
    assert main(argv) == 0


def _check_pages(folder: Path, read_payloads, users: int) -> None:
    for eps in (2, 8):
        html = (folder / f"tokyo_eps{eps}.html").read_text(encoding="utf-8")
        layers = [d for d in read_payloads(html) if "o" in d]
        assert len(layers) == 3 * users  # true, reported, rounded per user
        assert f"&epsilon; = {eps} per point" in html and "TraCS-D" in html
        assert external_assets(html) == []
    compare = (folder / "tokyo_compare.html").read_text(encoding="utf-8")
    assert compare.count("= L.map(") == 2 and "tracsMaps.sync(" in compare


def test_synthetic_fallback(tmp_path, no_data_dirs, read_payloads, capsys, offline_assets):
    _run_example(["--output-dir", str(tmp_path), "--tiles", "none", "--users", "2",
                  "--trips", "2"])
    assert "synthetic city" in capsys.readouterr().err
    _check_pages(tmp_path, read_payloads, users=2)


@pytest.mark.data
def test_tokyo_file(tky_path, tmp_path, read_payloads, capsys, offline_assets):
    _run_example([str(tky_path), "--output-dir", str(tmp_path), "--tiles", "none",
                  "--users", "3", "--trips", "2"])
    out = capsys.readouterr().out
    assert "ε = 2: average error" in out and "ε = 8: average error" in out
    _check_pages(tmp_path, read_payloads, users=3)
