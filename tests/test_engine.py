"""The Monte Carlo of the cohort as vLLM counts it: exact in the limits, unbiased against the
model's expectations, and a lossless round trip through vLLM's log line and exposition."""

import math
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specmodel import SpecModelError, evaluate
from specmodel.model.acceptance import tokens_per_iteration_pmf
from specmodel.model.constants import GENERATED_TOKENS
from specmodel.vllm.counters import per_position_rate
from specmodel.vllm.logs import counters_from_log, parse_log
from specmodel.vllm.prometheus import parse_exposition
from tests.cohort_reference import iteration_survival
from tests.exposition import format_exposition
from tests.monte_carlo import engine_log, simulate, simulate_counters, simulate_per_position


@pytest.mark.parametrize(("batch", "gamma"), [(1, 1), (3, 4), (17, 7)])
def test_every_guess_accepted_gives_exact_counts(batch, gamma):
    c = simulate_counters(np.ones(gamma), batch, seed=1)
    iterations = math.ceil(GENERATED_TOKENS / (gamma + 1))
    assert c.num_drafts == batch * iterations
    assert c.num_draft_tokens == gamma * c.num_drafts
    assert c.num_accepted_tokens == gamma * c.num_drafts
    assert c.accepted_per_position == (c.num_drafts,) * gamma


def test_no_guess_accepted_is_plain_decoding():
    c = simulate_counters(np.zeros(3), 5, seed=1)
    assert c.num_drafts == 5 * GENERATED_TOKENS
    assert c.num_accepted_tokens == 0 and c.accepted_per_position == (0, 0, 0)


def test_counts_obey_vllms_arithmetic():
    c = simulate(concurrency=32, seed=3).counters
    assert c.num_accepted_tokens == sum(c.accepted_per_position)
    assert list(c.accepted_per_position) == sorted(c.accepted_per_position, reverse=True)
    # each sequence needs at least G / (gamma + 1) iterations and at most G
    assert 32 * math.ceil(GENERATED_TOKENS / 5) <= c.num_drafts <= 32 * GENERATED_TOKENS


def test_monte_carlo_matches_the_models_expectations():
    batch, gamma = 512, 4
    ev = evaluate(concurrency=batch, gamma=gamma)
    run = simulate(concurrency=batch, gamma=gamma, seed=11)
    c = run.counters
    u = np.reshape(ev.per_position, -1)
    rates = per_position_rate(c)
    sigma = np.sqrt(u * (1 - u) / c.num_drafts)
    assert np.all(np.abs(rates - u) < 5 * sigma + 1e-12), (rates, u)
    # iterations per sequence N: E[N] from the cohort recursion; Var N = sum_i (2i - 1) S_i - E[N]^2
    survival = iteration_survival(tokens_per_iteration_pmf(u), GENERATED_TOKENS)
    mean = float(survival.sum())
    sd = math.sqrt(float(((2 * np.arange(1, survival.size + 1) - 1) * survival).sum()) - mean**2)
    assert mean == pytest.approx(float(ev.expected_iterations))
    assert c.num_drafts / batch == pytest.approx(mean, abs=5 * sd / math.sqrt(batch))
    # throughputs: the counts over the model's cohort time
    assert c.num_accepted_tokens / run.elapsed_s == pytest.approx(float(ev.accepted_throughput), rel=0.02)
    assert c.num_draft_tokens / run.elapsed_s == pytest.approx(float(ev.drafted_throughput), rel=0.02)
    assert run.elapsed_s == pytest.approx(batch * GENERATED_TOKENS / float(ev.spec_tokens_per_s))


def test_measured_acceptance_is_simulated_as_given():
    u = [0.9, 0.5, 0.45, 0.1]
    run = simulate_per_position(u, concurrency=256, drafter="ngram", seed=2)
    assert per_position_rate(run.counters) == pytest.approx(u, abs=0.01)


def test_engine_log_is_deterministic_per_seed():
    a = engine_log(concurrency=8, context=2048, gamma=4, drafter="qwen3-0.6b", acceptance="falling", alpha=0.75, seed=5)
    b = engine_log(concurrency=8, context=2048, gamma=4, drafter="qwen3-0.6b", acceptance="falling", alpha=0.75, seed=5)
    c = engine_log(concurrency=8, context=2048, gamma=4, drafter="qwen3-0.6b", acceptance="falling", alpha=0.75, seed=6)
    assert a == b and a != c
    line, rates = a
    assert line.startswith("SpecDecoding metrics: Mean acceptance length: ")
    assert "Per-position acceptance rate: " + ", ".join(f"{r:.3f}" for r in rates) + ", Avg" in line


def test_engine_log_throughput_is_counts_over_the_models_time():
    line, _ = engine_log(
        concurrency=1, context=2048, gamma=4, drafter="qwen3-0.6b", acceptance="falling", alpha=0.75, seed=0
    )
    (interval,) = parse_log(line)
    ev = evaluate()
    seconds = GENERATED_TOKENS / float(ev.spec_tokens_per_s)
    assert interval.accepted_throughput == pytest.approx(interval.accepted / seconds, abs=0.006)
    assert interval.drafted_throughput == pytest.approx(interval.drafted / seconds, abs=0.006)


def test_engine_log_is_fast_for_a_large_cohort():
    engine_log(
        concurrency=1024, context=2048, gamma=4, drafter="qwen3-0.6b", acceptance="falling", alpha=0.75, seed=0
    )  # warm up
    start = time.perf_counter()
    for seed in range(5):
        engine_log(
            concurrency=1024, context=2048, gamma=4, drafter="qwen3-0.6b", acceptance="falling", alpha=0.75, seed=seed
        )
    assert (time.perf_counter() - start) / 5 < 0.1  # ~15 ms on a laptop; generous for loaded CI


def test_bad_scenarios_are_refused_before_simulating():
    with pytest.raises(SpecModelError, match="concurrency 0"):
        simulate(concurrency=0)
    with pytest.raises(SpecModelError, match="one scenario"):
        simulate(concurrency=[1, 2])
    with pytest.raises(SpecModelError, match="must not rise"):
        simulate_per_position([0.2, 0.5])
    with pytest.raises(SpecModelError, match="not rise with position"):
        simulate_counters([0.2, 0.5], 4)
    with pytest.raises(SpecModelError, match="1 to 32 rates"):
        simulate_counters([], 4)


scenarios = st.fixed_dictionaries(
    {
        "concurrency": st.integers(1, 64),
        "gamma": st.integers(1, 8),
        "drafter": st.sampled_from(["qwen3-0.6b", "qwen3-1.7b", "ngram"]),
        "acceptance": st.sampled_from(["falling", "same"]),
        "alpha": st.floats(0.05, 0.95),
        "seed": st.integers(0, 2**32 - 1),
    }
)


@given(scenarios)
@settings(max_examples=40, deadline=None)
def test_round_trip_through_the_exposition_is_exact(s):
    run = simulate(**s)
    assert parse_exposition(format_exposition(run.counters)) == run.counters


@given(scenarios)
@settings(max_examples=40, deadline=None)
def test_round_trip_through_the_log_keeps_the_counters(s):
    run = simulate(**s)
    c = run.counters
    back = counters_from_log(parse_log(run.log_message))
    assert (back.num_drafts, back.num_draft_tokens, back.num_accepted_tokens) == (
        c.num_drafts,
        c.num_draft_tokens,
        c.num_accepted_tokens,
    )
    # per-position counts come back through the rates' 3 decimals
    assert back.accepted_per_position == pytest.approx(c.accepted_per_position, abs=0.0005 * c.num_drafts + 1e-9)
