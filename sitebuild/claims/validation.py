"""Claims of the page "Does it match a real server?": which way each engine errs on the
public measurements, the page's verdict on every measurement no fit has read, the draft model
measured up to 128 sequences (also the article's paragraph on it, in section 4), and whether
forward passes have been timed on a GPU."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from sitebuild import engine_tradeoff, public_fit
from sitebuild.claims.core import Said, claim, composed, phrase
from sitebuild.claims.words import verdict
from sitebuild.config import SiteSettings
from sitebuild.figures import beyond as multi
from sitebuild.figures import validation as page
from sitebuild.figures.engines import validation
from sitebuild.fit_records import read_sensitivity, read_subset_fits, read_tradeoff
from sitebuild.numbers.text import name, percent, plain, times
from sitebuild.pass_timings import read_pass_timings
from sitebuild.paths import EAGLE3_TRADEOFF, ELSEWHERE, MEASUREMENTS, MEMORY_SENSITIVITY, PASS_TIMINGS, SUBSET_FITS
from sitebuild.theme import drafter_label
from specmodel.acceptance_fit import held_out_errors
from specmodel.measurements import error_summary, load_measurements
from specmodel.model.specs import get_architecture, get_hardware


def ideal_optimistic(settings: SiteSettings) -> Said:
    """On how many one-GPU rows the ideal model predicts more than was measured."""
    data = validation(settings, load_measurements(MEASUREMENTS))
    over = int((data["ideal_error"] > 0).sum())
    values = {"over": plain(over, 0), "rows": plain(len(data), 0)}
    return claim("ideal_optimistic", "optimistic" if over >= 0.75 * len(data) else "mixed", values)


def small_batch_fit(settings: SiteSettings) -> Said:
    """Which way the profile fitted on batch <= 16 errs at batch 64 and 128 (mean signed error
    beyond 3% either way, else both ways), and whether that fit's overlap exponent sits at the
    bound of its search (the fit as ``make fit`` records it)."""
    small = read_subset_fits(SUBSET_FITS, MEASUREMENTS)[0]
    errors, even = np.array(small.errors), np.array(small.even_errors)
    mean, overlap = float(errors.mean()), small.overlap
    bias = "optimistic" if mean > 0.03 else "pessimistic" if mean < -0.03 else "both_ways"
    bound = "bound" if overlap > 0.99 * public_fit.PARAMETERS["overlap"][2] else "inside"
    full = settings.engines["vllm"].overlap
    values = {"mean": percent(mean, 1, signed=True), "overlap": plain(overlap, 0), "full_overlap": plain(full, 1),
              "even_median": percent(float(np.median(np.abs(even))), 1),
              "even_mean": percent(float(even.mean()), 1, signed=True)}  # fmt: skip
    better = "better" if np.median(np.abs(errors)) < np.median(np.abs(even)) else "worse"
    facets = [("bias", bias), ("prefill", better),
              ("bound", bound)]  # fmt: skip
    return composed("small_batch_fit", facets, values)


def fidelity_targets(settings: SiteSettings) -> Said:
    """Whether the recorded held-out and in-sample errors meet the profile's accuracy targets
    (:data:`sitebuild.public_fit.TARGETS`, quoted from there)."""
    fit = settings.engines["vllm"].fit
    held = fit.held_out if fit is not None else {}
    targets = public_fit.TARGETS
    splits = [s for s in targets if s != "in_sample"]
    out = all(s in held and public_fit.met(s, held[s]) for s in splits)
    inside = "in_sample" in held and public_fit.met("in_sample", held["in_sample"])
    outcome = f"{'met' if out else 'missed'}:{'met' if inside else 'missed'}"
    values = {
        "loso": percent(targets["leave_one_source_out"]["median"], 0),
        "small": percent(targets["small_to_large"]["median"], 0),
        "inside": percent(targets["in_sample"]["median"], 0),
        "inside_p90": percent(targets["in_sample"]["p90"], 0),
    }
    return claim("fidelity_targets", outcome, values)


def dataset_spread(settings: SiteSettings) -> Said:
    """The two SpecDecode-Bench datasets whose head rows (EAGLE, EAGLE-3) the vllm profile
    misses most on either side, by their mean error, and whether every batch errs that way."""
    rows = load_measurements(MEASUREMENTS)
    data = validation(settings, rows)
    data["dataset"] = [r.dataset for r in rows]
    heads = data[data["method"].isin(["eagle", "eagle3"]) & ~data["source"].str.contains("issue")]
    by = heads.groupby("dataset")["vllm_error"]
    low, high = str(by.mean().idxmin()), str(by.mean().idxmax())
    lo, hi = by.get_group(low), by.get_group(high)
    values = {
        "low": name(low), "low_from": percent(lo.min(), 0, signed=True), "low_to": percent(lo.max(), 0, signed=True),
        "high": name(high), "high_from": percent(hi.min(), 0, signed=True),
        "high_to": percent(hi.max(), 0, signed=True),
        "high_prompt": plain(int(heads[heads["dataset"] == high]["prompt_tokens"].iloc[0]), 0),
    }  # fmt: skip
    facets = [("fastest", "all_under" if lo.max() < 0 else "mixed"),
              ("slowest", "all_over" if hi.min() > 0 else "mixed")]  # fmt: skip
    return composed("dataset_spread", facets, values)


SPLIT_NAMES = {"leave_one_source_out": "leaving one source out", "small_to_large": "the small batches' fit"}


def eagle3_tradeoff(settings: SiteSettings) -> Said:
    """Which prior widths on EAGLE-3's own step time meet which of the profile's accuracy targets
    (:mod:`sitebuild.engine_tradeoff`, as ``make fit`` records it), and whether a band between
    two of them meets all."""
    results, found = read_tradeoff(EAGLE3_TRADEOFF, MEASUREMENTS)
    label = engine_tradeoff.width_label
    held = [s for s in engine_tradeoff.SPLITS if s != "in_sample"]
    together = [r for r in results if all(r.met(s) for s in engine_tradeoff.SPLITS)]
    inside = [r for r in results if r.met("in_sample")]
    if together:
        r = together[0]
        values = {"together": name(label(r.width)), "in_median": percent(r.errors["in_sample"][0], 1),
                  "in_p90": percent(r.errors["in_sample"][1], 1),
                  "loso": percent(r.errors["leave_one_source_out"][0], 1)}  # fmt: skip
        return claim("eagle3_tradeoff", "together", values)
    if not inside:
        best = min(results, key=lambda r: r.errors["in_sample"][:2])
        values = {"best_median": percent(best.errors["in_sample"][0], 1),
                  "best_p90": percent(best.errors["in_sample"][1], 1)}  # fmt: skip
        return claim("eagle3_tradeoff", "never", values)
    first = inside[0]
    missed = next(s for s in held if not first.met(s))
    index = results.index(first)
    below = results[index - 1] if index > 0 else first
    narrower_held = index > 0 and all(r.met(s) for r in results[:index] for s in held)
    wider_inside = all(r.met("in_sample") for r in results[index:])
    free = results[-1]
    values = {
        "first_in": name(label(first.width)), "below": name(label(below.width)),
        "in_median": percent(first.errors["in_sample"][0], 1), "in_p90": percent(first.errors["in_sample"][1], 1),
        "missed": name(SPLIT_NAMES[missed]), "missed_median": percent(first.errors[missed][0], 1),
        "free_h3": plain(free.eagle3_s * 1e3), "free_h": plain(free.head_s * 1e3),
        "guard": plain(engine_tradeoff.BAND_MARGIN * 100),
    }  # fmt: skip
    if not (narrower_held and wider_inside):
        return claim("eagle3_tradeoff", "apart_mixed", values)
    if found is None:
        return claim("eagle3_tradeoff", "apart", values)
    values |= {"band_low": plain(found.low), "band_high": plain(found.high), "band_middle": plain(found.middle, 3),
               "band_margin": plain(found.margin * 100)}  # fmt: skip
    return claim("eagle3_tradeoff", "narrow", values)


def multigpu_tails(settings: SiteSettings) -> Said:
    """The two engines' held-out errors on four GPUs, and the ideal model's worst row."""
    summaries = {e: error_summary(held_out_errors(multi.fitted(settings, e))) for e in ("ideal", "vllm")}
    data = multi.multigpu_validation(settings)
    held = data[(data["engine"] == "ideal") & ~data["fitted"]]
    worst = held.iloc[held["error"].abs().argmax()]
    medians = [summaries[e]["median"] for e in ("ideal", "vllm")]
    tails = [summaries[e]["max"] for e in ("ideal", "vllm")]
    median = "close" if abs(medians[0] - medians[1]) < 0.02 else "apart"
    tail = "apart" if max(tails) > 1.5 * min(tails) else "close"
    predicted_loss = verdict(float(worst["predicted"])) == "slower" != verdict(float(worst["measured"]))
    values = {
        "ideal_median": percent(medians[0], 1),
        "vllm_median": percent(medians[1], 1),
        "ideal_max": percent(tails[0], 1),
        "vllm_max": percent(tails[1], 1),
        "worst": name(f"{drafter_label(str(worst['method']))} at {int(worst['batch'])} requests"),
    }
    facets = [("medians_and_tails", f"{median}:{tail}"),
              ("worst_row", "loss_not_measured" if predicted_loss else "other")]  # fmt: skip
    return composed("multigpu_tails", facets, values)


def memory_sensitivity(settings: SiteSettings) -> Said:
    """How the ``vllm`` profile's constants and errors move when it is refitted at other memory
    efficiencies (:mod:`sitebuild.memory_sensitivity`, as ``make fit`` records it)."""
    refits = read_sensitivity(MEMORY_SENSITIVITY, MEASUREMENTS)
    own = settings.engines["vllm"].memory_efficiency_or(settings.constants.MEMORY_EFFICIENCY)
    profile = min(refits, key=lambda r: abs(r.efficiency - own))
    t0 = [r.values["target_pass_s"] for r in refits]
    inside = [r.errors["in_sample"][0] for r in refits]
    best = min(refits, key=lambda r: r.worst_held_out_median)
    worst = max(refits, key=lambda r: r.worst_held_out_median)
    loose = [r for r in refits if r.largest_relative_se > public_fit.IDENTIFIABLE["relative_se"]]
    values = {
        "eta_low": plain(refits[0].efficiency), "eta_high": plain(refits[-1].efficiency),
        "t0_low": plain(t0[0] * 1e3), "t0_high": plain(t0[-1] * 1e3),
        "in_low": percent(min(inside), 1), "in_high": percent(max(inside), 1),
        "eta_profile": plain(profile.efficiency), "held_profile": percent(profile.worst_held_out_median, 1),
        "eta_best": plain(best.efficiency), "held_best": percent(best.worst_held_out_median, 1),
        "eta_worst": plain(worst.efficiency), "held_worst": percent(worst.worst_held_out_median, 1),
        "loose_etas": phrase(", ".join(f"{r.efficiency:.2f}" for r in loose)),
    }  # fmt: skip
    facets = [
        ("fixed_time", "rises" if all(b > a for a, b in zip(t0, t0[1:])) else "uneven"),
        ("in_sample", "flat" if max(inside) - min(inside) < 0.01 else "moves"),
        ("held_out", "profile_best" if best is profile else "other_best"),
        ("identifiable", "loose" if loose else "tight"),
    ]
    return composed("memory_sensitivity", facets, values)


def elsewhere(settings: SiteSettings) -> Said:
    """Whether the fitted profile predicts the public measurements found outside the fitted file (never
    fitted) better than the ideal roofline, row by row."""
    data = validation(settings, load_measurements(ELSEWHERE))
    ideal, vllm = data["ideal_error"].to_numpy(), data["vllm_error"].to_numpy()
    values = {"rows": plain(len(data), 0), "vllm_low": percent(vllm.min(), 1, signed=True),
              "vllm_high": percent(vllm.max(), 1, signed=True), "ideal_low": percent(ideal.min(), 1, signed=True),
              "ideal_high": percent(ideal.max(), 1, signed=True)}  # fmt: skip
    closer = bool(np.all(np.abs(vllm) < np.abs(ideal)))
    return claim("elsewhere", "vllm_closer" if closer else "mixed", values)


def held_out_verdict(settings: SiteSettings) -> Said:
    """The page's verdict: each engine's median and worst error on every measurement no fit has
    read (:func:`sitebuild.figures.validation.held_out`), which engine is closer on both counts,
    and the profile's errors refitted without each source of its own rows (as recorded)."""
    data = page.held_out(settings)
    summary = {e: error_summary(data[data["engine"] == e]["error"].to_numpy()) for e in ("ideal", "vllm")}
    ideal, vllm = summary["ideal"], summary["vllm"]
    values = {"rows": plain(int((data["engine"] == "vllm").sum()), 0)}
    for engine, s in summary.items():
        values |= {f"{engine}_median": percent(s["median"], 1), f"{engine}_max": percent(s["max"], 1)}
    if vllm["median"] < ideal["median"] and vllm["max"] < ideal["max"]:
        closer = "vllm"
    elif ideal["median"] < vllm["median"] and ideal["max"] < vllm["max"]:
        closer = "ideal"
    else:
        closer = "split"
    fit = settings.engines["vllm"].fit
    loso = fit.held_out.get("leave_one_source_out") if fit is not None else None
    if loso:
        values |= {"loso_median": percent(loso[0], 1), "loso_max": percent(loso[2], 1)}
    return composed("held_out_verdict", [("closer", closer), ("record", "loso" if loso else "none")], values)


