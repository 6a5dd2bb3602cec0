"""One iteration's passes and the plain step, each over the full batch, as the evaluation reports
them (a draft pass's and the plain step's bytes, FLOPs, memory, arithmetic and roofline time;
the verify pass's roofline time): consistent with the wall clock the model times a run by, and
never above the card's roofline."""

from __future__ import annotations

import numpy as np
import pytest

from specmodel.model.evaluate import evaluate
from specmodel.model.roofline import arithmetic_intensity
from specmodel.model.scenario import CONCURRENCY_LADDER
from specmodel.model.settings import Settings
from specmodel.model.specs import get_hardware

BATCH = np.array(CONCURRENCY_LADDER)
GAMMA = 4


def test_at_one_sequence_the_iteration_is_gamma_draft_passes_and_one_verify_pass():
    """A cohort of one sequence runs every iteration at B = 1, so its wall clock per output token
    (the sum of its time parts) times G tokens is E[N_it] iterations of the passes' times."""
    for drafter in ("qwen3-0.6b", "qwen3-1.7b"):
        for context in (256, 2048, 16384):
            ev = evaluate(concurrency=1, gamma=GAMMA, drafter=drafter, context=context)
            iteration = GAMMA * float(ev.draft_step_time) + float(ev.verify_time)
            run = float(ev.spec_time_parts.sum()) * ev.generated_tokens
            assert run == pytest.approx(float(ev.expected_iterations) * iteration, rel=1e-9), (drafter, context)


def test_in_a_steady_batch_the_decode_speedup_is_the_passes_times_at_every_batch():
    """Steady batching advances all B sequences E[X] tokens per iteration: plain over speculative
    time per token is ``t_plain E[X] / (gamma t_draft + t_verify)`` at each rung."""
    ev = evaluate(concurrency=BATCH, gamma=GAMMA, batching="steady")
    iteration = GAMMA * ev.draft_step_time + ev.verify_time
    expected = ev.plain_time * ev.mean_acceptance_length / iteration
    np.testing.assert_allclose(ev.decode_speedup, expected, rtol=1e-9)
    assert ev.draft_step_time.min() > 0 and (np.diff(ev.draft_step_time) > 0).all()


def test_the_plain_step_is_the_plain_time_per_token_of_one_sequence():
    """Plain decoding yields one token per sequence per step: the step's time is the base time
    per output token times the B tokens a step makes (``1 / base_tokens_per_s_per_sequence``)."""
    ev = evaluate(concurrency=BATCH, gamma=GAMMA)
    np.testing.assert_allclose(ev.plain_time, ev.base_time_parts.sum(axis=-1) * BATCH, rtol=1e-9)
    np.testing.assert_allclose(ev.plain_time, 1.0 / ev.base_tokens_per_s_per_sequence, rtol=1e-9)


def test_each_pass_lasts_the_slower_of_its_memory_and_its_arithmetic():
    ev = evaluate(concurrency=BATCH, gamma=GAMMA)
    for name in ("draft_step", "plain", "verify"):
        memory, compute = getattr(ev, f"{name}_memory_time"), getattr(ev, f"{name}_compute_time")
        np.testing.assert_allclose(getattr(ev, f"{name}_time"), np.maximum(memory, compute), rtol=1e-12)
    # the plain step's bytes and FLOPs are the ones its intensity and arithmetic time were read from
    np.testing.assert_allclose(ev.plain_intensity, ev.plain_flops / ev.plain_bytes, rtol=1e-12)
    c = Settings().constants
    hw = get_hardware(Settings().deployment.hardware)
    np.testing.assert_allclose(
        ev.plain_memory_time, ev.plain_bytes / (c.MEMORY_EFFICIENCY * hw.memory_bandwidth.value), rtol=1e-12
    )
    np.testing.assert_allclose(
        ev.plain_compute_time, ev.plain_flops / (c.COMPUTE_EFFICIENCY * hw.peak_flops.value), rtol=1e-12
    )
    # the same passes on the verify side: Q = gamma + 1 positions do gamma + 1 times the plain step's FLOPs
    np.testing.assert_allclose(ev.verify_flops, (GAMMA + 1) * ev.plain_flops, rtol=1e-12)
    np.testing.assert_allclose(ev.verify_bytes, ev.plain_bytes, rtol=1e-12)


def test_on_several_gpus_a_pass_adds_its_all_reduces():
    ev = evaluate(concurrency=BATCH, gamma=GAMMA, target="llama-3-70b", drafter="llama-3.2-1b", tensor_parallel=4)
    roof = np.maximum(ev.verify_memory_time, ev.verify_compute_time)
    assert (ev.verify_allreduce_time > 0).all()
    np.testing.assert_allclose(ev.verify_time, roof + ev.verify_allreduce_time, rtol=1e-12)
    assert (ev.plain_time > np.maximum(ev.plain_memory_time, ev.plain_compute_time)).all()


def test_attained_flops_never_exceed_the_cards_roof():
    """FLOPs over time is at most ``min(peak, bandwidth x intensity)`` for every pass, at every
    batch and context, for a draft model and for a head."""
    grid = {"concurrency": BATCH[:, None, None], "context": np.array([256, 4096, 32768])[None, :, None]}
    hw = get_hardware(Settings().deployment.hardware)
    peak, bandwidth = hw.peak_flops.value, hw.memory_bandwidth.value
    for drafter in ("qwen3-0.6b", "eagle-32k"):
        ev = evaluate(**grid, gamma=np.array([1, 4, 8])[None, None, :], drafter=drafter)
        for flops, moved, time in (
            (ev.plain_flops, ev.plain_bytes, ev.plain_time),
            (ev.verify_flops, ev.verify_bytes, ev.verify_time),
            (ev.draft_step_flops, ev.draft_step_bytes, ev.draft_step_time),
        ):
            roof = np.minimum(peak, bandwidth * arithmetic_intensity(flops, moved))
            assert (flops / time <= roof * (1 + 1e-12)).all(), drafter
            assert (flops / time >= 0.5 * roof).all(), drafter  # and the ideal engine gets near it


def test_an_ngram_lookup_has_no_draft_pass():
    ev = evaluate(concurrency=BATCH, drafter="ngram")
    for name in ("draft_step_flops", "draft_step_memory_time", "draft_step_compute_time", "draft_step_time"):
        assert (getattr(ev, name) == 0).all(), name
    assert (ev.plain_time > 0).all()
