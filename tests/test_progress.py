"""Progress bars: only on a terminal, only for steps that last, never when silenced or forced off."""

import io
import time

import pytest

from tracs import _progress
from tracs._progress import progress_bar, silenced


class Terminal(io.StringIO):
    """A standard error that says it is a terminal."""

    def isatty(self):
        return True


def _run(steps: int, pause: float, **kwargs) -> None:
    with progress_bar(steps, desc="work", **kwargs) as bar:
        for _ in range(steps):
            time.sleep(pause)
            bar.update(1)


@pytest.fixture
def stderr(monkeypatch):
    def use(stream, delay=0.05, mode=None):
        monkeypatch.setattr("sys.stderr", stream)
        monkeypatch.setattr(_progress, "DELAY", delay)
        if mode is None:
            monkeypatch.delenv(_progress.ENVIRONMENT, raising=False)
        else:
            monkeypatch.setenv(_progress.ENVIRONMENT, mode)
        return stream
    return use


def test_a_long_step_on_a_terminal_shows_a_bar(stderr):
    out = stderr(Terminal())
    _run(6, 0.03)  # 0.18 s, longer than the (shortened) delay of 0.05 s
    assert "work:" in out.getvalue() and "/6" in out.getvalue()


def test_a_short_step_on_a_terminal_shows_nothing(stderr):
    out = stderr(Terminal(), delay=30.0)
    _run(3, 0.0)
    assert out.getvalue() == ""


@pytest.mark.parametrize("stream, mode, quiet, enabled, shown", [
    (io.StringIO(), None, False, True, False),      # not a terminal
    (io.StringIO(), "always", False, True, True),   # forced on
    (io.StringIO(), "1", False, True, True),
    (Terminal(), "never", False, True, False),      # forced off
    (Terminal(), None, True, True, False),          # silenced (--quiet)
    (io.StringIO(), "always", True, True, False),   # silencing beats forcing
    (Terminal(), None, False, False, False),        # this bar disabled (progress=False)
])
def test_when_a_bar_appears(stderr, stream, mode, quiet, enabled, shown):
    out = stderr(stream, mode=mode)
    with silenced(quiet):
        _run(4, 0.03, enabled=enabled)
    assert ("work:" in out.getvalue()) is shown


def test_silenced_is_scoped(stderr):
    out = stderr(io.StringIO(), mode="always")
    with silenced():
        _run(2, 0.0)
    assert out.getvalue() == ""
    _run(2, 0.0)
    assert "work:" in out.getvalue()


def test_readers_and_em_report_progress_when_forced(tmp_path, monkeypatch, capsys):
    """Text and Parquet readers count bytes and rows; EM counts its passes (forced: no terminal here)."""
    import numpy as np
    import pandas as pd

    from tracs.estimate.expectation_maximisation import run_em
    from tracs.io import read_checkins

    frame = pd.DataFrame({"uid": [1, 1, 2], "datetime": ["2024-05-01T08:00:00Z"] * 3,
                          "lat": [35.6, 35.7, 35.8], "lng": [139.6, 139.7, 139.8]})
    frame.to_csv(tmp_path / "a.csv", index=False)
    frame.to_parquet(tmp_path / "a.parquet")

    class Block:  # two cells, reports that favour the first
        weight = 10.0

        def predict_and_back(self, theta):
            like = np.array([0.9, 0.1])
            return float(self.weight * np.log(like @ theta)), self.weight * like * theta / (like @ theta)

    monkeypatch.setenv(_progress.ENVIRONMENT, "always")
    read_checkins(tmp_path / "a.csv")
    read_checkins(tmp_path / "a.parquet")
    run_em([Block()], np.array([True, True]))
    err = capsys.readouterr().err
    assert "read a.csv:" in err and "read a.parquet:" in err and "estimate:" in err
    monkeypatch.setenv(_progress.ENVIRONMENT, "")
    read_checkins(tmp_path / "a.csv")
    run_em([Block()], np.array([True, True]))
    assert capsys.readouterr().err == ""


def test_a_bar_that_cannot_appear_only_counts(stderr):
    stream = stderr(Terminal())
    with silenced():
        bar = progress_bar(10, desc="hidden")
    assert isinstance(bar, _progress.HiddenBar) and bar.disable
    with bar:
        bar.update(3)
        bar.update()
        bar.set_postfix_str("ignored")
        bar.refresh()
    assert bar.n == 4 and bar.total == 10
    bar.reset(total=20)
    assert (bar.n, bar.total) == (0, 20)
    assert stream.getvalue() == ""
    with pytest.raises(AttributeError):
        bar.__len__  # dunder lookups are not swallowed


@pytest.mark.parametrize("stream, mode, quiet, enabled, shown", [
    (io.StringIO(), None, False, True, True),       # a log file or pipe: lines
    (Terminal(), None, False, True, False),         # a terminal: the bar, no lines
    (io.StringIO(), "always", False, True, False),  # bars forced on: no lines
    (io.StringIO(), "never", False, True, False),   # forced off
    (io.StringIO(), None, True, True, False),       # silenced (--quiet)
    (io.StringIO(), None, False, False, False),     # these lines disabled
])
def test_when_progress_lines_appear(stderr, stream, mode, quiet, enabled, shown):
    out = stderr(stream, mode=mode)
    with silenced(quiet):
        lines = _progress.progress_lines("work", every=0.0, enabled=enabled)
    lines.stage = "part 2"
    lines.note("pass 3")
    assert ("work: part 2: pass 3, 0 s\n" == out.getvalue()) is shown
    assert shown or out.getvalue() == ""


def test_progress_lines_wait_between_lines(stderr, monkeypatch):
    out = stderr(io.StringIO())
    clock = iter([0.0, 1.0, 4.9, 5.0, 7.0, 10.5])
    monkeypatch.setattr("time.monotonic", lambda: next(clock))
    lines = _progress.progress_lines("estimate")  # every EVERY = 5 s, the first after 5 s
    for k in range(1, 6):
        lines.note(f"pass {k}")
    assert out.getvalue() == "estimate: pass 3, 5 s\nestimate: pass 5, 10 s\n"


def test_estimate_writes_progress_lines_to_a_log_unless_quiet(tmp_path, tky_path, monkeypatch, capsys):
    # standard error captured (not a terminal): 'tracs estimate' writes its passes as lines
    # (here every pass: EVERY = 0); --quiet silences them
    from tracs.cli import main

    monkeypatch.delenv(_progress.ENVIRONMENT, raising=False)
    release = tmp_path / "rel.csv"
    assert main(["perturb", str(tky_path), "-m", "tracs-c", "-e", "2", "--seed", "1", "--region", "tky",
                 "-o", str(release), "-q"]) == 0
    capsys.readouterr()
    monkeypatch.setattr(_progress, "EVERY", 0.0)
    assert main(["estimate", str(release), "--grid", "4", "-o", str(tmp_path / "a.csv")]) == 0
    err = capsys.readouterr().err
    assert "estimate: held-out fit 1 of 12 (λ = 0.02): pass 3, log-likelihood change" in err
    assert "estimate: final fit: pass " in err and " per report, " in err
    assert main(["estimate", str(release), "--grid", "4", "-o", str(tmp_path / "b.csv"), "-q"]) == 0
    assert "estimate:" not in capsys.readouterr().err
