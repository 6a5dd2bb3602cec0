"""The calibration benchmark, held to its targets: every series of the public measurements taken
at batch 1, 16, 64 and 128 (SpecDecode-Bench, arXiv:2601.11580, Fig. 1: 12 series of
Llama-3.1-8B on one H100 and 6 of Llama-3-70B on four) is calibrated from its batch 1 and 16
rows as ``specmodel fit-engine`` calibrates, and predicts 64 and 128. Targets: median error at
most 6% and below the public profile's on the same rows. A target missed is marked
``xfail(strict=True)``, so that it fails loudly once met.

The measurement files are the ones in ``specmodel/data`` (``tests/test_fit_heldout.py`` checks
the one-GPU copy against the checksum the fit recorded).
"""

from __future__ import annotations

import numpy as np
import pytest

from sitebuild.server_calibration import SeriesResult, all_series, median_errors
from specmodel.measurements import MEASUREMENTS_FILE, MULTIGPU_MEASUREMENTS_FILE
from specmodel.model.settings import Settings

pytestmark = pytest.mark.slow  # refits


@pytest.fixture(scope="module")
def one_gpu() -> list[SeriesResult]:
    return all_series([MEASUREMENTS_FILE], "vllm", Settings())


@pytest.fixture(scope="module")
def four_gpus() -> list[SeriesResult]:
    return all_series([MULTIGPU_MEASUREMENTS_FILE], "vllm", Settings())


def test_the_record_the_site_reads_is_a_fresh_computation(one_gpu, four_gpus) -> None:
    """The site never fits: it reads what make fit recorded, which must be what the fits give now."""
    from sitebuild.fit_records import calibration_text, read_calibration, same_record
    from sitebuild.paths import SERVER_CALIBRATION
    from sitebuild.server_calibration import CALIBRATED_FILES

    fresh = calibration_text({MEASUREMENTS_FILE.name: one_gpu, MULTIGPU_MEASUREMENTS_FILE.name: four_gpus},
                             CALIBRATED_FILES)  # fmt: skip
    recorded = SERVER_CALIBRATION.read_text(encoding="utf-8")
    assert same_record(recorded, fresh), "run python tools/fit_engine.py (make fit)"
    read = read_calibration(SERVER_CALIBRATION, CALIBRATED_FILES)
    assert [r.members for r in read[MEASUREMENTS_FILE.name]] == [r.members for r in one_gpu]
    batches = [[(m.source, m.batch) for m in r.members] for r in four_gpus]
    assert [[(m.source, m.batch) for m in r.members] for r in read[MULTIGPU_MEASUREMENTS_FILE.name]] == batches


def test_every_series_measured_at_the_four_batches_is_benchmarked(one_gpu, four_gpus) -> None:
    assert len(one_gpu) == 12 and len(four_gpus) == 6
    for result in one_gpu + four_gpus:
        assert sorted(r.batch for r in result.members) == [1, 16, 64, 128]
        assert len(result.fitted_errors) == len(result.public_errors) == 2


def test_overall_median_is_at_most_6_percent_and_below_the_public_profile(one_gpu, four_gpus) -> None:
    fitted, public = median_errors(one_gpu + four_gpus)
    assert fitted <= 0.06, fitted
    assert fitted < public, (fitted, public)


def test_one_gpu_median_is_at_most_6_percent_and_below_the_public_profile(one_gpu) -> None:
    fitted, public = median_errors(one_gpu)
    assert fitted <= 0.06 and fitted < public, (fitted, public)


def test_four_gpu_median_is_below_the_public_profile(four_gpus) -> None:
    # met since the public profile's refit at its least-squares optimum (3.4% against 3.8%); the
    # batch-16 row alone still carries the calibration, as no acceptance is published
    fitted, public = median_errors(four_gpus)
    assert fitted <= 0.06 and fitted < public, (fitted, public)


def test_a_series_the_rows_cannot_pin_keeps_the_public_profile(four_gpus) -> None:
    """n-gram lookup on four GPUs, acceptance fitted at batch 1: the batch-16 row alone sets no
    constant more closely than its prior, so the calibrated profile is the public one and the
    two predict the same."""
    ngram = [r for r in four_gpus if r.members[0].method == "ngram"]
    assert ngram
    for result in ngram:
        assert result.fitted == {}
        np.testing.assert_allclose(result.fitted_errors, result.public_errors, rtol=0, atol=1e-12)
