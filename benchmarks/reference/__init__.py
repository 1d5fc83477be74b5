"""Per-point reference implementations, the structure of the published TraCS code.

The authors' reference code (the TraCS artefact) perturbs a trajectory in a Python
loop over its points: for each point it builds a small perturbation object,
computes the direction and distance with NumPy scalar calls, draws each
mechanism's output with scalar uniform draws (``random.uniform``), and rounds each
released point to the nearest POI with ``argmin`` of ``numpy.linalg.norm`` over
the whole POI array.  The functions here were written for this benchmark (no code
was copied) and follow that *structure*: one Python iteration per point, NumPy /
``math`` scalar calls inside, the mechanism constants recomputed per point.  They
implement the same mechanisms as tracs (optimal circular and classical
mechanisms, docs/mechanisms.md §1–2), so their outputs follow the same law; the timing
comparison is therefore like for like.

They are *not* used by tracs and make no privacy claim (Python's ``random`` is not
a secure generator); they exist only to measure "N × the reference implementation".
"""

from .loops import round_loop, tracs_c_loop, tracs_d_loop

__all__ = ["tracs_d_loop", "tracs_c_loop", "round_loop"]
