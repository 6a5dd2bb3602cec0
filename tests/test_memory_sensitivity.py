"""The ``vllm`` profile refitted at other memory efficiencies (sitebuild/memory_sensitivity.py,
the fixed time per pass depends on the assumed share of the datasheet's bandwidth).

* Identity: an engine's own memory efficiency prices bytes exactly as the settings' would; an
  engine without one takes the settings'; ``ideal`` is untouched by the ``vllm`` profile's.
* Limit: the refit at the profile's own efficiency is the profile, its constants and held-out
  errors as ``engines.toml`` records them.
* Physics: the faster the roofline reads the weights, the more of the 7.07 ms anchor is left to
  the fixed time per pass, while the plain step the fit holds stays near the anchor.
* The record the site reads (``make fit`` writes it) is what a fresh computation gives; a record
  of other measurements, or none, is refused in one sentence.
* The page's sentence and table say what the refits give, not what was typed.
"""

from __future__ import annotations

import dataclasses
from dataclasses import replace

import numpy as np
import pytest

from sitebuild import memory_sensitivity, public_fit
from sitebuild.fit_records import read_sensitivity, same_record, sensitivity_text
from sitebuild.paths import MEMORY_SENSITIVITY
from specmodel.errors import SpecModelError
from specmodel.measurements import MEASUREMENTS_FILE, load_measurements
from specmodel.model.engines import engine_catalog
from specmodel.model.evaluate import evaluate
from specmodel.model.settings import Settings

#: The refits this file shares with the other fit tests are made once per process: one process runs them all.
pytestmark = [pytest.mark.xdist_group("fits"), pytest.mark.slow]
ROWS = tuple(load_measurements(MEASUREMENTS_FILE))
SCENARIO = {"concurrency": np.array([1, 16, 64, 128]), "context": 838, "generated_tokens": 322,
            "target": "llama-3.1-8b", "hardware": "h100-sxm", "drafter": "eagle3", "gamma": 3,
            "mean_acceptance_length": 2.3}  # fmt: skip


@pytest.fixture(scope="module")
def refits() -> tuple[memory_sensitivity.Refit, ...]:
    return memory_sensitivity.refits(ROWS)


@pytest.mark.parametrize("efficiency", [0.6, 0.9])
def test_an_engines_memory_efficiency_prices_bytes_as_the_settings_would(efficiency):
    vllm = engine_catalog()["vllm"]
    own = Settings().with_engine(replace(vllm, memory_efficiency=efficiency))
    inherited = (
        Settings().with_constants(MEMORY_EFFICIENCY=efficiency).with_engine(replace(vllm, memory_efficiency=None))
    )
    a, b = (evaluate(**SCENARIO, engine="vllm", settings=s) for s in (own, inherited))
    np.testing.assert_allclose(a.speedup, b.speedup, rtol=1e-12)
    np.testing.assert_allclose(a.base_tokens_per_s, b.base_tokens_per_s, rtol=1e-12)
    default = evaluate(**SCENARIO, engine="vllm")
    assert not np.allclose(a.base_tokens_per_s, default.base_tokens_per_s)  # it does change the prices


def test_ideal_takes_the_settings_memory_efficiency_whatever_vllms_is():
    vllm = replace(engine_catalog()["vllm"], memory_efficiency=0.6)
    changed = evaluate(**SCENARIO, engine="ideal", settings=Settings().with_engine(vllm))
    np.testing.assert_array_equal(changed.speedup, evaluate(**SCENARIO, engine="ideal").speedup)
    assert engine_catalog()["ideal"].memory_efficiency is None


def test_a_changed_constant_reprices_ideal_but_not_the_fitted_profile():
    changed = Settings().with_constants(MEMORY_EFFICIENCY=0.6)
    for engine, moved in (("ideal", True), ("vllm", False)):
        a, b = (evaluate(**SCENARIO, engine=engine, settings=s).base_tokens_per_s for s in (Settings(), changed))
        assert (not np.allclose(a, b)) == moved, engine


def test_the_refit_at_the_profiles_efficiency_is_the_profile(refits):
    vllm = engine_catalog()["vllm"]
    assert vllm.memory_efficiency == public_fit.FIXED["memory_efficiency"]
    own = next(r for r in refits if r.efficiency == vllm.memory_efficiency)
    for name in public_fit.FITTED:
        assert own.values[name] == pytest.approx(getattr(vllm, name), rel=1e-4), name
    assert vllm.fit is not None
    for split, recorded in vllm.fit.held_out.items():
        assert own.errors[split] == pytest.approx(recorded, abs=1e-4), split


