"""Claims of the page "Does it match a real server?": which way each engine errs on the
public measurements."""

from __future__ import annotations

from sitebuild import figures_data_multigpu as multi
from sitebuild.claims.core import Said, claim, composed
from sitebuild.claims.words import verdict
from sitebuild.config import SiteSettings
from sitebuild.figures_data import validation
from sitebuild.numbers.text import name, percent, plain
from sitebuild.paths import MEASUREMENTS
from sitebuild.theme import drafter_label
from specmodel.acceptance_fit import held_out_errors
from specmodel.measurements import error_summary, load_measurements

IDEAL_OPTIMISTIC = {
    "optimistic": "The ideal model is too optimistic: it predicts a larger speedup than measured on {over} of the "
    "{rows} rows, because it charges nothing for launching a pass, which a real engine pays whether the pass "
    "is long or short.",
    "mixed": "The ideal model errs both ways: it predicts a larger speedup than measured on {over} of the {rows} rows.",
}


def ideal_optimistic(settings: SiteSettings) -> Said:
    """On how many one-GPU rows the ideal model predicts more than was measured."""
    data = validation(settings, load_measurements(MEASUREMENTS))
    over = int((data["ideal_error"] > 0).sum())
    values = {"over": plain(over, 0), "rows": plain(len(data), 0)}
    return claim("ideal_optimistic", "optimistic" if over >= 0.75 * len(data) else "mixed", values, IDEAL_OPTIMISTIC)


MULTIGPU_TAILS = {
    "close:apart": "The two engines' medians are close ({ideal_median} and {vllm_median}), their tails are not.",
    "apart:apart": "The two engines differ at the median ({ideal_median} against {vllm_median}) and in the tail.",
    "apart:close": "The two engines differ at the median ({ideal_median} against {vllm_median}) but not in the tail.",
    "close:close": "The two engines' errors are alike, at the median ({ideal_median} and {vllm_median}) and in the "
    "tail.",
}
MULTIGPU_WORST = {
    "loss_not_measured": "The `vllm` profile predicts every held-out row within {vllm_max}; the ideal model misses "
    "by up to {ideal_max}, worst on {worst}, where it predicts a loss the server did not measure.",
    "other": "The `vllm` profile predicts every held-out row within {vllm_max}; the ideal model misses by up to "
    "{ideal_max}, worst on {worst}.",
}


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
    facets = [("medians and tails", f"{median}:{tail}", MULTIGPU_TAILS),
              ("worst row", "loss_not_measured" if predicted_loss else "other", MULTIGPU_WORST)]  # fmt: skip
    return composed("multigpu_tails", facets, values)


CLAIMS = (ideal_optimistic, multigpu_tails)
