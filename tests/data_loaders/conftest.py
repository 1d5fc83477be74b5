"""Fixtures of the loader tests: files written on the fly, the report invariant."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest


@pytest.fixture
def write(tmp_path):
    """``write(name, content)`` -> path; ``content`` is str (UTF-8) or bytes."""

    def _write(name: str, content) -> Path:
        path = tmp_path / name
        path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
        return path

    return _write


def check_report(frame):
    """The report's invariant: every row read is kept or listed as dropped."""
    report = frame.attrs["report"]
    assert report.rows_read == report.rows_kept + report.n_dropped
    assert report.rows_kept == len(frame)
    for lines in report.dropped.values():
        assert np.all(np.diff(lines) > 0)
    return report


@pytest.fixture
def report_of():
    """``report_of(frame)``: the frame's LoadReport, after checking its invariant."""
    return check_report
