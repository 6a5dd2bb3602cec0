"""Engine profiles (``ideal`` and the fitted ``vllm``), cohort and steady batching, and the
command line's measured-acceptance options.

* A vLLM profile stripped of every overhead is the article's roofline, bit for bit.
* An overhead never makes anything faster; the smooth memory/arithmetic rule is never
  below the roofline's max.
* Steady and cohort batching converge as each sequence generates more tokens.
* ``--per-position`` and ``--mean-acceptance-length`` mean what the library says; bad
  acceptance input is one line on stderr and exit status 2.
* The vLLM fit's recorded provenance matches the measurements file and today's model.
* The n-gram lookup under vLLM drafts only on a match.
* EAGLE-3's step and its once-per-iteration fused projection, counted by hand.
"""

from __future__ import annotations

import hashlib
import json
import math
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from specmodel import Settings, evaluate, evaluate_per_position
from specmodel.measurements import load_measurements, predict, relative_errors
from specmodel.model import heads
from specmodel.model.acceptance import alpha_for_mean_acceptance_length, closed_form_tokens_per_iteration
from specmodel.model.drafters import drafter_coefficients, drafter_of
from specmodel.model.roofline import combined_time
from specmodel.model.specs import get_architecture

ROOT = Path(__file__).resolve().parents[1]
SETTINGS = Settings()
VLLM = SETTINGS.engines["vllm"]
DRAFTERS = ("qwen3-0.6b", "ngram", "eagle", "eagle3")
COMPARED = ("speedup", "spec_tokens_per_s", "base_tokens_per_s", "draft_share", "arithmetic_ratio")

#: A grid over every axis that matters, as broadcasting arrays.
GRID = {
    "concurrency": np.array([1, 2, 5, 16, 64, 256, 1024])[:, None, None, None, None],
    "context": np.array([0, 512, 2048, 8192])[None, :, None, None, None],
    "gamma": np.array([1, 3, 4, 8])[None, None, :, None, None],
    "drafter": np.array(DRAFTERS)[None, None, None, :, None],
    "acceptance": np.array(["falling", "same"])[None, None, None, None, :],
}


def run(*args: str) -> subprocess.CompletedProcess[str]:
    """``python -m specmodel ARGS`` as a user would run it."""
    return subprocess.run([sys.executable, "-m", "specmodel", *args], capture_output=True, text=True, cwd=ROOT)


