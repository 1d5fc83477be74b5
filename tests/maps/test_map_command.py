"""``tracs map``: files in, one HTML map out; bad input gives one line on stderr."""

from __future__ import annotations

import argparse

import pytest

from tracs.cli import map_command
from tracs.maps import external_assets


def _run(argv) -> int:
    parser = argparse.ArgumentParser(prog="tracs")
    map_command.add_parser(parser.add_subparsers(dest="command"))
    return map_command.run(parser.parse_args(argv))


def test_parser_has_help():
    parser = argparse.ArgumentParser(prog="tracs")
    sub = parser.add_subparsers(dest="command")
    map_command.add_parser(sub)
    assert "map" in sub.choices
    text = sub.choices["map"].format_help()
    for option in ("INPUT", "PERTURBED", "--output", "--users", "--pois", "--offline", "--epsilon"):
        assert option in text


def test_map_of_released_file(checkin_files, tmp_path, read_payloads, capsys):
    source, released = checkin_files
    out = tmp_path / "map.html"
    assert _run(["map", str(source), str(released), "-o", str(out), "--tiles", "none"]) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    html = out.read_text(encoding="utf-8")
    layers = [d for d in read_payloads(html) if "o" in d]
    assert len(layers) == 2 * 5  # 5 users, true and reported
    assert sum(len(d["c"]) for d in layers[0::2]) == sum(len(d["c"]) for d in layers[1::2])
    assert "&epsilon; = 4 per point" in html  # read from the file's epsilon_point column
    assert "L.tileLayer(" not in html


def test_users_pois_and_offline(checkin_files, tmp_path, read_payloads, offline_assets):
    source, released = checkin_files
    out = tmp_path / "map.html"
    assert _run(["map", str(source), str(released), "-o", str(out), "--users", "3", "1",
                 "--pois", str(source), "--offline", "--tiles", "none"]) == 0
    html = out.read_text(encoding="utf-8")
    labels = [d["label"] for d in read_payloads(html) if "o" in d]
    assert labels == ["user 3 true", "user 3 reported", "user 1 true", "user 1 reported"]
    assert "POIs (" in html
    assert external_assets(html) == []


def test_perturbs_on_the_fly(checkin_files, tmp_path, read_payloads):
    source, _ = checkin_files
    out = tmp_path / "map.html"
    assert _run(["map", str(source), "-o", str(out), "-e", "2", "--seed", "5", "--first", "2",
                 "--input-pois", "--tiles", "none"]) == 0
    html = out.read_text(encoding="utf-8")
    layers = [d for d in read_payloads(html) if "o" in d]
    assert len(layers) == 4 and all("e" in d for d in layers[1::2])
    assert "TraCS-D" in html and "&epsilon; = 2 per point" in html


def test_cap_is_reported(checkin_files, tmp_path, capsys):
    source, released = checkin_files
    assert _run(["map", str(source), str(released), "-o", str(tmp_path / "m.html"),
                 "--max-points", "5", "--tiles", "none"]) == 0
    assert "tracs map: note: the map draws" in capsys.readouterr().err


@pytest.mark.parametrize("case, message", [
    ("missing", "no such file"),
    ("mismatch", "have no row of the input with their uid, trajectory and point"),
    ("user", "not in the data"),
    ("folder", "does not exist"),
    ("method", "unknown method"),
])
def test_errors_are_one_line(checkin_files, tmp_path, capsys, case, message):
    source, released = checkin_files
    out = str(tmp_path / "m.html")
    short = tmp_path / "short.csv"
    lines = released.read_text().splitlines(keepends=True)  # a row of a user the input does not have
    short.write_text("".join(lines[:-1]) + "nobody" + lines[-1][lines[-1].index(","):])
    argv = {
        "missing": ["map", str(tmp_path / "nope.csv"), "-o", out],
        "mismatch": ["map", str(source), str(short), "-o", out],
        "user": ["map", str(source), "-o", out, "--users", "12345"],
        "folder": ["map", str(source), "-o", str(tmp_path / "no" / "m.html")],
        "method": ["map", str(source), "-o", out, "-e", "1", "-m", "nonsense"],
    }[case]
    assert _run(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("tracs map: error:") and message in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_through_tracs_main(checkin_files, tmp_path):
    from tracs.cli import main

    source, released = checkin_files
    out = tmp_path / "m.html"
    assert main(["map", str(source), str(released), "-o", str(out), "--tiles", "none"]) == 0
    assert out.stat().st_size > 1_000


def test_refuses_a_method_that_is_not_ldp(checkin_files, tmp_path, capsys):
    source, _ = checkin_files
    out = tmp_path / "map.html"
    assert _run(["map", str(source), "-o", str(out), "-e", "2", "-m", "lsrr-thresholds",
                 "--tiles", "none"]) != 0
    assert "not ε-LDP" in capsys.readouterr().err
    assert not out.exists()


def test_pages_are_offline_by_default_and_online_on_request(checkin_files, tmp_path, offline_assets):
    source, released = checkin_files
    default, online = tmp_path / "default.html", tmp_path / "online.html"
    assert _run(["map", str(source), str(released), "-o", str(default)]) == 0
    assert external_assets(default.read_text(encoding="utf-8")) == []
    assert "could not be loaded" in default.read_text(encoding="utf-8")  # the tile-failure note
    assert _run(["map", str(source), str(released), "-o", str(online), "--online"]) == 0
    assert external_assets(online.read_text(encoding="utf-8")) != []


def test_online_and_offline_together_are_refused(checkin_files, tmp_path, capsys):
    source, released = checkin_files
    assert _run(["map", str(source), str(released), "-o", str(tmp_path / "m.html"), "--online", "--offline"]) == 1
    assert "--online and --offline contradict each other" in capsys.readouterr().err
    assert not (tmp_path / "m.html").exists()
