"""Quantized weights and KV caches: what they store per element, which weights they cover, the
arithmetic peak their matrix multiplies run at, and vLLM's names for them.

A model's ``weight_format`` (:class:`specmodel.model.specs.Architecture`) stores the linear
layers of its decoder layers (attention projections, MLPs, experts) in fp8, int8 or int4; the
input embedding, the output head, the norms and the MoE routers keep the checkpoint's
``torch_dtype``. vLLM's ``Fp8Config.get_quant_method`` (and AWQ's, GPTQ's) hands a quantized
method to ``LinearBase`` layers and ``FusedMoE`` experts only; the output head is a
``ParallelLMHead`` (a ``VocabParallelEmbedding``, not a ``LinearBase``) and stays unquantized,
as do norms; Qwen3-MoE's router is a ``ReplicatedLinear`` built with ``quant_config=None``
(vllm-project/vllm, vllm/model_executor/layers/quantization/fp8.py, awq.py, gptq.py;
vllm/model_executor/models/qwen3_moe.py). ``kv_cache_format = "fp8"`` stores every K and V
element in one byte (vLLM's ``--kv-cache-dtype fp8``).

Formats are coded as numbers (:data:`FORMAT_CODES`) so that a grid of passes carries them in
arrays (:class:`specmodel.model.passes.PassCoefficients`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Literal

import numpy as np

from specmodel.errors import SpecModelError
from specmodel.model.specs import Architecture, Hardware, add_architecture
from specmodel.model.types import FloatArray, Numeric
from specmodel.structured_input import excerpt

WeightFormat = Literal["fp8", "int8", "int4"]
KvCacheFormat = Literal["fp8"]

#: Each weight format's code in a pass's coefficients (0: the checkpoint's dtype).
FORMAT_CODES: dict[WeightFormat | None, float] = {None: 0.0, "fp8": 1.0, "int8": 2.0, "int4": 3.0}

#: Weights per scale of a 4-bit group-quantized layer: the default ``group_size`` of AutoGPTQ's
#: ``BaseQuantizeConfig`` and AutoAWQ's ``q_group_size`` (128), and of every AWQ/GPTQ
#: checkpoint vLLM's docs quantize.
INT4_GROUP_SIZE = 128

#: ``--quantization`` values (vllm/model_executor/layers/quantization/__init__.py,
#: ``QuantizationMethods``) that name a format by themselves.
METHOD_FORMATS: dict[str, WeightFormat] = {
    "fp8": "fp8",
    "fbgemm_fp8": "fp8",
    "modelopt": "fp8",
    "awq": "int4",
    "awq_marlin": "int4",
    "gptq": "int4",
    "gptq_marlin": "int4",
    "bitsandbytes": "int4",
}

#: ``--kv-cache-dtype`` values (vllm/config/cache.py, ``CacheDType``) and the cache format each means.
KV_CACHE_DTYPES: dict[str, KvCacheFormat | None] = {
    "auto": None,
    "bfloat16": None,
    "float16": None,
    "fp8": "fp8",
    "fp8_e4m3": "fp8",
    "fp8_e5m2": "fp8",
}


def quantized_weight_bytes(weight_format: WeightFormat, group_size: int = INT4_GROUP_SIZE) -> float:
    """Bytes per weight of a quantized linear layer: fp8 and int8 1; int4
    ``1/2 + (2 + 1/2) / g``, a 4-bit weight plus, per group of g = 128 weights along the input,
    one fp16 scale (2 B) and one 4-bit zero point (1/2 B): 0.51953125 B at g = 128.

    The int4 layout is AWQ's and GPTQ's (AutoAWQ ``WQLinear_GEMM``: ``qweight`` int4 packed,
    ``scales`` fp16 and ``qzeros`` int4 packed per group; AutoGPTQ's ``QuantLinear`` registers
    the same ``qzeros`` buffer; vLLM's ``AWQLinearMethod`` / ``GPTQLinearMethod`` load both).
    fp8 and int8 carry one fp32 scale per tensor or per output channel (vLLM's
    ``Fp8LinearMethod``, compressed-tensors' W8A8), under 0.1 % of the weights' bytes, left out.

    >>> quantized_weight_bytes("fp8"), quantized_weight_bytes("int8"), quantized_weight_bytes("int4")
    (1.0, 1.0, 0.51953125)
    """
    if weight_format == "int4":
        return 0.5 + (2.0 + 0.5) / group_size
    return 1.0


def linear_weight_bytes(arch: Architecture) -> float:
    """Bytes per weight of ``arch``'s decoder linear layers: :func:`quantized_weight_bytes` of its
    ``weight_format``, or its ``torch_dtype``'s bytes b when it has none.

    >>> from specmodel.model.specs import get_architecture
    >>> m = get_architecture("qwen3-8b")
    >>> linear_weight_bytes(m), linear_weight_bytes(quantized(m, "fp8", None))
    (2, 1.0)
    """
    if arch.weight_format is None:
        return arch.bytes_per_element
    return quantized_weight_bytes(arch.weight_format)


def kv_bytes_per_element(arch: Architecture) -> int:
    """Bytes of one cached K or V element: 1 for an fp8 cache (vLLM stores ``fp8_e4m3`` or
    ``fp8_e5m2``, one byte each, with a per-tensor scale), else the model's ``torch_dtype``'s b.

    >>> from specmodel.model.specs import get_architecture
    >>> m = get_architecture("qwen3-8b")
    >>> kv_bytes_per_element(m), kv_bytes_per_element(quantized(m, None, "fp8"))
    (2, 1)
    """
    return 1 if arch.kv_cache_format == "fp8" else arch.bytes_per_element


def matmul_peak_flops(hardware: Hardware, weight_format: WeightFormat | None) -> float:
    """FLOP/s the quantized linear layers of a ``weight_format`` model multiply at on ``hardware``.

    fp8 (W8A8: fp8 weights and activations, vLLM's ``Fp8LinearMethod``) runs at the card's dense
    FP8 tensor-core peak where it has one; on a card without FP8 tensor cores (an A100, compute
    capability 8.0 < 8.9) vLLM runs fp8 checkpoints weight-only through the Marlin kernel,
    dequantizing to 16 bits (fp8.py: ``self.use_marlin = not
    current_platform.has_device_capability(89)``; marlin_utils_fp8.py warns "Weight-only FP8
    compression will be used leveraging the Marlin kernel"), so the BF16 peak. int8 W8A8
    (compressed-tensors' ``CompressedTensorsW8A8Int8``) runs at the dense INT8 peak. int4 is
    weight-only (AWQ, GPTQ, their Marlin kernels, bitsandbytes): the weights are dequantized
    and multiplied in 16 bits at the BF16 peak, as is everything without a format.

    >>> from specmodel.model.specs import get_hardware
    >>> h100, a100 = get_hardware("h100-sxm"), get_hardware("a100-80gb")
    >>> matmul_peak_flops(h100, "fp8") / 1e12, matmul_peak_flops(a100, "fp8") / 1e12
    (1978.9, 312.0)
    """
    peaks = {"fp8": hardware.fp8_peak_flops, "int8": hardware.int8_peak_flops}
    faster = peaks.get(weight_format) if weight_format is not None else None
    return hardware.peak_flops.value if faster is None else faster.value


def peak_ratio(hardware: Hardware, format_code: Numeric) -> FloatArray:
    """``peak(format) / peak(bf16)`` for each :data:`FORMAT_CODES` code in ``format_code`` (an
    array over a grid, or one number): how much faster a pass's quantized linear FLOPs run than
    its BF16 ones on ``hardware`` (1 without a format, :func:`matmul_peak_flops`).

    >>> from specmodel.model.specs import get_hardware
    >>> peak_ratio(get_hardware("h100-sxm"), np.array([0.0, 1.0, 3.0])).round(4).tolist()
    [1.0, 2.0001, 1.0]
    """
    bf16 = hardware.peak_flops.value
    table = np.array([matmul_peak_flops(hardware, f) / bf16 for f in FORMAT_CODES], dtype=float)
    return np.asarray(table[np.asarray(format_code, dtype=int)], dtype=float)


def weight_format_of_config(config: dict[str, Any], where: str = "quantization_config") -> WeightFormat:
    """The weight format a config.json ``quantization_config`` block describes: its
    ``quant_method`` (``fp8``, ``fbgemm_fp8``, ``modelopt`` with ``quant_algo = "FP8"``; ``awq``
    or ``gptq`` with ``bits = 4`` and ``group_size = 128``; ``bitsandbytes`` with
    ``load_in_4bit``; ``compressed-tensors``, read from its ``config_groups``,
    :func:`_compressed_tensors_format`). Anything else is refused in one line.

    >>> weight_format_of_config({"quant_method": "awq", "bits": 4, "group_size": 128})
    'int4'
    """
    method = config.get("quant_method")
    if method == "compressed-tensors":
        return _compressed_tensors_format(config, where)
    if method in ("awq", "gptq"):
        return _group_int4(config, where)
    if method == "bitsandbytes" and config.get("load_in_4bit") is True:
        return "int4"
    if method == "modelopt" and config.get("quant_algo") != "FP8":
        raise SpecModelError(f"{where}: modelopt quant_algo {excerpt(config.get('quant_algo'))} is not modelled; FP8")
    if method in ("fp8", "fbgemm_fp8", "modelopt"):
        return "fp8"
    raise SpecModelError(
        f"{where}: quant_method {excerpt(method)} is not modelled; allowed: fp8, fbgemm_fp8, modelopt (FP8), "
        "compressed-tensors, awq, gptq (4-bit, group 128), bitsandbytes (4-bit)"
    )


def _group_int4(config: dict[str, Any], where: str) -> WeightFormat:
    """``int4`` for a 4-bit AWQ/GPTQ block with group size 128 (:data:`INT4_GROUP_SIZE`); refused otherwise."""
    bits, group = config.get("bits", config.get("w_bit")), config.get("group_size", config.get("q_group_size"))
    if bits != 4 or group != INT4_GROUP_SIZE:
        raise SpecModelError(
            f"{where}: {config.get('quant_method')} with bits {excerpt(bits)} and group_size {excerpt(group)} is not "
            f"modelled; allowed: bits 4, group_size {INT4_GROUP_SIZE}"
        )
    return "int4"


def _compressed_tensors_format(config: dict[str, Any], where: str) -> WeightFormat:
    """The one format all of a compressed-tensors block's ``config_groups`` share: weights
    ``float`` 8-bit with 8-bit float ``input_activations`` is fp8 (W8A8-FP8), ``int`` 8-bit with
    8-bit int activations int8 (W8A8-INT8), ``int`` 4-bit without activations at group size 128
    int4 (W4A16) (the schemes of vllm/model_executor/layers/quantization/compressed_tensors/
    compressed_tensors.py, ``_get_scheme_from_parts``). Mixed groups or other schemes are refused."""
    groups = config.get("config_groups")
    if not isinstance(groups, dict) or not groups:
        raise SpecModelError(f"{where}: a compressed-tensors block needs config_groups")
    found = {_scheme_format(g, where) for g in groups.values()}
    if len(found) != 1:
        raise SpecModelError(f"{where}: config_groups mix {', '.join(sorted(found))}; one format is modelled")
    return found.pop()


def _scheme_format(group: Any, where: str) -> WeightFormat:
    """The format of one compressed-tensors config group (see :func:`_compressed_tensors_format`)."""
    weights = group.get("weights") if isinstance(group, dict) else None
    acts = group.get("input_activations") if isinstance(group, dict) else None
    w = (weights or {}).get("type"), (weights or {}).get("num_bits")
    a = (acts or {}).get("type"), (acts or {}).get("num_bits")
    if w == ("float", 8) and a == ("float", 8):
        return "fp8"
    if w == ("int", 8) and a == ("int", 8):
        return "int8"
    if w == ("int", 4) and acts is None and (weights or {}).get("group_size") == INT4_GROUP_SIZE:
        return "int4"
    raise SpecModelError(
        f"{where}: compressed-tensors weights {excerpt(w)} with activations {excerpt(a)} are not modelled; "
        f"allowed: W8A8 float 8, W8A8 int 8, W4A16 int 4 at group_size {INT4_GROUP_SIZE}"
    )


def weight_format_of_method(name: str, config: dict[str, Any] | None = None) -> WeightFormat:
    """The weight format vLLM's ``--quantization NAME`` loads (:data:`METHOD_FORMATS`), read
    from the checkpoint's ``quantization_config`` ``config`` where the name does not say it
    (``compressed-tensors``, and vLLM's INT8 W8A8, which is a compressed-tensors checkpoint:
    vLLM has no ``--quantization`` value of its own for it, docs/features/quantization/int8.md).
    ``experts_int8`` (int8 experts only, weight-only: ``ExpertsInt8Config`` leaves ``LinearBase``
    layers unquantized) is not one of the formats and is refused with the rest.

    >>> weight_format_of_method("awq_marlin"), weight_format_of_method("modelopt")
    ('int4', 'fp8')
    """
    if name == "compressed-tensors" or (config is not None and name == config.get("quant_method")):
        if config is None:
            raise SpecModelError("--quantization compressed-tensors: the checkpoint's quantization_config is needed")
        return weight_format_of_config(config, f"--quantization {name}")
    if name in METHOD_FORMATS:
        return METHOD_FORMATS[name]
    raise SpecModelError(
        f"--quantization {excerpt(name)} is not modelled; allowed: {', '.join(METHOD_FORMATS)}, compressed-tensors"
    )


def kv_cache_format_of_dtype(name: str) -> KvCacheFormat | None:
    """The cache format vLLM's ``--kv-cache-dtype NAME`` stores (:data:`KV_CACHE_DTYPES`): fp8 for
    ``fp8``, ``fp8_e4m3`` and ``fp8_e5m2``; None (the model's 16-bit dtype) for ``auto``,
    ``bfloat16`` and ``float16``.

    >>> kv_cache_format_of_dtype("fp8_e4m3"), kv_cache_format_of_dtype("auto")
    ('fp8', None)
    """
    if name not in KV_CACHE_DTYPES:
        raise SpecModelError(f"--kv-cache-dtype {excerpt(name)} is not modelled; allowed: {', '.join(KV_CACHE_DTYPES)}")
    return KV_CACHE_DTYPES[name]


def quantized(
    arch: Architecture, weight_format: WeightFormat | None, kv_cache_format: KvCacheFormat | None
) -> Architecture:
    """``arch`` with its linear weights stored as ``weight_format`` and its cache as
    ``kv_cache_format`` (None keeps ``torch_dtype``), under a key of its own: ``KEY+FORMAT-weights``
    and ``+fp8-kv`` appended; ``arch`` itself when both are None.

    >>> from specmodel.model.specs import get_architecture
    >>> quantized(get_architecture("qwen3-8b"), "fp8", "fp8").key
    'qwen3-8b+fp8-weights+fp8-kv'
    """
    if weight_format is None and kv_cache_format is None:
        return arch
    if weight_format not in FORMAT_CODES or kv_cache_format not in (None, "fp8"):
        raise SpecModelError(
            f"weight format {excerpt(weight_format)} / KV cache format {excerpt(kv_cache_format)} is not modelled; "
            "allowed: fp8, int8, int4 / fp8"
        )
    suffix = (f"+{weight_format}-weights" if weight_format else "") + ("+fp8-kv" if kv_cache_format else "")
    said = [f"{weight_format.upper()} weights" if weight_format else "", "FP8 KV cache" if kv_cache_format else ""]
    update: dict[str, Any] = {
        "key": arch.key + suffix,
        "name": f"{arch.name} ({', '.join(s for s in said if s)})",
        "weight_format": weight_format,
        "kv_cache_format": kv_cache_format,
    }
    return replace(arch, **update)


def add_quantized(arch: Architecture, quantization: str | None = None, kv_cache_dtype: str | None = None) -> str:
    """Register ``arch`` as vLLM serves it with ``--quantization quantization`` and
    ``--kv-cache-dtype kv_cache_dtype`` (:func:`weight_format_of_method`,
    :func:`kv_cache_format_of_dtype`; without ``--quantization``, vLLM's choice: the format of the
    checkpoint's ``quantization_config`` if it has one) as a :func:`quantized` variant, through
    :func:`specmodel.model.specs.add_architecture`; returns its key (``arch.key`` when nothing
    is quantized).

    >>> from specmodel.model.specs import get_architecture
    >>> add_quantized(get_architecture("qwen3-8b"), "fp8", "fp8_e4m3")
    'qwen3-8b+fp8-weights+fp8-kv'
    """
    config = arch.quantization_config
    if quantization is not None:
        weights: WeightFormat | None = weight_format_of_method(quantization, config)
    else:
        weights = None if config is None else weight_format_of_config(config)
    cache = None if kv_cache_dtype is None else kv_cache_format_of_dtype(kv_cache_dtype)
    variant = quantized(arch, weights, cache)
    return arch.key if variant is arch else add_architecture(variant)


def format_code(arch: Architecture) -> float:
    """``arch``'s weight format as its :data:`FORMAT_CODES` code (0 without one).

    >>> from specmodel.model.specs import get_architecture
    >>> format_code(get_architecture("qwen3-8b"))
    0.0
    """
    return FORMAT_CODES[arch.weight_format]
