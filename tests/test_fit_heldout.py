"""The vllm profile's fit judged on rows it was not fitted on.

* Identity: rows whose speedups a known profile generated give that profile back, and every
  held-out split predicts them exactly.
* Standard errors and correlations on a straight-line fit, against the textbook formulas.
* The profile in ``specmodel/data/engines.toml`` and its recorded held-out errors, standard
  errors and correlation are what a fresh fit of the measured rows gives (the site reads them
  from there).
* The targets, on the measured rows (``../shared/brief/measurements.csv``, a copy of which is
  ``specmodel/data/measurements.csv``: vLLM issue #20780 at batch 1 and SpecDecode-Bench,
  arXiv:2601.11580, at batch 1-128): leave-one-out median <= 7%, fit on batch <= 16
  predicting 64 and 128 at median <= 8%, in sample median <= 6% and p90 <= 15%; no relative
  standard error above 50%, no |correlation| above 0.9. Targets the profile misses are marked
  ``xfail(strict=True)``: they fail loudly once met, so the mark comes off.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from sitebuild import public_fit
from sitebuild.fit_records import readme_block
from specmodel import engine_fit
from specmodel.errors import SpecModelError
from specmodel.measurements import MEASUREMENTS_FILE, Measurement, load_measurements, predict
from specmodel.model.engines import engine_catalog
from specmodel.model.evaluate import evaluate
from specmodel.model.settings import Settings

#: The refits this file shares with the other fit tests are made once per process: one process runs them all.
pytestmark = [pytest.mark.xdist_group("fits"), pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[1]
VLLM = engine_catalog()["vllm"]
FIT = VLLM.fit
assert FIT is not None
KNOWN = {"target_pass_s": 1.2e-3, "head_pass_s": 4e-4, "overlap": 2.5, "ngram_matched_acceptance": 0.35}


def _synthetic(rows: list[Measurement]) -> list[Measurement]:
    """``rows`` with the speedup the KNOWN profile predicts for each as the measured one."""
    settings = Settings().with_engine(public_fit.profile(list(KNOWN.values()), list(KNOWN)))
    speedups = predict(rows, "vllm", settings)
    return [r.model_copy(update={"measured_speedup": float(s)}) for r, s in zip(rows, speedups, strict=True)]


@pytest.fixture(scope="module")
def synthetic_rows() -> list[Measurement]:
    """Every third brief row, with KNOWN's speedups."""
    return _synthetic(load_measurements(MEASUREMENTS_FILE)[::3])


@pytest.fixture
def synthetic(synthetic_rows: list[Measurement], monkeypatch: pytest.MonkeyPatch) -> list[Measurement]:
    """The synthetic rows, with the fit's anchor set to KNOWN's plain step for this test only."""
    settings = Settings().with_engine(public_fit.profile(list(KNOWN.values()), list(KNOWN)))
    plain = evaluate(public_fit.ANCHOR_SCENARIO, engine="vllm", settings=settings).base_tokens_per_s
    monkeypatch.setattr(public_fit, "ANCHOR_SECONDS", 1.0 / float(plain))
    return synthetic_rows


def test_a_fit_to_a_known_profiles_speedups_gives_it_back(synthetic):
    result = public_fit.fit(synthetic)
    for name, value in KNOWN.items():
        assert result.values[name] == pytest.approx(value, rel=2e-2), name
    assert np.abs(result.errors).max() < 1e-3


def test_every_identifiable_held_out_split_predicts_a_known_profiles_rows(synthetic):
    """Not leave one source out: either source alone leaves constants unset (vLLM issue #20780
    is batch 1 without n-gram rows; SpecDecode-Bench has one gamma), so that split extrapolates
    from the starting values, and the site reports leave one (source, workload) out instead."""
    splits = public_fit.held_out(synthetic)
    for split in ("leave_one_workload_out", "small_to_large", "in_sample"):
        assert splits[split]["max"] < 5e-3, split


def test_standard_errors_and_correlation_of_a_straight_line():
    """y = a + b x: se_b = s / sqrt(sum (x - mean x)^2), corr(a, b) = -mean x / sqrt(mean x^2)."""
    rng = np.random.default_rng(7)
    x = np.linspace(1.0, 5.0, 12)
    design = np.column_stack([np.ones_like(x), x])
    y = 0.5 + 2.0 * x + rng.normal(0.0, 0.1, x.size)
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    residual = y - design @ coef
    se, corr = engine_fit.standard_errors(design, residual)
    s = np.sqrt(residual @ residual / (x.size - 2))
    assert se[1] == pytest.approx(s / np.sqrt(((x - x.mean()) ** 2).sum()), rel=1e-9)
    assert se[0] == pytest.approx(s * np.sqrt(1 / x.size + x.mean() ** 2 / ((x - x.mean()) ** 2).sum()), rel=1e-9)
    assert corr[0, 1] == pytest.approx(-x.mean() / np.sqrt((x**2).mean()), rel=1e-9)


