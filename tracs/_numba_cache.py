"""Where numba keeps tracs' compiled kernels, so they are compiled once per install.

numba's ``cache=True`` writes compiled kernels into ``__pycache__`` beside each
module.  When the package folder cannot be written (a read-only or system-wide
site-packages, a container image) :func:`configure` points numba at a per-user
folder instead — ``$XDG_CACHE_HOME/tracs/numba-<version>`` (``~/.cache/...``;
``%LOCALAPPDATA%`` on Windows) — before any kernel is compiled, unless the user
chose one with ``NUMBA_CACHE_DIR``.  The version in the folder name keeps the
kernels of two installed versions apart.  Disabling bytecode files
(``PYTHONDONTWRITEBYTECODE=1``) does not disable numba's cache.

It runs when ``tracs`` is imported (it imports nothing heavy: numba reads the
variable when it is first imported; if numba is already loaded its setting is
updated too).
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

ENV = "NUMBA_CACHE_DIR"


def user_cache_dir(version: str) -> Path:
    """The per-user folder for compiled kernels of tracs ``version``."""
    if sys.platform.startswith("win"):
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "tracs" / f"numba-{version}"


def _writable(folder: Path) -> bool:
    cache = folder / "__pycache__"
    target = cache if cache.is_dir() else folder
    return os.access(target, os.W_OK | os.X_OK)


def configure(package_dir, version: str) -> str | None:
    """Set ``NUMBA_CACHE_DIR`` to the user folder when ``package_dir`` is not writable.

    Returns the folder chosen, or None when numba's default (beside the modules)
    or the user's own setting is kept.
    """
    if os.environ.get(ENV):
        return None
    if _writable(Path(package_dir)):
        return None
    folder = str(user_cache_dir(version))
    os.environ[ENV] = folder
    config = sys.modules.get("numba.core.config")
    if config is not None:
        config.CACHE_DIR = folder
    return folder


def drop_stale_cache(cache_dir: Path, dependencies, prefix: str) -> bool:
    """Delete cached numba kernels ``prefix.*.nbi|nbc`` in ``cache_dir`` if a dependency changed.

    A digest of the dependencies' (paths) contents is recorded in
    ``cache_dir/prefix.deps``; when it differs from the recorded one the cached
    kernels are deleted (numba then compiles afresh) and the record is renewed.
    Contents, not modification times: installing copies the files with new times,
    and the kernels compiled at install time must survive that.
    Returns whether anything was deleted.  File-system errors are ignored: at
    worst numba keeps its own caching behaviour.
    """
    try:
        if isinstance(dependencies, (str, Path)):
            dependencies = [dependencies]
        digest = hashlib.sha256()
        for dependency in dependencies:
            digest.update(Path(dependency).read_bytes())
        stamp = digest.hexdigest()
        record = cache_dir / f"{prefix}.deps"
        if record.is_file() and record.read_text() == stamp:
            return False
        stale = [*cache_dir.glob(f"{prefix}.*.nbi"), *cache_dir.glob(f"{prefix}.*.nbc")]
        for path in stale:
            path.unlink(missing_ok=True)
        cache_dir.mkdir(parents=True, exist_ok=True)
        record.write_text(stamp)
        return bool(stale)
    except OSError:
        return False
