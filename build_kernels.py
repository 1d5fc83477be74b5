"""Build step of tracs: compile the numba kernels into the package while it is installed.

``setup.py`` registers :class:`build_py` below in place of setuptools' own.  After
setuptools has laid out the package files (``build/lib`` for a wheel, the source
tree itself for ``pip install -e``), it runs ``tracs._warmup.compile_all()`` in a
new interpreter with those files first on ``sys.path``.  numba then writes every
kernel's cache (``__pycache__/*.nbi`` and ``*.nbc``) beside its module, and the
wheel ships those files with the modules.  numba checks each cached kernel
against the module's content, its own version, the Python version and the CPU,
so a kernel cached on another machine or for another numba is compiled afresh
instead of being used.

The step is skipped with ``TRACS_SKIP_WARMUP=1``; if it fails, the build goes on
without cached kernels (they are then compiled on their first call) and says so.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from setuptools.command.build_py import build_py as _build_py

ROOT = Path(__file__).resolve().parent
SKIP = "TRACS_SKIP_WARMUP"
_COMPILE = "from tracs._warmup import compile_all; compile_all(verbose=True)"


def compile_kernels(package_root: Path) -> bool:
    """Run the warm-up with ``package_root`` (the folder holding ``tracs/``) first on the path."""
    if os.environ.get(SKIP, "").strip() not in ("", "0"):
        print(f"tracs: {SKIP} is set; kernels will compile on their first call")
        return False
    env = {key: value for key, value in os.environ.items() if key != "NUMBA_CACHE_DIR"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(package_root), os.environ.get("PYTHONPATH")]))
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.setdefault("MPLBACKEND", "Agg")
    print(f"tracs: compiling the numba kernels into {package_root / 'tracs'} (a few minutes)", flush=True)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", _COMPILE], env=env, cwd=str(package_root), check=False)
    if done.returncode:
        print("tracs: WARNING: compiling the kernels failed; they will compile on their first call "
              "(run `python -m tracs.warmup` after installing)", flush=True)
        return False
    print(f"tracs: kernels compiled in {time.perf_counter() - start:.0f} s", flush=True)
    return True


class build_py(_build_py):
    """setuptools' ``build_py``, then the kernels compiled beside the built modules."""

    def run(self):
        super().run()
        if self.dry_run:
            return
        editable = getattr(self, "editable_mode", False)
        compile_kernels(ROOT if editable else Path(self.build_lib).resolve())


cmdclass = {"build_py": build_py}