@pytest.fixture(scope="module")
def fresh() -> tuple[public_fit.Fit, dict[str, dict[str, float]]]:
    """A fresh fit of the measured rows and its held-out splits."""
    rows = load_measurements(MEASUREMENTS_FILE)
    return public_fit.fit(rows), public_fit.held_out(rows)


def test_the_profile_and_its_recorded_errors_are_a_fresh_fits(fresh):
    result, splits = fresh
    assert public_fit.ANCHOR_SECONDS == 7.07e-3
    assert hashlib.sha256((ROOT / FIT.measurements).read_bytes()).hexdigest() == FIT.measurements_sha256
    brief = ROOT.parent / "shared" / "brief" / "measurements.csv"  # beside the project where it is developed
    if brief.exists():
        assert MEASUREMENTS_FILE.read_bytes() == brief.read_bytes()
    assert FIT.fitted == tuple(result.values)
    for name, value in result.values.items():
        assert float(getattr(VLLM, name)) == pytest.approx(value, rel=1e-4), name
    for split, summary in splits.items():
        assert FIT.held_out[split] == pytest.approx([summary[k] for k in ("median", "p90", "max")], abs=6e-4), split
    ident = public_fit.identifiability(result)
    assert FIT.relative_standard_errors == pytest.approx(list(ident.relative_se.values()), abs=2e-3)
    assert FIT.largest_correlation == pytest.approx(ident.largest[2], abs=2e-3)


def test_the_readme_shows_the_recorded_held_out_errors():
    block = readme_block(FIT.held_out, FIT.relative_standard_errors, FIT.largest_correlation or 0.0)
    assert f"<!-- held-out:start -->\n{block}\n<!-- held-out:end -->" in (ROOT / "README.md").read_text()


def _held(split: str) -> tuple[float, float, float]:
    return FIT.held_out[split]


def test_leave_one_source_out_median_at_most_7_percent():
    assert _held("leave_one_source_out")[0] <= 0.07


def test_leave_one_workload_out_median_at_most_7_percent():
    assert _held("leave_one_workload_out")[0] <= 0.07


def test_small_batch_fit_predicts_64_and_128_at_median_at_most_8_percent():
    assert _held("small_to_large")[0] <= 0.08


IN_SAMPLE_MISS = (
    "the measured rows differ at batch 1 where no engine constant can tell them apart (the same "
    "EAGLE drafter, gamma and acceptance give cost ratios of 1.19 to 1.61 across SpecDecode-Bench's "
    "workloads), and vLLM issue #20780's EAGLE-3 rows ask for a slower draft step than SpecDecode-Bench's: "
    "a step time of EAGLE-3's own meets these targets together with the held-out ones at no prior width by "
    "a margin the page can print, and a width picked near that edge would be picked by the targets "
    "themselves (the validation page's 'The price of an EAGLE-3 step time of its own'; "
    "sitebuild/engine_tradeoff.py)"
)


@pytest.mark.xfail(strict=True, reason=IN_SAMPLE_MISS)
def test_in_sample_median_at_most_6_percent():
    assert _held("in_sample")[0] <= 0.06


@pytest.mark.xfail(strict=True, reason=IN_SAMPLE_MISS)
def test_in_sample_p90_at_most_15_percent():
    assert _held("in_sample")[1] <= 0.15


def test_no_constant_with_a_relative_standard_error_above_half():
    assert max(FIT.relative_standard_errors) <= 0.5


def test_no_two_constants_correlated_beyond_0_9():
    assert FIT.largest_correlation is not None and abs(FIT.largest_correlation) <= 0.9


def test_engines_toml_and_the_readme_are_what_make_fit_writes(fresh):
    """``tools/fit_engine.py --check``'s comparison (the writer of engines.toml's [vllm] table
    and of the README's held-out block) finds both as it would write them from a fresh fit, the
    date of the fit aside and every number within the machine's last digits."""
    from tools import fit_engine

    result, splits = fresh
    assert fit_engine.profile_is_current(load_measurements(MEASUREMENTS_FILE), result, splits)


def test_the_profile_check_sees_a_changed_constant_and_forgives_a_last_digit():
    from tools import fit_engine

    text = fit_engine.ENGINES.read_text(encoding="utf-8")
    vllm = text.index("\n[vllm]\n")
    line = next(x for x in text[vllm:].splitlines() if x.startswith("target_pass_s = "))
    value = float(line.split(" = ")[1])
    nudged = text.replace(line, f"target_pass_s = {value * 1.001:.6g}")
    last_digit = text.replace(line, f"target_pass_s = {value * (1 + 2e-6):.7g}")
    assert fit_engine.same_profile(text, text)
    assert not fit_engine.same_profile(text, nudged)
    assert fit_engine.same_profile(text, last_digit)
    residuals = next(x for x in text[vllm:].splitlines() if x.startswith("residuals = ["))
    first = residuals.split("[")[1].split(",")[0]
    flipped = text.replace(residuals, residuals.replace(first, f"{float(first) + 1e-4:.4f}", 1))
    assert fit_engine.same_profile(text, flipped)
    assert not fit_engine.same_profile(
        text, text.replace(residuals, residuals.replace(first, f"{float(first) + 0.01:.4f}", 1))
    )


