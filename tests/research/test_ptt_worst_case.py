"""The PTT paper's η = 1.9 example against Duchi's scheme (examples/ptt_worst_case.py)."""
import importlib.util
from pathlib import Path

import numpy as np
import pytest

_PATH = Path(__file__).resolve().parents[2] / "examples" / "ptt_worst_case.py"
_SPEC = importlib.util.spec_from_file_location("ptt_worst_case", _PATH)
ptt = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(ptt)


def test_example_a_is_the_papers_value():
    eps = np.array([0.3, 1.0, 2.5])
    t = np.exp(eps)
    np.testing.assert_allclose(ptt.example_a(eps), 10 / 9 * (t + 0.9) / (t - 1), rtol=1e-12)


def test_type_one_beats_duchi_only_above_1_45():
    # The paper states the example wins for every ε > 0; its own Eq. (15) says ε > 1.4506.
    assert ptt.threshold("I") == pytest.approx(1.4506, abs=1e-4)
    assert ptt.ptt_worst_variance(1.0, "I") > ptt.duchi_worst_variance(1.0)
    assert ptt.ptt_worst_variance(2.0, "I") < ptt.duchi_worst_variance(2.0)


def test_type_two_needs_a_larger_budget():
    assert ptt.threshold("II") == pytest.approx(1.9879, abs=1e-4)
    assert ptt.threshold("II") > ptt.threshold("I")


def test_worst_case_is_the_larger_of_the_two_ends():
    # Var(A) = (k − 1)A² + c·a on [−1, 1]: check the closed form against a grid of inputs.
    eps, eta = 1.3, ptt.ETA
    t = np.exp(eps)
    a = ptt.example_a(eps)
    k = (eta - 1) * a
    c = (eta ** 3 / (t - 1) + 1) / (3 * (eta - 1))
    grid = np.linspace(-1, 1, 2001)
    assert ptt.ptt_worst_variance(eps, "I") == pytest.approx(np.max((k - 1) * grid ** 2 + c * a))


@pytest.mark.parametrize("kind, fragment", [("III", "kind must be"), ("", "kind must be")])
def test_bad_kind(kind, fragment):
    with pytest.raises(ValueError, match=fragment):
        ptt.ptt_worst_variance(1.0, kind)
