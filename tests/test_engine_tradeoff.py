"""What a step time of EAGLE-3's own would trade (sitebuild/engine_tradeoff.py).

* Limits: at width 0 the trade-off is the profile's own fit and held-out splits; at infinite
  width it is the free fit with a fifth constant; a prior's residual never counts as a row.
* The prior pulls: the wider the prior, the further EAGLE-3's step time from the other heads'.
* The record the site reads (``make fit`` writes it) is what a fresh computation gives, a
  record computed on other measurements is refused in one sentence, and the comparison
  notices a changed number.
* The validation page's sentence says what the widths meet, not what was typed.
"""

from __future__ import annotations

import math
from operator import attrgetter

import numpy as np
import pytest

from sitebuild import engine_tradeoff, public_fit
from sitebuild.fit_records import read_tradeoff, same_record, tradeoff_text
from sitebuild.paths import EAGLE3_TRADEOFF
from specmodel.errors import SpecModelError
from specmodel.measurements import MEASUREMENTS_FILE, load_measurements

#: The refits this file shares with the other fit tests are made once per process: one process runs them all.
pytestmark = [pytest.mark.xdist_group("fits"), pytest.mark.slow]
ROWS = tuple(load_measurements(MEASUREMENTS_FILE))
FREE = (*public_fit.FITTED, "fused_head_pass_s")


@pytest.fixture(scope="module")
def results() -> tuple[engine_tradeoff.Tradeoff, ...]:
    return engine_tradeoff.tradeoffs(ROWS)


def test_the_record_the_site_reads_is_a_fresh_computation(results):
    fresh = tradeoff_text(results, engine_tradeoff.band(ROWS), MEASUREMENTS_FILE)
    recorded = EAGLE3_TRADEOFF.read_text(encoding="utf-8")
    assert same_record(recorded, fresh), "run python tools/fit_engine.py (make fit)"
    assert [r.width for r in read_tradeoff(EAGLE3_TRADEOFF, MEASUREMENTS_FILE)[0]] == list(engine_tradeoff.WIDTHS)


def test_a_record_of_other_measurements_is_refused(results, tmp_path):
    other = tmp_path / "measurements.csv"
    other.write_text(MEASUREMENTS_FILE.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    with pytest.raises(SpecModelError, match="computed on other measurements than measurements.csv: run python"):
        read_tradeoff(EAGLE3_TRADEOFF, other)


def test_the_comparison_notices_a_changed_number(results):
    text = tradeoff_text(results, None, MEASUREMENTS_FILE)
    assert same_record(text, text)
    nudged = engine_tradeoff.Tradeoff(
        results[1].width, results[1].head_s * 1.001, results[1].eagle3_s, results[1].errors
    )
    assert not same_record(text, tradeoff_text((results[0], nudged, *results[2:]), None, MEASUREMENTS_FILE))
    assert not same_record(text, tradeoff_text(results, engine_tradeoff.Band(1.0, 2.0, 1.5, 0.0), MEASUREMENTS_FILE))


def test_width_zero_is_the_profiles_fit_and_its_held_out_splits(results):
    zero = results[0]
    assert zero.width == 0.0
    held = public_fit.held_out(list(ROWS))
    for split in engine_tradeoff.SPLITS:
        assert zero.errors[split] == pytest.approx([held[split][k] for k in ("median", "p90", "max")], abs=1e-9)
    assert zero.head_s == zero.eagle3_s == pytest.approx(public_fit.fit(list(ROWS)).values["head_pass_s"])


def test_infinite_width_is_the_free_fit_with_eagle3s_own_step(results):
    free = results[-1]
    assert math.isinf(free.width)
    values = public_fit.fit(list(ROWS), FREE).values
    assert (free.head_s, free.eagle3_s) == pytest.approx((values["head_pass_s"], values["fused_head_pass_s"]))
    assert free.errors["leave_one_source_out"][0] == pytest.approx(
        float(np.median(np.abs(public_fit.group_out(list(ROWS), attrgetter("source_name"), FREE))))
    )


def test_a_prior_residual_is_not_a_row():
    shrunk = public_fit.fit(list(ROWS), FREE, shrink=("fused_head_pass_s", "head_pass_s", 1.0))
    assert shrunk.errors.shape == (len(ROWS),)
    ties = len(public_fit.TIEBREAK)
    assert shrunk.residuals.shape == (len(ROWS) + 1 + ties + 1,)  # the rows, the anchor, the tie-break, the prior
    ratio = math.log(shrunk.values["fused_head_pass_s"] / shrunk.values["head_pass_s"])
    assert shrunk.residuals[-1] == pytest.approx(ratio)


def test_the_wider_the_prior_the_further_eagle3s_step_from_the_heads(results):
    gaps = [abs(math.log(r.eagle3_s / r.head_s)) for r in results]
    assert gaps[0] == 0.0
    assert all(b >= a - 1e-9 for a, b in zip(gaps, gaps[1:], strict=False)), gaps
    assert gaps[-1] > 0.5  # both sources ask for a slower EAGLE-3 step (public_fit.eagle3_step_by_source)


def test_a_band_that_meets_every_target_is_checked_at_its_middle(results):
    found = engine_tradeoff.band(ROWS)
    if found is None:
        return  # nothing claimed: the page says no width was found
    first = next(i for i, r in enumerate(results) if r.met("in_sample"))
    assert results[first - 1].width < found.low < found.middle < found.high <= results[first].width
    middle = engine_tradeoff.tradeoff(list(ROWS), found.middle)
    assert all(middle.met(s) for s in engine_tradeoff.SPLITS)
    assert found.margin == pytest.approx(engine_tradeoff.margin(middle)) and found.margin >= 0
    assert engine_tradeoff.margin(results[0]) < 0  # the profile itself misses a target


def test_the_pages_sentence_says_which_widths_meet_which_targets(results):
    from sitebuild.claims import validation as page
    from sitebuild.config import SiteSettings

    said = page.eagle3_tradeoff(SiteSettings())
    splits = engine_tradeoff.SPLITS
    together = [r for r in results if all(r.met(s) for s in splits)]
    inside = [r for r in results if r.met("in_sample")]
    if together:
        assert said.outcome == "together"
    elif not inside:
        assert said.outcome == "never"
    else:
        first = inside[0]
        assert said.values["first_in"].text == engine_tradeoff.width_label(first.width)
        assert said.values["in_p90"].value == pytest.approx(first.errors["in_sample"][1], rel=1e-5)  # as recorded
        narrower, wider = results[: results.index(first)], results[results.index(first) :]
        held = all(r.met(s) for r in narrower for s in splits if s != "in_sample")
        inside_on = all(r.met("in_sample") for r in wider)
        if not (narrower and held and inside_on):
            assert said.outcome == "apart_mixed"
        else:
            assert said.outcome == ("apart" if engine_tradeoff.band(ROWS) is None else "narrow")


def test_the_table_marks_each_target_met_or_missed(results):
    from sitebuild.figures.engines import eagle3_tradeoff_table as eagle3_tradeoff

    table = eagle3_tradeoff(results).splitlines()
    assert len(table) == 2 + len(results)
    for line, r in zip(table[2:], results, strict=True):
        assert line.count("✓") == sum(r.met(s) for s in engine_tradeoff.SPLITS)
        assert line.count("✗") == sum(not r.met(s) for s in engine_tradeoff.SPLITS)
