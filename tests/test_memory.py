"""Memory capacity: what a scenario needs on the card against what the card offers."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from specmodel import Settings, evaluate
from specmodel.model import memory
from specmodel.model.specs import get_hardware
from specmodel.readouts import point_readouts

GIB = 2**30


def test_the_articles_default_scenario_fits():
    ev = evaluate()
    assert bool(ev.fits)
    assert float(ev.memory_required_bytes) < float(ev.usable_memory_bytes)


def test_1024_sequences_at_context_2048_do_not_fit_on_one_h100():
    ev = evaluate(concurrency=1024, context=2048)
    assert not bool(ev.fits)
    # Not even the target alone: 1024 x 2304 tokens x 144 KiB is 324 GiB of cache.
    assert not bool(evaluate(concurrency=1024, context=2048, drafter="ngram").fits)


def test_usable_memory_is_capacity_times_utilisation():
    ev = evaluate()  # an H100, which reports 81,559 MiB (nvidia-smi)
    assert float(ev.usable_memory_bytes) == pytest.approx(81559 * 2**20 * 0.9)
    half = Settings().with_constants(GPU_MEMORY_UTILIZATION=0.5)
    assert float(evaluate(settings=half).usable_memory_bytes) == pytest.approx(81559 * 2**20 * 0.5)


def test_memory_required_adds_both_models_and_the_workspace():
    ev = evaluate(concurrency=8, context=1000)
    tokens = 1000 + Settings().constants.GENERATED_TOKENS
    expected = (
        float(ev.target_weight_bytes)
        + float(ev.draft_weight_bytes)
        + Settings().constants.WORKSPACE_BYTES
        + 8 * tokens * (float(ev.target_kv_bytes_per_token) + float(ev.draft_kv_bytes_per_token))
    )
    assert float(ev.memory_required_bytes) == pytest.approx(expected, rel=1e-12)


def test_max_concurrency_is_lower_with_a_draft_model_by_its_kv_share():
    ev = evaluate(context=2048)
    with_draft, without = int(ev.max_concurrency), int(ev.max_concurrency_without_draft)
    assert without > with_draft > 0
    # Cache per sequence grows by the draft's share; the draft's weights take a little more.
    kv_t, kv_d = float(ev.target_kv_bytes_per_token), float(ev.draft_kv_bytes_per_token)
    free = float(ev.usable_memory_bytes) - float(ev.target_weight_bytes) - Settings().constants.WORKSPACE_BYTES
    expected = without * kv_t / (kv_t + kv_d) * (free - float(ev.draft_weight_bytes)) / free
    assert abs(with_draft - expected) <= 1.5
    # The reduction is the draft's share of the cache (44% for Qwen3-0.6B) within the weights' 2%.
    assert 1 - with_draft / without == pytest.approx(kv_d / (kv_t + kv_d), abs=0.03)


def test_ngram_takes_no_memory_and_costs_no_sequences():
    ev = evaluate(drafter="ngram", context=4096)
    assert int(ev.max_concurrency) == int(ev.max_concurrency_without_draft)


@given(
    context=st.integers(0, 32768),
    drafter=st.sampled_from(["qwen3-0.6b", "qwen3-1.7b", "ngram", "eagle"]),
    hardware=st.sampled_from(["h100-sxm", "h200", "l40s", "mi300x"]),
)
def test_max_concurrency_is_the_largest_batch_that_fits(context, drafter, hardware):
    m = int(evaluate(context=context, drafter=drafter, hardware=hardware).max_concurrency)
    if m >= 1:
        assert bool(evaluate(concurrency=m, context=context, drafter=drafter, hardware=hardware).fits)
    assert not bool(evaluate(concurrency=m + 1, context=context, drafter=drafter, hardware=hardware).fits)


def test_a_model_that_does_not_fit_at_all_has_max_concurrency_zero():
    # Qwen3-32B in bf16 is 61 GiB of weights; an L40S offers 40 GiB.
    ev = evaluate(target="qwen3-32b", hardware="l40s", drafter="ngram")
    assert int(ev.max_concurrency) == 0 and not bool(ev.fits)
    assert float(ev.target_weight_bytes) > float(ev.usable_memory_bytes)


def test_the_point_readouts_carry_fits_and_both_maxima():
    values = point_readouts(evaluate(concurrency=64))
    assert values["fits"] is True
    assert isinstance(values["max_concurrency"], int) and isinstance(values["max_concurrency_without_draft"], int)
    assert values["max_concurrency_without_draft"] > values["max_concurrency"] >= 64


def test_max_concurrency_formula():
    assert (
        int(memory.max_concurrency(100 * GIB, 20 * GIB, 2**20, context=1024, generated_tokens=0, workspace_bytes=0))
        == 80
    )
    assert (
        int(
            memory.max_concurrency(
                10 * GIB, 20 * GIB, 2**20, context=1024, generated_tokens=256, workspace_bytes=2 * GIB
            )
        )
        == 0
    )


def test_more_memory_holds_more_sequences():
    maxima = [int(evaluate(hardware=h).max_concurrency) for h in ("l40s", "h100-sxm", "h200", "b200", "mi300x")]
    capacities = [get_hardware(h).memory_capacity.value for h in ("l40s", "h100-sxm", "h200", "b200", "mi300x")]
    assert maxima == sorted(maxima) and capacities == sorted(capacities)
    assert np.all(np.diff(maxima) > 0)
