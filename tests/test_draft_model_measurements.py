"""The draft model measured at 1 to 128 sequences (sitebuild/data/measurements-draft-model.csv:
Qwen3-0.6B drafting for Qwen3-8B on one H100 under vLLM, SpecDecode-Bench): each series'
acceptance is fitted at batch 1 under each engine and the larger batches are predictions; the
validation page and the article show them, and what they say follows the predictions. Every
measurement no fit has read is the validation page's verdict and first figure."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from sitebuild.claims import validation as claims
from sitebuild.claims.prose import blocks, sentence
from sitebuild.config import SiteSettings
from sitebuild.figures import validation as page
from sitebuild.numbers import article_numbers
from specmodel.acceptance_fit import fit_series, held_out_errors
from specmodel.formatting import verdict
from specmodel.measurements import error_summary

ROOT = Path(__file__).resolve().parents[1]
SETTINGS = SiteSettings()
ROWS = page.draft_model_rows()


def test_the_rows_are_the_draft_model_with_no_acceptance_and_a_source():
    assert len(ROWS) == 8
    for row in ROWS:
        assert (row.target, row.method, row.hardware, row.tensor_parallel) == ("qwen3-8b", "qwen3-0.6b", "h100-sxm", 1)
        assert row.mean_acceptance_length is None and row.per_position_acceptance is None
        assert row.source_url == "https://arxiv.org/abs/2601.11580"
        assert "never fit engine constants on these rows" in row.notes
    assert sum(r.measured_speedup < 1 for r in ROWS) == 2  # the loss regime is measured


@pytest.mark.parametrize("engine", ["ideal", "vllm"])
def test_each_series_is_fitted_at_batch_1_and_the_rest_predicted(engine):
    fits = page.draft_model_fitted(SETTINGS, engine)
    again = fit_series(ROWS, engine, SETTINGS)
    assert [f.mean_acceptance_length for f in fits] == [f.mean_acceptance_length for f in again]
    data = page.draft_model_validation(SETTINGS)
    mine = data[data["engine"] == engine]
    assert len(mine) == len(ROWS) and mine["fitted"].sum() == len(fits) == 2
    first = mine[mine["fitted"]]
    np.testing.assert_allclose(first["predicted"], first["measured"], rtol=1e-6)
    assert first["mean_acceptance_length"].min() > 1 and first["mean_acceptance_length"].max() < 4
    held = mine[~mine["fitted"]]
    np.testing.assert_allclose(held["error"], held_out_errors(fits))


def test_the_numbers_are_each_engines_held_out_errors():
    numbers = article_numbers(SETTINGS)
    for engine in ("ideal", "vllm"):
        summary = error_summary(held_out_errors(page.draft_model_fitted(SETTINGS, engine)))
        assert numbers[f"{engine}_draft_measured_max_error"].value == summary["max"]
        assert numbers[f"{engine}_draft_measured_median_error"].value == summary["median"]
    assert numbers["draft_measured_held_out"].value == 6


def _first_loss(batches, speedups) -> float:
    return min((b for b, s in zip(batches, speedups) if verdict(float(s)) == "slower"), default=np.inf)


def test_the_claims_follow_the_predictions():
    data = page.draft_model_validation(SETTINGS)
    held = data[~data["fitted"]]
    measured = held[held["engine"] == "vllm"]
    measured_from = _first_loss(measured["batch"], measured["measured"])
    said, article = claims.draft_model_engines(SETTINGS), claims.draft_model_measured(SETTINGS)
    for engine in ("ideal", "vllm"):
        part = held[held["engine"] == engine]
        engine_from = _first_loss(part["batch"], part["predicted"])
        expected = ("never" if np.isinf(engine_from) else "same" if engine_from == measured_from
                    else "earlier" if engine_from < measured_from else "later")  # fmt: skip
        assert said.outcomes[engine] == article.outcomes[engine] == expected, engine
        assert said.values[f"{engine}_max"].value == float(np.abs(part["error"]).max())
    errors = held["error"].to_numpy()
    bias = "under" if (errors < 0).all() else "over" if (errors > 0).all() else "mixed"
    assert said.outcomes["bias"] == bias
    assert said.outcomes["measured"] == ("loses" if np.isfinite(measured_from) else "gains")
    assert article.outcomes["pair"] == "same"  # the article's default pair and card were measured


def _worded(name: str, page_name: str, said) -> str:
    body = blocks((ROOT / "docs" / page_name).read_text(encoding="utf-8"))[name]
    return sentence(name, said.outcomes, {k: v.text for k, v in said.values.items()}, body)


#: Every outcome each facet of the two claims can take (sitebuild.claims.validation).
RELATIONS = ("same", "earlier", "later", "never")
OUTCOMES = {
    "draft_model_engines": {"measured": ("loses", "gains"), "ideal": RELATIONS, "vllm": RELATIONS,
                            "bias": ("under", "over", "mixed")},
    "draft_model_measured": {"pair": ("same", "other"), "measured": ("loses", "gains"), "ideal": RELATIONS,
                             "vllm": RELATIONS},
}  # fmt: skip
CASES = [
    (name, facet, outcome) for name, facets in OUTCOMES.items() for facet, all_ in facets.items() for outcome in all_
]


@pytest.mark.parametrize(("name", "facet", "outcome"), CASES)
def test_every_outcome_is_worded(name, facet, outcome):
    said = getattr(claims, name)(SETTINGS)
    assert set(said.outcomes) == set(OUTCOMES[name])
    values = {**said.values}
    for value in ("ideal_from", "vllm_from", "measured_from"):  # present where the outcome has a batch
        values.setdefault(value, values["top"])
    changed = type(said)(said.name, {**said.outcomes, facet: outcome}, values)
    text = _worded(name, "validation.md" if name == "draft_model_engines" else "index.md", changed)
    assert "{" not in text and text.endswith("."), text


def test_the_article_shows_the_measurements_in_section_4():
    article = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    section = article.split("## 4.")[1].split("\n## 5.")[0]
    assert "{% claim draft_model_measured %}" in section and "{{ figure:draft-model-measured }}" in section
    text = _worded("draft_model_measured", "index.md", claims.draft_model_measured(SETTINGS))
    assert "SpecDecode-Bench" in text and "Qwen3-0.6B" in text
    validation = (ROOT / "docs" / "validation.md").read_text(encoding="utf-8")
    for placed in ("{{ figure:draft-model-measured }}", "{{ table:draft-model-validation }}",
                   "{{ ideal_draft_measured_max_error }}", "{{ vllm_draft_measured_max_error }}"):  # fmt: skip
        assert placed in validation, placed


def test_the_table_has_a_line_per_row_with_both_engines():
    table = page.draft_model_table(page.draft_model_validation(SETTINGS)).splitlines()
    assert len(table) == 2 + len(ROWS)
    assert sum("fitted" in line for line in table[2:]) == 2
    assert all(len(re.findall(r"\d\.\d\dx", line)) == 3 for line in table[2:])


def test_the_figure_draws_both_engines_and_the_measurements_in_a_panel_per_dataset():
    spec = next(s for s in page.FIGURES if s.id == "draft-model-measured")
    curves, points = spec.data(SETTINGS)
    assert set(curves["engine"]) == {"ideal", "vllm"} and len(points) == len(ROWS)
    fig = spec.make(SETTINGS)
    names = {t.name for t in fig.data if t.showlegend is not False and t.name}
    assert {"predicted, ideal roofline", "predicted, vLLM profile", "measured (SpecDecode-Bench)"} <= names
    assert fig.layout.meta["narrow"]["layout"]["height"] > 0


def test_the_verdict_is_every_held_out_measurement_under_both_engines():
    data = page.held_out(SETTINGS)
    assert set(data["set"]) == set(page.HELD_OUT_SETS)
    counts = data.groupby("engine").size()
    assert counts["ideal"] == counts["vllm"] == 2 + 18 + 6  # elsewhere, four GPUs, draft model (batch > 1)
    said = claims.held_out_verdict(SETTINGS)
    for engine in ("ideal", "vllm"):
        summary = error_summary(data[data["engine"] == engine]["error"].to_numpy())
        assert said.values[f"{engine}_median"].value == summary["median"]
        assert said.values[f"{engine}_max"].value == summary["max"]
    text = _worded("held_out_verdict", "validation.md", said)
    assert text.startswith("**In short:**") and text.endswith(".") and " ;" not in text
    validation = (ROOT / "docs" / "validation.md").read_text(encoding="utf-8")
    top = validation.split("\n## ")[0]
    assert top.index("{% claim held_out_verdict %}") < top.index("{{ figure:validation-held-out }}")
    assert "{{ figure:validation" not in top.replace("{{ figure:validation-held-out }}", "")