def test_the_faster_the_memory_the_more_of_the_anchor_is_fixed_time(refits):
    t0 = [r.values["target_pass_s"] for r in refits]
    assert t0 == sorted(t0) and t0[0] < t0[-1]
    for r in refits:  # the anchor holds the plain step near 7.07 ms at every efficiency
        assert r.plain_step_s == pytest.approx(public_fit.ANCHOR_SECONDS, rel=0.05), r.efficiency


def test_the_record_the_site_reads_is_a_fresh_computation(refits):
    fresh = sensitivity_text(refits, MEASUREMENTS_FILE)
    assert same_record(MEMORY_SENSITIVITY.read_text(encoding="utf-8"), fresh), "run python tools/fit_engine.py"
    recorded = read_sensitivity(MEMORY_SENSITIVITY, MEASUREMENTS_FILE)
    assert [r.efficiency for r in recorded] == list(memory_sensitivity.EFFICIENCIES)


def test_a_record_of_other_measurements_or_none_is_refused(tmp_path):
    other = tmp_path / "measurements.csv"
    other.write_text(MEASUREMENTS_FILE.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    with pytest.raises(SpecModelError, match="computed on other measurements than measurements.csv: run python"):
        read_sensitivity(MEMORY_SENSITIVITY, other)
    with pytest.raises(SpecModelError, match="memory-sensitivity.json is missing: run python tools/fit_engine.py"):
        read_sensitivity(tmp_path / "memory-sensitivity.json", MEASUREMENTS_FILE)


def test_the_comparison_notices_a_changed_number(refits):
    text = sensitivity_text(refits, MEASUREMENTS_FILE)
    nudged = dataclasses.replace(refits[2], plain_step_s=refits[2].plain_step_s * 1.001)
    assert not same_record(text, sensitivity_text((*refits[:2], nudged, *refits[3:]), MEASUREMENTS_FILE))
    assert not same_record(text, sensitivity_text(refits[:-1], MEASUREMENTS_FILE))


def _said(monkeypatch, refits):
    from sitebuild.claims import validation as page
    from sitebuild.config import SiteSettings

    monkeypatch.setattr(page, "read_sensitivity", lambda *_: refits)
    return page.memory_sensitivity(SiteSettings())


def test_the_pages_sentence_follows_the_refits(monkeypatch, refits):
    said = _said(monkeypatch, refits)
    fixed, inside, held, loose = said.outcome.split(":")
    assert fixed == "rises"  # test_the_faster_the_memory_the_more_of_the_anchor_is_fixed_time
    medians = [r.errors["in_sample"][0] for r in refits]
    assert inside == ("flat" if max(medians) - min(medians) < 0.01 else "moves")
    best = min(refits, key=lambda r: r.worst_held_out_median)
    assert held == ("profile_best" if best.efficiency == public_fit.FIXED["memory_efficiency"] else "other_best")
    assert said.values["held_best"].value == pytest.approx(best.worst_held_out_median)
    limit = public_fit.IDENTIFIABLE["relative_se"]
    assert loose == ("loose" if any(r.largest_relative_se > limit for r in refits) else "tight")


def test_the_sentence_changes_when_the_refits_do(monkeypatch, refits):
    profile = next(r for r in refits if r.efficiency == public_fit.FIXED["memory_efficiency"])
    better = dict.fromkeys(profile.errors, (0.01, 0.02, 0.03))
    tight = [dataclasses.replace(r, largest_relative_se=0.2) for r in refits]
    changed = [dataclasses.replace(r, errors=better) if r is profile else r for r in refits]
    assert _said(monkeypatch, tuple(changed)).outcome.split(":")[2] == "profile_best"
    assert _said(monkeypatch, tuple(tight)).outcome.endswith(":tight")
    uneven = [dataclasses.replace(r, values={**r.values, "target_pass_s": 1e-3 * (i % 2 + 1)})
              for i, r in enumerate(refits)]  # fmt: skip
    assert _said(monkeypatch, tuple(uneven)).outcome.startswith("uneven:")


def test_the_table_marks_the_profile_and_each_target(refits):
    from sitebuild.figures.engines import memory_sensitivity_table as table

    lines = table(refits, public_fit.FIXED["memory_efficiency"]).splitlines()
    assert len(lines) == 2 + len(refits)
    assert sum("(the profile)" in line for line in lines) == 1
    for line, r in zip(lines[2:], refits, strict=True):
        assert line.count("✓") == sum(r.met(s) for s in r.errors)
        assert line.count("✗") == sum(not r.met(s) for s in r.errors)
