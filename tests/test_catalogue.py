"""The hardware and model catalogue against its sources: datasheets, config.json files, model cards."""

from __future__ import annotations

import re
import tomllib
from dataclasses import FrozenInstanceError, replace
from importlib import resources
from pathlib import Path

import pytest
from pydantic import ValidationError

from specmodel.errors import SpecModelError
from specmodel.model import architecture as a
from specmodel.model.specs import (
    Architecture,
    architecture_catalog,
    catalog_tables,
    get_architecture,
    get_hardware,
    hardware_catalog,
    load_catalog,
)
from specmodel.records import validate

URL = re.compile(r"https://\S+")
MODELS = list(architecture_catalog())
HARDWARE = list(hardware_catalog())

# --------------------------------------------------------------------------- models

#: config.json fields of every model, as the hub's config.json files state them:
#: key: (model_type, L, D, N, K, H, F, V, tied). H is None where config.json has no head_dim.
CONFIGS = {
    "qwen3-0.6b": ("qwen3", 28, 1024, 16, 8, 128, 3072, 151936, True),
    "qwen3-1.7b": ("qwen3", 28, 2048, 16, 8, 128, 6144, 151936, True),
    "qwen3-4b": ("qwen3", 36, 2560, 32, 8, 128, 9728, 151936, True),
    "qwen3-8b": ("qwen3", 36, 4096, 32, 8, 128, 12288, 151936, False),
    "qwen3-14b": ("qwen3", 40, 5120, 40, 8, 128, 17408, 151936, False),
    "qwen3-32b": ("qwen3", 64, 5120, 64, 8, 128, 25600, 151936, False),
    "llama-3.1-8b": ("llama", 32, 4096, 32, 8, None, 14336, 128256, False),
    "llama-3.2-1b": ("llama", 16, 2048, 32, 8, 64, 8192, 128256, True),
    "llama-3.2-3b": ("llama", 28, 3072, 24, 8, 128, 8192, 128256, True),
    "llama-3-70b": ("llama", 80, 8192, 64, 8, None, 28672, 128256, False),
    "llama-3.1-70b": ("llama", 80, 8192, 64, 8, None, 28672, 128256, False),
    "llama-3.3-70b": ("llama", 80, 8192, 64, 8, None, 28672, 128256, False),
    "llama-3.1-405b": ("llama", 126, 16384, 128, 8, None, 53248, 128256, False),
    "qwen3-30b-a3b": ("qwen3_moe", 48, 2048, 32, 4, 128, 6144, 151936, False),
    "qwen3-235b-a22b": ("qwen3_moe", 94, 4096, 64, 4, 128, 12288, 151936, False),
}

#: The mixture-of-experts fields of config.json: key: (E, k, F_moe, decoder_sparse_step,
#: mlp_only_layers, norm_topk_prob). Every other model has none of them.
MOE_CONFIGS = {
    "qwen3-30b-a3b": (128, 8, 768, 1, (), True),
    "qwen3-235b-a22b": (128, 8, 1536, 1, (), True),
}

#: The anchor's tolerance: the computed count lies within 1 % of the model card's total.
TOLERANCE = 0.01
#: Where the card's figure is too coarse for 1 %: its rounding half-interval, in parameters.
#: Qwen3-1.7B's card says "1.7B" for 1,720,574,976 parameters (1.7206e9 rounded to 0.1e9,
#: residual +1.2 %), so the anchor there is the interval [1.65e9, 1.75e9) the card admits.
ROUNDING_ONLY = {"qwen3-1.7b": 0.05e9}


def _raw_models() -> dict:
    return tomllib.loads(resources.files("specmodel.data").joinpath("models.toml").read_text(encoding="utf-8"))


def test_the_catalogue_holds_exactly_the_listed_models_target_first():
    assert MODELS[0] == "qwen3-8b"  # the default target
    assert sorted(MODELS) == sorted(CONFIGS)


