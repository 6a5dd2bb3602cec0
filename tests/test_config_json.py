"""Models read from their published config.json (tests/data/configs, origins in SOURCES.md):
the layouts' parameter counts against each model card, the latent-attention cache, the
refusals and the local Hugging Face cache lookup."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from specmodel.errors import SpecModelError
from specmodel.model import architecture as a
from specmodel.model import specs
from specmodel.model.config_json import architecture_from_config, load_config, resolve_model
from specmodel.model.passes import PassCoefficients

CONFIGS = Path(__file__).parent / "data" / "configs"

#: fixture: (layout, total, activated or None, where the card states them). Within 1%.
CARDS = {
    # Model card, "Model Information": "Llama 3.1 ... 8B" (8.03B by the safetensors index).
    "meta-llama--Llama-3.1-8B-Instruct": ("llama", 8.0e9, None),
    # https://huggingface.co/Qwen/Qwen2.5-7B-Instruct: "Number of Parameters: 7.61B".
    "Qwen--Qwen2.5-7B-Instruct": ("qwen2", 7.61e9, None),
    # https://huggingface.co/Qwen/Qwen3-8B: "Number of Parameters: 8.2B".
    "Qwen--Qwen3-8B": ("qwen3", 8.2e9, None),
    # https://mistral.ai/news/announcing-mistral-7b: "Mistral 7B is a 7.3B parameter model";
    # v0.3 only extends the vocabulary to 32768 (+6.3M parameters).
    "mistralai--Mistral-7B-v0.3": ("llama", 7.3e9, None),
    # Gemma 2 report (arXiv:2408.00118) Table 1, 9B: 917,774,336 embedding + 8,324,201,984
    # non-embedding parameters.
    "google--gemma-2-9b": ("gemma2", 917_774_336 + 8_324_201_984, None),
    # Gemma 3 report (arXiv:2503.19786) Table 1, 27B: 1,416M embedding + 25,600M
    # non-embedding parameters (the 417M vision encoder is not priced).
    "google--gemma-3-27b-it": ("gemma3_text", 1_416e6 + 25_600e6, None),
    # https://mistral.ai/news/mixtral-of-experts: "46.7B total parameters but only uses 12.9B
    # parameters per token".
    "mistralai--Mixtral-8x7B-v0.1": ("mixtral", 46.7e9, 12.9e9),
    # https://huggingface.co/Qwen/Qwen1.5-MoE-A2.7B: "14.3B parameters in total and 2.7B
    # activated parameters during runtime".
    "Qwen--Qwen1.5-MoE-A2.7B": ("qwen2_moe", 14.3e9, 2.7e9),
    # https://huggingface.co/Qwen/Qwen3-30B-A3B: "30.5B in total and 3.3B activated"; the
    # activated count is checked in its own test below.
    "Qwen--Qwen3-30B-A3B": ("qwen3_moe", 30.5e9, None),
    # https://huggingface.co/deepseek-ai/DeepSeek-V3: "671B total parameters with 37B
    # activated"; the activated count is checked in its own test below.
    "deepseek-ai--DeepSeek-V3": ("deepseek_v3", 671e9, None),
}


@pytest.fixture(autouse=True)
def _no_added_models():
    """Each test starts and ends with no model added from a config.json."""
    specs.added_architectures().clear()
    yield
    specs.added_architectures().clear()


def _read(stem: str) -> specs.Architecture:
    return load_config(str(CONFIGS / f"{stem}.json"))


@pytest.mark.parametrize("stem", CARDS)
def test_parameter_counts_match_the_model_cards(stem):
    layout, total, active = CARDS[stem]
    m = _read(stem)
    assert m.model_type == layout
    assert a.parameter_count(m) == pytest.approx(total, rel=0.01)
    if active is not None:
        assert a.active_parameter_count(m) == pytest.approx(active, rel=0.01)


def test_every_fixture_has_a_source():
    sources = (CONFIGS / "SOURCES.md").read_text(encoding="utf-8")
    for path in CONFIGS.glob("*.json"):
        assert f"`{path.name}`" in sources
    assert set(CARDS) == {p.stem for p in CONFIGS.glob("*.json")}


@pytest.mark.parametrize(("stem", "key"), [("Qwen--Qwen3-8B", "qwen3-8b"), ("Qwen--Qwen3-30B-A3B", "qwen3-30b-a3b")])
def test_a_catalogue_model_read_from_its_config_is_the_catalogue_entry(stem, key):
    m, entry = _read(stem), specs.get_architecture(key)
    assert m.key == key and specs.same_network(m, entry)
    assert a.parameter_count(m) == a.parameter_count(entry)
    assert a.active_parameter_count(m) == a.active_parameter_count(entry)
    assert a.kv_cache_bytes_per_token(m) == a.kv_cache_bytes_per_token(entry)
    assert specs.add_architecture(m) == key and key not in specs.added_architectures()


def test_qwen3_30b_a3b_activated_count_is_what_the_card_truncates():
    """The card's "3.3B activated" cannot be met to 1%: the count by the config is 3.353B
    (1.6% above), which the card's one decimal truncates rather than rounds, so the anchor is
    that truncation, ``floor(P_active / 0.1B) = 33``."""
    m = _read("Qwen--Qwen3-30B-A3B")
    assert a.active_parameter_count(m) == 3_353_032_704
    assert a.active_parameter_count(m) // 100_000_000 == 33


def test_qwen2_counts_its_qkv_biases():
    m = _read("Qwen--Qwen2.5-7B-Instruct")
    d, n, k, h = 3584, 28, 4, 128
    assert a.attention_parameters_per_layer(m) == 2 * d * n * h + 2 * d * k * h + (n * h + 2 * k * h)


def test_gemma_has_four_norms_and_gemma3_qk_norms():
    assert a.norm_parameters_per_layer(_read("google--gemma-2-9b")) == 4 * 3584
    g3 = _read("google--gemma-3-27b-it")
    assert a.norm_parameters_per_layer(g3) == 4 * 5376 + 2 * 128
    assert g3.tie_word_embeddings and g3.vocab_size == 262208  # Gemma3TextConfig's defaults
    assert "vision tower is not priced" in g3.source


def test_qwen2_moe_shared_expert_and_gate():
    m = _read("Qwen--Qwen1.5-MoE-A2.7B")
    assert a.shared_expert_parameters(m) == 3 * 2048 * 5632 + 2048
    assert a.moe_layer_count(m) == 24 and a.expert_parameters(m) == 3 * 2048 * 1408


def test_deepseek_v3_counts_by_hand():
    m = _read("deepseek-ai--DeepSeek-V3")
    d, n, v = 7168, 128, 129280
    attention = d * 1536 + 1536 + 1536 * n * 192 + d * 576 + 512 + 512 * n * 256 + n * 128 * d
    assert a.attention_parameters_per_layer(m) == attention
    assert a.moe_layer_count(m) == 58  # first_k_dense_replace = 3
    assert a.router_parameters(m) == d * 256 + 256  # with e_score_correction_bias
    expert = 3 * d * 2048
    moe_layer = attention + 2 * d + d * 256 + 256 + 256 * expert + expert
    dense_layer = attention + 2 * d + 3 * d * 18432
    assert a.parameter_count(m) == 2 * v * d + 3 * dense_layer + 58 * moe_layer + d
    assert a.mtp_parameters(m) == 3 * d + 2 * d * d + moe_layer
    assert m.num_nextn_predict_layers == 1
    assert m.quantization_config == {
        "activation_scheme": "dynamic",
        "fmt": "e4m3",
        "quant_method": "fp8",
        "weight_block_size": [128, 128],
    }


def test_deepseek_v3_activated_and_mtp_counts_match_its_weights_notes():
    """README_WEIGHTS.md (github.com/deepseek-ai/DeepSeek-V3): main model "Activation
    parameters: 36.6B (including 0.9B for the output Head)", so without the input embedding,
    which a token reads one row of; MTP "11.5B unique parameters (excluding the shared 0.9B
    Embedding and 0.9B output Head)". The card's rounder "37B activated" is 1.5% below the
    count with the input embedding (37.55B), so the notes' figure is the anchor."""
    m = _read("deepseek-ai--DeepSeek-V3")
    input_embedding = m.vocab_size * m.hidden_size
    assert a.active_parameter_count(m) - input_embedding == pytest.approx(36.6e9, rel=0.01)
    assert a.mtp_parameters(m) == pytest.approx(11.5e9, rel=0.01)


