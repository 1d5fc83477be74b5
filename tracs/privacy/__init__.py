"""Privacy checks anyone can run: the empirical ε audit of samplers and perturbers.

* :func:`audit` — one-dimensional samplers (``sample(x, rng=)`` or ``(x, rng) -> y``);
* :func:`audit_perturber` — perturbers releasing points of the plane;
* :class:`AuditReport` — the verdict, the ε lower bound with its confidence,
  the worst input pair and output event, and the lattice check;
* :mod:`.candidates` — the candidate inputs (stratified points over the whole domain,
  adjacent doubles, low-bit ladders, half-cell pairs, domain ends, points near
  vertices) and the perturbers' trajectory scenarios (every position up to 8,
  lengths 16 and 32, the keyed path);
* :mod:`.events` — the output partitions (values, indices, index low bits);
* :mod:`.catalog` — every shipped mechanism and perturber, ready to audit.

An audit can show that a sampler is *not* ε-LDP, with the stated confidence
(the search's best few hypotheses confirmed on fresh draws with exact
Clopper–Pearson bounds, Bonferroni over them); a pass means no evidence was found
with the given budget, together with every output lying on the sampler's public
lattice.  Released times are not perturbed, so not audited.
"""

from .audit import audit
from .bounds import clopper_pearson_lower, clopper_pearson_upper, epsilon_lower_bound
from .perturber_audit import audit_perturber
from .audit_report import AuditReport, format_table

__all__ = ["audit", "audit_perturber", "AuditReport", "format_table", "clopper_pearson_lower",
           "clopper_pearson_upper", "epsilon_lower_bound"]
