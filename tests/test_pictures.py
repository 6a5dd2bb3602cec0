"""The article's two pictures, as the site publishes them: one speculative iteration as a timeline
beside a plain step, and the card's roofline with the plain step and the verify pass on it. Each
has one control, a slider over the concurrency ladder, and a CSV of what it draws, computed from
the model."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sitebuild import deployment
from sitebuild.config import SiteSettings
from sitebuild.figures.common import CONCURRENCY
from specmodel.model.evaluate import evaluate
from specmodel.model.roofline import ridge_intensity
from specmodel.model.scenario import DEFAULTS
from specmodel.model.specs import get_hardware

IDS = ("timeline", "roofline")


@pytest.fixture(scope="module")
def settings() -> SiteSettings:
    return deployment.resolved(SiteSettings())


def _figure(generated: Path, figure_id: str) -> dict:
    return json.loads((generated / "figdata" / f"{figure_id}.json").read_text(encoding="utf-8"))


def _csv(generated: Path, figure_id: str) -> pd.DataFrame:
    return pd.read_csv(io.StringIO((generated / "figdata" / f"{figure_id}.csv").read_text(encoding="utf-8")))


def _values(array: list | dict) -> np.ndarray:
    """An array of a figure's JSON: a list, or Plotly's typed array (``dtype`` and base64 ``bdata``)."""
    if isinstance(array, dict):
        return np.frombuffer(base64.b64decode(array["bdata"]), dtype=array["dtype"])
    return np.asarray(array, dtype=float)


def _shown(figure: dict, step: dict) -> list[dict]:
    """The traces a slider step shows."""
    visible = step["args"][0]["visible"]
    assert len(visible) == len(figure["data"])
    return [trace for trace, shown in zip(figure["data"], visible) if shown]


@pytest.mark.parametrize("figure_id", IDS)
def test_the_picture_is_published_with_its_data(generated, figure_id):
    fragment = (generated / "figures" / f"{figure_id}.html").read_text(encoding="utf-8")
    assert f'id="fig-{figure_id}"' in fragment and f"figdata/{figure_id}.csv" in fragment
    assert _figure(generated, figure_id)["data"]
    assert len(_csv(generated, figure_id)) > len(CONCURRENCY)


@pytest.mark.parametrize("figure_id", IDS)
def test_its_one_control_is_a_slider_over_the_concurrency_ladder(generated, figure_id):
    layout = _figure(generated, figure_id)["layout"]
    assert "updatemenus" not in layout or layout["updatemenus"] == []
    (slider,) = layout["sliders"]
    labels = [int(step["label"].replace(",", "")) for step in slider["steps"]]
    assert labels == CONCURRENCY.tolist()
    assert labels[slider["active"]] == DEFAULTS["concurrency"]
    assert all(step["method"] == "restyle" for step in slider["steps"])


def test_the_timeline_draws_each_pass_as_long_as_the_model_says(generated, settings):
    """At a few rungs: the CSV's pass times are the model's, each pass starts where the one
    before it ends, and the time per token is the iteration's over the tokens it yields."""
    table = _csv(generated, "timeline")
    gamma = int(DEFAULTS["gamma"])
    for batch in (1, 64, 1024):
        ev = evaluate(settings=settings, concurrency=batch)
        rows = table[(table["concurrency"] == batch) & (table["part"] == "pass")]
        draft, verify = rows[rows["lane"] == "draft passes"], rows[rows["lane"] == "verify pass"]
        plain = rows[rows["lane"] == "plain decode step"]
        assert len(draft) == gamma and len(verify) == len(plain) == 1
        np.testing.assert_allclose(draft["time_s"], float(ev.draft_step_time), rtol=1e-5)
        np.testing.assert_allclose(draft["start_s"], np.arange(gamma) * float(ev.draft_step_time), rtol=1e-5)
        np.testing.assert_allclose(verify["time_s"], float(ev.verify_time), rtol=1e-5)
        np.testing.assert_allclose(verify["start_s"], gamma * float(ev.draft_step_time), rtol=1e-5)
        np.testing.assert_allclose(plain[["time_s", "start_s"]].to_numpy()[0], [float(ev.plain_time), 0.0], rtol=1e-5)
        # each pass as long as the slower of its memory traffic and its arithmetic
        np.testing.assert_allclose(rows["time_s"], rows[["memory_time_s", "compute_time_s"]].max(axis=1), rtol=1e-5)
        np.testing.assert_allclose(verify["bytes"], float(ev.verify_bytes), rtol=1e-5)
        np.testing.assert_allclose(plain["flops"], float(ev.plain_flops), rtol=1e-5)
        per_token = table[(table["concurrency"] == batch) & (table["part"] == "time per token")]
        spec = per_token[per_token["series"] == "speculation"].iloc[0]
        iteration = gamma * float(ev.draft_step_time) + float(ev.verify_time)
        assert spec["tokens"] == pytest.approx(float(ev.mean_acceptance_length), rel=1e-5)
        assert spec["time_per_token_s"] == pytest.approx(iteration / float(ev.mean_acceptance_length), rel=1e-5)
        plain_token = per_token[per_token["series"] == "plain decoding"].iloc[0]
        assert plain_token["time_per_token_s"] == pytest.approx(float(ev.plain_time), rel=1e-5)


