"""Quantized weights and caches: their bytes, the peaks their arithmetic runs at, vLLM's names."""

from __future__ import annotations

from dataclasses import fields, replace

import numpy as np
import pytest

from specmodel import evaluate
from specmodel.errors import SpecModelError
from specmodel.model import architecture as arch_
from specmodel.model import quantization as q
from specmodel.model.evaluation import Evaluation
from specmodel.model.passes import PassCoefficients, price_pass
from specmodel.model.specs import add_architecture, get_architecture, get_hardware

QWEN8 = get_architecture("qwen3-8b")
MOE = get_architecture("qwen3-30b-a3b")
H100, A100 = get_hardware("h100-sxm"), get_hardware("a100-80gb")
FPP = 2.0  # FLOPs per parameter


def _pass(arch, hw=H100, batch=64.0, positions=5.0):
    """A verify-like pass of ``arch`` on ``hw``: its price and its coefficients."""
    c = PassCoefficients.of_model(arch, FPP)
    return price_pass(c, 2048.0, positions, hw, 0.8, 0.75), c


def test_fp8_weights_halve_the_bytes_of_the_quantized_linear_layers_and_nothing_else():
    fp8 = q.quantized(QWEN8, "fp8", None)
    linear = arch_.linear_parameters(QWEN8)
    assert arch_.weight_bytes(QWEN8) - arch_.weight_bytes(fp8) == linear  # 2 B -> 1 B each
    assert arch_.lm_head_bytes(fp8) == arch_.lm_head_bytes(QWEN8)  # the output head stays in bf16
    assert arch_.input_embedding_bytes(fp8) == arch_.input_embedding_bytes(QWEN8)
    assert arch_.kv_cache_bytes_per_token(fp8) == arch_.kv_cache_bytes_per_token(QWEN8)
    plain, _ = _pass(QWEN8)
    halved, _ = _pass(fp8)
    # the pass reads exactly the linear layers' halved bytes less, its cache unchanged
    assert plain.weights_read(64.0) - halved.weights_read(64.0) == linear
    assert plain.bytes(64.0) - halved.bytes(64.0) == pytest.approx(linear, rel=1e-12)
    assert plain.kv_memory_time(64.0) == halved.kv_memory_time(64.0)


def test_fp8_experts_halve_each_expert_and_the_routed_bytes():
    fp8 = q.quantized(MOE, "fp8", None)
    assert arch_.expert_bytes(fp8) * 2 == arch_.expert_bytes(MOE)
    plain, _ = _pass(MOE)
    halved, _ = _pass(fp8)
    assert halved.routed_bytes(8.0) * 2 == pytest.approx(plain.routed_bytes(8.0))


def test_an_fp8_cache_halves_the_kv_bytes_per_token():
    fp8 = q.quantized(QWEN8, None, "fp8")
    assert arch_.kv_cache_bytes_per_token(fp8) * 2 == arch_.kv_cache_bytes_per_token(QWEN8)
    assert arch_.weight_bytes(fp8) == arch_.weight_bytes(QWEN8)
    plain, _ = _pass(QWEN8)
    halved, _ = _pass(fp8)
    assert halved.kv_memory_time(64.0) * 2 == pytest.approx(plain.kv_memory_time(64.0))


def test_int4_stores_half_a_byte_a_weight_plus_group_128_scales_and_zero_points():
    per_weight = 0.5 + (2 + 0.5) / 128  # fp16 scale and 4-bit zero point per 128 weights
    assert q.quantized_weight_bytes("int4") == per_weight
    int4 = q.quantized(QWEN8, "int4", None)
    linear = arch_.linear_parameters(QWEN8)
    kept = (arch_.parameter_count(QWEN8) - linear) * 2
    assert arch_.weight_bytes(int4) == kept + round(linear * per_weight)


def test_fp8_on_an_h100_doubles_the_quantized_flops_rate_but_not_attentions():
    fp8 = q.quantized(QWEN8, "fp8", None)
    plain, c = _pass(QWEN8)
    fast, cq = _pass(fp8)
    assert float(fast.quantized_speedup) == pytest.approx(1978.9 / 989.4)
    assert fast.flops(64.0) == plain.flops(64.0)  # the same arithmetic, run faster
    linear = cq.quantized_flops_per_position
    assert linear == FPP * arch_.active_linear_parameters(QWEN8)
    # what the pass saves is half the linear layers' time; attention and the output head are not sped up
    saved = plain.compute_time(64.0) - fast.compute_time(64.0)
    linear_time = 64.0 * 5.0 * linear / (H100.peak_flops.value * 0.75)
    assert saved == pytest.approx(linear_time * (1 - 989.4 / 1978.9))
    rest = (plain.flops(64.0) - 64.0 * 5.0 * linear) / (H100.peak_flops.value * 0.75)  # attention, head, norms
    assert fast.compute_time(64.0) == pytest.approx(rest + linear_time * 989.4 / 1978.9)
    assert c.quantized_flops_per_position == 0.0


def test_fp8_on_an_a100_runs_at_the_bf16_peak():
    fp8 = q.quantized(QWEN8, "fp8", None)
    plain, _ = _pass(QWEN8, A100)
    dequantized, _ = _pass(fp8, A100)
    assert float(dequantized.quantized_speedup) == 1.0
    assert dequantized.compute_time(64.0) == pytest.approx(plain.compute_time(64.0))
    assert q.matmul_peak_flops(A100, "fp8") == A100.peak_flops.value


def test_int8_runs_at_the_int8_peak_and_int4_at_bf16():
    assert q.matmul_peak_flops(A100, "int8") == 624e12
    assert q.matmul_peak_flops(H100, "int4") == H100.peak_flops.value
    ratios = q.peak_ratio(H100, np.array([0.0, 1.0, 2.0, 3.0]))
    assert ratios.tolist() == pytest.approx([1.0, 1978.9 / 989.4, 1978.9 / 989.4, 1.0])


