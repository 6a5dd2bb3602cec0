"""Derived quantities of the three Qwen3 models against the figures their sources quote."""

from dataclasses import replace

import pytest

from specmodel.errors import SpecModelError
from specmodel.model import architecture as a
from specmodel.model.specs import architecture_catalog, get_architecture, get_hardware, hardware_catalog

T8, D06, D17 = (get_architecture(k) for k in ("qwen3-8b", "qwen3-0.6b", "qwen3-1.7b"))


@pytest.mark.parametrize(
    ("arch", "expected"),
    [(T8, 8.19e9), (D06, 0.596e9), (D17, 1.72e9)],
    ids=["8b", "0.6b", "1.7b"],
)
def test_parameter_counts_match_the_brief(arch, expected):
    # Brief: "about 8.19e9, 0.596e9 and 1.72e9 parameters", counting every weight.
    assert a.parameter_count(arch) == pytest.approx(expected, rel=0.005)


def test_target_weights_are_15_26_gib():
    assert a.weight_bytes(T8) / 2**30 == pytest.approx(15.26, abs=0.005)


def test_kv_cache_per_token():
    assert a.kv_cache_bytes_per_token(T8) == 144 * 1024
    assert a.kv_cache_bytes_per_token(D06) == 112 * 1024
    assert a.kv_cache_bytes_per_token(D17) == 112 * 1024
    # "78% of the target's"
    assert a.kv_cache_bytes_per_token(D06) / a.kv_cache_bytes_per_token(T8) == pytest.approx(0.78, abs=0.005)


def test_grouped_query_attention_shrinks_target_cache_4x():
    full = 2 * T8.num_hidden_layers * T8.num_attention_heads * T8.head_dim * T8.bytes_per_element
    assert full / a.kv_cache_bytes_per_token(T8) == 4


def test_tied_embeddings_are_counted_once():
    untied = replace(D06, tie_word_embeddings=False)
    assert a.parameter_count(untied) - a.parameter_count(D06) == D06.vocab_size * D06.hidden_size


def test_flops_per_position_two_per_weight_plus_attention():
    assert a.dense_flops_per_position(T8, 2) == 2 * a.parameter_count(T8)
    assert a.attention_flops_per_position_per_token(T8) == 4 * 36 * 32 * 128


def test_every_spec_number_has_a_source():
    for hw in hardware_catalog().values():
        for field in ("memory_bandwidth", "peak_flops", "memory_capacity", "datasheet_memory_capacity"):
            assert getattr(hw, field).source.strip()
    for arch in architecture_catalog().values():
        assert arch.source.startswith(("https://huggingface.co/Qwen/", "https://huggingface.co/meta-llama/"))
        assert arch.source.endswith("/config.json")


def test_h100_datasheet_values():
    hw = get_hardware("h100-sxm")
    assert hw.memory_bandwidth.value == 3.35e12
    assert hw.peak_flops.value == pytest.approx(989.4e12)
    assert hw.datasheet_memory_capacity.value == 80e9
    assert hw.memory_capacity.value == 81559 * 2**20  # what nvidia-smi reports, 79.65 GiB


def test_unknown_names_say_what_is_allowed():
    with pytest.raises(SpecModelError, match=r"unknown hardware 'tpu'; allowed: h100-sxm"):
        get_hardware("tpu")
    with pytest.raises(SpecModelError, match=r"unknown model 'llama'"):
        get_architecture("llama")
