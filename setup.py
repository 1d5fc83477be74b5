"""setuptools entry: the project is described in pyproject.toml; this file only adds the
build step that compiles the numba kernels (build_kernels.py)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from build_kernels import cmdclass  # noqa: E402
from setuptools import setup  # noqa: E402

setup(cmdclass=cmdclass)
