"""Each quantity has one home: replacing the one function the README's map names changes
every result that depends on it, through every path (readouts, steady and cohort timing)."""

from __future__ import annotations

import numpy as np
import pytest

from specmodel import evaluate
from specmodel.model import parallel
from specmodel.model.drafters import DraftTerms, NgramLookup


def test_the_all_reduce_time_is_the_one_function_every_pass_calls(monkeypatch):
    before = evaluate(concurrency=[1, 64], tensor_parallel=4, engine=["ideal", "vllm"])
    monkeypatch.setattr(parallel, "allreduce_time", lambda message, gpus, bandwidth, latency: np.full(
        np.broadcast(message, gpus).shape, 1e-4))  # fmt: skip
    after = evaluate(concurrency=[1, 64], tensor_parallel=4, engine=["ideal", "vllm"])
    # Qwen3-8B: 36 layers, two all-reduces each, now 0.1 ms apiece whatever the message
    assert np.all(after.verify_allreduce_time == pytest.approx(2 * 36 * 1e-4))
    # the timing of both batchings (the ideal engine's cohort, vLLM's steady batch) moves with it
    assert np.all(after.spec_tokens_per_s != before.spec_tokens_per_s)
    assert np.all(after.base_tokens_per_s != before.base_tokens_per_s)


def test_the_ngram_drafters_cost_is_its_own_engine_terms(monkeypatch):
    drafters = np.array(["ngram", "qwen3-0.6b", "eagle"])
    before = evaluate(concurrency=8, drafter=drafters, engine="vllm")

    def slow_lookup(self, engine, first_acceptance):
        return DraftTerms(step_s=0.0, lookup_s=1e-3, drafting_share=np.ones(np.shape(first_acceptance)))

    monkeypatch.setattr(NgramLookup, "engine_terms", slow_lookup)
    after = evaluate(concurrency=8, drafter=drafters, engine="vllm")
    assert float(after.speedup[0]) < float(before.speedup[0])  # 1 ms of CPU per sequence and iteration
    np.testing.assert_array_equal(after.speedup[1:], before.speedup[1:])  # the other drafters as before
