"""The compiled kernels' on-disk cache is dropped when the inlined mechanism kernels change."""

from __future__ import annotations

import os

from tracs.perturbers._kernels import drop_stale_cache


def test_stale_kernels_are_dropped_when_the_dependency_changes(tmp_path):
    cache = tmp_path / "__pycache__"
    cache.mkdir()
    dependency = tmp_path / "mechanism_kernels.py"
    dependency.write_text("a = 1\n")
    kernels = [cache / "_kernels.f-10.py311.nbi", cache / "_kernels.f-10.py311.1.nbc"]
    other = cache / "other.g-3.py311.nbi"
    for path in [*kernels, other]:
        path.write_bytes(b"x")

    # no record yet: whatever is cached may be stale, so it goes
    assert drop_stale_cache(cache, dependency, "_kernels") is True
    assert not any(p.exists() for p in kernels) and other.exists()

    # unchanged dependency: freshly cached kernels stay
    for path in kernels:
        path.write_bytes(b"x")
    assert drop_stale_cache(cache, dependency, "_kernels") is False
    assert all(p.exists() for p in kernels)

    # edited dependency (new size and time): the kernels go again
    dependency.write_text("a = 22\n")
    stat = dependency.stat()
    os.utime(dependency, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    assert drop_stale_cache(cache, dependency, "_kernels") is True
    assert not any(p.exists() for p in kernels)


def test_missing_cache_folder_is_harmless(tmp_path):
    dependency = tmp_path / "dep.py"
    dependency.write_text("")
    assert drop_stale_cache(tmp_path / "absent", dependency, "_kernels") is False
    assert drop_stale_cache(tmp_path, tmp_path / "no-such-file.py", "_kernels") is False
