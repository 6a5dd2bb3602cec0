"""Markdown tables of the engines: their profiles with provenance, and every public
measurement against the model (on one GPU, and on four with the acceptance fitted at batch 1)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import cast

import pandas as pd

from sitebuild.config import SiteSettings
from sitebuild.engine_tradeoff import SPLITS, Tradeoff, width_label
from sitebuild.memory_sensitivity import HELD_OUT, Refit
from sitebuild.theme import drafter_label
from specmodel.formatting import percent
from specmodel.model.engines import EngineProfile

#: Each profile constant, with its symbol on the model page, unit and what it stands for.
CONSTANTS = (
    ("target_pass_s", "t_0", 1e3, "ms", "fixed time per target pass"),
    ("sequence_pass_s", "t_s", 1e6, "µs", "per sequence per target pass"),
    ("draft_model_pass", "t_m", 1e3, "ms", "fixed time per draft-model pass"),
    ("head_pass_s", "t_h", 1e3, "ms", "fixed time per draft-head step"),
    ("ngram_lookup_s", "t_n", 1e6, "µs", "n-gram lookup, per sequence per iteration"),
    ("iteration_s", "t_i", 1e3, "ms", "fixed time per speculative iteration"),
    ("overlap", "p", 1.0, "", "overlap exponent of memory and arithmetic"),
    ("compute_efficiency", r"\eta_{\text{flop}}", 1.0, "", "achievable share of peak FLOP/s"),
    ("memory_efficiency", r"\eta_{\text{mem}}", 1.0, "", "achievable share of the datasheet's memory bandwidth"),
    ("ngram_matched_acceptance", "a_n", 1.0, "", "first-token acceptance of a matched n-gram lookup"),
    ("token_budget", "C", 1.0, "tokens", "token budget per pass: a waiting prompt is prefilled whole up to it"),
)


def _value(profile: EngineProfile, field: str, scale: float, settings: SiteSettings) -> str:
    value = getattr(profile, field)
    if field == "compute_efficiency":
        value = profile.compute_efficiency_or(settings.constants.COMPUTE_EFFICIENCY)
    if field == "memory_efficiency":
        value = profile.memory_efficiency_or(settings.constants.MEMORY_EFFICIENCY)
    if value is None:
        empty = {"ngram_matched_acceptance": "none (always drafts)", "token_budget": "none (prefill spread evenly)"}
        return empty.get(field, "-")
    if math.isinf(value):
        return "∞ (max)"
    return f"{value:d}" if isinstance(value, int) else f"{value * scale:.3g}"


def engines(settings: SiteSettings) -> str:
    """Every engine profile's constants side by side."""
    names = list(settings.engines)
    out = ["| constant | meaning | " + " | ".join(f"`{n}`" for n in names) + " |",
           "| --- | --- |" + " ---: |" * len(names)]  # fmt: skip
    for field, symbol, scale, unit, meaning in CONSTANTS:
        cells = " | ".join(_value(settings.engines[n], field, scale, settings) for n in names)
        out.append(f"| \\({symbol}\\){f' ({unit})' if unit else ''} | {meaning} | {cells} |")
    out.append("| batching | default | " + " | ".join(settings.engines[n].batching for n in names) + " |")
    return "\n".join(out)