def point_json(*args: str) -> dict:
    out = run("point", *args, "--json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


# 1. The vLLM profile without its overheads is the ideal roofline ----------------------------


def bare_vllm_settings() -> Settings:
    """Settings whose ``vllm`` profile adds nothing to the roofline (and, like ``ideal``, has no
    token budget, so a steady batch spreads its prefill evenly, and reads the embedding table
    whole rather than gathering its rows: tests/test_embedding_gather.py prices the gather)."""
    bare = replace(
        VLLM,
        target_pass_s=0.0,
        sequence_pass_s=0.0,
        draft_model_pass_s=0.0,
        head_pass_s=0.0,
        fused_head_pass_s=0.0,
        ngram_lookup_s=0.0,
        iteration_s=0.0,
        overlap=math.inf,
        compute_efficiency=None,
        ngram_matched_acceptance=None,
        token_budget=None,
        embedding_read="table",
    )
    return SETTINGS.with_engine(bare)


@pytest.mark.parametrize("batching", ["cohort", "steady"])
def test_vllm_without_overheads_is_the_ideal_engine_bit_for_bit(batching):
    settings = bare_vllm_settings()
    ideal = evaluate(engine="ideal", batching=batching, settings=settings, **GRID)
    vllm = evaluate(engine="vllm", batching=batching, settings=settings, **GRID)
    for key in COMPARED:
        a, b = getattr(ideal, key), getattr(vllm, key)
        assert a.shape == (7, 4, 4, 4, 2)
        assert np.all(np.isfinite(a))
        assert np.array_equal(a, b), key


def test_the_fitted_vllm_profile_is_not_the_ideal_engine():
    # the check above is not vacuous: with its overheads, vllm differs everywhere
    ideal = evaluate(engine="ideal", batching="cohort", **GRID).speedup
    vllm = evaluate(engine="vllm", batching="cohort", **GRID).speedup
    assert np.all(ideal != vllm)


# 2. An overhead never makes a pass faster ------------------------------------------------

FIXED_TIMES = (
    "target_pass_s", "sequence_pass_s", "draft_model_pass_s", "head_pass_s", "fused_head_pass_s", "ngram_lookup_s",
    "iteration_s",
)  # fmt: skip
#: What each fixed time touches: the drafters whose speculative time it enters, and
#: whether it enters plain decoding.
AFFECTS = {
    "target_pass_s": (DRAFTERS, True),
    "sequence_pass_s": (DRAFTERS, True),
    "draft_model_pass_s": (("qwen3-0.6b",), False),
    # a fused head (EAGLE-3) pays a head's step time when the profile gives it none of its own
    "head_pass_s": (("eagle",) if VLLM.fused_head_pass_s is not None else ("eagle", "eagle3"), False),
    "fused_head_pass_s": (("eagle3",), False),
    "ngram_lookup_s": (("ngram",), False),
    "iteration_s": (DRAFTERS, False),
}
SMALL_GRID = {
    "concurrency": np.array([1, 8, 64, 512])[:, None, None],
    "context": np.array([0, 2048])[None, :, None],
    "drafter": np.array(DRAFTERS)[None, None, :],
}


def fitted(name: str) -> float:
    if name == "draft_model_pass_s":
        return VLLM.draft_model_pass
    return VLLM.fused_head_pass if name == "fused_head_pass_s" else float(getattr(VLLM, name))


def throughputs(settings: Settings, batching: str) -> tuple[np.ndarray, np.ndarray]:
    ev = evaluate(engine="vllm", batching=batching, settings=settings, **SMALL_GRID)
    return ev.spec_tokens_per_s, ev.base_tokens_per_s


@pytest.mark.parametrize("batching", ["cohort", "steady"])
@pytest.mark.parametrize("name", FIXED_TIMES)
@pytest.mark.parametrize("more", [lambda x: 2 * max(x, 1e-5), lambda x: x + 1e-3], ids=["double", "plus-1ms"])
def test_raising_a_fixed_time_never_raises_throughput(name, more, batching):
    spec0, base0 = throughputs(SETTINGS, batching)
    slower = SETTINGS.with_engine(replace(VLLM, **{name: more(fitted(name))}))
    spec1, base1 = throughputs(slower, batching)
    assert np.all(spec1 <= spec0) and np.all(base1 <= base0)
    drafters, in_plain = AFFECTS[name]
    touched = np.isin(SMALL_GRID["drafter"], drafters) & np.ones(spec0.shape, dtype=bool)
    # wired where it should be, and nowhere else
    assert np.all(spec1[touched] < spec0[touched])
    assert np.array_equal(spec1[~touched], spec0[~touched])
    assert np.all(base1 < base0) if in_plain else np.array_equal(base1, base0)


@pytest.mark.parametrize("batching", ["cohort", "steady"])
@pytest.mark.parametrize(("name", "value"), [("overlap", 1.5), ("overlap", 1.0), ("compute_efficiency", 0.3)])
def test_less_overlap_or_efficiency_never_raises_throughput(name, value, batching):
    assert value < getattr(VLLM, name)
    spec0, base0 = throughputs(SETTINGS, batching)
    spec1, base1 = throughputs(SETTINGS.with_engine(replace(VLLM, **{name: value})), batching)
    assert np.all(spec1 <= spec0) and np.all(base1 <= base0)
    assert np.any(spec1 < spec0) and np.any(base1 < base0)


SECONDS = st.one_of(st.just(0.0), st.floats(1e-300, 1e3), st.floats(0.0, 1.0))
OVERLAPS = st.one_of(st.just(1.0), st.just(math.inf), st.floats(1.0, 1e6))


@given(m=SECONDS, c=SECONDS, p=OVERLAPS)
def test_combined_time_is_never_below_the_roofline_max(m, c, p):
    t = combined_time(m, c, p)
    assert t >= max(m, c)
    assert t <= (m + c) * (1 + 1e-12)  # and never above no overlap at all (p = 1)
    if math.isinf(p):
        assert t == max(m, c)


@given(st.lists(st.tuples(SECONDS, SECONDS, OVERLAPS), min_size=1, max_size=8))
def test_combined_time_elementwise_is_never_below_the_max(triples):
    m, c, p = (np.array(x, dtype=float) for x in zip(*triples, strict=True))
    t = combined_time(m, c, p)
    assert t.shape == m.shape and np.all(t >= np.maximum(m, c))


def test_combined_time_is_the_lp_norm():
    assert combined_time(3.0, 4.0, 2.0) == pytest.approx(5.0, rel=1e-15)
    assert combined_time(3.0, 4.0, 1.0) == pytest.approx(7.0, rel=1e-15)
    assert combined_time(3.0, 4.0, 3.0) == pytest.approx((27 + 64) ** (1 / 3), rel=1e-15)


# 3. Steady and cohort batching converge as G grows ----------------------------------------

GENERATED = (64, 256, 1024, 4096)


def test_steady_and_cohort_converge_as_generation_grows():
    # Context 0: steady batching's prefill, T / G prompt tokens per generated token, is nil,
    # so the two differ only by the cohort's draining tail (iterations run for the last few
    # sequences, and tokens past G discarded), whose share of the run shrinks as G grows.
    grid = {
        "concurrency": np.array([1, 4, 32, 256, 1024])[:, None, None],
        "gamma": np.array([1, 4, 8])[None, :, None],
        "drafter": np.array(["qwen3-0.6b", "ngram", "eagle3"])[None, None, :],
        "context": 0,
        "engine": "ideal",
    }
    gaps = []
    for g in GENERATED:
        steady = evaluate(batching="steady", generated_tokens=g, **grid).speedup
        cohort = evaluate(batching="cohort", generated_tokens=g, **grid).speedup
        gaps.append(np.abs(steady / cohort - 1))
    gaps = np.array(gaps)
    assert np.all(np.diff(gaps, axis=0) < 0), gaps.max(axis=(1, 2, 3))
    assert gaps[-1].max() < 0.02
    assert gaps[0].max() > 0.1  # they did differ: the check above is not vacuous


def test_one_sequence_steady_and_cohort_differ_by_the_discarded_tail():
    # B = 1: no draining, but the cohort's last iteration overshoots G; the gap is O(1 / G).
    gaps = [
        abs(
            float(evaluate(batching="steady", context=0, generated_tokens=g).speedup)
            / float(evaluate(batching="cohort", context=0, generated_tokens=g).speedup)
            - 1
        )
        for g in GENERATED
    ]
    for shorter, longer in zip(gaps, gaps[1:], strict=False):
        assert longer < shorter / 3  # G x 4 -> gap / 4, roughly
    assert gaps[-1] < 1e-3


# 4. --per-position is evaluate_per_position -----------------------------------------------

RATES = [0.7, 0.4, 0.2]


@pytest.mark.parametrize("engine", [None, "ideal", "vllm"])
def test_cli_per_position_is_evaluate_per_position(engine):
    args = ["--per-position", ",".join(map(str, RATES))] + (["--engine", engine] if engine else [])
    data = point_json(*args)
    ev = evaluate_per_position(RATES, **({"engine": engine} if engine else {}))
    assert data["speedup"] == pytest.approx(float(ev.speedup), rel=1e-12)
    assert data["spec_tokens_per_s"] == pytest.approx(float(ev.spec_tokens_per_s), rel=1e-12)
    assert data["per_position"] == pytest.approx(RATES, rel=1e-15)
    assert data["mean_acceptance_length"] == pytest.approx(1 + sum(RATES), rel=1e-12)
    assert data["gamma"] == 3 and data["alpha"] is None
    assert (data["engine"], data["batching"]) == (("vllm", "steady") if engine == "vllm" else ("ideal", "cohort"))


def test_the_engines_give_different_answers_for_the_same_rates():
    ideal, vllm = (float(evaluate_per_position(RATES, engine=e).speedup) for e in ("ideal", "vllm"))
    assert vllm < ideal


# 5. --mean-acceptance-length round-trips --------------------------------------------------


@given(gamma=st.integers(1, 10), share=st.floats(1e-6, 1 - 1e-6))
@hypothesis_settings(max_examples=60)
def test_mean_acceptance_length_round_trips(gamma, share):
    m = 1 + share * gamma  # strictly between 1 and gamma + 1
    ev = evaluate(mean_acceptance_length=m, gamma=gamma)
    assert float(ev.mean_acceptance_length) == pytest.approx(m, rel=1e-9)
    assert float(closed_form_tokens_per_iteration(float(ev.alpha), gamma)) == pytest.approx(m, rel=1e-9)


@pytest.mark.parametrize("gamma", [1, 2, 4, 7])
@pytest.mark.parametrize("fraction", [0.1, 0.5, 0.9])
def test_mean_acceptance_length_round_trips_on_a_grid(gamma, fraction):
    m = 1 + fraction * gamma
    ev = evaluate(mean_acceptance_length=m, gamma=gamma, concurrency=[1, 64])
    assert ev.mean_acceptance_length == pytest.approx([m, m], rel=1e-9)
    assert ev.per_position.shape == (2, gamma)


@pytest.mark.parametrize(("m", "gamma"), [(2.5, None), (1.3, 2), (3.2, 4), (6.5, 8)])
def test_cli_mean_acceptance_length_reports_the_alpha_it_used(m, gamma):
    data = point_json("--mean-acceptance-length", str(m), *(["--gamma", str(gamma)] if gamma else []))
    g = gamma or 4
    assert data["gamma"] == g
    assert data["mean_acceptance_length"] == pytest.approx(m, rel=1e-9)
    assert float(closed_form_tokens_per_iteration(data["alpha"], g)) == pytest.approx(m, rel=1e-9)
    assert data["alpha"] == pytest.approx(alpha_for_mean_acceptance_length(m, g), rel=1e-12)
    # the "same" profile: each position's acceptance is alpha times the one before
    assert data["per_position"] == pytest.approx([data["alpha"] ** j for j in range(1, g + 1)], rel=1e-9)


# 6. Bad acceptance input: one line on stderr, exit 2 -------------------------------------


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--per-position", "0.3,0.5"], "must not rise with position"),
        (["--per-position", "1.2"], "between 0 and 1"),
        (["--per-position", "-0.1"], "between 0 and 1"),
        (["--per-position", "0.5,-0.1"], "between 0 and 1"),
        (["--mean-acceptance-length", "6"], "strictly between 1 and gamma + 1 = 5"),
        (["--mean-acceptance-length", "5"], "strictly between 1 and gamma + 1 = 5"),
        (["--mean-acceptance-length", "1"], "strictly between 1 and gamma + 1"),
        (["--mean-acceptance-length", "3", "--gamma", "2"], "gamma + 1 = 3"),
        (["--engine", "sglang"], "unknown engine 'sglang'; allowed: ideal, vllm"),
        (["--per-position", "0.5", "--mean-acceptance-length", "2"], "give the acceptance one way"),
        (["--alpha", "0.5", "--mean-acceptance-length", "2"], "give the acceptance one way"),
        (["--per-position", "0.5", "--alpha", "0.6"], "give the acceptance one way"),
        (["--batching", "bogus"], "'bogus'"),
        (["--per-position", ","], "is empty"),
    ],
)
def test_bad_acceptance_input_is_one_line_and_exit_2(args, needle):
    out = run("point", *args, "--json")
    assert out.returncode == 2
    assert out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], out.stderr


