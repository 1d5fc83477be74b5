"""Discrete-space baselines: mechanisms that release points of interest.

Every baseline is built from a public :class:`tracs.POISpace` and a budget, snaps
its inputs to their nearest POI, offers the TraCS perturbers' interface
(``perturb``, ``perturb_many``, ``privacy_spent``) and is ε-LDP as implemented; the
ledger states which unit (a point or a whole trajectory) is protected at which ε.
"""

from ._base import Baseline, BaselineLedger
from .exponential import ExponentialMechanism
from .lsrr import LSRR
from .ngram import NGram
from .tp import ATP, TP

__all__ = ["Baseline", "BaselineLedger", "ExponentialMechanism", "NGram", "LSRR", "ATP", "TP"]
