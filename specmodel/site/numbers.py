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
from specmodel import heads
from specmodel.drafters import drafter_coefficients
from specmodel.model import defaults, evaluate
from specmodel.readouts import GIB, KIB
from specmodel.sampling import toy_demo
from specmodel.settings import constants, deployment
from specmodel.site.figures_data import COMPARED_HARDWARE, SAMPLING_SEED, SAMPLING_TRIALS
from specmodel.specs import get_architecture, get_hardware


@dataclass(frozen=True)
class Number:
    """A value and the text the prose prints for it (``value`` is NaN for a name)."""

    value: float
    text: str


def name(text: str) -> Number:
    """A name the prose prints (hardware, model), so that a config file can change it."""
    return Number(float("nan"), text)


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
    dep = deployment()
    hw = get_hardware(dep.hardware)
    t8, d06, d17 = (get_architecture(k) for k in (dep.target, dep.draft, dep.big_draft))
    gamma = defaults()["gamma"]

    # Names, so that the prose follows a --config file.
    n["hardware_name"] = name(hw.name)
    n["target_name"] = name(t8.name)
    n["draft_name"] = name(d06.name)
    n["big_draft_name"] = name(d17.name)

    # Defaults and the simulated system.
    n["generated_tokens"] = plain(constants().GENERATED_TOKENS, 0)
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
    base_flops = d.verify_flops / (gamma + 1)
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
    n["plain_comp_ms_b1"] = plain(d.verify_compute_time / (gamma + 1) * 1e3, 3)
    n["thm311_c0"] = times(acc.theorem_3_11_arithmetic_increase(0.75, 4, 0.0))
    n["arith_ngram_same"] = times(one(drafter="ngram", acceptance="same").arithmetic_ratio)
    c06 = arch.dense_flops_per_position(d06) / arch.dense_flops_per_position(t8)
    n["c_d06"] = plain(c06, 3)
    n["thm311_d06"] = times(acc.theorem_3_11_arithmetic_increase(0.75, 4, c06))
    arith_ladder = one(concurrency=ladder).arithmetic_ratio
    n["arith_min"] = times(arith_ladder.min())
    n["arith_max"] = times(arith_ladder.max())

    # A better draft can be a worse deal.
    d17_same = one(drafter=dep.big_draft)
    n["speedup_d17"] = times(d17_same.speedup)
    n["draft_share_d17"] = percent(d17_same.draft_share)
    n["speedup_d17_a95"] = times(one(drafter=dep.big_draft, alpha=0.95).speedup)
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
    n["falling_ratio"] = plain(constants().FALLING_RATIO)

    # Algorithm 1, run for real (the toy demo the sampling figure draws).
    demo = toy_demo(seed=SAMPLING_SEED, trials=SAMPLING_TRIALS)
    n["sampling_trials"] = plain(demo.trials, 0)
    n["sampling_acceptance"] = plain(demo.acceptance_rate, 3)
    n["sampling_expected"] = plain(demo.expected_acceptance, 3)
    n["sampling_tv"] = plain(0.5 * float(np.abs(np.subtract(demo.output, demo.p)).sum()), 4)
    n.update(memory_numbers())
    n.update(head_numbers())
    n.update(hardware_numbers())
    n.update(literature_numbers())
    return n


def first_where(values, mask) -> Number:
    """The first of ``values`` where ``mask`` holds, or "more than <last>" if it never does."""
    values, mask = np.asarray(values), np.asarray(mask, dtype=bool)
    if mask.any():
        return plain(values[np.argmax(mask)], 0)
    return Number(float("nan"), f"more than {values[-1]:,}")


def gib(value: float, decimals: int = 1) -> Number:
    return Number(float(value), f"{value / GIB:,.{decimals}f} GiB")


def memory_numbers() -> dict[str, Number]:
    """Whether the article's scenarios fit on one card of the deployment's hardware."""
    n: dict[str, Number] = {}
    c = constants()
    d, b64, b128, b1024 = one(), one(concurrency=64), one(concurrency=128), one(concurrency=1024)
    long64 = one(concurrency=64, context=8192)
    plain_b1024 = one(concurrency=1024, drafter="ngram")
    n["gpu_memory_utilization"] = percent(c.GPU_MEMORY_UTILIZATION)
    n["workspace_gib"] = gib(c.WORKSPACE_BYTES, 0)
    n["usable_gib"] = gib(d.usable_memory_bytes)
    n["capacity_gib"] = gib(get_hardware(deployment().hardware).memory_capacity.value)
    n["hbm_b1"] = gib(d.memory_required_bytes)
    n["hbm_b64"] = gib(b64.memory_required_bytes)
    n["hbm_b128"] = gib(b128.memory_required_bytes)
    n["hbm_b1024"] = gib(b1024.memory_required_bytes, 0)
    n["hbm_plain_b1024"] = gib(plain_b1024.memory_required_bytes, 0)
    n["hbm_b64_t8192"] = gib(long64.memory_required_bytes)
    n["cards_b1024"] = plain(np.ceil(float(b1024.memory_required_bytes) / float(d.usable_memory_bytes)), 0)
    n["max_b_draft"] = plain(d.max_concurrency, 0)
    n["max_b_plain"] = plain(d.max_concurrency_without_draft, 0)
    n["max_b_loss"] = percent(1 - float(d.max_concurrency) / float(d.max_concurrency_without_draft))
    t8192 = one(context=8192)
    n["max_b_draft_t8192"] = plain(t8192.max_concurrency, 0)
    n["max_b_plain_t8192"] = plain(t8192.max_concurrency_without_draft, 0)
    kv_share = float(d.draft_kv_bytes_per_token / (d.draft_kv_bytes_per_token + d.target_kv_bytes_per_token))
    n["draft_kv_of_total"] = percent(kv_share)
    ladder = np.array([2**i for i in range(11)])
    fits = one(concurrency=ladder).fits
    n["ladder_first_unfit_b"] = first_where(ladder, ~fits)
    eagle = one(drafter="eagle")
    n["max_b_eagle"] = plain(eagle.max_concurrency, 0)
    return n


