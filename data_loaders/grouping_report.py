"""How check-ins were grouped into trajectories: the report of :func:`data_loaders.to_trajectories`."""

from __future__ import annotations

from dataclasses import dataclass

from tracs._text import counted
from tracs.io.report import LoadReport

__all__ = ["GroupingReport"]


@dataclass(frozen=True)
class GroupingReport:
    """How :func:`data_loaders.to_trajectories` grouped check-ins into trajectories.

    The steps run in this order: (stable) sort by (user, time) if needed; split per
    user and, with ``split_gap``, where the time gap exceeds it; drop consecutive
    repeats of a place within a trajectory (``dedupe_consecutive``); drop
    trajectories shorter than ``min_points``; project.

    Attributes
    ----------
    points_in, users : int
        Check-ins and distinct users given.
    reordered : bool
        True when the input was not sorted by (user, time) and was stably sorted.
    split_gap : str or None
        The gap threshold (``None``: one trajectory per user).
    trajectories_split : int
        Trajectories after splitting (before the drops below).
    dedupe_consecutive : bool
    points_deduplicated : int
        Points dropped as consecutive repeats of the same place.
    min_points : int
    trajectories_too_short, points_too_short : int
        Trajectories (and their points) dropped for having fewer than ``min_points``.
    trajectories, points : int
        What the result holds.
    crs : str
        The CRS of the result.
    load : LoadReport or None
        The loader's report of the input, when it had one.
    """

    points_in: int
    users: int
    reordered: bool
    split_gap: str | None
    trajectories_split: int
    dedupe_consecutive: bool
    points_deduplicated: int
    min_points: int
    trajectories_too_short: int
    points_too_short: int
    trajectories: int
    points: int
    crs: str
    load: LoadReport | None = None

    def summary(self) -> str:
        """A few human-readable lines."""
        split = f"split where the gap exceeds {self.split_gap}" if self.split_gap else "one per user"
        out = [f"{self.points_in:,} check-ins of {self.users:,} users -> "
               f"{counted(self.trajectories_split, 'trajectory')} ({split})"]
        if self.reordered:
            out.append("  input was not in (user, time) order: sorted stably")
        if self.dedupe_consecutive:
            out.append(f"  dropped {self.points_deduplicated:,} consecutive repeats of a place")
        if self.min_points > 1:
            out.append(f"  dropped {counted(self.trajectories_too_short, 'trajectory')} "
                       f"({self.points_too_short:,} points) shorter than {self.min_points}")
        out.append(f"  result: {counted(self.trajectories, 'trajectory')}, {counted(self.points, 'point')}, CRS {self.crs}")
        return "\n".join(out)

    __str__ = summary
