"""The build backend's kernel compile: started in the background early, joined by the build, copied into a wheel."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture()
def backend(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location("build_kernels_under_test", ROOT / "build_kernels.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    monkeypatch.delenv(module.SKIP, raising=False)
    monkeypatch.setattr(module, "_terminal", lambda: None)
    return module


def _wait(backend, folder):
    lines = []
    return backend.wait_background(folder, lines.append, poll=0.02), lines


@pytest.mark.skipif(os.name != "posix", reason="the background compile is POSIX-only")
def test_background_compile_is_joined_with_its_lines(backend, tmp_path):
    source = tmp_path / "src"
    source.mkdir()
    folder = backend.start_background(source, ("-c", "print('first'); print('second', flush=True)"))
    assert folder is not None and folder == backend.job_folder(source)
    # the hooks of one build start it once
    assert backend.start_background(source, ("-c", "print('again')")) is None
    ok, lines = _wait(backend, folder)
    assert ok is True and lines[:2] == ["first", "second"] and len(lines) == 3
    assert re.fullmatch(r"tracs: the background compile took \d+\.\d s \(\d+\.\d s CPU\)", lines[2])
    assert not folder.exists()


@pytest.mark.skipif(os.name != "posix", reason="the background compile is POSIX-only")
def test_failed_background_compile_reports_failure(backend, tmp_path):
    folder = backend.start_background(tmp_path, ("-c", "import sys; print('broken'); sys.exit(3)"))
    ok, lines = _wait(backend, folder)
    assert ok is False and lines[0] == "broken" and lines[1].startswith("tracs: the background compile took")


def test_vanished_background_compile_is_not_taken_for_done(backend, tmp_path):
    folder = backend.job_folder(tmp_path)
    folder.mkdir(parents=True)
    (folder / "log").write_text("started\n")
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (folder / "pid").write_text(str(dead.pid))
    ok, lines = _wait(backend, folder)
    assert ok is None and lines == ["started"]


def test_each_source_tree_has_its_own_folder(backend, tmp_path):
    assert backend.job_folder(tmp_path / "a") != backend.job_folder(tmp_path / "b")
    assert backend.job_folder(tmp_path / "a") == backend.job_folder(tmp_path / "a")


def test_skip_variable_starts_nothing(backend, tmp_path, monkeypatch):
    monkeypatch.setenv(backend.SKIP, "1")
    assert backend.start_background(tmp_path, ("-c", "pass")) is None
    assert not backend.job_folder(tmp_path).exists()


def _tree(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_compiled_kernels_are_copied_beside_the_built_modules(backend, tmp_path):
    source, built = tmp_path / "src", tmp_path / "build"
    _tree(source, {"tracs/a.py": "", "tracs/__pycache__/a.f-3.py311.nbi": "i", "tracs/__pycache__/a.f-3.py311.1.nbc": "c",
                   "tracs/__pycache__/a.deps": "d", "tracs/__pycache__/a.cpython-311.pyc": "p",
                   "tracs/sub/b.py": "", "tracs/sub/__pycache__/b.g-9.py311.nbi": "i",
                   "tracs/gone/__pycache__/c.h-1.py311.nbi": "i"})
    _tree(built, {"tracs/a.py": "", "tracs/sub/b.py": ""})
    assert backend.copy_compiled(source, built) == 4
    assert sorted(p.name for p in (built / "tracs/__pycache__").iterdir()) == [
        "a.deps", "a.f-3.py311.1.nbc", "a.f-3.py311.nbi"]
    assert [p.name for p in (built / "tracs/sub/__pycache__").iterdir()] == ["b.g-9.py311.nbi"]
    assert not (built / "tracs/gone").exists()


@pytest.mark.parametrize("outcome, compiles_again", [("0", False), ("1", True), (None, True)])
def test_the_build_waits_for_its_compile_or_compiles_itself(backend, tmp_path, monkeypatch, outcome, compiles_again):
    source, built = tmp_path / "src", tmp_path / "build"
    _tree(source, {"tracs/a.py": "", "tracs/__pycache__/a.f-3.py311.nbi": "i"})
    _tree(built, {"tracs/a.py": ""})
    folder = backend.job_folder(source)
    folder.mkdir(parents=True)
    (folder / "log").write_text("tracs: compiled\n")
    if outcome is not None:
        (folder / "status").write_text(outcome)
    calls = []
    monkeypatch.setattr(backend, "compile_kernels", lambda target: calls.append(target) or True)
    assert backend.join_kernels(built, source) is True
    assert calls == ([built] if compiles_again else [])
    assert (built / "tracs/__pycache__/a.f-3.py311.nbi").exists() is (outcome == "0")
    assert not folder.exists()


def test_without_a_background_compile_the_build_compiles(backend, tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(backend, "compile_kernels", lambda target: calls.append(target) or True)
    assert backend.join_kernels(tmp_path / "build", tmp_path / "src") is True
    assert calls == [tmp_path / "build"]


def test_hooks_are_setuptools_own(backend):
    from setuptools import build_meta

    for name in ("build_wheel", "build_editable", "build_sdist", "get_requires_for_build_sdist"):
        assert getattr(backend, name) is getattr(build_meta, name)
    for name in ("get_requires_for_build_wheel", "get_requires_for_build_editable",
                 "prepare_metadata_for_build_wheel", "prepare_metadata_for_build_editable"):
        assert getattr(backend, name).__name__ == name


@pytest.mark.skipif(os.name != "posix", reason="the background compile is POSIX-only")
def test_background_compile_reports_its_cpu_when_asked(backend, tmp_path, monkeypatch):
    report = tmp_path / "cpu"
    monkeypatch.setenv(backend.REPORT, str(report))
    folder = backend.start_background(tmp_path, ("-c", "sum(range(3_000_000))"))
    ok, _ = _wait(backend, folder)
    assert ok is True
    [cpu] = report.read_text().split()
    assert 0.0 < float(cpu) < 60.0