def test_each_timeline_step_shows_that_rungs_bars(generated):
    """Moving the slider to a rung shows its bars: their lengths (ms) are its passes' times."""
    figure, table = _figure(generated, "timeline"), _csv(generated, "timeline")
    steps = figure["layout"]["sliders"][0]["steps"]
    widths = []
    for batch, step in zip(CONCURRENCY, steps):
        memory, arithmetic, per_token = _shown(figure, step)
        rows = table[(table["concurrency"] == batch) & (table["part"] == "pass")]
        close = {"rtol": 1e-5}  # the CSV keeps 6 significant digits
        np.testing.assert_allclose(_values(memory["x"]), rows["memory_time_s"] * 1e3, **close)
        np.testing.assert_allclose(_values(arithmetic["x"]), rows["compute_time_s"] * 1e3, **close)
        np.testing.assert_allclose(_values(memory["base"]), rows["start_s"] * 1e3, **close)
        tokens = table[(table["concurrency"] == batch) & (table["part"] == "time per token")]
        np.testing.assert_allclose(_values(per_token["x"]), tokens["time_per_token_s"] * 1e3, **close)
        assert memory["marker"]["color"] != arithmetic["marker"]["color"]
        widths.append(float(np.max(_values(memory["base"]) + _values(memory["x"]))))
    assert widths == sorted(widths) and widths[-1] > 10 * widths[0]  # the iteration takes longer as B grows


def test_the_roofline_places_the_passes_where_the_card_allows(generated, settings):
    table = _csv(generated, "roofline")
    hw = get_hardware(settings.deployment.hardware)
    peak, bandwidth = hw.peak_flops.value, hw.memory_bandwidth.value
    ridge = ridge_intensity(peak, bandwidth)
    plain, verify = (table[table["pass"] == name].set_index("concurrency") for name in ("plain step", "verify pass"))
    assert plain.index.tolist() == verify.index.tolist() == CONCURRENCY.tolist()
    assert plain.loc[1, "intensity_flop_per_byte"] < ridge / 100  # far left, on the memory roof
    assert (verify["intensity_flop_per_byte"] > plain["intensity_flop_per_byte"]).all()
    for rows in (plain, verify):
        intensity = rows["intensity_flop_per_byte"]
        assert intensity.is_monotonic_increasing  # toward the ridge as the batch grows
        roof = np.minimum(peak, bandwidth * intensity)
        assert (rows["attained_flops_per_s"] <= roof * (1 + 1e-5)).all()
        np.testing.assert_allclose(rows["ridge_flop_per_byte"], ridge, rtol=1e-5)
    ev = evaluate(settings=settings, concurrency=CONCURRENCY)
    np.testing.assert_allclose(plain["intensity_flop_per_byte"], ev.plain_intensity, rtol=1e-5)
    np.testing.assert_allclose(verify["attained_flops_per_s"], ev.verify_flops / ev.verify_time, rtol=1e-5)


def test_each_roofline_step_moves_the_points_to_that_rung(generated):
    figure, table = _figure(generated, "roofline"), _csv(generated, "roofline")
    steps = figure["layout"]["sliders"][0]["steps"]
    always = [
        t["name"] for t in _shown(figure, steps[0]) if t["name"] in {u["name"] for u in _shown(figure, steps[-1])}
    ]
    assert any(name.startswith("memory roof") for name in always) and any("compute roof" in n for n in always)
    for batch, step in zip(CONCURRENCY, steps):
        points = [t for t in _shown(figure, step) if t.get("mode") == "markers" and t["name"] != "ridge point"]
        assert [t["name"].split(",")[0] for t in points] == ["plain step", "verify pass"]
        rows = table[table["concurrency"] == batch]
        np.testing.assert_allclose([_values(t["x"])[0] for t in points], rows["intensity_flop_per_byte"], rtol=1e-5)
        np.testing.assert_allclose([_values(t["y"])[0] for t in points], rows["attained_flops_per_s"] / 1e12, rtol=1e-5)