def test_the_targets_are_read_as_the_issue_sets_them():
    assert public_fit.TARGETS == {
        "leave_one_source_out": {"median": 0.07},
        "leave_one_workload_out": {"median": 0.07},
        "small_to_large": {"median": 0.08},
        "in_sample": {"median": 0.06, "p90": 0.15},
    }
    assert public_fit.met("leave_one_source_out", (0.07, 0.5, 0.9))
    assert not public_fit.met("in_sample", (0.05, 0.151, 0.2))


def test_the_validation_pages_claims_say_what_the_fit_gives():
    """The page's sentences on the targets and on which way a small-batch fit errs are the
    recorded errors' and a fresh small-to-large fit's, not typed."""
    from sitebuild.claims import validation as page
    from sitebuild.config import SiteSettings

    settings = SiteSettings()
    targets = page.fidelity_targets(settings)
    held = all(public_fit.met(s, FIT.held_out[s]) for s in public_fit.TARGETS if s != "in_sample")
    inside = public_fit.met("in_sample", FIT.held_out["in_sample"])
    assert targets.outcome == f"{'met' if held else 'missed'}:{'met' if inside else 'missed'}"
    mean = float(public_fit.small_to_large(load_measurements(MEASUREMENTS_FILE), public_fit.FITTED).mean())
    expected = "optimistic" if mean > 0.03 else "pessimistic" if mean < -0.03 else "both_ways"
    said = page.small_batch_fit(settings)
    small = public_fit.fit([r for r in load_measurements(MEASUREMENTS_FILE) if r.batch <= 16])
    at_bound = small.values["overlap"] > 0.99 * public_fit.PARAMETERS["overlap"][2]
    even = public_fit.small_to_large_fit(load_measurements(MEASUREMENTS_FILE), public_fit.FITTED,
                                         fixed={"token_budget": None})[1]  # fmt: skip
    lumpy = public_fit.small_to_large(load_measurements(MEASUREMENTS_FILE), public_fit.FITTED)
    better = "better" if np.median(np.abs(lumpy)) < np.median(np.abs(even)) else "worse"
    assert said.outcome == f"{expected}:{better}:{'bound' if at_bound else 'inside'}"
    assert said.values["mean"].value == pytest.approx(mean)


def test_the_subset_fits_the_site_reads_are_a_fresh_computation(tmp_path):
    """The small-batch fit and each source's EAGLE-3 step, as make fit records them for the build
    (which never fits), are what the fits give now; a record of other measurements is refused."""
    from sitebuild.fit_records import read_subset_fits, same_record, subset_fits_text
    from sitebuild.paths import SUBSET_FITS

    rows = load_measurements(MEASUREMENTS_FILE)
    fresh = subset_fits_text(public_fit.small_batch(rows), public_fit.eagle3_step_by_source(rows), MEASUREMENTS_FILE)
    assert same_record(SUBSET_FITS.read_text(encoding="utf-8"), fresh), "run python tools/fit_engine.py (make fit)"
    other = tmp_path / "measurements.csv"
    other.write_text(MEASUREMENTS_FILE.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    with pytest.raises(SpecModelError, match="computed on other measurements than measurements.csv"):
        read_subset_fits(SUBSET_FITS, other)


def test_the_dataset_sentence_names_the_datasets_the_profile_misses_most_either_way():
    from sitebuild.claims import validation as page
    from sitebuild.config import SiteSettings

    rows = load_measurements(MEASUREMENTS_FILE)
    errors = predict(rows, "vllm") / np.array([r.measured_speedup for r in rows]) - 1
    by: dict[str, list[float]] = {}
    for r, e in zip(rows, errors, strict=True):
        if r.method in ("eagle", "eagle3") and r.source.startswith("SpecDecode-Bench"):
            by.setdefault(r.notes.split(";")[0].removeprefix("dataset "), []).append(float(e))
    low = min(by, key=lambda d: np.mean(by[d]))
    high = max(by, key=lambda d: np.mean(by[d]))
    said = page.dataset_spread(SiteSettings())
    assert said.values["low"].text == low and said.values["high"].text == high
    assert (
        said.outcome == f"{'all_under' if max(by[low]) < 0 else 'mixed'}:{'all_over' if min(by[high]) > 0 else 'mixed'}"
    )
