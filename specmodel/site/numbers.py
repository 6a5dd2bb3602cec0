"""Every number the article states about the simulated system, computed from the model.

The prose refers to them as ``{{ name }}``; the MkDocs hook (docs/hooks/numbers.py)
replaces each with its ``text`` and fails the build on an unknown name.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from importlib import resources

import numpy as np

from specmodel import acceptance as acc
from specmodel import architecture as arch
from specmodel.constants import FALLING_RATIO, GENERATED_TOKENS
from specmodel.model import DEFAULTS, evaluate
from specmodel.readouts import GIB, KIB
from specmodel.specs import get_architecture, get_hardware


@dataclass(frozen=True)
class Number:
    """A value and the text the prose prints for it."""

    value: float
    text: str


def times(value: float, decimals: int = 2) -> Number:
    return Number(float(value), f"{value:.{decimals}f}x")


def percent(share: float, decimals: int = 0) -> Number:
    return Number(float(share), f"{100 * share:.{decimals}f}%")


def plain(value: float, decimals: int = 2) -> Number:
    return Number(float(value), f"{value:,.{decimals}f}")


def literature_numbers() -> dict[str, Number]:
    """Figures quoted from papers, from specmodel/data/literature.toml (each with its
    source), as ``paper_<key>``: speedups print as ``3.4x``, the rest as given."""
    text = resources.files("specmodel.data").joinpath("literature.toml").read_text(encoding="utf-8")
    out = {}
    for key, entry in tomllib.loads(text).items():
        value = float(entry["value"])
        out[f"paper_{key}"] = Number(value, f"{value:g}x" if entry["unit"] == "x" else f"{value:g}")
    return out


def one(**scenario):
    """The evaluation of a single scenario (defaults: the article's)."""
    return evaluate(**scenario)


def article_numbers() -> dict[str, Number]:
    """Name -> number for the article's prose."""
    n: dict[str, Number] = {}
    d = one()
    b32, b64, b1024 = one(concurrency=32), one(concurrency=64), one(concurrency=1024)
    g10 = one(gamma=10)
    hw = get_hardware(DEFAULTS["hardware"])
    t8, d06, d17 = (get_architecture(k) for k in ("qwen3-8b", "qwen3-0.6b", "qwen3-1.7b"))

    # Defaults and the simulated system.
    n["generated_tokens"] = plain(GENERATED_TOKENS, 0)
    n["speedup_b1"] = times(d.speedup)
    n["spec_tps_b1"] = plain(d.spec_tokens_per_s, 0)
    n["base_tps_b1"] = plain(d.base_tokens_per_s, 0)
    n["mal_b1"] = plain(d.mean_acceptance_length)
    n["draft_share_b1"] = percent(d.draft_share)
    n["arith_b1"] = times(d.arithmetic_ratio)
    n["arith_g10"] = times(g10.arithmetic_ratio)
    n["speedup_b64"] = times(b64.speedup)
    n["slower_b64"] = percent(1 - b64.speedup)
    n["mal_b64"] = plain(b64.mean_acceptance_length)
    n["arith_b64"] = times(b64.arithmetic_ratio)
    n["speedup_b1024"] = times(b1024.speedup)
    ladder = np.array([2**i for i in range(11)])
    ngram = one(concurrency=ladder, drafter="ngram").speedup
    n["ngram_min_2048"] = times(ngram.min())
    n["ngram_max_2048"] = times(ngram.max())
    crossing = one(concurrency=ladder).speedup
    n["loss_from_b"] = plain(ladder[np.argmax(crossing < 1)], 0)

    # Model facts.
    n["target_params_b"] = plain(arch.parameter_count(t8) / 1e9)
    n["d06_params_b"] = plain(arch.parameter_count(d06) / 1e9, 3)
    n["d17_params_b"] = plain(arch.parameter_count(d17) / 1e9)
    n["target_weights_gib"] = plain(arch.weight_bytes(t8) / GIB)
    n["d06_weights_gib"] = plain(arch.weight_bytes(d06) / GIB)
    n["d17_weights_gib"] = plain(arch.weight_bytes(d17) / GIB)
    n["d06_weight_share"] = percent(arch.weight_bytes(d06) / arch.weight_bytes(t8))
    n["d17_weight_share"] = percent(arch.weight_bytes(d17) / arch.weight_bytes(t8))
    n["target_kv_kib"] = plain(arch.kv_cache_bytes_per_token(t8) / KIB, 0)
    n["draft_kv_kib"] = plain(arch.kv_cache_bytes_per_token(d06) / KIB, 0)
    n["draft_kv_share"] = percent(arch.kv_cache_bytes_per_token(d06) / arch.kv_cache_bytes_per_token(t8))
    n["gqa_factor"] = plain(t8.num_attention_heads / t8.num_key_value_heads, 0)
    n["hbm_tbps"] = plain(hw.memory_bandwidth.value / 1e12)
    n["peak_tflops"] = plain(hw.peak_flops.value / 1e12, 1)
    n["hbm_gb"] = plain(hw.memory_capacity.value / 1e9, 0)
    n["flops_per_weight"] = plain(arch.dense_flops_per_position(t8) / arch.parameter_count(t8), 0)
    base_flops = d.verify_flops / (DEFAULTS["gamma"] + 1)
    n["plain_intensity"] = plain(base_flops / d.verify_bytes, 1)
    n["ridge_intensity"] = plain(hw.peak_flops.value / hw.memory_bandwidth.value, 0)

    # The lender.
    n["verify_gib_b1"] = plain(d.verify_bytes / GIB)
    n["verify_tflop_b1"] = plain(d.verify_flops / 1e12, 3)
    n["verify_mem_ms_b1"] = plain(d.verify_memory_time * 1e3)
    n["verify_comp_ms_b1"] = plain(d.verify_compute_time * 1e3)
    n["idle_b1"] = percent(d.verify_idle)
    n["idle_b32"] = percent(b32.verify_idle)
    n["idle_b64"] = percent(b64.verify_idle)
    n["idle_b1024"] = percent(b1024.verify_idle)
    n["plain_comp_ms_b1"] = plain(d.verify_compute_time / (DEFAULTS["gamma"] + 1) * 1e3, 3)
    n["thm311_c0"] = times(acc.theorem_3_11_arithmetic_increase(0.75, 4, 0.0))
    n["arith_ngram_same"] = times(one(drafter="ngram", acceptance="same").arithmetic_ratio)
    c06 = arch.dense_flops_per_position(d06) / arch.dense_flops_per_position(t8)
    n["c_d06"] = plain(c06, 3)
    n["thm311_d06"] = times(acc.theorem_3_11_arithmetic_increase(0.75, 4, c06))
    arith_ladder = one(concurrency=ladder).arithmetic_ratio
    n["arith_min"] = times(arith_ladder.min())
    n["arith_max"] = times(arith_ladder.max())

    # A better draft can be a worse deal.
    d17_same = one(drafter="qwen3-1.7b")
    n["speedup_d17"] = times(d17_same.speedup)
    n["draft_share_d17"] = percent(d17_same.draft_share)
    n["speedup_d17_a95"] = times(one(drafter="qwen3-1.7b", alpha=0.95).speedup)
    long64 = one(concurrency=64, context=8192)
    n["draft_share_b64_t8192"] = percent(long64.draft_share)
    n["speedup_b64_t8192"] = times(long64.speedup)
    short = one(concurrency=1024, context=256, drafter="ngram")
    n["ngram_b1024_t256"] = times(short.speedup)
    n["verify_idle_ngram_b1024_t256"] = percent(short.verify_idle)

    # The gamma ceiling.
    gammas = np.arange(1, 11)
    curve1 = one(gamma=gammas).speedup
    curve32 = one(concurrency=32, gamma=gammas).speedup
    for g in (1, 2, 3, 4, 6, 10):
        n[f"speedup_g{g}"] = times(curve1[g - 1])
    n["best_gamma_b1"] = plain(gammas[np.argmax(curve1)], 0)
    n["best_gamma_b32"] = plain(gammas[np.argmax(curve32)], 0)
    n["best_speedup_b32"] = times(curve32.max())
    n["speedup_b32_g10"] = times(curve32[-1])
    n["ceiling_a75"] = plain(1 / (1 - 0.75), 0)
    e4, e10, e17 = (float(acc.closed_form_tokens_per_iteration(0.75, g)) for g in (4, 10, 17))
    n["tokens_g4"] = plain(e4)
    n["tokens_g10"] = plain(e10)
    n["tokens_g17"] = plain(e17)
    n["tokens_g10_gain"] = percent(e10 / e4 - 1)
    n["survive_17_every"] = plain(1 / 0.75**17, 0)
    same = one(acceptance="same")
    n["speedup_same"] = times(same.speedup)
    n["mal_same"] = plain(same.mean_acceptance_length)
    n["same_flattering"] = percent(same.mean_acceptance_length / d.mean_acceptance_length - 1)
    n["speedup_same_gain"] = percent(same.speedup / d.speedup - 1)
    for j, u in enumerate(np.ravel(d.per_position), start=1):
        n[f"per_pos_{j}"] = plain(u, 3)
    n["fourth_used_every"] = plain(1 / float(np.ravel(d.per_position)[3]), 1)
    n["falling_ratio"] = plain(FALLING_RATIO)

    # Algorithm 1, run for real (the toy demo the sampling figure draws).
    from specmodel.sampling import toy_demo
    from specmodel.site.figures_data import SAMPLING_SEED, SAMPLING_TRIALS

    demo = toy_demo(seed=SAMPLING_SEED, trials=SAMPLING_TRIALS)
    n["sampling_trials"] = plain(demo.trials, 0)
    n["sampling_acceptance"] = plain(demo.acceptance_rate, 3)
    n["sampling_expected"] = plain(demo.expected_acceptance, 3)
    n["sampling_tv"] = plain(0.5 * float(np.abs(np.subtract(demo.output, demo.p)).sum()), 4)
    n.update(literature_numbers())
    return n