def _rank(speedup: float) -> int:
    """A speedup's verdict as a rank: a loss 0, even 1, a gain 2."""
    return {"slower": 0, "even": 1, "faster": 2}[verdict(speedup)]


def _loss_from(batches: Sequence[int], speedups: Sequence[float]) -> float:
    """The smallest batch at which ``speedups`` is a loss (a verdict of slower); inf if none."""
    return float(min((b for b, s in zip(batches, speedups) if _rank(float(s)) == 0), default=np.inf))


def _relation(engine_from: float, measured_from: float) -> str:
    """When an engine predicts the first loss against when it was measured: ``same``,
    ``earlier`` (also a loss where none was measured), ``later`` or ``never``."""
    if np.isinf(engine_from):
        return "never"
    return "same" if engine_from == measured_from else "earlier" if engine_from < measured_from else "later"


def _draft_model_facts(settings: SiteSettings) -> tuple[dict[str, str], dict]:
    """What both claims on the draft-model measurements share: each engine's relation to the
    measured first loss (over the held-out rows), and the values they quote."""
    data = page.draft_model_validation(settings)
    held = data[~data["fitted"]]
    measured = held[held["engine"] == "vllm"]
    measured_from = _loss_from(list(measured["batch"]), list(measured["measured"]))
    relations, values = {}, {}
    for engine in ("ideal", "vllm"):
        part = held[held["engine"] == engine]
        engine_from = _loss_from(list(part["batch"]), list(part["predicted"]))
        relations[engine] = _relation(engine_from, measured_from)
        errors = part["error"].to_numpy()
        if np.isfinite(engine_from):
            values[f"{engine}_from"] = plain(engine_from, 0)
        values |= {
            f"{engine}_max": percent(float(np.abs(errors).max()), 0),
            f"{engine}_low": percent(float(np.abs(errors).min()), 0),
            f"{engine}_signed_low": percent(float(errors.min()), 0, signed=True),
            f"{engine}_signed_high": percent(float(errors.max()), 0, signed=True),
        }
    if np.isfinite(measured_from):
        values["measured_from"] = plain(measured_from, 0)
    return relations, {"data": data, "measured_from": measured_from, "values": values}


