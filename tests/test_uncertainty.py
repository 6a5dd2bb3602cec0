"""The intervals around predicted speedups (specmodel.uncertainty) and the verdicts they gate."""

from __future__ import annotations

import tomllib
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from specmodel import Settings
from specmodel.errors import SpecModelError
from specmodel.model.engines import FitProvenance
from specmodel.uncertainty import (
    INTERVALS_FILE,
    LEVELS,
    Residual,
    coverage,
    intervals_text,
    log_bounds,
    pooled,
    public_record,
    speedup_interval,
)
from specmodel.vllm.advise import MIN_GAIN, decide

ROOT = Path(__file__).resolve().parents[1]


def test_the_public_interval_holds_the_prediction_and_widens_with_the_level():
    s = np.array([1.1, 1.5, 2.0])
    low50, high50 = speedup_interval(Settings(), "vllm", "eagle3", 64, s, 0.5)
    low80, high80 = speedup_interval(Settings(), "vllm", "eagle3", 64, s, 0.8)
    assert np.all(low80 <= low50) and np.all(low50 < s) and np.all(s < high50) and np.all(high50 <= high80)
    # multiplicative: the same factors at every speedup of one group
    assert np.allclose(low80 / s, low80[0] / s[0]) and np.allclose(high80 / s, high80[0] / s[0])


def test_the_ideal_engine_gets_the_public_profiles_interval():
    a = speedup_interval(Settings(), "vllm", "qwen3-0.6b", 16, 1.3)
    b = speedup_interval(Settings(), "ideal", "qwen3-0.6b", 16, 1.3)
    assert np.allclose(a, b)


def test_a_level_outside_zero_one_is_refused():
    with pytest.raises(SpecModelError, match="level"):
        speedup_interval(Settings(), "vllm", "eagle", 1, 1.5, level=1.0)


def test_the_interval_is_the_conformal_quantile_of_the_residuals_magnitudes():
    """Symmetric: the half-width is the quantile of |log(predicted / measured)| at the level
    nudged up by the conformal correction, ceil((n + 1) level) / n; the sign of the residuals
    does not move it, since the public sources err in opposite directions."""
    r = np.linspace(-0.2, 0.2, 11)  # magnitudes 0, 0.04 (twice), ..., 0.2 (twice)
    lo, hi = log_bounds(r, 0.8)
    q = float(np.quantile(np.abs(r), np.ceil(12 * 0.8) / 11))
    assert (lo, hi) == pytest.approx((-q, q)) and q > float(np.quantile(np.abs(r), 0.8))
    assert log_bounds(-r, 0.8) == pytest.approx((lo, hi))


def test_a_small_group_is_pooled_with_its_batch_range_then_with_all():
    rs = [Residual("head", 1, "a", 0.1)] * 3 + [Residual("ngram", 2, "b", 0.2)] * 6 + [Residual("head", 64, "c", 0)]
    values, where = pooled(rs, "head", 4)
    assert len(values) == 9 and "batch 1-8" in where
    values, where = pooled(rs, "model", 128)
    assert len(values) == 10 and where == "every residual"


def test_coverage_never_uses_a_residuals_own_fold():
    # a fold of large errors beside a fold of small ones: each one's interval comes from the
    # other alone, so none of the large errors is inside the small fold's interval
    rs = [Residual("head", 1, "a", 0.5 + 0.01 * i) for i in range(8)]
    rs += [Residual("head", 1, "b", 0.01 * i) for i in range(8)]
    assert coverage(rs, 0.8) == 0.5


def test_the_recorded_groups_cover_every_kind_and_range_and_read_back():
    text = (ROOT / "specmodel" / "data" / INTERVALS_FILE).read_text(encoding="utf-8")
    record = tomllib.loads(text)["vllm"]
    assert record == public_record()
    assert len(record["groups"]) == 12 and all(len(g["residuals"]) >= record["min_group"]
                                                for g in record["groups"].values())  # fmt: skip
    assert record["coverage"]["levels"] == list(LEVELS)
    assert intervals_text(record) == text  # the writer's format reads back unchanged


