"""Where the time goes: the wall clock per output token split into its parts (the model's
breakdown behind the article's section 4), and each user's token rate."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from specmodel import evaluate
from specmodel.model.serving import best_at_rate
from specmodel.model.timing import TIME_PARTS

DRAFT_PARTS = [TIME_PARTS.index(p) for p in ("draft_weights", "draft_kv", "draft_arithmetic")]


@given(
    concurrency=st.sampled_from([1, 3, 16, 64, 300, 1024]),
    context=st.sampled_from([0, 256, 2048, 8192]),
    gamma=st.integers(1, 8),
    drafter=st.sampled_from(["qwen3-0.6b", "qwen3-1.7b", "ngram", "eagle", "eagle3", "mtp"]),
    engine=st.sampled_from(["ideal", "vllm"]),
    batching=st.sampled_from([None, "cohort", "steady"]),
    tensor_parallel=st.sampled_from([1, 2, 4]),
)
def test_the_parts_sum_to_the_time_per_token(concurrency, context, gamma, drafter, engine, batching, tensor_parallel):
    ev = evaluate(concurrency=concurrency, context=context, gamma=gamma, drafter=drafter, engine=engine,
                  batching=batching, tensor_parallel=tensor_parallel)  # fmt: skip
    spec, base = np.asarray(ev.spec_time_parts), np.asarray(ev.base_time_parts)
    assert spec.shape == base.shape == (len(TIME_PARTS),)
    assert np.all(spec >= 0) and np.all(base >= 0)
    assert abs(spec.sum() * float(ev.spec_tokens_per_s) - 1) < 1e-9
    assert abs(base.sum() * float(ev.base_tokens_per_s) - 1) < 1e-9
    assert np.all(base[DRAFT_PARTS] == 0)
    if tensor_parallel == 1:
        assert spec[TIME_PARTS.index("communication")] == 0 == base[TIME_PARTS.index("communication")]
    if engine == "ideal":
        assert spec[TIME_PARTS.index("engine_fixed")] == 0 == base[TIME_PARTS.index("engine_fixed")]


def test_an_idle_verify_pass_has_no_arithmetic_part_and_ngram_no_draft_part():
    ev = evaluate(concurrency=[1, 64], drafter="ngram")
    parts = np.asarray(ev.spec_time_parts)
    assert np.all(ev.verify_idle > 0.4)
    tiny = 1e-12 * parts.sum(axis=-1)  # rounding of the cohort's closed-form sums
    assert np.all(parts[:, TIME_PARTS.index("target_arithmetic")] <= tiny)
    assert np.all(parts[:, DRAFT_PARTS] == 0)
    busy = evaluate(concurrency=1024, context=256, drafter="ngram")
    assert float(busy.verify_idle) == 0 and float(busy.spec_time_parts[TIME_PARTS.index("target_arithmetic")]) > 0


def test_at_64_sequences_the_draft_cache_is_the_largest_part_speculation_adds():
    """The article's section 4: at the defaults and 64 sequences, what grows over the plain step
    is the drafter's cache reads, while the verify pass is still memory-bound."""
    ev = evaluate(concurrency=64)
    extra = np.asarray(ev.spec_time_parts) - np.asarray(ev.base_time_parts)
    assert TIME_PARTS[int(np.argmax(extra))] == "draft_kv"
    assert float(ev.verify_idle) > 0.4


def test_each_users_rate_is_the_total_over_the_sequences():
    b = np.array([1, 8, 64, 512])
    ev = evaluate(concurrency=b, engine="vllm")
    np.testing.assert_allclose(ev.spec_tokens_per_s_per_sequence * b, ev.spec_tokens_per_s, rtol=1e-12)
    np.testing.assert_allclose(ev.base_tokens_per_s_per_sequence * b, ev.base_tokens_per_s, rtol=1e-12)


def test_best_at_rate_keeps_only_what_meets_the_target_and_fits():
    assert best_at_rate([100, 80, 50], [100, 160, 200], [True, False, True], 75) == 0
    assert best_at_rate([100, 80, 50], [100, 160, 200], [True, True, True], 40) == 2
    assert best_at_rate([100, 80, 50], [100, 160, 200], [False, False, False], 1) == -1
