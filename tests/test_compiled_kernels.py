"""Kernels compiled ahead of the first call: the warm-up reaches every cached kernel, the
install-time kernels are found in a per-user folder when the package is read-only."""

from __future__ import annotations

import importlib
import os
import pkgutil
from pathlib import Path

import pytest

import tracs
import tracs._numba_cache as cache

#: cached kernels the warm-up does not reach: they run only on rare data paths
#: (rejection sampling fallbacks of the discrete baselines) or are the tests' oracles, and compile on demand
RARE_PATH_KERNELS = {
    "tracs.baselines._exponential_kernels._mask_kernel",
    "tracs.baselines._segment._segment_scan",
    "tracs.baselines._segment._inside",  # the helper of _segment_scan alone
    "tracs.perturbers.keyed_draws._scalar_words",
    "tracs.perturbers.keyed_draws._proposals",
    # the exact scalar path of planar Laplace alone: the oracle the tests compare planar_kernel with
    "tracs.perturbers._planar_kernel.planar_reference",
    # the per-cell codes of TraCS-D / Strawman reports: the oracle the tests compare the runs with
    "tracs.estimate._coded._arc_row",
    "tracs.estimate._coded.code_reports",
    "tracs.estimate._coded.coded_em_pass",
}
#: the ChaCha20 block's kernels: only the secure generator's kernels call them (`tracs warmup --secure`;
#: test_philox_kernels_compile_no_chacha20_code checks both sides)
SECURE_KERNELS = {"tracs.random.kernels._chacha20_u64", "tracs.random.kernels.chacha20_block"}
#: modules that only draw or export and hold no kernels (skipped: heavy optional imports)
_SKIP = ("tracs.maps", "tracs.plots", "tracs.dask", "tracs.cli", "tracs.adapters", "tracs.gdf", "tracs.io",
         "tracs.evaluation", "tracs.query_metrics", "tracs.warmup")


def cached_dispatchers() -> dict:
    """``module.function`` -> numba dispatcher, for every ``cache=True`` kernel compiled on its own."""
    from numba.core.registry import CPUDispatcher

    found = {}
    for info in pkgutil.walk_packages(tracs.__path__, "tracs."):
        if info.name.startswith(_SKIP):
            continue
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if (isinstance(value, CPUDispatcher) and value.py_func.__module__ == module.__name__
                    and value.targetoptions.get("inline", "never") == "never"
                    and type(value._cache).__name__ != "NullCache"):
                found[f"{module.__name__}.{value.py_func.__qualname__}"] = value
    return found


def _has_kernel(dispatcher) -> bool:
    """Compiled in this process, or saved in numba's on-disk index (loaded callers skip their callees)."""
    return bool(dispatcher.overloads) or bool(dispatcher._cache._cache_file._load_index())


@pytest.mark.slow
def test_warmup_all_reaches_every_cached_kernel(capsys):
    from tracs.cli import main
    from tracs.warmup import FAMILIES

    assert main(["warmup", "--all"]) == 0  # compiles what is not cached yet (minutes), else loads (seconds)
    printed = capsys.readouterr().out
    assert "kernels ready in" in printed
    assert sorted(line.split()[1] for line in printed.splitlines()[:-1]) == sorted(FAMILIES)
    dispatchers = cached_dispatchers()
    assert len(dispatchers) >= 30 and RARE_PATH_KERNELS | SECURE_KERNELS <= set(dispatchers)
    missing = sorted(name for name, d in dispatchers.items()
                     if name not in RARE_PATH_KERNELS | SECURE_KERNELS and not _has_kernel(d))
    assert missing == []


def test_every_kernel_belongs_to_a_family():
    """The compile line can name the family of every cached kernel."""
    unnamed = sorted(name for name in cached_dispatchers() if cache.family_of(name) is None)
    assert unnamed == []
    from tracs.warmup import FAMILIES, INSTALLED

    assert list(cache.KERNEL_FAMILIES) == list(FAMILIES) and set(INSTALLED) < set(FAMILIES)
    from tracs.methods import view
    from tracs.warmup import methods_of

    # every registered warm-up hook is run by exactly one family: the one its entry names
    warmed = [method.name for family in FAMILIES for method in methods_of(family)]
    assert sorted(warmed) == sorted(name for name, method in view().items() if method.warm is not None)
    assert len(warmed) == len(set(warmed)) and methods_of("tracs-d") == [view()[name] for name in
                                                                         ("tracs-d", "strawman", "tracs-d-paper")]