def validation(data: pd.DataFrame) -> str:
    """Every public measurement with a link to its source, against the model under each engine."""
    out = ["| # | source | method | batch | γ | prompt / output | acceptance length | measured | ideal | vLLM |",
           "| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]  # fmt: skip
    for i, r in enumerate(data.to_dict("records"), start=1):
        source = r["source"].split(" (")[0]
        link = f"[{source}]({r['url']})" if r["url"] else source
        ideal, vllm = (percent(e, signed=True) for e in (r["ideal_error"], r["vllm_error"]))
        out.append(
            f"| {i} | {link} | `{r['method']}` | {r['batch']} | {r['gamma']} | {r['prompt_tokens']} / "
            f"{r['output_tokens']} | {r['mean_acceptance_length']:.2f} | {r['measured']:.2f}x "
            f"| {r['ideal']:.2f}x ({ideal}) | {r['vllm']:.2f}x ({vllm}) |"
        )
    return "\n".join(out)


def multigpu_series(data: pd.DataFrame) -> str:
    """Each four-GPU series with the mean acceptance length fitted at batch 1 under each
    engine (:func:`sitebuild.figures_data_multigpu.multigpu_validation`)."""
    fitted = data[data["fitted"]].pivot_table(
        index=["dataset", "method"], columns="engine", values="mean_acceptance_length", sort=False
    )
    out = ["| dataset | drafter | γ | fitted acceptance length, ideal | fitted acceptance length, vLLM |",
           "| --- | --- | ---: | ---: | ---: |"]  # fmt: skip
    gamma = data.groupby(["dataset", "method"], sort=False)["gamma"].first()
    for index, row in fitted.iterrows():
        dataset, method = cast(tuple[str, str], index)  # the pivot's index
        out.append(f"| {dataset} | {drafter_label(method)} | {gamma[(dataset, method)]} "
                   f"| {row['ideal']:.2f} | {row['vllm']:.2f} |")  # fmt: skip
    return "\n".join(out)


def multigpu_validation(data: pd.DataFrame) -> str:
    """Every four-GPU measurement against the model under each engine; the batch-1 rows are
    those each series' acceptance is fitted on."""
    out = ["| # | dataset | drafter | batch | measured | ideal | vLLM |",
           "| ---: | --- | --- | ---: | ---: | ---: | ---: |"]  # fmt: skip
    wide = data.pivot_table(index=["dataset", "method", "batch"], columns="engine", values="predicted", sort=False)
    rows = data.groupby(["dataset", "method", "batch"], sort=False)
    measured, fitted = rows["measured"].first(), rows["fitted"].first()
    for i, (index, row) in enumerate(wide.iterrows(), start=1):
        dataset, method, batch = cast(tuple[str, str, int], index)  # the pivot's index
        m, key = measured[(dataset, method, batch)], (dataset, method, batch)
        cells = [f"{row[e]:.2f}x (fitted)" if fitted[key] else f"{row[e]:.2f}x ({percent(row[e] / m - 1, signed=True)})"
                 for e in ("ideal", "vllm")]  # fmt: skip
        out.append(f"| {i} | {dataset} | {drafter_label(method)} | {batch} | {m:.2f}x | {cells[0]} | {cells[1]} |")
    return "\n".join(out)


#: How each split heads its column in the trade-off table.
TRADEOFF_COLUMNS = {"in_sample": "in sample, median / p90", "leave_one_source_out": "leave one source out, median",
                    "small_to_large": "batch 1 and 16 to 64 and 128, median"}  # fmt: skip


def _target_cell(errors: tuple[float, float, float], split: str, met: bool) -> str:
    """A split's ``(median, p90, worst)`` as a table cell: the median (and, in sample, the 90th
    percentile the targets also name), then ✓ if the split meets its targets, ✗ if not."""
    median, p90, _ = errors
    text = f"{percent(median, 1)} / {percent(p90, 1)}" if split == "in_sample" else percent(median, 1)
    return f"{text} {'✓' if met else '✗'}"


def eagle3_tradeoff(results: Sequence[Tradeoff]) -> str:
    """EAGLE-3's own step time under each prior width: the fitted step times and each split's
    errors, a target met marked ✓ and one missed ✗ (:mod:`sitebuild.engine_tradeoff`)."""
    head = " | ".join(
        ["prior width \\(w\\)", "\\(t_h\\) (ms)", "\\(t_{h3}\\) (ms)", *(TRADEOFF_COLUMNS[s] for s in SPLITS)]
    )
    out = [f"| {head} |", "| --- |" + " ---: |" * (2 + len(SPLITS))]
    for r in results:
        cells = [_target_cell(r.errors[split], split, r.met(split)) for split in SPLITS]
        times = f"{r.head_s * 1e3:.3g} | {r.eagle3_s * 1e3:.3g}"
        out.append(f"| {width_label(r.width)} | {times} | " + " | ".join(cells) + " |")
    return "\n".join(out)


#: How each split heads its column in the memory-efficiency table.
SENSITIVITY_COLUMNS = {**TRADEOFF_COLUMNS, "leave_one_workload_out": "leave one source and workload out, median"}


def memory_sensitivity(results: Sequence[Refit], profile_efficiency: float) -> str:
    """The profile refitted at each memory efficiency: the fitted constants, the plain step it
    predicts in the anchor's scenario, each split's errors (a target met ✓, missed ✗) and the
    largest relative standard error (:mod:`sitebuild.memory_sensitivity`)."""
    splits = ("in_sample", *HELD_OUT)
    head = [r"\(\eta_{\text{mem}}\)", r"\(t_0\) (ms)", r"\(t_h\) (ms)", r"\(p\)", r"\(a_n\)", "plain step (ms)",
            *(SENSITIVITY_COLUMNS[s] for s in splits), "largest relative SE"]  # fmt: skip
    out = ["| " + " | ".join(head) + " |", "| --- |" + " ---: |" * (len(head) - 1)]
    for r in results:
        label = f"{r.efficiency:.2f}" + (" (the profile)" if math.isclose(r.efficiency, profile_efficiency) else "")
        v = r.values
        cells = [label, f"{v['target_pass_s'] * 1e3:.3g}", f"{v['head_pass_s'] * 1e3:.3g}", f"{v['overlap']:.3g}",
                 f"{v['ngram_matched_acceptance']:.3g}", f"{r.plain_step_s * 1e3:.3g}"]  # fmt: skip
        cells += [_target_cell(r.errors[split], split, r.met(split)) for split in splits]
        cells.append(percent(r.largest_relative_se))
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)