@pytest.mark.slow
@pytest.mark.xdist_group("fits")
def test_the_recorded_coverage_is_a_fresh_computation():
    from sitebuild.public_fit import held_out_residuals
    from specmodel.measurements import load_measurements
    from specmodel.uncertainty import intervals_record
    from tools.fit_engine import INTERVALS_SOURCE, MEASUREMENTS

    fresh = intervals_record(held_out_residuals(load_measurements(MEASUREMENTS)), INTERVALS_SOURCE)
    recorded = public_record()
    assert recorded["coverage"]["inside"] == pytest.approx(fresh["coverage"]["inside"], abs=1e-6)
    for name, group in fresh["groups"].items():
        assert recorded["groups"][name]["residuals"] == pytest.approx(group["residuals"], abs=2e-6)


def test_a_users_fit_propagates_its_standard_errors_and_residuals():
    settings = Settings()
    public = settings.engines["vllm"]
    fit = FitProvenance(
        measurements="runs.json", measurements_sha256="0" * 64, rows=2, fitted_on="2026-01-01", method="test",
        median_abs_error=0.01, p90_abs_error=0.01, max_abs_error=0.01, anchor="none", residuals=(0.01, -0.01),
        fitted=("target_pass_s",), relative_standard_errors=(0.5,), inputs=(("runs.json", "0" * 64),),
    )  # fmt: skip
    mine = replace(public, key="mine", fit=fit)
    st = settings.with_engine(mine)
    narrow = replace(fit, relative_standard_errors=(0.0,))
    st0 = settings.with_engine(replace(mine, fit=narrow))
    low, high = speedup_interval(st, "mine", "eagle", 1, 1.5)
    low0, high0 = speedup_interval(st0, "mine", "eagle", 1, 1.5)
    assert low < low0 < 1.5 < high0 < high  # the constant's error widens it
    # with no error on the constants: the assumed noise of one run, 5%, at z(0.9) = 1.2816
    assert float(np.log(high0 / 1.5)) == pytest.approx(1.2816 * 0.05, rel=1e-3)


def test_an_interval_that_straddles_the_margin_gives_measure():
    s = np.array([1.05, 1.20])
    assert decide(s, 2) == ("keep", 2)
    assert decide(s, 2, s * 0.8, s * 1.2) == ("measure", 2)  # 0.96 at the low end: maybe slower than plain
    off = np.array([1.01, 0.99])
    assert decide(off, 2) == ("off", 0)
    assert decide(off, 2, off * 0.9, off * 1.1) == ("measure", 2)  # 1.11 at the high end: maybe worth it


def test_an_interval_that_clears_the_margin_gives_the_verdict():
    s = np.array([1.6, 1.2])
    assert decide(s, 2, s * 0.95, s * 1.05) == ("lower-gamma", 1)  # 1.52 > 1.03 x 1.26
    assert decide(s, 2, s * 0.85, s * 1.15) == ("measure", 2)  # 1.36 < 1.03 x 1.38: they overlap
    keep = np.array([1.1, 1.4])
    assert decide(keep, 2, keep * 0.9, keep * 1.1) == ("keep", 2)
    off = np.array([0.9, 0.8])
    assert decide(off, 2, off * 0.9, off * 1.1) == ("off", 0) and 1 + MIN_GAIN >= 0.9 * 1.1


def test_point_prints_its_speedup_with_the_interval(capsys):
    """``point`` carries the same interval as ``advise``: in its table and its JSON, around the
    throughput speedup it reports."""
    import json

    from specmodel.cli import main

    assert main(["point", "--concurrency", "16", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    low, high = out["speedup_interval"]
    assert out["interval_level"] == 0.8 and low < out["speedup"] < high
    assert main(["point", "--concurrency", "16"]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("Throughput speedup, 80%"))
    assert row.split()[-3:] == [f"{low:.2f}x", "to", f"{high:.2f}x"]