def test_helpers_compile_once_for_every_constant():
    """A helper called with different constants gets one compiled copy (plain types), not one per value."""
    import numpy as np
    from numba import njit, types

    from tracs.mechanisms.lattice_kernels import below, uniform_index
    from tracs.random import resolve_streams

    @njit
    def calls(kind, key, stream):
        # the constants of the perturbers' kernels (tie extension words 4 and 40, integer words 64 and 128)
        return (below(np.uint64(1) << np.uint64(40), 0.5, kind, key, stream, 3, 4, False),
                below(np.uint64(1) << np.uint64(40), 0.5, kind, key, stream, 3, 40, True),
                uniform_index(7, kind, key, stream, 3, 64), uniform_index(7, kind, key, stream, 3, 128))

    ks = resolve_streams(0, None, 1)
    calls(ks.kind, ks.key, np.uint64(ks.streams[0]))
    for helper in (below, uniform_index):
        literal = [sig for sig in helper.signatures if any(isinstance(t, types.Literal) for t in sig)]
        assert literal == [], f"{helper.py_func.__name__} was compiled for constant values: {literal}"
        assert len(helper.signatures) == len({tuple(types.unliteral(t) for t in sig)
                                              for sig in helper.signatures})


def test_random_word_helpers_compile_once_for_int64_and_uint64_positions():
    """A point's stream and index reach the random-word helpers as uint64 whatever the caller holds
    (one compiled copy), with the same words."""
    import numpy as np
    from numba import njit

    from tracs.random import resolve_streams
    from tracs.random.kernels import draw_u64, draw_u64_pair

    @njit
    def words(kind, key, stream, index):
        return (draw_u64(kind, key, stream, index, 3), draw_u64(kind, key, np.int64(stream), np.uint64(index), 3),
                draw_u64_pair(kind, key, stream, np.uint64(index), 1), draw_u64_pair(kind, key, np.int64(stream), index, 1))

    ks = resolve_streams(0, None, 1)
    before = {helper: set(helper.signatures) for helper in (draw_u64, draw_u64_pair)}
    first, second, pair_a, pair_b = words(ks.kind, ks.key, np.uint64(ks.streams[0]), 5)
    assert first == second and pair_a == pair_b and first in pair_b
    for helper, known in before.items():
        # a call from Python compiles for the Python values' types; calls from compiled code share one copy
        reached = [sig for sig in set(helper.signatures) - known]
        assert all(str(sig[2]) == str(sig[3]) == "uint64" for sig in reached), reached
        assert any(str(sig[1].dtype) == str(sig[2]) == str(sig[3]) == "uint64" for sig in helper.signatures)


_PHILOX_ONLY = """
import json, numpy as np
from numba.core import event
from tracs.random import Secure, keyed_uniforms, resolve_streams
with event.install_recorder("numba:compile") as recorder:
    keyed_uniforms(resolve_streams(3, None, 2), np.array([0, 2, 5]), 3)
philox = sorted({ev.data["dispatcher"].py_func.__qualname__ for _, ev in recorder.buffer if ev.is_start})
with event.install_recorder("numba:compile") as recorder:
    secure = keyed_uniforms(resolve_streams(Secure(3), None, 2), np.array([0, 2, 5]), 3)
chacha = sorted({ev.data["dispatcher"].py_func.__qualname__ for _, ev in recorder.buffer if ev.is_start})
print(json.dumps({"philox": philox, "chacha": chacha}))
"""