# 7. The vLLM fit's provenance -------------------------------------------------------------


def test_vllm_fit_provenance_matches_the_measurements_file():
    fit = VLLM.fit
    assert fit is not None
    path = ROOT / fit.measurements
    assert path == ROOT / "specmodel" / "data" / "measurements.csv"
    assert hashlib.sha256(path.read_bytes()).hexdigest() == fit.measurements_sha256
    rows = load_measurements(path)
    assert fit.rows == len(rows) == len(fit.residuals)


def test_vllm_fit_residuals_are_what_the_model_predicts_now():
    fit = VLLM.fit
    rows = load_measurements(ROOT / fit.measurements)
    errors = relative_errors(predict(rows, "vllm"), rows)
    assert errors == pytest.approx(list(fit.residuals), abs=5e-4)
    magnitude = np.abs(errors)
    assert float(np.median(magnitude)) == pytest.approx(fit.median_abs_error, abs=5e-4)
    assert float(np.quantile(magnitude, 0.9)) == pytest.approx(fit.p90_abs_error, abs=5e-4)
    assert float(magnitude.max()) == pytest.approx(fit.max_abs_error, abs=5e-4)


@pytest.mark.xfail(
    strict=True,
    reason="four identifiable constants give 6.9% / 17.6% in sample; "
    "held-out errors are the headline now (tests/test_fit_heldout.py)",
)
def test_vllm_profile_meets_its_accuracy_targets_on_the_measurements():
    # one profile for all 60 rows, median |error| <= 6% and 90th percentile <= 15%,
    # each run's measured acceptance given to the model
    rows = load_measurements(ROOT / VLLM.fit.measurements)
    magnitude = np.abs(relative_errors(predict(rows, "vllm"), rows))
    assert len(rows) == 60
    assert float(np.median(magnitude)) <= 0.06, float(np.median(magnitude))
    assert float(np.quantile(magnitude, 0.9)) <= 0.15, float(np.quantile(magnitude, 0.9))


