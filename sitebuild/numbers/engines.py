"""The engines: how far each is from public measurements, and the fitted vLLM profile (the
article's section 8 and the validation page)."""

from __future__ import annotations

import numpy as np

from sitebuild.config import SiteSettings
from sitebuild.figures.engines import validation
from sitebuild.fit_records import read_subset_fits
from sitebuild.numbers.common import one
from sitebuild.numbers.text import Number, percent, plain
from sitebuild.paths import MEASUREMENTS, SUBSET_FITS
from specmodel.measurements import error_summary, load_measurements
from specmodel.model.engines import EngineProfile
from specmodel.model.scenario import ENGINES

#: The held-out splits the profile records (``tools/fit_engine.py``), by their short names here.
SPLITS = {"leave_one_workload_out": "loo", "leave_one_source_out": "loso", "small_to_large": "small_large",
          "in_sample": "in_sample"}  # fmt: skip


def held_out_numbers(profile: EngineProfile) -> dict[str, Number]:
    """The fitted profile's held-out and in-sample errors, and its constants' largest relative
    standard error and correlation, as ``make fit`` recorded them (a test checks they are a
    fresh fit's: tests/test_fit_heldout.py)."""
    fit = profile.fit
    if fit is None:
        return {}
    n: dict[str, Number] = {}
    for split, short in SPLITS.items():
        for stat, value in zip(("median", "p90", "max"), fit.held_out.get(split, ()), strict=False):
            n[f"vllm_{short}_{stat}_error"] = percent(value, 1)
    n["vllm_fitted_constants"] = plain(len(fit.fitted), 0)
    n["vllm_max_relative_se"] = percent(max(fit.relative_standard_errors, default=0.0), 0)
    n["vllm_largest_correlation"] = plain(abs(fit.largest_correlation or 0.0), 2)
    return n


def numbers(settings: SiteSettings) -> dict[str, Number]:
    """Errors of each engine on the measurements, the vLLM profile's constants, and the
    default ladder under each engine."""
    data = validation(settings, load_measurements(MEASUREMENTS))
    n: dict[str, Number] = {"validation_rows": plain(len(data), 0)}
    for engine in ENGINES:
        summary = error_summary(data[f"{engine}_error"].to_numpy())
        for key, value in summary.items():
            n[f"{engine}_{key}_error"] = percent(value, 1)
    eagle3 = data["method"] == "eagle3"
    issue = data[data["source"].str.contains("issue") & eagle3]["vllm_error"]
    n["vllm_eagle3_issue_low"] = percent(float(issue.min()), 0, signed=True)
    n["vllm_eagle3_issue_high"] = percent(float(issue.max()), 0, signed=True)
    bench = data[~data["source"].str.contains("issue") & eagle3]["vllm_error"]
    n["vllm_eagle3_bench_low"] = percent(float(bench.min()), 0, signed=True)
    n["vllm_eagle3_bench_high"] = percent(float(bench.max()), 0, signed=True)
    within = np.abs(data["vllm_error"].to_numpy()) <= 0.15
    n["vllm_rows_within_15"] = plain(int(within.sum()), 0)
    p = settings.engines["vllm"]
    n["vllm_head_pass_ms"] = plain(p.head_pass_s * 1e3)
    n["vllm_token_budget"] = plain(p.token_budget or 0, 0)
    n["vllm_memory_efficiency"] = plain(p.memory_efficiency_or(settings.constants.MEMORY_EFFICIENCY))
    n.update(held_out_numbers(p))
    steps = read_subset_fits(SUBSET_FITS, MEASUREMENTS)[1]  # as make fit records them
    for short, source in (("issue", "vllm-project/vllm issue #20780"), ("bench", "SpecDecode-Bench")):
        head, fused = steps[source]
        n[f"vllm_eagle3_step_{short}_ms"] = plain(fused * 1e3)
        n[f"vllm_eagle_step_{short}_ms"] = plain(head * 1e3)
    plain_step = 1.0 / float(one(settings, context=76, generated_tokens=210, target="llama-3.1-8b",
                                 drafter="eagle", engine="vllm").base_tokens_per_s)  # fmt: skip
    n["vllm_plain_step_ms"] = plain(plain_step * 1e3)
    return n
