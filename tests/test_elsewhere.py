"""Public measurements found outside the fitted file (sitebuild/data/measurements-elsewhere.csv, and
the draft model's sitebuild/data/measurements-draft-model.csv): shown on the validation page as
held out, never fitted.

* Nothing that fits reads either file: no module of the fit names it, and the profile's
  provenance is the fitted file, specmodel/data/measurements.csv.
* Every row says it was never fitted and what about it is inferred, and links to its source.
* The page's sentence says what the model gives on these rows, not what was typed.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from sitebuild.config import SiteSettings
from sitebuild.paths import DRAFT_MODEL_MEASUREMENTS, ELSEWHERE, ROOT
from specmodel.measurements import MEASUREMENTS_FILE, load_measurements, predict, relative_errors
from specmodel.model.engines import engine_catalog

ROWS = load_measurements(ELSEWHERE)
#: Every module that fits an engine profile or its records (the site's and a user's).
FITTING = ["sitebuild/public_fit.py", "sitebuild/engine_tradeoff.py", "sitebuild/memory_sensitivity.py",
           "sitebuild/fit_records.py", "tools/fit_engine.py", "specmodel/engine_fit.py",
           "specmodel/cli/fit_engine.py", "sitebuild/server_calibration.py"]  # fmt: skip


#: Every file of held-out measurements, by the name sitebuild.paths gives it.
HELD_OUT = {"ELSEWHERE": ELSEWHERE, "DRAFT_MODEL_MEASUREMENTS": DRAFT_MODEL_MEASUREMENTS}


@pytest.mark.parametrize("constant", list(HELD_OUT))
def test_nothing_that_fits_names_the_file(constant):
    path = HELD_OUT[constant]
    assert path.is_file()
    for module in FITTING:
        text = (ROOT / module).read_text(encoding="utf-8")
        assert constant not in text and path.name not in text and path.stem not in text, (module, path.name)


def test_no_calibration_reads_a_held_out_file():
    from sitebuild.server_calibration import CALIBRATED_FILES

    assert not set(HELD_OUT.values()) & {Path(p).resolve() for p in CALIBRATED_FILES}


def test_the_profile_was_fitted_on_the_fitted_files_rows_only():
    fit = engine_catalog()["vllm"].fit
    assert fit is not None and fit.measurements == "specmodel/data/measurements.csv"
    assert fit.measurements_sha256 == hashlib.sha256(MEASUREMENTS_FILE.read_bytes()).hexdigest()
    assert fit.rows == len(load_measurements(MEASUREMENTS_FILE))
    fitted = {(r.source, r.method, r.batch, r.num_speculative_tokens) for r in load_measurements(MEASUREMENTS_FILE)}
    for path in HELD_OUT.values():
        assert not fitted & {(r.source, r.method, r.batch, r.num_speculative_tokens) for r in load_measurements(path)}


def test_every_row_says_it_was_never_fitted_what_is_inferred_and_where_it_comes_from():
    assert ROWS
    for row in ROWS:
        assert row.notes.startswith("never fitted"), row.source
        assert "Inferred" in row.notes and "Quoted" in row.notes, row.source
        assert row.source_url and row.source_url.startswith("https://github.com/"), row.source


def test_the_pages_sentence_follows_the_predictions():
    from sitebuild.claims import validation as page

    said = page.elsewhere(SiteSettings())
    errors = {e: relative_errors(predict(ROWS, e), ROWS) for e in ("ideal", "vllm")}
    closer = bool(np.all(np.abs(errors["vllm"]) < np.abs(errors["ideal"])))
    assert said.outcome == ("vllm_closer" if closer else "mixed")
    assert said.values["rows"].value == len(ROWS)
    assert said.values["vllm_high"].value == float(errors["vllm"].max())
    assert said.values["ideal_low"].value == float(errors["ideal"].min())


def test_the_table_has_a_line_per_row_with_its_source_link():
    from sitebuild.figures import engines

    table = engines.validation_table(engines.validation(SiteSettings(), ROWS)).splitlines()
    assert len(table) == 2 + len(ROWS)
    assert all("https://github.com/vllm-project/vllm/pull/16035" in line for line in table[2:])


@pytest.mark.parametrize("constant", list(HELD_OUT))
def test_the_file_has_the_fitted_files_columns(constant):
    columns = Path(MEASUREMENTS_FILE).read_text(encoding="utf-8").splitlines()[0]
    assert HELD_OUT[constant].read_text(encoding="utf-8").splitlines()[0] == columns
