"""Speculative sampling (Leviathan et al. 2023, Algorithm 1) checked on data: the output
follows the target, acceptance follows Corollary 3.6, and acceptance stops at the first
rejection."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitebuild.sampling import (
    TOY_DRAFT,
    TOY_TARGET,
    acceptance_probability,
    residual_distribution,
    speculative_step,
    toy_demo,
)
from specmodel import SpecModelError

TRIALS = 1_000_000


def chi_square_critical(df: int, z: float = 4.0) -> float:
    """Upper quantile of chi-square with ``df`` degrees of freedom at standard-normal z
    (Wilson-Hilferty); z = 4 is a one-sided p of about 3e-5."""
    k = 2.0 / (9.0 * df)
    return df * (1.0 - k + z * math.sqrt(k)) ** 3


def assert_follows(tokens: np.ndarray, p: np.ndarray) -> None:
    """Chi-square goodness of fit of ``tokens`` to ``p``; tokens where p = 0 must never occur."""
    counts = np.bincount(tokens, minlength=p.size)
    assert counts[p == 0].sum() == 0, "drew a token the target gives no mass"
    support = p > 0
    expected = p[support] * tokens.size
    statistic = float(((counts[support] - expected) ** 2 / expected).sum())
    df = int(support.sum()) - 1
    if df > 0:
        assert statistic < chi_square_critical(df), (statistic, counts, expected)


def random_pair(rng, gamma: int, vocab: int):
    """Random q (gamma, V) and p (gamma + 1, V), with tokens where q has mass and p none and
    tokens where p has mass and q none, at every position."""
    p = rng.dirichlet(np.ones(vocab), size=gamma + 1)
    q = rng.dirichlet(np.ones(vocab), size=gamma)
    for i in range(gamma):
        only_p, only_q = rng.choice(vocab, size=2, replace=False)
        q[i, only_p] = 0.0
        p[i, only_q] = 0.0
    p /= p.sum(axis=1, keepdims=True)
    q /= q.sum(axis=1, keepdims=True)
    return q, p


@pytest.fixture(scope="module")
def big_run():
    rng = np.random.default_rng(20231)
    q, p = random_pair(rng, gamma=3, vocab=12)
    step = speculative_step(q, p, np.random.default_rng(7), trials=TRIALS)
    return q, p, step


def test_first_emitted_token_follows_the_target(big_run):
    q, p, step = big_run
    assert_follows(step.output()[:, 0], p[0])


def test_every_emitted_position_follows_the_target(big_run):
    q, p, step = big_run
    out = step.output()
    for j in range(1, p.shape[0]):
        reached = step.rejected_at >= j  # the output has a token at position j + 1
        assert_follows(out[reached, j], p[j])


def test_total_variation_is_within_sampling_error(big_run):
    q, p, step = big_run
    empirical = np.bincount(step.output()[:, 0], minlength=p.shape[1]) / TRIALS
    # E[TV] <= 1/2 sum sqrt(p (1 - p) / n); allow four times that.
    bound = 4 * 0.5 * np.sqrt(p[0] * (1 - p[0]) / TRIALS).sum()
    assert 0.5 * np.abs(empirical - p[0]).sum() < bound
    # ...a bound the draft alone would fail by far:
    assert 0.5 * np.abs(q[0] - p[0]).sum() > 20 * bound


def test_acceptance_rate_is_sum_of_min_corollary_3_6(big_run):
    q, p, step = big_run
    beta = acceptance_probability(p[:-1], q)
    for j in range(q.shape[0]):
        reached = step.rejected_at >= j
        accepted = step.rejected_at[reached] >= j + 1
        rate, n = accepted.mean(), reached.sum()
        assert abs(rate - beta[j]) < 5 * math.sqrt(beta[j] * (1 - beta[j]) / n), (j, rate, beta[j])


def test_acceptance_truncates_at_the_first_rejection():
    # Position 1: q and p disjoint, so the guess is always rejected. Position 2: q = p, so a
    # guess there would always be accepted -- but it must never count.
    p = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    q = np.array([[0.0, 0.5, 0.5], [0.0, 1.0, 0.0]])
    step = speculative_step(q, p, np.random.default_rng(0), trials=10_000)
    assert np.all(step.rejected_at == 0)
    assert np.all(step.accepted_tokens() == -1)
    assert np.all(step.output()[:, 0] == 0)  # resampled from the residual, which is p_1
    assert np.all(step.output()[:, 1:] == -1)


def test_accepted_tokens_are_the_drafts_up_to_the_rejection(big_run):
    _, _, step = big_run
    accepted = step.accepted_tokens()
    positions = np.arange(step.gamma)
    before = positions < step.rejected_at[:, None]
    assert np.array_equal(accepted[before], step.drafts[before])
    assert np.all(accepted[~before] == -1)
    # a run of accepted guesses, then nothing: -1 never precedes a token
    assert np.all(np.diff((accepted >= 0).astype(int), axis=1) <= 0)


def test_identical_models_accept_every_guess():
    rng = np.random.default_rng(3)
    p = rng.dirichlet(np.ones(6), size=4)
    step = speculative_step(p[:3], p, np.random.default_rng(1), trials=200_000)
    assert np.all(step.rejected_at == 3)
    assert_follows(step.token, p[3])


def test_per_trial_distributions_are_used_trial_by_trial():
    # Trial k's target is certain of token k mod V; the draft is uniform. Whatever is drafted,
    # the first token out must be k mod V. 1,000 trials x 2 positions takes the large-table path.
    vocab, trials = 5, 1000
    for n in (trials, 10):  # both sampling paths (per-row search and gathered rows)
        wanted = np.arange(n) % vocab
        p = np.zeros((n, 3, vocab))
        p[np.arange(n)[:, None], np.arange(3)[None, :], wanted[:, None]] = 1.0
        q = np.full((n, 2, vocab), 1.0 / vocab)
        step = speculative_step(q, p, np.random.default_rng(5))
        assert np.array_equal(step.output()[:, 0], wanted)
        assert np.array_equal(step.output()[step.rejected_at >= 1, 1], wanted[step.rejected_at >= 1])


def test_the_same_seed_gives_the_same_step():
    q, p = random_pair(np.random.default_rng(1), 2, 7)
    a = speculative_step(q, p, np.random.default_rng(9), trials=1000)
    b = speculative_step(q, p, np.random.default_rng(9), trials=1000)
    c = speculative_step(q, p, np.random.default_rng(10), trials=1000)
    assert np.array_equal(a.output(), b.output())
    assert not np.array_equal(a.output(), c.output())


def _rows(count: int, vocab: int):
    """``count`` probability vectors over ``vocab`` tokens, with exact zeros likely."""
    row = st.lists(st.sampled_from([0.0, 0.0, 0.1, 0.5, 1.0]) | st.floats(0, 1), min_size=vocab, max_size=vocab)
    rows = st.lists(row.filter(lambda r: sum(r) > 1e-3), min_size=count, max_size=count)
    return rows.map(lambda r: np.array(r) / np.array(r).sum(axis=1, keepdims=True))


step_inputs = st.tuples(st.integers(1, 4), st.integers(1, 6)).flatmap(
    lambda gv: st.tuples(_rows(gv[0], gv[1]), _rows(gv[0] + 1, gv[1]), st.integers(0, 2**32 - 1))
)


@given(step_inputs)
@settings(max_examples=80, deadline=None)
def test_step_invariants(inputs):
    q, p, seed = inputs
    gamma, vocab = q.shape
    step = speculative_step(q, p, np.random.default_rng(seed), trials=300)
    assert np.all((step.rejected_at >= 0) & (step.rejected_at <= gamma))
    positions = np.arange(gamma)[None, :]
    assert np.all(q[positions, step.drafts] > 0)  # guesses come from q
    accepted = positions < step.rejected_at[:, None]
    assert np.all(p[positions, step.drafts][accepted] > 0)  # an accepted guess is one p can produce
    final = residual_distribution(p, np.vstack([q, np.zeros((1, vocab))]))
    assert np.all(final[step.rejected_at, step.token] > 0)  # t is one p' can produce
    assert np.all(step.output()[np.arange(300), step.rejected_at] == step.token)


probability_vectors = st.integers(1, 8).flatmap(
    lambda v: st.tuples(
        *(st.lists(st.floats(0, 1), min_size=v, max_size=v).filter(lambda r: sum(r) > 1e-6) for _ in range(2))
    )
)


def lk_divergence(p, q):
    """``D_LK(p, q) = sum_x |p(x) - M(x)|`` with ``M = (p + q) / 2``, i.e. half the L1
    distance (Leviathan et al. 2023, arXiv:2211.17192, Definition 3.3); Lemma 3.4 gives
    ``D_LK = 1 - sum_x min(p, q)``. Over the last axis.

    """
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    return np.abs(p - (p + q) / 2.0).sum(axis=-1)


@given(probability_vectors)
def test_lemma_3_4_lk_divergence_is_one_minus_overlap(pair):
    p, q = (np.array(r) / sum(r) for r in pair)
    assert lk_divergence(p, q) == pytest.approx(1.0 - acceptance_probability(p, q), abs=1e-12)
    assert 0.0 <= acceptance_probability(p, q) <= 1.0 + 1e-12


@given(probability_vectors)
def test_residual_is_a_distribution_on_where_p_exceeds_q(pair):
    p, q = (np.array(r) / sum(r) for r in pair)
    r = residual_distribution(p, q)
    assert r.sum() == pytest.approx(1.0)
    if np.any(p - q > 1e-12):
        assert np.all(r[p <= q] == 0)


@pytest.mark.parametrize(
    ("q", "p", "needle"),
    [
        (np.ones((2, 3)) / 3, np.ones((2, 3)) / 3, "p must have shape (3, V)"),
        (np.ones(3) / 3, np.ones((2, 3)) / 3, "q must have shape"),
        (np.array([[0.5, 0.6]]), np.ones((2, 2)) / 2, "sum to 1"),
        (np.array([[1.5, -0.5]]), np.ones((2, 2)) / 2, ">= 0"),
        (np.array([[0.5, 0.5]]), np.ones((2, 3)) / 3, "share the vocabulary"),
    ],
)
def test_bad_distributions_are_one_clear_error(q, p, needle):
    with pytest.raises(SpecModelError) as info:
        speculative_step(q, p, np.random.default_rng(0))
    assert needle in str(info.value) and "\n" not in str(info.value)


def test_toy_demo_is_deterministic_and_shows_the_theorem():
    a, b, c = toy_demo(seed=3), toy_demo(seed=3), toy_demo(seed=4)
    assert a == b and a.output != c.output
    p, q = np.array(TOY_TARGET), np.array(TOY_DRAFT)
    assert a.labels[int(np.argmax(q == 0))] == "dog" and a.labels[int(np.argmax(p == 0))] == "banana"
    out = np.array(a.output)
    assert out[p == 0].sum() == 0  # never "banana", though the draft likes it
    dog = a.labels.index("dog")
    assert out[dog] == pytest.approx(p[dog], abs=0.01)  # "dog", though the draft never proposes it
    assert 0.5 * np.abs(out - p).sum() < 0.01
    assert a.expected_acceptance == pytest.approx(0.65)
    assert abs(a.acceptance_rate - a.expected_acceptance) < 5 * math.sqrt(0.65 * 0.35 / a.trials)
    assert sum(a.residual) == pytest.approx(1.0)
