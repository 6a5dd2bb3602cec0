"""Identity, limit and shape tests of the full scenario model, and the article's claims."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specmodel import SpecModelError, evaluate, evaluate_per_position
from specmodel.grid import DEFAULT_GRID, grid_mesh, sweep
from specmodel.model.acceptance import theorem_3_11_arithmetic_increase

LADDER = np.array(DEFAULT_GRID["concurrency"])

scenarios = st.fixed_dictionaries(
    {
        "concurrency": st.integers(1, 1024),
        "context": st.integers(0, 32768),
        "gamma": st.integers(1, 10),
        "drafter": st.sampled_from(["qwen3-0.6b", "qwen3-1.7b", "ngram"]),
        "acceptance": st.sampled_from(["falling", "same"]),
        "alpha": st.floats(0.05, 0.95),
    }
)


@given(scenarios)
@settings(max_examples=80, deadline=None)
def test_readouts_are_finite_and_in_range(s):
    ev = evaluate(**s)
    for name in ("speedup", "spec_tokens_per_s", "base_tokens_per_s", "verify_bytes", "verify_flops"):
        value = float(getattr(ev, name))
        assert np.isfinite(value) and value > 0, name
    assert 0 <= float(ev.draft_share) < 1
    assert 0 <= float(ev.verify_idle) < 1
    assert 1 <= float(ev.mean_acceptance_length) <= s["gamma"] + 1
    assert float(ev.arithmetic_ratio) >= 1


@given(scenarios)
@settings(max_examples=40, deadline=None)
def test_scalar_and_grid_paths_agree(s):
    one = evaluate(**s)
    grid = evaluate(**{**s, "concurrency": [s["concurrency"], 1, 1024]})
    assert grid.speedup[0] == pytest.approx(float(one.speedup), rel=1e-12)
    assert grid.draft_share[0] == pytest.approx(float(one.draft_share), rel=1e-12, abs=1e-15)


def test_broadcast_shapes():
    ev = evaluate(concurrency=LADDER[:, None], context=[512, 2048, 8192])
    assert ev.speedup.shape == (11, 3)
    assert ev.per_position.shape == (11, 3, 4)


def test_verify_idle_falls_as_concurrency_rises():
    for drafter in ("qwen3-0.6b", "ngram"):
        for context in (256, 2048, 32768):
            idle = evaluate(concurrency=LADDER, context=context, drafter=drafter).verify_idle
            assert np.all(np.diff(idle) <= 1e-12)


def test_zero_cost_drafter_iteration_is_the_verify_pass_alone():
    ev = evaluate(concurrency=LADDER, drafter="ngram")
    assert np.all(ev.draft_share == 0)
    # Same acceptance, same verify passes: the only difference a real drafter makes is
    # draft time, so the n-gram drafter is never slower than a model drafter.
    model = evaluate(concurrency=LADDER, drafter="qwen3-0.6b")
    assert np.all(ev.spec_tokens_per_s >= model.spec_tokens_per_s)
    # And at one sequence the iteration costs one memory-bound verify pass.
    one = evaluate(drafter="ngram")
    iteration_time = 1 / (float(one.spec_tokens_per_s) / 256) / float(one.expected_iterations)
    assert iteration_time == pytest.approx(float(one.verify_memory_time), rel=1e-9)


def test_theorem_3_11_from_the_models_own_flops():
    # n-gram drafter (c = 0) with i.i.d. acceptance: the paper's assumptions.
    for gamma in (1, 2, 4, 7, 10):
        ev = evaluate(drafter="ngram", acceptance="same", gamma=gamma, alpha=0.75)
        assert float(ev.arithmetic_ratio) == pytest.approx(theorem_3_11_arithmetic_increase(0.75, gamma, 0.0), rel=0.03)
    assert float(evaluate(drafter="ngram", acceptance="same").arithmetic_ratio) == pytest.approx(1.64, rel=0.03)


def test_arithmetic_bill_barely_moves_with_concurrency():
    ratio = evaluate(concurrency=LADDER).arithmetic_ratio
    assert ratio.max() - ratio.min() < 1e-9


def test_ngram_ladder_stays_above_one_at_2048():
    assert np.all(evaluate(concurrency=LADDER, drafter="ngram").speedup >= 1.0)


def test_ngram_loses_only_at_high_concurrency_with_short_context():
    ev = evaluate(concurrency=LADDER, drafter="ngram", context=256)
    assert ev.speedup[0] > 1 and ev.speedup[-1] < 1


def test_bigger_draft_is_a_worse_deal():
    small = float(evaluate(drafter="qwen3-0.6b").speedup)
    assert float(evaluate(drafter="qwen3-1.7b").speedup) < small
    assert float(evaluate(drafter="qwen3-1.7b", alpha=0.95).speedup) < small


def test_long_context_busy_card_draft_dominates_and_loses():
    ev = evaluate(concurrency=64, context=8192)
    assert float(ev.draft_share) > 0.5 and float(ev.speedup) < 1


def test_gamma_ceiling_at_32_sequences():
    curve = evaluate(concurrency=32, gamma=np.arange(1, 11)).speedup
    assert np.argmax(curve) <= 2 and curve[-1] < 0.8


def test_bad_input_names_the_value():
    cases = {
        "gamma": (0, r"gamma 0 is not allowed; gamma must be an integer from 1 to 32"),
        "alpha": (1.5, r"alpha 1.5 is not allowed; alpha must be strictly between 0 and 1"),
        "context": (-1, r"context -1 is not allowed; context must be an integer >= 0"),
        "drafter": (
            "medusa",
            r"drafter 'medusa' cannot draft for qwen3-8b; allowed: qwen3-0.6b, qwen3-1.7b, "
            r"qwen3-4b, ngram, eagle, eagle-32k, mtp",
        ),
        "acceptance": ("flat", r"unknown acceptance 'flat'; allowed: falling, same"),
        "concurrency": (2.5, r"concurrency 2.5 is not allowed"),
    }
    for name, (value, message) in cases.items():
        with pytest.raises(SpecModelError, match=message):
            evaluate(**{name: value})
    with pytest.raises(SpecModelError, match="unknown hardware 'tpu-v4'; allowed: h100-sxm, h200, b200"):
        evaluate(hardware="tpu-v4")
    with pytest.raises(SpecModelError, match="unknown model 'qwen3-9b'; allowed: qwen3-8b"):
        evaluate(target="qwen3-9b")
    with pytest.raises(SpecModelError, match="must share the target's vocabulary"):
        evaluate(drafter="llama-3.2-1b")
    with pytest.raises(SpecModelError, match="cannot draft for qwen3-4b"):
        evaluate(drafter="qwen3-8b", target="qwen3-4b")


def test_sweep_has_one_row_per_scenario():
    df = sweep(
        concurrency=[1, 2],
        context=[512],
        gamma=[2, 4],
        drafter=["ngram"],
        acceptance=["same"],
        alpha=[0.5],
        engine=["ideal"],
        tensor_parallel=[1],
    )
    assert len(df) == 4
    assert list(df.columns[:6]) == ["concurrency", "context", "gamma", "drafter", "acceptance", "alpha"]
    assert {"speedup", "verify_gib", "per_position_4"} <= set(df.columns)


def test_default_grid_size():
    sizes = [v.size for v in grid_mesh().values()]
    # eight drafters, two engines, four tensor-parallel degrees
    assert sizes[0] == 11 * 8 * 10 * 8 * 2 * 10 * 2 * 4 >= 50_000


@given(scenarios)
@settings(max_examples=30, deadline=None)
def test_per_position_path_agrees_with_profiles(s):
    ev = evaluate(**s)
    measured = evaluate_per_position(ev.per_position, s["concurrency"], s["context"], s["drafter"])
    assert float(measured.speedup) == pytest.approx(float(ev.speedup), rel=1e-9)


def test_per_position_rejects_rising_acceptance():
    with pytest.raises(SpecModelError, match="must not rise"):
        evaluate_per_position([0.5, 0.6])
    with pytest.raises(SpecModelError, match="between 0 and 1"):
        evaluate_per_position([1.2])
