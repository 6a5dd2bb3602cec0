"""Acceptance fitted at batch 1, larger batches predicted: the four-GPU measurements.

Anchor: 24 public measurements of vLLM v0.10.1 serving Llama-3-70B on four H100s
at tensor parallel 4 (SpecDecode-Bench, arXiv:2601.11580, Fig. 1 (e) and (g); values read
from the vector figure to about +-0.002). With the acceptance of each series fitted at
batch 1 and the vllm engine profile (fitted on one GPU only), the 18 larger-batch rows are
predicted with a median absolute error of 8% or less.
"""

from __future__ import annotations

import numpy as np
import pytest

from specmodel import SpecModelError, evaluate
from specmodel.acceptance_fit import fit_series, group_series, held_out_errors
from specmodel.measurements import MULTIGPU_MEASUREMENTS_FILE, error_summary, load_measurements

ROWS = load_measurements(MULTIGPU_MEASUREMENTS_FILE)


def test_the_file_holds_six_series_of_four_batches_on_four_gpus():
    series = group_series(ROWS)
    assert len(ROWS) == 24 and len(series) == 6
    assert all([r.batch for r in s] == [1, 16, 64, 128] for s in series)
    assert {r.tensor_parallel for r in ROWS} == {4} and {r.target for r in ROWS} == {"llama-3-70b"}
    assert all(r.mean_acceptance_length is None and r.per_position_acceptance is None for r in ROWS)


@pytest.mark.parametrize("engine", ["ideal", "vllm"])
def test_the_fit_reproduces_each_series_at_batch_1(engine):
    for series in fit_series(ROWS, engine):
        assert 1.0 < series.mean_acceptance_length < series.rows[0].num_speculative_tokens + 1
        assert series.predicted[0] == pytest.approx(series.rows[0].measured_speedup, abs=1e-3)


def test_the_vllm_profile_predicts_the_larger_batches_within_8_percent_median():
    summary = error_summary(held_out_errors(fit_series(ROWS, "vllm")))
    assert summary["median"] <= 0.08, summary


def test_the_fitted_acceptance_is_the_drafters_not_the_batchs():
    """The same drafter on the same text gets one M; the draft model's is the highest."""
    fitted = {(s.rows[0].source, s.rows[0].method): s.mean_acceptance_length for s in fit_series(ROWS, "vllm")}
    for source in {k[0] for k in fitted}:
        ngram, eagle, draft = (fitted[(source, m)] for m in ("ngram", "eagle", "llama-3.2-1b"))
        assert ngram < eagle < draft


def test_a_row_without_acceptance_cannot_be_evaluated_unfitted():
    with pytest.raises(SpecModelError, match="no acceptance published"):
        ROWS[0].scenario()
    assert np.isfinite(float(evaluate(**ROWS[0].scenario(2.0), engine="vllm").speedup))
