"""Generated blocks of a Markdown page: markers, rewriting, and reading the tables back.

A block is the text between ``<!-- BEGIN GENERATED: name -->`` and
``<!-- END GENERATED: name -->`` (each on its own line).  Everything outside the
blocks is left as written; everything inside is replaced on regeneration.
"""

from __future__ import annotations

import re

BEGIN = "<!-- BEGIN GENERATED: {name} -->"
END = "<!-- END GENERATED: {name} -->"
_BLOCK = re.compile(r"^<!-- BEGIN GENERATED: (?P<name>[\w.-]+) -->\n(?P<body>.*?)^<!-- END GENERATED: (?P=name) -->$",
                    re.S | re.M)
#: ``a ± b`` (a cell with its stated half-width) or a plain number
_PM = re.compile(r"^\s*(?P<value>[-+]?[\d,]*\.?\d+(?:e[-+]?\d+)?)\s*(?:±\s*(?P<half>[\d,]*\.?\d+(?:e[-+]?\d+)?))?")


def blocks(text: str) -> dict[str, str]:
    """``{name: body}`` of every generated block of ``text`` (body without the markers)."""
    found = {}
    for match in _BLOCK.finditer(text):
        if match["name"] in found:
            raise ValueError(f"generated block {match['name']!r} appears twice")
        found[match["name"]] = match["body"]
    return found


def replace_blocks(text: str, bodies: dict[str, str]) -> str:
    """``text`` with the body of each named block replaced; every name must have its markers."""
    missing = sorted(set(bodies) - set(blocks(text)))
    if missing:
        raise KeyError(f"the page has no markers for the generated block(s) {', '.join(missing)}; add "
                       f"{BEGIN.format(name=missing[0])} and {END.format(name=missing[0])} where it belongs")

    def substitute(match):
        name = match["name"]
        if name not in bodies:
            return match[0]
        body = bodies[name].rstrip("\n") + "\n"
        return f"{BEGIN.format(name=name)}\n{body}{END.format(name=name)}"

    return _BLOCK.sub(substitute, text)


def parse_table(body: str) -> tuple[list[str], list[list[str]]]:
    """Header cells and body rows of the first Markdown table in ``body``."""
    lines = [line.strip() for line in body.splitlines() if line.strip().startswith("|")]
    if len(lines) < 2:
        raise ValueError("no Markdown table in the block")

    def cells(line):
        return [c.strip() for c in line.strip().strip("|").split("|")]

    return cells(lines[0]), [cells(line) for line in lines[2:]]


def parse_cell(text: str) -> tuple[float, float | None, int]:
    """``(value, half-width or None, decimals printed)`` of a cell such as ``0.453 ± 0.0014``.

    Text after the number (a bracketed second value) is ignored; ``decimals`` is the
    number of digits printed after the point (0 for ``9,825``).
    """
    match = _PM.match(text)
    if match is None:
        raise ValueError(f"not a number: {text!r}")
    raw = match["value"].replace(",", "")
    decimals = len(raw.split(".")[1]) if "." in raw and "e" not in raw else 0
    half = match["half"]
    return float(raw), None if half is None else float(half.replace(",", "")), decimals
