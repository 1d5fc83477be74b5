"""Build step of tracs: compile the default path's numba kernels into the package while it is installed.

``setup.py`` registers :class:`build_py` below in place of setuptools' own.  After
setuptools has laid out the package files (``build/lib`` for a wheel, the source
tree itself for ``pip install -e``), it runs ``python -m tracs.warmup --install``
in a new interpreter with those files first on ``sys.path``: the kernel families of
the default path (``tracs.warmup.INSTALLED``) compile in parallel processes, one
per core, the others on their first use.  numba writes every kernel's cache
(``__pycache__/*.nbi`` and ``*.nbc``) beside its module, and the wheel ships those
files with the modules.  numba checks each cached kernel against the module's
content, its own version, the Python version and the CPU, so a kernel cached on
another machine or for another numba is compiled afresh instead of being used.

pip shows a build step's output only with ``-v``, so the progress lines also go to
the terminal (``/dev/tty``) when there is one.  The step is skipped with
``TRACS_SKIP_WARMUP=1``; if it fails, the build goes on without cached kernels
(they are then compiled on their first call) and says so.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from setuptools.command.build_py import build_py as _build_py

ROOT = Path(__file__).resolve().parent
SKIP = "TRACS_SKIP_WARMUP"


def _terminal():
    """The user's terminal (pip hides a build step's output), or None."""
    try:
        return open("/dev/tty", "w", encoding="utf-8")  # noqa: SIM115 - closed by compile_kernels
    except OSError:
        return None


def compile_kernels(package_root: Path) -> bool:
    """Run the install-time warm-up with ``package_root`` (the folder holding ``tracs/``) first on the path."""
    tty = _terminal()

    def say(line: str) -> None:
        print(line, flush=True)
        if tty is not None:
            tty.write(line + "\n")
            tty.flush()

    try:
        if os.environ.get(SKIP, "").strip() not in ("", "0"):
            say(f"tracs: {SKIP} is set; kernels will compile on their first call")
            return False
        env = {key: value for key, value in os.environ.items() if key != "NUMBA_CACHE_DIR"}
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(package_root), os.environ.get("PYTHONPATH")]))
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env.setdefault("MPLBACKEND", "Agg")
        child = subprocess.Popen([sys.executable, "-m", "tracs.warmup", "--install"], env=env,
                                 cwd=str(package_root), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 text=True, bufsize=1)
        for line in child.stdout:
            say(line.rstrip("\n"))
        if child.wait():
            say("tracs: WARNING: compiling the kernels failed; they will compile on their first call "
                "(run `tracs warmup` after installing)")
            return False
        return True
    finally:
        if tty is not None:
            tty.close()


class build_py(_build_py):
    """setuptools' ``build_py``, then the kernels compiled beside the built modules."""

    def run(self):
        super().run()
        if self.dry_run:
            return
        editable = getattr(self, "editable_mode", False)
        compile_kernels(ROOT if editable else Path(self.build_lib).resolve())


cmdclass = {"build_py": build_py}
