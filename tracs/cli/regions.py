"""``tracs regions``: the region presets, their boxes, projections and sizes."""

from __future__ import annotations

import argparse

DESCRIPTION = """\
List the named regions --region accepts: each is a fixed longitude/latitude box
written down in advance (tracs.public.CITY_BOXES), never computed from a file.
The projection is the UTM zone of the box's centre; the size is that of the
rectangle in metres inscribed in the projected box, the region every point is
perturbed over (so every released point lies in the box); the last column says
where the box comes from.  Any other area is given as
--region MINLON,MINLAT,MAXLON,MAXLAT or as a polygon file.
"""


def add_parser(subparsers) -> None:
    """Add the ``regions`` subcommand to ``subparsers``."""
    subparsers.add_parser("regions", help="list the region presets (--region NAME)", description=DESCRIPTION,
                          formatter_class=argparse.RawDescriptionHelpFormatter)


def rows() -> list[tuple[str, str, str, str, str]]:
    """``(name, box, projection, size, source)`` of every preset, in the order of the table."""
    from ..public import CITY_BOXES, PRESET_SOURCES

    out = []
    for name, box in CITY_BOXES.items():
        crs = box.metric_crs()
        region = box.to_region(crs)
        size = f"{region.width / 1000:.0f} × {region.height / 1000:.0f} km"
        out.append((name, str(box), f"EPSG:{crs.to_epsg()}", size, PRESET_SOURCES.get(name, box.source)))
    return out


def run(args) -> int:
    table = [("name", "MINLON,MINLAT,MAXLON,MAXLAT", "projection", "size", "source of the box")] + rows()
    widths = [max(len(row[k]) for row in table) for k in range(4)]
    for row in table:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[4])
    return 0