def test_the_cohorts_per_sequence_arithmetic_counts_the_faster_linear_layers():
    fp8 = q.quantized(QWEN8, "fp8", None)
    fast, _ = _pass(fp8, positions=1.0)
    _, _, c1 = fast.cohort_terms()
    assert c1 == pytest.approx(fast.compute_time(1.0))


def test_without_a_format_the_evaluation_is_exactly_what_it_was():
    same = add_architecture(replace(QWEN8, key="qwen3-8b-as-is", weight_format=None, kv_cache_format=None))
    grid = {"concurrency": [[1], [16], [64]], "context": [512, 4096]}
    base = evaluate(**grid)
    copy = evaluate(target=same, **grid)
    for f in fields(Evaluation):
        a, b = getattr(base, f.name), getattr(copy, f.name)
        if isinstance(a, np.ndarray):
            assert np.array_equal(a, b, equal_nan=True), f.name
        else:
            assert a == b, f.name


def test_a_quantized_target_evaluates_faster_where_it_reads_fewer_bytes():
    key = q.add_quantized(QWEN8, "fp8", "fp8")
    assert key == "qwen3-8b+fp8-weights+fp8-kv"
    base, fast = evaluate(concurrency=1), evaluate(concurrency=1, target=key)
    assert float(fast.base_tokens_per_s) > 1.5 * float(base.base_tokens_per_s)
    assert float(fast.verify_bytes) < 0.6 * float(base.verify_bytes)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("fp8", "fp8"),
        ("fbgemm_fp8", "fp8"),
        ("modelopt", "fp8"),
        ("awq", "int4"),
        ("awq_marlin", "int4"),
        ("gptq", "int4"),
        ("gptq_marlin", "int4"),
        ("bitsandbytes", "int4"),
    ],
)
def test_vllm_quantization_names_map_to_formats(name, expected):
    assert q.weight_format_of_method(name) == expected


def test_compressed_tensors_is_read_from_its_config():
    def block(w, a):
        group = {"weights": {"type": w[0], "num_bits": w[1], "group_size": 128}, "input_activations": a}
        return {"quant_method": "compressed-tensors", "config_groups": {"group_0": group}}

    assert (
        q.weight_format_of_method("compressed-tensors", block(("float", 8), {"type": "float", "num_bits": 8})) == "fp8"
    )
    assert q.weight_format_of_method("compressed-tensors", block(("int", 8), {"type": "int", "num_bits": 8})) == "int8"
    assert q.weight_format_of_method("compressed-tensors", block(("int", 4), None)) == "int4"
    with pytest.raises(SpecModelError, match="not modelled"):
        q.weight_format_of_method("compressed-tensors", block(("int", 8), None))  # W8A16
    with pytest.raises(SpecModelError, match="quantization_config is needed"):
        q.weight_format_of_method("compressed-tensors")


def test_a_config_block_maps_to_its_format():
    assert q.weight_format_of_config({"quant_method": "gptq", "bits": 4, "group_size": 128}) == "int4"
    assert q.weight_format_of_config({"quant_method": "fp8", "activation_scheme": "dynamic"}) == "fp8"
    assert q.weight_format_of_config({"quant_method": "bitsandbytes", "load_in_4bit": True}) == "int4"
    with pytest.raises(SpecModelError, match=r"group_size 32 .*allowed: bits 4, group_size 128"):
        q.weight_format_of_config({"quant_method": "awq", "bits": 4, "group_size": 32})
    with pytest.raises(SpecModelError, match="quant_method 'hqq' is not modelled; allowed:"):
        q.weight_format_of_config({"quant_method": "hqq"})


def test_a_checkpoint_with_a_quantization_config_is_registered_in_its_format():
    awq = replace(QWEN8, quantization_config={"quant_method": "awq", "bits": 4, "group_size": 128})
    assert q.add_quantized(awq) == "qwen3-8b+int4-weights"
    assert q.add_quantized(QWEN8) == "qwen3-8b"  # nothing quantized: the model itself


@pytest.mark.parametrize(("name", "expected"), [("auto", None), ("bfloat16", None), ("float16", None),
                                                ("fp8", "fp8"), ("fp8_e4m3", "fp8"), ("fp8_e5m2", "fp8")])  # fmt: skip
def test_vllm_kv_cache_dtypes_map_to_formats(name, expected):
    assert q.kv_cache_format_of_dtype(name) == expected


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: q.weight_format_of_method("experts_int8"),
            r"--quantization 'experts_int8' is not modelled; allowed: fp8,",
        ),
        (lambda: q.weight_format_of_method("gguf"), r"--quantization 'gguf' is not modelled; allowed: fp8,"),
        (lambda: q.kv_cache_format_of_dtype("fp8_inc"), r"--kv-cache-dtype 'fp8_inc' is not modelled; allowed: auto,"),
        (lambda: q.quantized(QWEN8, "fp4", None), r"weight format 'fp4' .* is not modelled; allowed:"),
    ],
)
def test_unknown_names_are_refused_in_one_line(call, message):
    with pytest.raises(SpecModelError, match=message) as err:
        call()
    assert "\n" not in str(err.value)


def test_a_variant_has_a_key_and_name_of_its_own():
    v = q.quantized(QWEN8, "int8", "fp8")
    assert (v.key, v.weight_format, v.kv_cache_format) == ("qwen3-8b+int8-weights+fp8-kv", "int8", "fp8")
    assert v.name == "Qwen3-8B (INT8 weights, FP8 KV cache)"
    assert q.quantized(QWEN8, None, None) is QWEN8