# 8. The n-gram lookup under vLLM drafts only on a match ------------------------------------


@pytest.mark.parametrize("batching", ["cohort", "steady"])
@pytest.mark.parametrize("shares", [[0.2], [0.75, 0.4, 0.2], [0.95, 0.75], [0.0, 0.0]])
def test_vllm_ngram_drafts_only_on_a_match(shares, batching):
    a = VLLM.ngram_matched_acceptance  # acceptances below it, whatever the fit makes it
    u = [share * a for share in shares]
    ev = evaluate(drafter="ngram", engine="vllm", batching=batching, per_position=u)
    match = float(ev.ngram_match_rate)
    assert match < 1
    assert match == pytest.approx(min(1.0, u[0] / a), rel=1e-12, abs=1e-15)
    # the lookup drafts gamma tokens in the matched share of iterations only
    gamma, generated = len(u), ev.generated_tokens
    drafts_per_s = float(ev.spec_tokens_per_s * ev.expected_iterations) / generated
    assert float(ev.drafted_throughput) == pytest.approx(drafts_per_s * match * gamma, rel=1e-12, abs=1e-12)
    ideal = evaluate(drafter="ngram", engine="ideal", batching=batching, per_position=u)
    assert float(ideal.ngram_match_rate) == 1.0


@given(u1=st.floats(0.0, 1.0))
@hypothesis_settings(max_examples=30)
def test_vllm_ngram_match_rate_is_min_of_one_and_u1_over_a(u1):
    ev = evaluate(drafter="ngram", engine="vllm", per_position=[u1])
    expected = min(1.0, u1 / VLLM.ngram_matched_acceptance)
    assert float(ev.ngram_match_rate) == pytest.approx(expected, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("drafter", ["qwen3-0.6b", "eagle", "eagle3"])
def test_only_the_ngram_lookup_can_miss(drafter):
    ev = evaluate(drafter=drafter, engine="vllm", per_position=[0.05])
    assert float(ev.ngram_match_rate) == 1.0


# 9. EAGLE-3 on Llama-3.1-8B, counted by hand ----------------------------------------------

LLAMA = get_architecture("llama-3.1-8b")
# config.json of Llama-3.1-8B: D = 4096, 32 query heads, 8 KV heads, H = 4096 / 32 = 128,
# F = 14336, V = 128256, no q/k norms, bf16.
D, N, K, H, F, V = 4096, 32, 8, 128, 14336, 128256
LAYER = 2 * D * N * H + 2 * D * K * H + 3 * D * F + 2 * D  # attention + gated MLP + 2 RMSNorms
# EAGLE-3 (yuhuili/EAGLE3-LLaMA3.1-Instruct-8B; vLLM llama_eagle3.py): one such layer whose
# q, k, v read [embedding; hidden] (2D, so D (N + 2K) H more weights), a hidden_norm and a
# final norm of width D, its own 32000 x D LM head, and fc from 3D to D, applied once per
# iteration to the target's hidden states.
EAGLE3_FUSED = 3 * D * D
EAGLE3_STEP = LAYER + D * (N + 2 * K) * H + D + D + 32000 * D
# EAGLE: fc from 2D to D every step, one layer, a final norm, and the target's 128256 x D head.
EAGLE_STEP = 2 * D * D + LAYER + D + V * D


def test_hand_counts():
    assert LAYER == 218_112_000
    assert EAGLE3_FUSED == 50_331_648
    assert EAGLE3_STEP == 374_358_016
    assert EAGLE_STEP == 777_007_104


def test_eagle3_step_and_fused_projection_by_hand():
    eagle3 = heads.head_catalog()["eagle3"]
    assert heads.head_fused_projection_parameters(eagle3, LLAMA) == EAGLE3_FUSED
    assert heads.head_parameters_read_per_step(eagle3, LLAMA) == EAGLE3_STEP
    assert heads.head_own_parameters(eagle3, LLAMA) == EAGLE3_STEP + EAGLE3_FUSED


def test_eagle_step_by_hand():
    eagle = heads.head_catalog()["eagle"]
    assert heads.head_fused_projection_parameters(eagle, LLAMA) == 0
    assert heads.head_parameters_read_per_step(eagle, LLAMA) == EAGLE_STEP


def test_an_eagle3_step_reads_less_than_an_eagle_step_but_adds_a_per_iteration_read():
    assert EAGLE3_STEP < EAGLE_STEP
    e3, e = (drafter_coefficients(name, "llama-3.1-8b", 2) for name in ("eagle3", "eagle"))
    assert e3.weight_bytes == 2 * EAGLE3_STEP < e.weight_bytes == 2 * EAGLE_STEP
    once_e3, once_e = (
        drafter_of(name).once_per_iteration(get_architecture("llama-3.1-8b"), 2) for name in ("eagle3", "eagle")
    )
    assert once_e3.weight_bytes == 2 * EAGLE3_FUSED and once_e.weight_bytes == 0
    assert once_e3.dense_flops_per_position == 2 * EAGLE3_FUSED


def test_the_evaluation_reads_the_hand_counted_step():
    # one sequence: the step reads the head's weights and its one-layer cache at n = T + G / 2
    ev = evaluate(drafter="eagle3", target="llama-3.1-8b", concurrency=1, context=2048, generated_tokens=256)
    cache = 2 * 1 * K * H * 2 * (2048 + 256 // 2)
    assert float(ev.draft_step_bytes) == 2 * EAGLE3_STEP + cache