def draft_model_engines(settings: SiteSettings) -> Said:
    """On the draft-model measurements (validation page): whether any held-out row was measured
    as a loss and from which batch, from which batch each engine predicts one, and which way both
    engines err (less gain than measured on every held-out row, more, or both ways)."""
    relations, facts = _draft_model_facts(settings)
    data, values = facts["data"], dict(facts["values"])
    held = data[~data["fitted"]]
    errors = held["error"].to_numpy()
    bias = "under" if np.all(errors < 0) else "over" if np.all(errors > 0) else "mixed"
    measured = held[held["engine"] == "vllm"]
    top = measured[measured["batch"] == measured["batch"].max()]
    values |= {"top": plain(int(top["batch"].iloc[0]), 0), "top_low": times(float(top["measured"].min())),
               "top_high": times(float(top["measured"].max()))}  # fmt: skip
    facets = [
        ("measured", "loses" if np.isfinite(facts["measured_from"]) else "gains"),
        ("ideal", relations["ideal"]),
        ("vllm", relations["vllm"]),
        ("bias", bias),
    ]
    return composed("draft_model_engines", facets, values)


def draft_model_measured(settings: SiteSettings) -> Said:
    """The article's paragraph on the measured draft model: whether the measured pair and card
    are the article's, how the measured gain falls from batch 1 to the largest batch (a loss on
    which datasets, if any), and from which batch each engine predicts a loss against when one
    was measured."""
    relations, facts = _draft_model_facts(settings)
    data, values = facts["data"], dict(facts["values"])
    measured = data[data["engine"] == "vllm"]
    first, top = (
        measured[measured["batch"] == measured["batch"].min()],
        measured[measured["batch"] == measured["batch"].max()],
    )
    losing = [str(d) for d, m in zip(top["dataset"], top["measured"]) if _rank(float(m)) == 0]
    row = page.draft_model_rows()[0]
    d = settings.deployment
    same = (d.target, d.draft, d.hardware, d.tensor_parallel or 1) == (row.target, row.method, row.hardware, 1)
    values |= {
        "target": name(get_architecture(row.target).name), "draft": name(get_architecture(row.method).name),
        "gamma": plain(row.num_speculative_tokens, 0),
        "b1_low": times(float(first["measured"].min())), "b1_high": times(float(first["measured"].max())),
        "top": plain(int(top["batch"].iloc[0]), 0), "top_low": times(float(top["measured"].min())),
        "top_high": times(float(top["measured"].max())), "losing": phrase(" and ".join(losing) or "none"),
        "datasets": phrase(" and ".join(dict.fromkeys(str(d) for d in measured["dataset"]))),
    }  # fmt: skip
    facets = [
        ("pair", "same" if same else "other"),
        ("measured", "loses" if losing else "gains"),
        ("vllm", relations["vllm"]),
        ("ideal", relations["ideal"]),
    ]
    return composed("draft_model_measured", facets, values)


def pass_timings(settings: SiteSettings) -> Said:
    """Whether forward passes have been timed on a GPU (``tools/time_passes.py``'s record) and,
    if so, on what and how far the timings are from the model's roofline pass times."""
    record = read_pass_timings(PASS_TIMINGS)
    if record is None:
        return claim("pass_timings", "none", {})
    frame = page.pass_timings_frame(record, settings)
    values = {
        "card": name(record.card), "hardware": name(get_hardware(record.hardware).name),
        "torch": name(record.torch), "transformers": name(record.transformers), "cuda": name(record.cuda),
        "kv": plain(record.kv_tokens, 0), "passes": plain(len(frame), 0),
        "ratio_low": times(float(frame["ratio"].min())), "ratio_high": times(float(frame["ratio"].max())),
        "ratio_median": times(float(frame["ratio"].median())),
    }  # fmt: skip
    return claim("pass_timings", "recorded", values)


CLAIMS = (
    ideal_optimistic, small_batch_fit, fidelity_targets, dataset_spread, eagle3_tradeoff, memory_sensitivity,
    elsewhere, multigpu_tails, held_out_verdict, draft_model_engines, draft_model_measured, pass_timings,
)  # fmt: skip
