"""Identity and limit tests of the acceptance formulas."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from specmodel.model import acceptance as acc
from specmodel.model.constants import FALLING_RATIO

alphas = st.floats(min_value=0.01, max_value=0.99)
gammas = st.integers(min_value=1, max_value=16)
ratios = st.sampled_from([1.0, FALLING_RATIO])


@given(alphas, gammas)
def test_same_profile_matches_closed_form(alpha, gamma):
    # Leviathan et al. 2023, arXiv:2211.17192, Eq. 1.
    u = acc.per_position_acceptance(alpha, gamma, 1.0)
    assert acc.expected_tokens_per_iteration(u) == pytest.approx(acc.closed_form_tokens_per_iteration(alpha, gamma))


@given(alphas, gammas, ratios)
def test_tokens_per_iteration_between_1_and_gamma_plus_1(alpha, gamma, ratio):
    e = acc.expected_tokens_per_iteration(acc.per_position_acceptance(alpha, gamma, ratio))
    assert 1.0 <= e <= gamma + 1


@given(alphas, gammas, ratios)
def test_pmf_is_a_distribution_with_the_right_mean(alpha, gamma, ratio):
    u = acc.per_position_acceptance(alpha, gamma, ratio)
    pmf = acc.tokens_per_iteration_pmf(u)
    assert pmf.shape == (gamma + 1,)
    assert np.all(pmf >= -1e-15)
    assert pmf.sum() == pytest.approx(1.0)
    assert np.dot(np.arange(1, gamma + 2), pmf) == pytest.approx(acc.expected_tokens_per_iteration(u))


@given(gammas)
def test_alpha_to_one_gives_gamma_plus_one(gamma):
    e = acc.expected_tokens_per_iteration(acc.per_position_acceptance(1 - 1e-12, gamma, 1.0))
    assert e == pytest.approx(gamma + 1, rel=1e-9)


@given(alphas, gammas, ratios)
def test_per_position_acceptance_never_rises(alpha, gamma, ratio):
    u = acc.per_position_acceptance(alpha, gamma, ratio)
    assert np.all(np.diff(u) <= 0)


def test_falling_profile_matches_the_article():
    # Brief: "unconditional per-position acceptance near 0.751, 0.477, 0.261, 0.123".
    u = acc.per_position_acceptance(0.75, 4, FALLING_RATIO)
    assert u == pytest.approx([0.751, 0.477, 0.261, 0.123], abs=0.01)


def test_gamma_ceiling_figures():
    # Brief, section 5: ceiling 4; gamma 4 -> 3.05, gamma 10 -> 3.83, gamma 17 -> 3.98;
    # the 17th guess survives about once per 133 iterations.
    cf = acc.closed_form_tokens_per_iteration
    assert cf(0.75, 4) == pytest.approx(3.05, abs=0.005)
    assert cf(0.75, 10) == pytest.approx(3.83, abs=0.005)
    assert cf(0.75, 17) == pytest.approx(3.98, abs=0.005)
    assert 1 / acc.per_position_acceptance(0.75, 17, 1.0)[-1] == pytest.approx(133, abs=1)
    assert cf(0.75, 200) == pytest.approx(1 / (1 - 0.75))


def test_theorem_3_11_value():
    assert acc.theorem_3_11_arithmetic_increase(0.75, 4, 0.0) == pytest.approx(1.64, abs=0.005)


def test_the_falling_profiles_conditional_acceptance_is_alpha_r_to_the_j_minus_1():
    u = acc.per_position_acceptance(0.8, 6, FALLING_RATIO)
    a = acc.conditional_from_per_position(u)
    assert a == pytest.approx(0.8 * FALLING_RATIO ** np.arange(6), rel=1e-12)
    assert np.cumprod(a) == pytest.approx(u, rel=1e-12)