def test_deepseek_v3_caches_the_latent_whole_on_every_gpu():
    m = _read("deepseek-ai--DeepSeek-V3")
    assert a.kv_cache_bytes_per_token(m) == 61 * (512 + 64) * 2
    assert a.attention_flops_per_position_per_token(m) == 2 * 61 * 128 * (2 * 512 + 64)
    coefficients = PassCoefficients.of_model(m, 2.0)
    assert coefficients.kv_heads == 1.0
    assert float(coefficients.kv_share(8)) == 1.0


def test_mixtral_reads_num_local_experts():
    m = _read("mistralai--Mixtral-8x7B-v0.1")
    assert (m.num_experts, m.num_experts_per_tok, m.moe_intermediate_size) == (8, 2, 14336)
    assert a.moe_layer_count(m) == 32


def test_resolve_model_registers_a_config_and_keeps_catalogue_names(tmp_path):
    assert resolve_model("qwen3-8b") == "qwen3-8b"
    folder = tmp_path / "Mixtral-8x7B-v0.1"
    folder.mkdir()
    (folder / "config.json").write_text((CONFIGS / "mistralai--Mixtral-8x7B-v0.1.json").read_text())
    key = resolve_model(str(folder))
    assert key == "mixtral-8x7b-v0.1"
    assert specs.get_architecture(key).num_experts == 8
    assert key in specs.architecture_catalog()
    assert resolve_model(str(folder)) == key  # re-adding the same record changes nothing