def head_numbers() -> dict[str, Number]:
    """The draft heads against the deployment's draft model."""
    n: dict[str, Number] = {}
    dep = deployment()
    t = get_architecture(dep.target)
    catalog = heads.head_catalog()
    eagle, small = catalog["eagle"], catalog["eagle-32k"]
    n["lm_head_gib"] = plain(heads.lm_head_bytes_per_step(eagle, t) / GIB)
    n["lm_head_small_gib"] = plain(heads.lm_head_bytes_per_step(small, t) / GIB)
    n["small_vocab"] = plain(small.draft_vocab_size, 0)
    n["target_vocab"] = plain(t.vocab_size, 0)
    n["eagle_read_gib"] = plain(drafter_coefficients("eagle", t.key).weight_bytes / GIB)
    n["eagle_small_read_gib"] = plain(drafter_coefficients("eagle-32k", t.key).weight_bytes / GIB)
    n["draft_read_gib"] = plain(drafter_coefficients(dep.draft, t.key).weight_bytes / GIB)
    n["lm_head_share_eagle"] = percent(heads.lm_head_bytes_per_step(eagle, t) / drafter_coefficients("eagle", t.key).weight_bytes)
    n["head_kv_kib"] = plain(heads.head_kv_cache_bytes_per_token(eagle, t) / KIB, 0)
    n["head_layer_gib"] = plain(heads.head_own_parameters(eagle, t) * t.bytes_per_element / GIB)
    for key, label in (("eagle", "eagle"), ("eagle-32k", "eagle32k"), ("mtp", "mtp")):
        n[f"speedup_{label}_b1"] = times(one(drafter=key).speedup)
        n[f"speedup_{label}_b64"] = times(one(drafter=key, concurrency=64).speedup)
    n["speedup_eagle32k_b1024"] = times(one(drafter="eagle-32k", concurrency=1024).speedup)
    b64 = one(concurrency=64)
    e64 = one(drafter="eagle", concurrency=64)
    n["draft_step_gib_b64"] = plain(b64.draft_step_bytes / GIB)
    n["eagle_step_gib_b64"] = plain(e64.draft_step_bytes / GIB)
    n["draft_share_eagle_b64"] = percent(e64.draft_share)
    n["draft_share_b64"] = percent(b64.draft_share)
    return n


def hardware_numbers() -> dict[str, Number]:
    """The deployment's model pair on each card the hardware page compares, by card key."""
    n: dict[str, Number] = {}
    ladder = np.array([2**i for i in range(11)])
    for card in COMPARED_HARDWARE:
        hw = get_hardware(card)
        d = one(hardware=card)
        curve = one(concurrency=ladder, hardware=card)
        n[f"name_{card}"] = name(hw.name)
        n[f"bandwidth_{card}"] = plain(hw.memory_bandwidth.value / 1e12, 2)
        n[f"capacity_{card}"] = plain(hw.memory_capacity.value / 1e9, 0)
        n[f"base_tps_b1_{card}"] = plain(d.base_tokens_per_s, 0)
        n[f"spec_tps_b1_{card}"] = plain(d.spec_tokens_per_s, 0)
        n[f"speedup_b1_{card}"] = times(d.speedup)
        n[f"speedup_b64_{card}"] = times(curve.speedup[6])
        n[f"speedup_b1024_{card}"] = times(curve.speedup[10])
        n[f"ngram_b1024_{card}"] = times(one(concurrency=1024, drafter="ngram", hardware=card).speedup)
        n[f"loss_from_b_{card}"] = first_where(ladder, curve.speedup < 1)
        n[f"max_b_draft_{card}"] = plain(d.max_concurrency, 0)
        n[f"max_b_plain_{card}"] = plain(d.max_concurrency_without_draft, 0)
        n[f"first_unfit_b_{card}"] = first_where(ladder, ~curve.fits)
    return n