def test_philox_kernels_compile_no_chacha20_code(tmp_path):
    """The generator is chosen when a kernel is typed: a Philox kernel types and compiles no ChaCha20 function."""
    import json
    import subprocess
    import sys

    root = Path(tracs.__path__[0]).parent
    env = {**os.environ, "PYTHONPATH": str(root), cache.ENV: str(tmp_path / "empty-cache"), cache.NOTICE_ENV: "0"}
    done = subprocess.run([sys.executable, "-c", _PHILOX_ONLY], capture_output=True, text=True, env=env,
                          timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    compiled = json.loads(done.stdout.strip().splitlines()[-1])
    assert "fill_uniforms" in compiled["philox"] and "philox4x32" in compiled["philox"]
    chacha20 = {"chacha20_block", "_chacha20_u64", "_quarter", "_rotl32"}  # the stub standing in is not among them
    assert sorted(chacha20 & set(compiled["philox"])) == []
    assert chacha20 <= set(compiled["chacha"])  # the secure generator's kernels do compile them


#: the default path after install: what `tracs demo` and the README's first examples call
_DEFAULT_PATH = """
import sys, numpy as np
from numba.core import event
compiled = []
class Listener(event.Listener):
    def on_start(self, ev):
        compiled.append(ev.data["dispatcher"].py_func.__qualname__)
    def on_end(self, ev):
        pass
event.register("numba:compile", Listener())
import tracs
from tracs.warmup import FAMILIES, INSTALLED
region = tracs.Rectangle(0, 0, 5000, 3000)
xy = np.array([[1200.0, 800], [1350, 950], [1600, 1400], [2100, 1500]])
ro = xy.copy(); ro.flags.writeable = False  # pandas' copy-on-write columns are read-only
for cls in (tracs.TraCSD, tracs.TraCSC, tracs.PlanarLaplace, tracs.Strawman):
    for points in (xy, ro):
        cls(region, epsilon=2.0).perturb_many(points, [0, 2, 4], rng=1, keys=["ann", "bob"])
        cls(region, epsilon=2.0).perturb(points, rng=3)
for mech in (tracs.mechanisms.OptimalClassical(epsilon=1.0), tracs.mechanisms.OptimalUnbiased(epsilon=1.0)):
    mech.sample(np.array([0.2, 0.7]), rng=1)
tracs.mechanisms.OptimalCircular(epsilon=1.0).sample(np.array([0.2, 3.0]), rng=1)
for name in INSTALLED:
    FAMILIES[name](0)
print("COMPILED", sorted(set(compiled)))
"""


@pytest.mark.slow
def test_default_path_after_install_compiles_nothing(tmp_path):
    """After the install step (or `tracs warmup`), the default path loads every kernel: no new cache file.

    numba writes a cache file only after compiling, and reports every compilation
    (a cache miss) as an event: no event in the process means no file written by it
    (comparing the folder's files instead would see other test processes' writes).
    Runs in a new interpreter (a test process may hold compiled kernels already);
    needs the install-time kernels: `pip install -e .` or `tracs warmup` in this tree.
    """
    import subprocess
    import sys

    root = Path(tracs.__path__[0]).parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))}
    env.pop(cache.ENV, None)
    done = subprocess.run([sys.executable, "-c", _DEFAULT_PATH], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=900, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "COMPILED []", (
        "the default path compiled kernels after install (run `tracs warmup` if this tree was never installed): "
        + done.stdout[-2000:])
    assert "compiling the" not in done.stderr


@pytest.mark.slow
def test_first_use_compile_prints_one_line_per_family(tmp_path):
    """A kernel compiled on its first use says so once on stderr, naming its family and seconds."""
    import subprocess
    import sys

    code = ("import numpy as np\n"
            "from tracs.mechanisms import KRR\n"
            "KRR(epsilon=1.0, k=5).sample(np.array([0, 3]), rng=1)\n"
            "KRR(epsilon=2.0, k=7).sample(np.array([1, 2]), rng=2)\n")
    root = Path(tracs.__path__[0]).parent
    env = {**os.environ, "PYTHONPATH": str(root), cache.ENV: str(tmp_path / "empty-cache")}
    env.pop(cache.NOTICE_ENV, None)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600,
                          check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    label, seconds, _ = cache.KERNEL_FAMILIES["classical"]
    lines = [line for line in done.stderr.splitlines() if line.startswith("tracs: compiling")]
    assert lines == [f"tracs: compiling the {label} kernels once, about {seconds:.0f} s (later runs load them; "
                     "`tracs warmup --all` compiles every kernel ahead)"]
    env[cache.NOTICE_ENV] = "0"  # silenced; and a second process loads the kernels without a word
    again = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600,
                           check=False)
    assert again.returncode == 0 and "compiling" not in again.stderr


def test_numba_subfolder_follows_numba(tmp_path):
    from numba.core.caching import _CacheLocator

    module = tmp_path / "pkg" / "mod.py"
    assert cache.numba_subfolder(module.parent) == _CacheLocator.get_suitable_cache_subpath(str(module))


def _package(tmp_path: Path) -> Path:
    package = tmp_path / "site" / "tracs"
    for sub in ("", "perturbers"):
        folder = package / sub / "__pycache__"
        folder.mkdir(parents=True)
        (folder / "_kernels.f-10.py311.nbi").write_bytes(b"index " + sub.encode())
        (folder / "_kernels.f-10.py311.1.nbc").write_bytes(b"data")
        (folder / "_kernels.cpython-311.pyc").write_bytes(b"bytecode")
    return package


def test_install_time_kernels_are_seeded_once_into_the_user_folder(tmp_path):
    package = _package(tmp_path)
    user = tmp_path / "user"
    assert cache.seed_user_cache(package, user) == 4
    target = user / cache.numba_subfolder(package / "perturbers")
    assert sorted(p.name for p in target.iterdir()) == ["_kernels.f-10.py311.1.nbc", "_kernels.f-10.py311.nbi"]
    assert (target / "_kernels.f-10.py311.nbi").read_bytes() == b"index perturbers"
    # kernels numba saved in the user folder later are never overwritten, and the copy runs once
    (target / "_kernels.f-10.py311.nbi").write_bytes(b"newer")
    os.remove(user / cache.numba_subfolder(package) / "_kernels.f-10.py311.nbi")
    assert cache.seed_user_cache(package, user) == 0
    assert (target / "_kernels.f-10.py311.nbi").read_bytes() == b"newer"


def test_read_only_package_points_numba_at_a_seeded_user_folder(monkeypatch, tmp_path):
    import numba.core.config

    package = _package(tmp_path)
    monkeypatch.setattr(numba.core.config, "CACHE_DIR", numba.core.config.CACHE_DIR)  # restored after
    monkeypatch.delenv(cache.ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr(cache, "_writable", lambda folder: False)
    chosen = Path(cache.configure(package, "9.9"))
    assert (chosen / cache.numba_subfolder(package / "perturbers") / "_kernels.f-10.py311.nbi").is_file()


def test_unwritable_user_folder_is_harmless(tmp_path):
    package = _package(tmp_path)
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert cache.seed_user_cache(package, blocker / "below-a-file") == 0
    assert cache.seed_user_cache(tmp_path / "absent", tmp_path / "user") == 0