@pytest.mark.parametrize("key", MODELS)
def test_config_fields_are_the_config_json_values(key):
    m = get_architecture(key)
    model_type, layers, d, n, k, h, f, v, tied = CONFIGS[key]
    got = (
        m.model_type,
        m.num_hidden_layers,
        m.hidden_size,
        m.num_attention_heads,
        m.num_key_value_heads,
        m.intermediate_size,
        m.vocab_size,
        m.tie_word_embeddings,
        m.torch_dtype,
        m.attention_bias,
    )
    assert got == (model_type, layers, d, n, k, f, v, tied, "bfloat16", False)
    assert m.head_dim == (d // n if h is None else h)
    # a field config.json lacks is lacking here too, not filled in by hand
    assert ("head_dim" in _raw_models()[key]) == (h is not None)
    moe = (
        m.num_experts,
        m.num_experts_per_tok,
        m.moe_intermediate_size,
        m.decoder_sparse_step,
        m.mlp_only_layers,
        m.norm_topk_prob,
    )
    assert moe == MOE_CONFIGS.get(key, (None,) * 6)


@pytest.mark.parametrize("key", MODELS)
def test_parameter_count_matches_the_published_total(key):
    m = get_architecture(key)
    published = m.published_parameters.value
    computed = a.parameter_count(m)
    residual = (computed - published) / published
    allowed = max(TOLERANCE, ROUNDING_ONLY.get(key, 0) / published)
    assert abs(residual) <= allowed, (
        f"{key}: computed {computed:,} parameters vs published {published:,.0f}: residual {residual:+.2%} "
        f"(allowed {allowed:.1%}; {m.published_parameters.source})"
    )
    if key in ROUNDING_ONLY:  # the wider interval is only for a figure that 1 % cannot anchor
        assert abs(residual) > TOLERANCE, f"{key}: residual {residual:+.2%}; drop it from ROUNDING_ONLY"


#: The activated count's tolerance. Qwen3-30B-A3B's card says "3.3B activated" for 3,353,032,704
#: parameters (+1.6 %, just past what rounding to 0.1B admits: the card truncates, or counts
#: slightly differently); Qwen3-235B-A22B's says "22B" for 22,190,763,520 (+0.9 %).
ACTIVE_TOLERANCE = 0.02


@pytest.mark.parametrize("key", [k for k in MODELS if get_architecture(k).published_active_parameters])
def test_active_parameter_count_matches_the_published_activated_count(key):
    m = get_architecture(key)
    assert m.published_active_parameters is not None
    published = m.published_active_parameters.value
    residual = (a.active_parameter_count(m) - published) / published
    assert abs(residual) <= ACTIVE_TOLERANCE, (
        f"{key}: residual {residual:+.2%} ({m.published_active_parameters.source})"
    )
    assert URL.search(m.published_active_parameters.source)


def test_llama_counts_equal_the_safetensors_totals():
    # The hub's safetensors metadata gives the exact totals of the Llama checkpoints.
    assert a.parameter_count(get_architecture("llama-3.1-8b")) == 8_030_261_248
    assert a.parameter_count(get_architecture("llama-3.2-1b")) == 1_235_814_400
    assert a.parameter_count(get_architecture("llama-3.2-3b")) == 3_212_749_824


@pytest.mark.parametrize("key", MODELS)
def test_kv_cache_bytes_per_token_from_config_fields(key):
    m = get_architecture(key)
    assert m.bytes_per_element == 2  # bfloat16
    assert a.kv_cache_bytes_per_token(m) == 2 * m.num_hidden_layers * m.num_key_value_heads * m.head_dim * 2


def test_kv_cache_bytes_per_token_by_hand():
    # 2 (K and V) x L x K x H x 2 bytes, from each config.json
    assert a.kv_cache_bytes_per_token(get_architecture("qwen3-8b")) == 2 * 36 * 8 * 128 * 2 == 147456
    assert a.kv_cache_bytes_per_token(get_architecture("qwen3-0.6b")) == 2 * 28 * 8 * 128 * 2 == 114688
    # Llama-3.1-8B's config.json has no head_dim: 4096 / 32 = 128
    assert a.kv_cache_bytes_per_token(get_architecture("llama-3.1-8b")) == 2 * 32 * 8 * 128 * 2 == 131072
    assert a.kv_cache_bytes_per_token(get_architecture("llama-3.2-1b")) == 2 * 16 * 8 * 64 * 2 == 32768


def test_qwen3_adds_q_and_k_norms_llama_does_not():
    q = get_architecture("qwen3-8b")
    as_llama = replace(q, model_type="llama")
    assert a.norm_parameters_per_layer(q) == 2 * 4096 + 2 * 128
    assert a.norm_parameters_per_layer(as_llama) == 2 * 4096
    assert a.parameter_count(q) - a.parameter_count(as_llama) == 36 * 2 * 128


def _record(key: str, **changes) -> dict:
    return {"key": key, **_raw_models()[key], **changes}


def test_head_dim_defaults_to_hidden_size_over_heads():
    raw = _record("llama-3.1-8b")
    assert "head_dim" not in raw
    assert validate(Architecture, raw).head_dim == 128
    assert isinstance(validate(Architecture, raw).head_dim, int)
    assert validate(Architecture, {**raw, "head_dim": 64}).head_dim == 64  # a stated head_dim wins
    with pytest.raises(ValidationError, match="not a multiple"):
        validate(Architecture, {**raw, "hidden_size": 4100})


def test_attention_bias_is_rejected():
    with pytest.raises(ValidationError, match="attention_bias"):
        validate(Architecture, _record("qwen3-8b", attention_bias=True))


def test_architecture_records_are_strict():
    with pytest.raises(ValidationError):
        validate(Architecture, _record("qwen3-8b", rope_theta=1e6))  # extra="forbid"
    with pytest.raises(ValidationError):
        validate(Architecture, _record("qwen3-8b", model_type="mistral"))
    with pytest.raises(ValidationError):
        validate(Architecture, _record("qwen3-8b", published_parameters={"value": 0, "source": "x"}))
    with pytest.raises(ValidationError):
        validate(Architecture, _record("qwen3-8b", published_parameters={"value": 8.2e9, "source": ""}))
    with pytest.raises(FrozenInstanceError):
        get_architecture("qwen3-8b").hidden_size = 1  # type: ignore[misc]  # frozen


def test_published_parameters_are_read_by_the_catalogue_test_only():
    package = Path(a.__file__).parent
    readers = sorted(
        p.relative_to(package).as_posix()
        for p in package.rglob("*.py")
        if re.search(r"published_(active_)?parameters", p.read_text(encoding="utf-8"))
    )
    assert readers == ["specs.py"]


@pytest.mark.parametrize("key", MODELS)
def test_every_model_number_has_a_source(key):
    m = get_architecture(key)
    repo = {"qwen3": "Qwen", "qwen3_moe": "Qwen", "llama": "meta-llama"}[m.model_type]
    assert re.fullmatch(rf"https://huggingface\.co/{repo}/{re.escape(m.name)}/blob/main/config\.json", m.source)
    assert URL.search(m.published_parameters.source)


# --------------------------------------------------------------------------- hardware

#: Datasheet figures: key, HBM/GDDR bandwidth (B/s), dense BF16 peak (FLOP/s), memory (B).
DATASHEETS = [
    ("h100-sxm", 3.35e12, 989.4e12, 80e9),
    ("h200", 4.8e12, 989.4e12, 141e9),
    ("b200", 8e12, 2250e12, 180e9),  # DGX B200: 64 TB/s and 1,440 GB over 8 GPUs; HGX: 4.5 PFLOPS sparse / 2
    ("a100-80gb", 2.039e12, 312e12, 80e9),
    ("mi300x", 5.3e12, 1307.4e12, 192e9),
    ("l40s", 864e9, 362.05e12, 48e9),  # datasheet: 733 TFLOPS with sparsity
    ("h100-pcie", 2.0e12, 756.5e12, 80e9),  # datasheet: 1,513 TFLOPS with sparsity
    ("a100-40gb", 1.555e12, 312e12, 40e9),
    ("l4", 300e9, 121e12, 24e9),  # datasheet: 242 TFLOPS with sparsity
    ("h20", 4.0e12, 148e12, 96e9),
    ("gb200", 8e12, 2500e12, 186e9),  # NVL72: 360 PFLOPS sparse, 576 TB/s and 13.4 TB over 72 GPUs
    ("mi325x", 6e12, 1307.4e12, 256e9),
]


def test_the_catalogue_holds_exactly_the_listed_accelerators_default_first():
    assert [row[0] for row in DATASHEETS] == HARDWARE


@pytest.mark.parametrize(("key", "bandwidth", "flops", "capacity"), DATASHEETS, ids=[r[0] for r in DATASHEETS])
def test_hardware_figures_equal_the_datasheets(key, bandwidth, flops, capacity):
    hw = get_hardware(key)
    got = (hw.memory_bandwidth.value, hw.peak_flops.value, hw.datasheet_memory_capacity.value)
    assert got == (bandwidth, flops, capacity)
    units = (hw.memory_bandwidth.unit, hw.peak_flops.unit, hw.datasheet_memory_capacity.unit, hw.memory_capacity.unit)
    assert units == ("B/s", "FLOP/s", "B", "B")


#: The memory each card reports, as its public nvidia-smi / rocm-smi output prints it: key, the
#: printed figure, its unit in bytes (nvidia-smi prints MiB, rocm-smi --showmeminfo vram bytes).
REPORTED = [
    ("h100-sxm", 81559, 2**20),  # "81559MiB", github NVIDIA/nccl issue 1264
    ("h200", 143771, 2**20),  # github sgl-project/sglang issue 3196
    ("b200", 183359, 2**20),  # github NVIDIA/TensorRT-LLM issue 10278
    ("a100-80gb", 81920, 2**20),  # github thamada/nvidia-smi gls/A100SXMx4_smi.py
    ("mi300x", 206141652992, 1),  # "VRAM Total Memory (B)", github ROCm/ROCm issue 4750
    ("l40s", 46068, 2**20),  # github thamada/nvidia-smi nvsim/L40S_smi.py
    ("h100-pcie", 81559, 2**20),  # derived: the H100 SXM's figure (the source says so)
    ("a100-40gb", 40960, 2**20),  # github Slusheeking/nextgen docs/SYSTEM_HARDWARE.md
    ("l4", 23034, 2**20),  # github vllm-project/vllm issue 10156
    ("h20", 97871, 2**20),
    ("gb200", 189471, 2**20),
    ("mi325x", 274861129728, 1),  # derived from the MI300X's rocm-smi figure (the source says so)
]

#: Dense FP8 and INT8 tensor-core peaks (FLOP/s, OP/s): key, FP8 (None: no FP8 tensor cores), INT8.
LOW_PRECISION_PEAKS = [
    ("h100-sxm", 1978.9e12, 1978.9e12),  # 3,958 with sparsity
    ("h200", 1978.9e12, 1978.9e12),
    ("b200", 4500e12, 4500e12),  # HGX B200: 72 PFLOPS / POPS sparse over 8 GPUs
    ("a100-80gb", None, 624e12),  # Ampere: no FP8
    ("mi300x", 2614.9e12, 2614.9e12),
    ("l40s", 733e12, 733e12),
    ("h100-pcie", 1513e12, 1513e12),
    ("a100-40gb", None, 624e12),
    ("l4", 242.5e12, 242.5e12),
    ("h20", 296e12, 296e12),
    ("gb200", 5000e12, 5000e12),
    ("mi325x", 2614.9e12, 2614.9e12),
]


@pytest.mark.parametrize(("key", "fp8", "int8"), LOW_PRECISION_PEAKS, ids=[r[0] for r in LOW_PRECISION_PEAKS])
def test_fp8_and_int8_peaks_equal_the_datasheets_dense_figures(key, fp8, int8):
    hw = get_hardware(key)
    assert (None if hw.fp8_peak_flops is None else hw.fp8_peak_flops.value) == fp8
    assert hw.int8_peak_flops is not None and hw.int8_peak_flops.value == int8
    for peak, unit in ((hw.fp8_peak_flops, "FLOP/s"), (hw.int8_peak_flops, "OP/s")):
        if peak is not None:
            assert peak.unit == unit and "dense" in peak.source and URL.search(peak.source)
    if fp8 is not None:  # FP8 tensor cores run about twice the BF16 rate on every card listed
        assert fp8 / hw.peak_flops.value == pytest.approx(2.0, rel=0.03)


def test_every_accelerator_has_its_low_precision_peaks_listed():
    assert [row[0] for row in LOW_PRECISION_PEAKS] == HARDWARE


def test_every_accelerator_has_its_reported_memory_listed():
    assert [row[0] for row in REPORTED] == HARDWARE


@pytest.mark.parametrize(("key", "printed", "unit"), REPORTED, ids=[r[0] for r in REPORTED])
def test_memory_capacity_is_what_the_card_reports(key, printed, unit):
    hw = get_hardware(key)
    assert hw.memory_capacity.value == printed * unit
    assert str(printed) in hw.memory_capacity.source, f"{key}: the source must quote the reported figure"
    assert ("nvidia-smi" if unit == 2**20 else "rocm-smi") in hw.memory_capacity.source
    # what the card reports is not the datasheet's decimal figure (80 GB is 74.5 GiB; an H100 reports 79.6)
    assert hw.memory_capacity.value != hw.datasheet_memory_capacity.value


@pytest.mark.parametrize("key", HARDWARE)
def test_every_hardware_number_cites_a_url(key):
    hw = get_hardware(key)
    for field in ("memory_bandwidth", "peak_flops", "memory_capacity", "datasheet_memory_capacity"):
        assert URL.search(getattr(hw, field).source), f"{key}.{field} cites no URL"
    assert "dense" in hw.peak_flops.source, f"{key}: the peak must be the dense BF16 figure, and say so"


# --------------------------------------------------------------------------- names


def test_every_key_is_lower_case():
    for key in MODELS + HARDWARE:
        assert key == key.lower()


def test_unknown_hardware_lists_the_known_keys():
    with pytest.raises(SpecModelError, match=r"unknown hardware 'h100'") as err:
        get_hardware("h100")
    assert all(key in str(err.value) for key in HARDWARE)


def test_unknown_model_lists_the_known_keys():
    with pytest.raises(SpecModelError, match=r"unknown model 'qwen3-9b'") as err:
        get_architecture("qwen3-9b")
    assert all(key in str(err.value) for key in MODELS)


CATALOGUES = {
    "hardware.toml": "specmodel.model.specs:Hardware",
    "models.toml": "specmodel.model.specs:Architecture",
    "heads.toml": "specmodel.model.heads:Head",
    "kernels.toml": "specmodel.model.kernels:MoEKernel",
    "engines.toml": "specmodel.model.engines:EngineProfile",
}


@pytest.mark.parametrize("filename", sorted(CATALOGUES))
def test_every_packaged_record_passes_every_rule_of_its_type(filename):
    """The packaged catalogues are built without pydantic (:func:`specmodel.records.structure`,
    so that a command starts without importing it); validated with every rule, each entry must
    give the very record the package loads."""
    import importlib

    module, name = CATALOGUES[filename].split(":")
    record = getattr(importlib.import_module(module), name)
    tables = catalog_tables(filename)
    loaded = load_catalog(filename, record)
    assert list(loaded) == list(tables)
    for key, table in tables.items():
        assert validate(record, table) == loaded[key], key
        assert repr(validate(record, table)) == repr(loaded[key]), key  # same types too (1.0, not 1)


def test_a_packaged_record_that_breaks_a_rule_across_fields_is_a_packaging_error(monkeypatch):
    tables = {"bad": {**catalog_tables("models.toml")["qwen3-8b"], "num_key_value_heads": 7}}
    monkeypatch.setattr("specmodel.model.specs.catalog_tables", lambda filename: tables)
    with pytest.raises(SpecModelError, match="data/models.toml is invalid: num_attention_heads must be a multiple"):
        load_catalog("models.toml", Architecture)
