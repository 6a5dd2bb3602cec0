"""The cohort timing against brute force and against a Monte Carlo run of the process."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specmodel.model import acceptance as acc
from specmodel.model import cohort
from tests.cohort_reference import iteration_survival


def _pmf(alpha, gamma, ratio=1.0):
    return acc.tokens_per_iteration_pmf(acc.per_position_acceptance(alpha, gamma, ratio))


def test_survival_matches_monte_carlo():
    rng = np.random.default_rng(7)
    pmf = _pmf(0.75, 4, 0.85)
    g = 64
    draws = rng.choice(np.arange(1, 6), p=pmf, size=(20_000, g))
    iterations = np.argmax(np.cumsum(draws, axis=1) >= g, axis=1) + 1
    empirical = np.array([(iterations >= i).mean() for i in range(1, g + 1)])
    exact = iteration_survival(pmf, g)
    assert np.abs(empirical - exact).max() < 0.015  # > 4 standard errors at n = 20,000


@given(st.floats(0.05, 0.95), st.integers(1, 10))
@settings(max_examples=30, deadline=None)
def test_wald_identity_bounds(alpha, gamma):
    # E[S_N] = E[N] E[X] (Wald), and G <= S_N <= G + gamma.
    pmf = _pmf(alpha, gamma)
    n = cohort.expected_iterations(iteration_survival(pmf, 256))
    mean_x = np.dot(np.arange(1, gamma + 2), pmf)
    assert 256 <= n * mean_x <= 256 + gamma + 1e-9


def test_plain_decoding_is_exactly_g_iterations():
    s = iteration_survival(np.array([1.0]), 256)
    assert cohort.expected_iterations(s) == 256


@given(
    st.floats(0.3, 0.95),
    st.integers(1, 10),
    st.integers(1, 1024),
    st.floats(0.0, 1.0),
    st.floats(0.0, 0.1),
    st.floats(0.0, 0.1),
)
@settings(max_examples=60, deadline=None)
def test_closed_form_sum_equals_iteration_by_iteration(alpha, gamma, batch, m0, m1, c1):
    survival = iteration_survival(_pmf(alpha, gamma), 256)[None, :]
    table = cohort.CohortTable(survival, np.array([batch]))
    fast = cohort.expected_pass_time_sum(table, np.array([0]), m0, m1, c1)
    runs, active = table.runs[0], table.active[0]
    slow = np.sum(runs * np.maximum(m0 + m1 * active, c1 * active))
    assert fast[0] == pytest.approx(slow, rel=1e-9, abs=1e-12)


def test_active_batch_is_non_increasing():
    survival = iteration_survival(_pmf(0.6, 3), 256)[None, :]
    table = cohort.CohortTable(survival, np.array([64]))
    assert np.all(np.diff(table.active[0]) <= 1e-9)
