"""Where a steady batch's prefill lands (:mod:`specmodel.model.prefill`): identities and limits.

* Spread evenly (no token budget), a pass carries ``lambda T f`` prefill FLOPs, as before the
  budget existed.
* Whole chunks move no work: with a pass time linear in its FLOPs the mean is the even one,
  and with the engine's convex combination of memory and arithmetic it is at least that
  (Jensen), reaching it when the decode pass is already bound by arithmetic.
* Fewer than one prompt per pass: ``(1 - lambda) t(0) + lambda t(T f)``.
* The budget: a whole prompt when it fits in what the running sequences leave, else the rest
  of the budget, never less than one token.
* The vllm profile's budget is vLLM's default (8192 on an H100), and without it the profile
  gives the even spread's times.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from specmodel.model import prefill
from specmodel.model.engines import engine_catalog
from specmodel.model.evaluate import evaluate
from specmodel.model.roofline import combined_time
from specmodel.model.settings import Settings

positive = st.floats(0.01, 100.0)


@given(prompts=st.floats(0.0, 20.0), tokens=st.floats(1.0, 5000.0), chunk=st.floats(1.0, 5000.0))
def test_whole_chunks_move_no_work_when_time_is_linear_in_flops(prompts, tokens, chunk):
    def linear(flops):
        return 3.0 + 2e-3 * np.asarray(flops)

    lumpy = prefill.mean_pass_time(linear, prompts, tokens, 1.0, min(chunk, tokens))
    assert float(lumpy) == pytest.approx(float(linear(prompts * tokens)), rel=1e-9, abs=1e-12)


@given(memory=positive, arithmetic=positive, p=st.floats(1.0, 8.0), prompts=st.floats(0.0, 5.0),
       tokens=st.floats(1.0, 2000.0), chunk=st.floats(1.0, 2000.0))  # fmt: skip
def test_whole_chunks_cost_at_least_the_even_spread_under_a_convex_combination(
    memory, arithmetic, p, prompts, tokens, chunk
):
    def engine(flops):
        return combined_time(memory, arithmetic + 1e-2 * np.asarray(flops), p)

    lumpy = float(prefill.mean_pass_time(engine, prompts, tokens, 1.0, min(chunk, tokens)))
    even = float(prefill.mean_pass_time(engine, prompts, tokens, 1.0, math.nan))
    assert lumpy >= even * (1 - 1e-9)


def test_no_budget_spreads_the_prefill_evenly():
    seen = []
    prefill.mean_pass_time(lambda f: seen.append(float(f)) or np.asarray(1.0), 0.5, 800.0, 2.0, math.nan)
    assert seen == [0.5 * 800.0 * 2.0]


def test_fewer_than_one_prompt_per_pass_lands_whole_in_that_share_of_the_passes():
    def time(flops):
        return np.maximum(1.0, np.asarray(flops) / 100.0)

    got = prefill.mean_pass_time(time, 0.25, 800.0, 1.0, 800.0)
    assert float(got) == pytest.approx(0.75 * 1.0 + 0.25 * 8.0)


def test_arithmetic_bound_passes_pay_the_same_either_way():
    def time(flops):
        return np.maximum(1.0, 5.0 + np.asarray(flops) / 100.0)  # always past the memory time

    assert float(prefill.mean_pass_time(time, 2.6, 838.0, 1.0, 838.0)) == pytest.approx(5.0 + 2.6 * 8.38)


def test_the_chunk_is_the_prompt_or_what_the_budget_leaves():
    assert prefill.prefill_chunk(838, 8192, 512) == 838.0
    assert prefill.prefill_chunk(20_000, 8192, 512) == 7680.0
    assert prefill.prefill_chunk(500, 8192, 9000) == 1.0
    np.testing.assert_array_equal(prefill.prefill_chunk(np.array([100, 9000]), 8192, 0), [100.0, 8192.0])


def test_prompts_per_pass_is_the_sequences_that_finish():
    assert prefill.prompts_per_pass(128, 2.33, 322) == pytest.approx(128 * 2.33 / 322)


def test_vllm_budget_is_its_default_and_without_it_the_even_spread_returns():
    vllm = engine_catalog()["vllm"]
    assert vllm.token_budget == 8192
    scenario = {"concurrency": 128, "context": 838, "generated_tokens": 322, "target": "llama-3.1-8b",
                "drafter": "eagle", "engine": "vllm"}  # fmt: skip
    lumpy = evaluate(**scenario)
    even = evaluate(**scenario, settings=Settings().with_engine(replace(vllm, token_budget=None)))
    # a memory-bound plain pass now pays whole prompts' arithmetic: plain slows more than speculation
    assert float(lumpy.base_tokens_per_s) < float(even.base_tokens_per_s)
    assert float(lumpy.speedup) > float(even.speedup)
    # the decode-only speedup has no prefill, so the budget does not touch it
    assert float(lumpy.decode_speedup) == pytest.approx(float(even.decode_speedup), rel=1e-12)
