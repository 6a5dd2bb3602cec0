"""Mixture-of-experts passes priced with the efficiency of the grouped expert multiplies:
the curve eff(m), its data and sources, and what it does to a pass."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from specmodel import evaluate
from specmodel.model import architecture as a
from specmodel.model.engines import engine_catalog
from specmodel.model.experts import (
    expected_distinct_experts,
    grouped_gemm_efficiency,
    routed_expert_compute_time,
    tokens_per_expert,
)
from specmodel.model.kernels import FP8_OVER_BF16_PEAK, curve_constants, get_kernel, kernel_catalog
from specmodel.model.passes import PassCoefficients, price_pass
from specmodel.model.settings import Settings
from specmodel.model.specs import get_architecture, get_hardware

H100 = get_hardware("h100-sxm")
PEAK = H100.peak_flops.value
TRITON = "triton-fused-moe"

# --------------------------------------------------------------------------- the curve


def test_the_curve_rises_from_zero_with_slope_e_max_over_m_half():
    m = np.array([1e-9, 1e-6])
    assert np.allclose(grouped_gemm_efficiency(m, 0.82, 245.0) / m, 0.82 / 245.0, rtol=1e-6)
    assert float(grouped_gemm_efficiency(0.0, 0.82, 245.0)) == 0.0


def test_the_curve_tends_to_e_max_and_is_half_of_it_at_m_half():
    assert float(grouped_gemm_efficiency(1e12, 0.82, 245.0)) == pytest.approx(0.82, rel=1e-9)
    assert float(grouped_gemm_efficiency(245.0, 0.82, 245.0)) == pytest.approx(0.41)
    assert np.all(np.diff(grouped_gemm_efficiency(np.linspace(0, 1e4, 50), 0.82, 245.0)) > 0)


def test_tokens_per_expert_are_the_routed_pairs_over_the_experts_touched():
    assert float(tokens_per_expert(1, 128, 8)) == 1.0  # one token: its k experts, one token each
    assert float(tokens_per_expert(0, 128, 8)) == 0.0
    n = np.array([4.0, 64.0, 1024.0])
    assert np.allclose(tokens_per_expert(n, 128, 8), n * 8 / expected_distinct_experts(n, 128, 8))
    # once every expert is touched it is B k / E, the m the curves were fitted with
    assert float(tokens_per_expert(4096, 128, 8)) == pytest.approx(4096 * 8 / 128)


# --------------------------------------------------------------------------- the data


def test_every_curve_constant_has_its_source_and_unit():
    for kernel in kernel_catalog().values():
        for curve in kernel.curves:
            for constant in (curve.e_max, curve.m_half):
                assert "https://" in constant.source
            assert curve.e_max.unit == f"of {curve.peak.upper()} dense peak"
            assert curve.m_half.unit == "tokens per expert"
            assert 0 < curve.e_max_of_bf16_peak <= FP8_OVER_BF16_PEAK


def test_the_curves_are_the_published_fits():
    mixtral, qwen = get_kernel(TRITON).curves
    assert (mixtral.e_max.value, mixtral.m_half.value, mixtral.peak) == (0.82, 245.0, "bf16")
    assert (qwen.e_max_of_bf16_peak, qwen.m_half.value) == (pytest.approx(0.225), 41.0)
    (deepgemm,) = get_kernel("deepgemm-fp8").curves
    assert (deepgemm.e_max.value, deepgemm.m_half.value, deepgemm.peak) == (0.76, 213.0, "fp8")


@pytest.mark.parametrize("index", [0, 1])
def test_each_triton_curve_reproduces_its_kernel_times_from_a_few_tokens_per_expert(index):
    # vLLM PR #24700, "Benchmarks on H100": per-layer fused_moe times; the curve's time is
    # FLOPs / (peak eff(m)) with FLOPs = 2 x 3 H N per routed token-expert pair
    curve = get_kernel(TRITON).curves[index]
    e, k = curve.experts, curve.experts_per_token
    for tokens, seconds in curve.points:
        m = tokens_per_expert(tokens, e, k)
        flops = 2 * curve.expert_parameters * tokens * k
        model = float(routed_expert_compute_time(flops, PEAK, m, curve.e_max_of_bf16_peak, curve.m_half.value))
        if m >= 4:
            assert model == pytest.approx(seconds, rel=0.15)  # the fit's own residuals: at most 13%
        else:  # a token or a few per touched expert: the curve's weight stream of the touched
            # experts, below the kernel (its fixed latency: 44.5 us at batch 1 for 8 FP8 experts
            # whose bytes take 11 us); at one token nearer it than with m = B k/E over all E
            # experts, which charges all their weights (3.0 and 5.0 times the kernel's time)
            e_max, m_half = curve.e_max_of_bf16_peak, curve.m_half.value
            over_all = float(routed_expert_compute_time(flops, PEAK, tokens * k / e, e_max, m_half))
            assert 0.3 < model / seconds < 1.0
            assert tokens > 1 or abs(np.log(model / seconds)) < abs(np.log(over_all / seconds))


def test_mixtral_layer_at_64_tokens_is_the_kernels_483_us():
    # PR #24700: Mixtral-8x7B BF16 tp=2 on H100, B = 64 tokens, 483.1 us for the whole layer
    mixtral = get_kernel(TRITON).curves[0]
    e_max, m_half = curve_constants(TRITON, mixtral.expert_parameters)
    m = tokens_per_expert(64, 8, 2)
    compute = float(routed_expert_compute_time(2 * mixtral.expert_parameters * 64 * 2, PEAK, m, e_max, m_half))
    assert compute == pytest.approx(483.1e-6, rel=0.10)  # 453 us
    weights = 8 * mixtral.expert_parameters * 2 / (0.8 * H100.memory_bandwidth.value)  # all 8 experts, BF16
    assert max(compute, weights) == pytest.approx(483.1e-6, rel=0.10)  # the roofline's max: 525 us


def test_a_model_takes_the_curve_of_the_expert_nearest_its_own_size():
    small = a.expert_parameters(get_architecture("qwen3-30b-a3b"))  # 2048 x 768
    large = a.expert_parameters(get_architecture("qwen3-235b-a22b"))  # 4096 x 1536, nearer 2048 x 768
    e_max, m_half = curve_constants(TRITON, np.array([small, large, large / 8, 3 * 4096 * 14336.0, 0.0]))
    assert e_max.tolist() == pytest.approx([0.225, 0.225, 0.225, 0.82, 0.0])
    assert m_half.tolist() == [41.0, 41.0, 41.0, 245.0, 0.0]
    assert curve_constants(None, small) == (0.0, 0.0)


# --------------------------------------------------------------------------- the passes


def _verify(target: str, engine: str, batch: float, positions: float = 16.0):
    """The verify pass of ``target`` over ``positions`` per sequence on one H100 under ``engine``."""
    profile = engine_catalog()[engine]
    c = PassCoefficients.of_model(get_architecture(target), 2.0)
    eta = profile.compute_efficiency_or(0.5)
    return price_pass(c, 2048.0, positions, H100, 0.8, eta, 1.0, profile.moe_kernel)


def test_the_engine_profiles_name_their_kernel():
    assert engine_catalog()["vllm"].moe_kernel == TRITON
    assert engine_catalog()["ideal"].moe_kernel is None
    assert TRITON in kernel_catalog()


def test_a_moe_verify_pass_at_64_sequences_under_vllm_costs_more_than_its_bytes():
    # 64 x 16 = 1024 tokens, m = 64 tokens per expert: PR #24700's Qwen3-30B-A3B layer at 1024
    # tokens takes 536 us, three times its FP8 bytes' 180 us at 3.35 TB/s; the model's routed
    # experts per layer take their FLOPs at eff(64) = 0.137 of the BF16 peak
    price = _verify("qwen3-30b-a3b", "vllm", 64.0)
    assert float(price.compute_time(64.0)) > float(price.memory_time(64.0))
    assert float(price.engine_time(64.0, 2.0)) > float(price.bytes(64.0)) / H100.memory_bandwidth.value
    layers = a.moe_layer_count(get_architecture("qwen3-30b-a3b"))
    m = float(tokens_per_expert(1024.0, 128, 8))
    per_layer = float(price.expert_flops(64.0)) / layers / (PEAK * float(grouped_gemm_efficiency(m, 0.225, 41.0)))
    assert per_layer == pytest.approx(536.3e-6, rel=0.10)  # 570 us, the FP8 kernel's absolute rate


def test_the_routed_experts_are_the_only_flops_the_curve_prices():
    price = _verify("qwen3-30b-a3b", "vllm", 64.0)
    arch = get_architecture("qwen3-30b-a3b")
    per_position = 2.0 * a.moe_layer_count(arch) * 8 * a.expert_parameters(arch)
    assert float(price.expert_flops(1.0)) == pytest.approx(16 * per_position)
    plain = PassCoefficients.of_model(arch, 2.0)
    assert float(price.flops(64.0)) == pytest.approx(64 * 16 * plain.flops_per_position(2048.0))


def test_the_ideal_engine_and_dense_models_are_unchanged():
    moe = _verify("qwen3-30b-a3b", "ideal", 64.0)
    assert float(moe.compute_time(64.0)) == float(moe.flops(64.0)) / (0.5 * PEAK)
    dense = _verify("qwen3-8b", "vllm", 64.0)
    eta = engine_catalog()["vllm"].compute_efficiency_or(0.5)
    assert float(dense.compute_time(64.0)) == float(dense.flops(64.0)) / (eta * PEAK)
    for engine in ("ideal", "vllm"):
        on = evaluate(target="qwen3-8b", concurrency=[1, 64], engine=engine)
        off = evaluate(target="qwen3-8b", concurrency=[1, 64], engine=engine, settings=_without_kernel())
        np.testing.assert_array_equal(on.speedup, off.speedup)


@pytest.mark.parametrize("batching", ["steady", "cohort"])
def test_under_vllm_a_moe_tree_verify_gains_less_at_batch(batching):
    fields = {"target": "qwen3-30b-a3b", "concurrency": [32, 64], "engine": "vllm", "batching": batching, **TREE}
    before = evaluate(settings=_without_kernel(), **fields)
    after = evaluate(**fields)
    assert np.all(after.speedup < before.speedup)
    assert np.all(after.verify_compute_time > before.verify_compute_time)
    np.testing.assert_array_equal(after.verify_memory_time, before.verify_memory_time)
    ideal = evaluate(target="qwen3-30b-a3b", concurrency=[32, 64], engine="ideal", settings=_without_kernel(), **TREE)
    np.testing.assert_array_equal(evaluate(target="qwen3-30b-a3b", concurrency=[32, 64], **TREE).speedup, ideal.speedup)


#: A 16-position tree verify: EAGLE, gamma 5, top 4 per step, 16 positions verified.
TREE = {"drafter": "eagle", "gamma": 5, "tree_topk": 4, "verify_tokens": 16}


def _without_kernel():
    """Settings whose ``vllm`` profile names no grouped-GEMM kernel (the model before the curve)."""
    settings = Settings()
    return settings.with_engine(replace(settings.engine("vllm"), moe_kernel=None))