def test_a_config_never_replaces_a_catalogue_entry(tmp_path):
    folder = tmp_path / "Qwen3-8B"
    folder.mkdir()
    data = json.loads((CONFIGS / "Qwen--Qwen3-8B.json").read_text())
    (folder / "config.json").write_text(json.dumps({**data, "num_hidden_layers": 30}))
    key = resolve_model(str(folder))
    assert key == "qwen3-8b-config"
    assert specs.get_architecture("qwen3-8b").num_hidden_layers == 36
    other = replace(specs.get_architecture("qwen3-8b"), num_hidden_layers=30)
    with pytest.raises(SpecModelError, match="qwen3-8b"):
        specs.add_architecture(other)


def _cache(root: Path, model_id: str, revisions: dict[str, dict], main: str | None) -> None:
    repo = root / ("models--" + model_id.replace("/", "--"))
    for revision, data in revisions.items():
        snapshot = repo / "snapshots" / revision
        snapshot.mkdir(parents=True)
        (snapshot / "config.json").write_text(json.dumps(data))
    if main is not None:
        (repo / "refs").mkdir()
        (repo / "refs" / "main").write_text(main)


def test_a_hugging_face_id_is_read_from_the_local_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    qwen = json.loads((CONFIGS / "Qwen--Qwen3-8B.json").read_text())
    _cache(tmp_path, "Qwen/Qwen3-0.6B-Base", {"aaa": {**qwen, "num_hidden_layers": 2}, "bbb": qwen}, "aaa")
    m = load_config("Qwen/Qwen3-0.6B-Base")
    assert (m.key, m.name, m.num_hidden_layers) == ("qwen3-0.6b-base", "Qwen3-0.6B-Base", 2)  # refs/main's
    (tmp_path / "models--Qwen--Qwen3-0.6B-Base" / "refs" / "main").write_text("gone")
    assert load_config("Qwen/Qwen3-0.6B-Base").num_hidden_layers in (2, 36)  # then the newest snapshot


def test_hf_home_locates_the_cache(tmp_path, monkeypatch):
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    _cache(tmp_path / "hub", "org/tiny", {"r1": json.loads((CONFIGS / "Qwen--Qwen3-8B.json").read_text())}, None)
    assert load_config("org/tiny").key == "tiny"


def test_an_id_missing_from_the_cache_is_refused_without_the_network(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    with pytest.raises(SpecModelError, match="not in the local Hugging Face cache"):
        load_config("meta-llama/Llama-3.1-8B-Instruct")


def test_a_folder_without_config_json_is_refused(tmp_path):
    with pytest.raises(SpecModelError, match="holds no config.json"):
        load_config(str(tmp_path))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"model_type": "phi3", "architectures": ["Phi3ForCausalLM"]}, "model_type 'phi3'.*supported model_type"),
        ({"hidden_size": None}, "hidden_size is missing"),
        ({"num_hidden_layers": 36.5}, "num_hidden_layers must be a whole number"),
        ({"num_attention_heads": "32"}, "num_attention_heads must be a whole number"),
        ({"tie_word_embeddings": "no"}, "tie_word_embeddings must be true or false"),
        ({"torch_dtype": "float8_e4m3fn"}, "torch_dtype 'float8_e4m3fn' is not supported"),
        ({"num_hidden_layers": 0}, "num_hidden_layers"),
    ],
)
def test_bad_configs_are_refused_in_one_line(change, message):
    data = {**json.loads((CONFIGS / "Qwen--Qwen3-8B.json").read_text()), **change}
    data = {k: v for k, v in data.items() if v is not None}
    with pytest.raises(SpecModelError, match=message) as err:
        architecture_from_config(data, "x", "config.json")
    assert "\n" not in str(err.value)


def test_aliases_and_defaults():
    base = {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 256}
    m = architecture_from_config({**base, "model_type": "llama", "dtype": "float16"}, "tiny", "example")
    assert (m.num_key_value_heads, m.head_dim, m.torch_dtype) == (4, 16, "float16")
    kimi = {**json.loads((CONFIGS / "deepseek-ai--DeepSeek-V3.json").read_text()), "model_type": "kimi_k2"}
    assert architecture_from_config(kimi, "k", "example").model_type == "deepseek_v3"  # by architectures
