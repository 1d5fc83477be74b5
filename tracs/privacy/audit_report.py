"""The result of an audit: :class:`AuditReport`."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .._text import given, significant, whole

__all__ = ["AuditReport", "format_table"]


@dataclass(frozen=True)
class AuditReport:
    """What an audit found about a sampler claimed to be ε-LDP.

    Attributes
    ----------
    epsilon : float
        The claimed privacy budget.
    epsilon_lower_bound : float
        A lower bound on the sampler's true privacy loss that holds with
        probability at least ``confidence`` (0 when the draws give no evidence).
    confidence : float
        Confidence of ``epsilon_lower_bound`` (and so of a reported violation).
    violation : bool
        ``epsilon_lower_bound > epsilon`` (no slack), an output off the
        declared lattice, or a NaN / infinite output.
    unverifiable_low_bits : bool
        The sampler declares no output lattice, so leaks through the low-order
        bits of its outputs cannot be checked; such a sampler never ``passed``.
    worst_pair : tuple
        The two inputs ``(x1, x2)`` of the bound.
    worst_event : str
        The output event ``E`` of the bound, in words.
    counts : tuple of int
        ``(k1, n1, k2, n2)``: draws in ``E`` out of draws at ``x1`` and at ``x2``,
        among the fresh draws of the confirmation.
    off_lattice : int
        Outputs (over all draws) that are not on the declared lattice.
    off_lattice_example : float, tuple or None
        The first such output.
    samples : int
        Draws per input in the search, and fresh draws per input of each confirmed
        hypothesis.
    inputs : int
        Number of candidate inputs (every ordered pair of them is tried).
    vectorised : bool
        ``False`` when the sampler rejected arrays and was called once per draw.
    method : str
        The statistical method, in words.
    reasons : tuple of str
        Findings and caveats in words: why the audit did not pass, and whether
        the sampler had to be called once per draw.
    confirmed : int
        The (pair, event) hypotheses of the search bounded on fresh draws; each
        bound is at confidence ``1 − (1 − confidence)/confirmed`` (Bonferroni), so
        ``epsilon_lower_bound``, their largest, holds at ``confidence``.
    """

    epsilon: float
    epsilon_lower_bound: float
    confidence: float
    violation: bool
    unverifiable_low_bits: bool
    worst_pair: tuple
    worst_event: str
    counts: tuple
    off_lattice: int
    off_lattice_example: object
    samples: int
    inputs: int
    vectorised: bool
    method: str
    reasons: tuple = field(default_factory=tuple)
    confirmed: int = 1

    @property
    def passed(self) -> bool:
        """No violation found *and* the outputs were checked against a lattice."""
        return not self.violation and not self.unverifiable_low_bits

    @property
    def verdict(self) -> str:
        if self.violation:
            return "VIOLATION"
        return "unverifiable (no lattice)" if self.unverifiable_low_bits else "pass"

    def __str__(self) -> str:
        k1, n1, k2, n2 = self.counts
        lines = [
            f"audit: {self.verdict} — claimed ε = {given(self.epsilon)}, "
            f"ε ≥ {significant(self.epsilon_lower_bound)} with confidence {given(self.confidence)}",
            f"  worst pair x1 = {_short(self.worst_pair[0])}, x2 = {_short(self.worst_pair[1])}; "
            f"event {self.worst_event}: {whole(k1)}/{whole(n1)} vs {whole(k2)}/{whole(n2)}",
            f"  {whole(self.samples)} draws per input over {whole(self.inputs)} inputs, the best "
            f"{whole(self.confirmed)} (pair, event) of the search confirmed on fresh draws"
            + ("" if self.vectorised else " (called once per draw: the sampler rejected arrays)"),
        ]
        lines.extend(f"  - {reason}" for reason in self.reasons)
        return "\n".join(lines)


def _short(x) -> str:
    if isinstance(x, tuple):
        return "(" + ", ".join(f"{v:.6g}" for v in x) + ")"
    return f"{x:.6g}" if isinstance(x, float) else str(x)


def format_table(rows) -> str:
    """A Markdown table of ``(name, AuditReport, seconds)`` rows (numbers by the rule of :mod:`tracs._text`)."""
    head = ("| method | claimed ε | ε lower bound | confidence | draws/input | lattice | verdict | seconds |\n"
            "| --- | ---: | ---: | ---: | ---: | --- | --- | ---: |")
    body = []
    for name, rep, seconds in rows:
        lattice = ("n/a" if rep.unverifiable_low_bits
                   else "ok" if rep.off_lattice == 0 else f"{rep.off_lattice} off")
        bound = "0" if rep.epsilon_lower_bound == 0 or math.isinf(rep.epsilon_lower_bound) \
            else significant(rep.epsilon_lower_bound)
        body.append(f"| {name} | {given(rep.epsilon)} | {bound} | {given(rep.confidence)} | {whole(rep.samples)} | "
                    f"{lattice} | {rep.verdict} | {significant(seconds)} |")
    return "\n".join([head, *body])
