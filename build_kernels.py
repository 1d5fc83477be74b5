"""Build step of tracs: compile the default path's numba kernels into the package while pip installs it.

This module is the project's build backend (``pyproject.toml``: ``build-backend =
"build_kernels"``): setuptools' own (``setuptools.build_meta``) with two additions.

1. **The compile starts early.**  The first hook pip calls once the build
   requirements are installed (``get_requires_for_build_wheel`` / ``_editable`` or
   ``prepare_metadata_for_build_*``) starts ``python -m tracs.warmup --install`` on
   the source tree in a background process (POSIX only), so the kernels compile
   while pip resolves and downloads the dependencies instead of after it.
2. **The build waits for it.**  ``setup.py`` registers :class:`build_py` in place
   of setuptools' own; after setuptools has laid out the package files it waits for
   that compile, showing its lines, and for a wheel copies the compiled kernels
   (``tracs/**/__pycache__``, all but ``*.pyc``) beside the built modules, which the
   wheel then ships.  With no background compile of this build (another front end,
   Windows, or a failed one) it compiles there and then, as before: on ``build/lib``
   for a wheel, on the source tree for ``pip install -e``.

pip's install therefore never returns before the kernels are compiled.  A
background compile belongs to one build: it is found by a key of the pip process
(the hooks' parent) and the build environment's numba, so a compile left over from
an interrupted install is never taken for this one.

The warm-up compiles the kernel families of the default path
(``tracs.warmup.INSTALLED``) in parallel processes, one per core; the others compile
on their first use.  numba writes every kernel's cache (``__pycache__/*.nbi`` and
``*.nbc``) beside its module.  numba checks each cached kernel against the module's
content, its own version, the Python version and the CPU, so a kernel cached on
another machine or for another numba is compiled afresh instead of being used.

pip shows a build step's output only with ``-v``, so the progress lines also go to
the terminal (``/dev/tty``) when there is one.  The step is skipped with
``TRACS_SKIP_WARMUP=1``; if it fails, the build goes on without cached kernels
(they are then compiled on their first call) and says so.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from setuptools import build_meta as _setuptools
from setuptools.command.build_py import build_py as _build_py

ROOT = Path(__file__).resolve().parent
SKIP = "TRACS_SKIP_WARMUP"
#: a file to which the background compile appends its CPU seconds (``python -m benchmarks setup`` adds
#: them to pip's: the detached process is not pip's child, so pip's resource usage misses it)
REPORT = "TRACS_BUILD_CPU_REPORT"
#: the command that compiles the kernels of the package folder on ``PYTHONPATH``
WARMUP = ("-m", "tracs.warmup", "--install")


# -- where the lines go ----------------------------------------------------------------------------
def _terminal():
    """The user's terminal (pip hides a build step's output), or None."""
    try:
        return open("/dev/tty", "w", encoding="utf-8")  # noqa: SIM115 - closed by the caller
    except OSError:
        return None


class _Say:
    """``with _Say() as say: say(line)``: print a line to standard output (pip's log) and to the
    terminal when there is one."""

    def __enter__(self):
        self.tty = _terminal()
        return self

    def __call__(self, line: str) -> None:
        print(line, flush=True)
        if self.tty is not None:
            self.tty.write(line + "\n")
            self.tty.flush()

    def __exit__(self, *exc) -> None:
        if self.tty is not None:
            self.tty.close()


def _skipped() -> bool:
    return os.environ.get(SKIP, "").strip() not in ("", "0")


def _warmup_env(package_root: Path) -> dict:
    env = {key: value for key, value in os.environ.items() if key != "NUMBA_CACHE_DIR"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(package_root), os.environ.get("PYTHONPATH")]))
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.setdefault("MPLBACKEND", "Agg")
    return env


# -- compiling there and then ----------------------------------------------------------------------
def compile_kernels(package_root: Path, command=WARMUP) -> bool:
    """Run the install-time warm-up with ``package_root`` (the folder holding ``tracs/``) first on the path."""
    with _Say() as say:
        if _skipped():
            say(f"tracs: {SKIP} is set; kernels will compile on their first call")
            return False
        child = subprocess.Popen([sys.executable, *command], env=_warmup_env(package_root),
                                 cwd=str(package_root), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 text=True, bufsize=1)
        for line in child.stdout:
            say(line.rstrip("\n"))
        if child.wait():
            say("tracs: WARNING: compiling the kernels failed; they will compile on their first call "
                "(run `tracs warmup` after installing)")
            return False
        return True


# -- compiling in the background while pip resolves the dependencies ---------------------------------
def job_folder(root: Path = ROOT) -> Path:
    """The folder of this build's background compile.

    Its key: the source tree, the pip process that calls the hooks (their parent) and
    the build environment's numba, so the hooks of one build find the same folder and
    no other build does.
    """
    numba = importlib.util.find_spec("numba")
    key = f"{root}\0{os.getppid()}\0{numba.origin if numba else ''}"
    return Path(tempfile.gettempdir()) / f"tracs-kernels-{hashlib.sha256(key.encode()).hexdigest()[:20]}"


def start_background(root: Path = ROOT, command=WARMUP) -> Path | None:
    """Start compiling the kernels of the source tree ``root`` in a detached process; its folder, or None.

    Does nothing (None) when the step is skipped, off POSIX, or when this build's
    compile has already started.  The process writes its output to ``log`` and, when
    done, its exit status to ``status`` in the folder.
    """
    if _skipped() or os.name != "posix":
        return None
    folder = job_folder(root)
    try:
        folder.mkdir(parents=True)
    except OSError:  # already started by an earlier hook of this build (FileExistsError), or no temp folder
        return None
    runner = [sys.executable, str(Path(__file__).resolve()), "--job", str(folder), str(root), *command]
    with open(folder / "log", "w", encoding="utf-8") as log:
        process = subprocess.Popen(runner, env=_warmup_env(root), cwd=str(root), stdin=subprocess.DEVNULL,
                                   stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    (folder / "pid").write_text(str(process.pid))
    with _Say() as say:
        say("tracs: compiling the kernels of the default path in the background while pip gets the dependencies")
    return folder


def _run_job(folder: Path, root: Path, command) -> int:
    """The detached process: run the warm-up, its output to ``folder/log``, then write ``folder/status``."""
    import resource

    def cpu(who) -> float:
        usage = resource.getrusage(who)
        return usage.ru_utime + usage.ru_stime

    start = time.perf_counter()
    with open(folder / "log", "a", encoding="utf-8") as log:
        status = subprocess.call([sys.executable, *command], cwd=str(root), stdin=subprocess.DEVNULL,
                                 stdout=log, stderr=subprocess.STDOUT)
        compile_cpu = cpu(resource.RUSAGE_CHILDREN)
        log.write(f"tracs: the background compile took {time.perf_counter() - start:.1f} s "
                  f"({compile_cpu:.1f} s CPU)\n")
    report = os.environ.get(REPORT)
    if report:  # CPU time pip cannot count: this process is not its child
        with open(report, "a", encoding="utf-8") as out:
            out.write(f"{compile_cpu + cpu(resource.RUSAGE_SELF)}\n")
    partial = folder / "status.part"
    partial.write_text(str(status))
    partial.replace(folder / "status")
    return status


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, left unreaped by a container's first process, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state not in ("Z", "X")


def wait_background(folder: Path, say, poll: float = 0.1) -> bool | None:
    """Wait for the background compile in ``folder``, passing its lines to ``say``.

    Returns whether it succeeded, or None when it vanished (its process gone with no
    status).  The folder is removed afterwards.
    """
    try:
        pid = int((folder / "pid").read_text())
    except (OSError, ValueError):
        pid = None
    result = None
    try:
        with open(folder / "log", encoding="utf-8", errors="replace") as log:
            pending = ""
            while True:
                done = (folder / "status").is_file()
                pending += log.read()
                *lines, pending = pending.split("\n")
                for line in lines:
                    say(line)
                if done:
                    if pending:
                        say(pending)
                    result = (folder / "status").read_text().strip() == "0"
                    break
                if pid is None or not _alive(pid):
                    if not (folder / "status").is_file():
                        break
                    continue
                time.sleep(poll)
    except OSError:
        result = None
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return result


def copy_compiled(source_root: Path, target_root: Path, package: str = "tracs") -> int:
    """Copy the compiled kernels (every file of ``__pycache__`` but ``*.pyc``) of ``source_root/package``
    beside the same modules under ``target_root``; the number of files copied."""
    copied = 0
    for cache in (source_root / package).rglob("__pycache__"):
        destination = target_root / cache.relative_to(source_root)
        if not destination.parent.is_dir():
            continue
        for path in cache.iterdir():
            if path.suffix == ".pyc" or not path.is_file():
                continue
            destination.mkdir(exist_ok=True)
            shutil.copy2(path, destination / path.name)
            copied += 1
    return copied


def join_kernels(target_root: Path, root: Path = ROOT) -> bool:
    """The kernels compiled into ``target_root``: wait for this build's background compile (and copy its
    kernels when ``target_root`` is not the source tree), or compile there and then."""
    folder = job_folder(root)
    if folder.is_dir() and not _skipped():
        with _Say() as say:
            say("tracs: the kernels compiling in the background since the build started:")
            ok = wait_background(folder, say)
            if ok and target_root.resolve() != root.resolve():
                copy_compiled(root, target_root)
            if ok:
                return True
            say("tracs: the background compile " + ("failed" if ok is False else "stopped")
                + "; compiling the kernels now")
    return compile_kernels(target_root)


class build_py(_build_py):
    """setuptools' ``build_py``, then the kernels compiled beside the built modules."""

    def run(self):
        super().run()
        if self.dry_run:
            return
        editable = getattr(self, "editable_mode", False)
        join_kernels(ROOT if editable else Path(self.build_lib).resolve())


cmdclass = {"build_py": build_py}


# -- the PEP 517 / 660 hooks: setuptools' own, the first ones starting the compile ----------------------
def _starting(hook):
    def started(*args, **kwargs):
        start_background()
        return hook(*args, **kwargs)

    started.__name__ = hook.__name__
    started.__doc__ = f"Start the background compile, then setuptools' ``{hook.__name__}``."
    return started


get_requires_for_build_wheel = _starting(_setuptools.get_requires_for_build_wheel)
get_requires_for_build_editable = _starting(_setuptools.get_requires_for_build_editable)
prepare_metadata_for_build_wheel = _starting(_setuptools.prepare_metadata_for_build_wheel)
prepare_metadata_for_build_editable = _starting(_setuptools.prepare_metadata_for_build_editable)
get_requires_for_build_sdist = _setuptools.get_requires_for_build_sdist
build_wheel = _setuptools.build_wheel
build_editable = _setuptools.build_editable
build_sdist = _setuptools.build_sdist


if __name__ == "__main__" and len(sys.argv) > 3 and sys.argv[1] == "--job":
    sys.exit(_run_job(Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4:]))
