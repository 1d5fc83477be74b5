"""Progress bars for long steps: one rule for every reader, writer and command.

A bar (tqdm, on standard error) is shown only when all of these hold:

* standard error is a terminal, so files and pipes never receive one;
* the step is still running after :data:`DELAY` seconds (short steps stay silent);
* progress is not silenced: ``tracs --quiet`` / ``--no-progress``, or
  :func:`silenced` around library calls.

The environment variable ``TRACS_PROGRESS`` overrides the first two rules:
``always`` shows every bar at once, even when standard error is not a terminal
(for logs and tests); ``never`` shows none.  Silencing always wins.

Steps that can run for minutes (density estimation) also write *progress lines*
where no bar can appear: when standard error is not a terminal (a log file, a pipe,
a batch job), one line at most every :data:`EVERY` seconds, the first after
:data:`EVERY` seconds (:func:`progress_lines`).  The same rules silence them:
``--quiet``, :func:`silenced`, ``TRACS_PROGRESS=never``; with ``always`` the bar
shows instead.

>>> from tracs._progress import progress_bar
>>> with progress_bar(3, desc="demo") as bar:  # nothing printed: not a terminal here
...     for _ in range(3):
...         bar.update(1)
"""

from __future__ import annotations

import os
import sys
import time
from contextlib import contextmanager
from contextvars import ContextVar
from tqdm import tqdm

__all__ = ["DELAY", "ENVIRONMENT", "EVERY", "HiddenBar", "ProgressLines", "progress_bar", "progress_lines",
           "silenced", "shown"]

#: seconds a step runs before its bar appears
DELAY = 2.0
#: seconds between two progress lines (:func:`progress_lines`)
EVERY = 5.0
#: the environment variable that forces bars on (``always``) or off (``never``)
ENVIRONMENT = "TRACS_PROGRESS"

_silenced: ContextVar[bool] = ContextVar("tracs_progress_silenced", default=False)


def _mode() -> str:
    value = os.environ.get(ENVIRONMENT, "").strip().lower()
    return {"always": "always", "1": "always", "on": "always", "never": "never", "0": "never",
            "off": "never"}.get(value, "auto")


def shown() -> bool:
    """Whether a bar started now may appear (see the module docstring)."""
    if _silenced.get():
        return False
    mode = _mode()
    if mode != "auto":
        return mode == "always"
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # a replaced or closed stream
        return False


@contextmanager
def silenced(quiet: bool = True):
    """Within this block no bar appears (when ``quiet`` is true)."""
    token = _silenced.set(bool(quiet) or _silenced.get())
    try:
        yield
    finally:
        _silenced.reset(token)


def progress_bar(total=None, *, desc: str, unit: str = "it", unit_scale: bool = False,
                 enabled: bool = True, leave: bool = False):
    """A tqdm bar on standard error that follows the rules of the module docstring.

    Parameters
    ----------
    total : int or float, optional
        Units of work (``None``: a counter without an end).
    desc, unit, unit_scale, leave
        As for :class:`tqdm.tqdm` (``unit="B"`` with ``unit_scale`` shows bytes).
    enabled : bool, default True
        ``False`` silences this bar only (e.g. a ``progress=False`` argument).

    Returns
    -------
    tqdm.tqdm or HiddenBar
        Use as a context manager; when no bar may appear, a :class:`HiddenBar` that
        only counts.
    """
    show = enabled and shown()
    if not show:  # nothing will be drawn: no need to import tqdm (a few hundredths of a second)
        return HiddenBar(total)
    delay = 0.0 if _mode() == "always" else DELAY
    return tqdm(total=total, desc=desc, unit=unit, unit_scale=unit_scale, delay=delay, disable=not show,
                file=sys.stderr, leave=leave, dynamic_ncols=True)


def progress_lines(desc: str, *, every: float | None = None, enabled: bool = True) -> "ProgressLines":
    """Progress lines on standard error for a long step, where no bar can appear.

    Lines are written only when standard error is not a terminal and progress is
    neither silenced nor ``TRACS_PROGRESS=never`` (with ``always`` the bar shows
    instead); see the module docstring.  ``every`` defaults to :data:`EVERY` (read at
    the call).
    """
    active = enabled and not _silenced.get() and _mode() == "auto"
    if active:
        try:
            active = not sys.stderr.isatty()
        except (AttributeError, ValueError):  # a replaced or closed stream: no terminal
            active = True
    return ProgressLines(desc, EVERY if every is None else float(every), active)


class ProgressLines:
    """``note(text)`` writes ``"<desc>: <stage>: <text>, <s> s"`` on standard error when
    ``every`` seconds have passed since the start or the last line (and ``active``).

    ``stage`` (a short text, or empty) names the part of the step that is running.
    """

    def __init__(self, desc: str, every: float, active: bool):
        self.desc, self.every, self.active, self.stage = desc, every, active, ""
        self._clock = time.monotonic
        self.start = self.last = self._clock()

    def note(self, text: str) -> None:
        if not self.active:
            return
        now = self._clock()
        if now - self.last < self.every:
            return
        self.last = now
        stage = f"{self.stage}: " if self.stage else ""
        print(f"{self.desc}: {stage}{text}, {now - self.start:.0f} s", file=sys.stderr, flush=True)


class HiddenBar:
    """A bar that is never drawn: it counts ``n`` like a disabled ``tqdm`` and every other
    method of one does nothing."""

    disable = True

    def __init__(self, total=None):
        self.total, self.n = total, 0

    def update(self, n=1):
        self.n += n

    def reset(self, total=None):
        self.n, self.total = 0, total if total is not None else self.total

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __getattr__(self, name):  # close, refresh, set_postfix_str, ...: nothing to draw
        if name.startswith("__"):
            raise AttributeError(name)
        return lambda *args, **kwargs: None
