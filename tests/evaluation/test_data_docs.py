"""``examples/data_docs.py`` fills every command block of ``docs/data.md`` with the command and
what it printed (and the README's excerpt of one), and the published pages are what a fresh
run prints."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
PAGE = EXAMPLES.parent / "docs" / "data.md"
README = EXAMPLES.parent / "README.md"
sys.path.insert(0, str(EXAMPLES))

import _page  # noqa: E402


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    out = tmp_path_factory.mktemp("data_docs")
    run = subprocess.run([sys.executable, str(EXAMPLES / "data_docs.py"), "--output-dir", str(out)],
                         cwd=out, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.startswith("rewrote 14 block(s) of "), run.stdout
    assert "rewrote 1 block(s) of " in run.stdout, run.stdout
    readme = _page.blocks((out / "README.md").read_text(encoding="utf-8"))
    return {**_page.blocks((out / "data.md").read_text(encoding="utf-8")), "README": readme}


def test_every_block_holds_its_command_and_what_it_printed(generated):
    import data_docs

    generated = {k: v for k, v in generated.items() if k != "README"}
    heads = {f"{e.block}-head" for e in data_docs.EXAMPLES if e.head}
    assert set(generated) == {e.block for e in data_docs.EXAMPLES} | heads == set(_page.blocks(PAGE.read_text()))
    for example in data_docs.EXAMPLES:
        lines = generated[example.block].strip().splitlines()
        assert lines[0] == "```text" and lines[-1] == "```", example.block
        assert lines[1] == f"$ {example.command}", example.block
        assert len(lines) >= 4, f"{example.block}: the command printed nothing"
        body = "\n".join(lines[2:-1])
        assert "Traceback" not in body, body
        assert "tracs-data-docs-" not in body and tempfile.gettempdir() not in body, body  # no temporary path
        if example.block in data_docs.ERRORS:
            assert lines[2:-1] == [line for line in lines[2:-1] if line.startswith("tracs perturb: error: ")], body
        else:
            assert "error:" not in body, body
            assert lines[-2].startswith(("TraCS-C: ", "TraCS-D: ")) and " -> " in lines[-2], body


def test_released_files_keep_the_ids_as_written(generated):
    assert generated["geolife-head"].splitlines()[3].startswith("000,"), generated["geolife-head"]
    assert generated["epoch-head"].splitlines()[3].startswith("0042,"), generated["epoch-head"]


def test_the_geopackage_of_lines_is_perturbed_as_trajectories(generated):
    assert "read as trajectories" in generated["lines"]
    assert generated["lines"].strip().splitlines()[-2].endswith("-> walks-released.csv (CSV)")
    assert generated["lines-out"].strip().splitlines()[-2].endswith("-> walks-released.gpkg (GeoPackage)")


def test_users_times_and_missing_time_blocks(generated):
    layouts = generated["layouts"]
    assert "times: 3 layouts among 3 users: " in layouts and "does not exist in Europe/Lisbon" in layouts
    assert "occurs twice in Europe/Lisbon" in layouts and "point_time" not in "".join(v for k, v in generated.items() if k != "README")
    assert "give --no-time to keep the file's order" in generated["no-time-refused"]
    assert "no times (--no-time): points kept in the file's order" in generated["no-time"]


def test_the_readme_shows_an_excerpt_of_one_block(generated):
    import data_docs

    sample = generated["README"][data_docs.README_BLOCK].strip().splitlines()
    full = generated[data_docs.SAMPLE].strip().splitlines()
    assert sample[0] == "```text" and sample[-1] == "```" and 3 <= len(sample) - 3 <= 5
    assert sample[1] == full[1] and sample[-2] == full[-2]
    assert all(line in full for line in sample), sample


def test_the_published_pages_are_a_fresh_run(generated):
    """docs/data.md and the README show what the commands print now (rerun
    ``examples/data_docs.py --write-docs``)."""
    pages = {**_page.blocks(PAGE.read_text(encoding="utf-8")), "README": _page.blocks(README.read_text(encoding="utf-8"))}
    assert pages == generated
