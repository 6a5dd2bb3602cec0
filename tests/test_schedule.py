"""The gamma schedule (specmodel.schedule): the best gamma at every load, computed here again by
brute force with ``evaluate`` one batch size at a time, and its JSON read back the way vLLM reads
``num_speculative_tokens_per_batch_size`` (inclusive ranges, a gap takes the previous range's
value, every value clamped to ``num_speculative_tokens``); edge cases; and the schedules the site
prints and the simulator stores for the default configuration."""

from __future__ import annotations

import gzip
import json
import random

import numpy as np
import pytest

from sitebuild.config import SiteSettings
from sitebuild.simulator.data import SimulatorData, schedule_line, slice_file
from specmodel import Settings, SpecModelError, evaluate
from specmodel.formatting import verdict
from specmodel.model.scenario import GAMMAS
from specmodel.schedule import (
    MAX_KEY,
    OFF,
    SCHEDULE_KEY,
    GammaRange,
    choose_gamma,
    gamma_ranges,
    gamma_schedule,
    vllm_schedule_json,
    vllm_speculative_config,
)

#: Scenarios of different shapes: the article's (gamma falls, then off where the draft no longer
#: fits), the vLLM profile, n-gram lookup (high gammas that fall), and an EAGLE head at a long
#: prompt whose best gamma rises with the load before speculation stops fitting.
SCENARIOS = {
    "article": {},
    "article-vllm": {"engine": "vllm"},
    "ngram-vllm-8192": {"drafter": "ngram", "context": 8192, "engine": "vllm"},
    "eagle-32768": {"drafter": "eagle", "context": 32768},
    "draft-same-4096": {"acceptance": "same", "alpha": 0.8, "context": 4096},
}


def brute_force(batch_sizes, **fields) -> list[int]:
    """The schedule's rule, one batch size at a time: evaluate every gamma there, take the
    fastest (the first of equal ones), and run it only if it fits and the verdict on its
    speedup is a gain."""
    out = []
    for b in batch_sizes:
        ev = evaluate(concurrency=int(b), gamma=np.array(GAMMAS), **fields)
        speedups = [float(x) for x in ev.speedup]
        k = speedups.index(max(speedups))
        fits = bool(np.all(ev.fits))
        out.append(GAMMAS[k] if fits and verdict(speedups[k]) == "faster" else OFF)
    return out


def most_plain(**fields) -> int:
    """The most sequences plain decoding holds in memory, from the model's capacity readout."""
    return int(evaluate(concurrency=1, **fields).max_concurrency_without_draft)


def vllm_gamma(config: dict, batch: int) -> int:
    """The gamma vLLM schedules at ``batch`` from a ``--speculative-config`` fragment: the value
    of the inclusive range holding it; in a gap (or past the last range) the previous range's;
    clamped to ``num_speculative_tokens``."""
    ranges = []
    for low, high, value in config[SCHEDULE_KEY]:
        assert 1 <= low <= high and isinstance(value, int) and value >= 0, (low, high, value)
        ranges.append((low, high, value))
    ranges.sort()
    found = None
    for low, high, value in ranges:
        if low > batch:
            break
        found = value  # in the range, or in the gap after it
        if batch <= high:
            break
    if found is None:
        raise ValueError(f"batch size {batch} comes before the first range")
    return min(config[MAX_KEY], found)


@pytest.fixture(scope="module", params=list(SCENARIOS))
def scenario(request) -> tuple[dict, object]:
    fields = SCENARIOS[request.param]
    return fields, gamma_schedule(**fields)


def test_the_schedule_is_the_best_gamma_at_every_load_by_brute_force(scenario):
    fields, schedule = scenario
    top = most_plain(**fields)
    assert schedule.batch_sizes.tolist() == list(range(1, top + 1))
    assert schedule.gamma.tolist() == brute_force(schedule.batch_sizes, **fields)


def test_the_ranges_merge_neighbours_and_cover_every_load_once(scenario):
    _, schedule = scenario
    ranges = schedule.ranges
    assert ranges[0].low == 1 and ranges[-1].high == schedule.batch_sizes[-1]
    for r, after in zip(ranges, ranges[1:]):
        assert after.low == r.high + 1 and after.gamma != r.gamma
    expanded = [r.gamma for r in ranges for _ in range(r.low, r.high + 1)]
    assert expanded == schedule.gamma.tolist()


def test_vllm_reads_the_json_as_the_schedule_at_every_load(scenario):
    _, schedule = scenario
    text = vllm_schedule_json(schedule.ranges)
    config = json.loads(text)
    assert set(config) == {MAX_KEY, SCHEDULE_KEY} and "\n" not in text
    assert config[MAX_KEY] == max(1, int(schedule.gamma.max()))
    for b, g in zip(schedule.batch_sizes, schedule.gamma):
        assert vllm_gamma(config, int(b)) == g, (int(b), text)
    # Past the largest load (not one sequence more fits) vLLM keeps the last range's value.
    assert vllm_gamma(config, int(schedule.batch_sizes[-1]) + 1) == schedule.gamma[-1]


def test_a_list_of_batch_sizes_leaves_gaps_that_vllm_fills_from_the_range_before():
    """On the ladder's rungs only, each range runs from the first to the last rung of its run;
    the sizes between two ranges, not evaluated, take the earlier range's value."""
    rungs = [2**i for i in range(8)]
    schedule = gamma_schedule(batch_sizes=rungs)
    assert schedule.gamma.tolist() == brute_force(rungs)
    config = json.loads(vllm_schedule_json(schedule.ranges))
    for r, after in zip(schedule.ranges, schedule.ranges[1:]):
        assert r.high in rungs and after.low in rungs
        gap = range(r.high + 1, after.low)
        assert all(vllm_gamma(config, b) == r.gamma for b in gap)
    for b, g in zip(rungs, schedule.gamma):
        assert vllm_gamma(config, b) == g


def test_the_reader_clamps_to_num_speculative_tokens_and_fills_gaps():
    config = {MAX_KEY: 3, SCHEDULE_KEY: [[1, 16, 3], [64, 128, 2], [256, 4096, 0], [20, 30, 5]]}
    assert [vllm_gamma(config, b) for b in (1, 16, 17, 25, 40, 64, 200, 256, 9999)] == [3, 3, 3, 3, 3, 2, 2, 0, 0]


def test_speculation_that_never_pays_is_one_range_of_zero():
    schedule = gamma_schedule(alpha=0.05)
    top = most_plain(alpha=0.05)
    assert schedule.ranges == (GammaRange(1, top, OFF),)
    assert json.loads(vllm_schedule_json(schedule.ranges)) == {MAX_KEY: 1, SCHEDULE_KEY: [[1, top, 0]]}


def test_one_gamma_that_always_pays_is_one_range():
    fields = {"drafter": "ngram", "context": 32768}
    schedule = gamma_schedule(gammas=[3], **fields)
    top = most_plain(**fields)
    assert schedule.ranges == (GammaRange(1, top, 3),)
    assert vllm_schedule_json(schedule.ranges) == (
        f'{{"num_speculative_tokens": 3, "num_speculative_tokens_per_batch_size": [[1, {top}, 3]]}}'
    )


def test_no_schedule_where_not_one_sequence_fits():
    settings = Settings().with_constants(GPU_MEMORY_UTILIZATION=0.01)
    schedule = gamma_schedule(settings=settings)
    assert schedule.batch_sizes.size == 0 and schedule.ranges == ()
    assert vllm_speculative_config(schedule.ranges) == {} and vllm_schedule_json(schedule.ranges) == "{}"


def test_the_rule_keeps_a_gain_beyond_the_margin_that_fits():
    speedups = [[1.02, 1.03, 1.0], [1.0, 1.04, 1.0], [1.5, 2.0, 1.9], [1.2, 1.2, 1.1], [0.5, 0.7, 0.6]]
    fits = [True, True, False, True, True]
    gamma, best, top = choose_gamma(speedups, fits, [1, 2, 3])
    assert gamma.tolist() == [OFF, 2, OFF, 1, OFF]
    assert best.tolist() == [2, 2, 2, 1, 2] and top.tolist() == [1.03, 1.04, 2.0, 1.2, 0.7]


def test_gamma_ranges_merge_runs():
    merged = (GammaRange(1, 2, 2), GammaRange(3, 5, 0), GammaRange(9, 9, 1))
    assert gamma_ranges([1, 2, 3, 5, 9], [2, 2, 0, 0, 1]) == merged


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"concurrency": 8}, "leave out concurrency"),
        ({"gamma": 3}, "leave out gamma"),
        ({"mean_acceptance_length": 2.5}, "leave out mean_acceptance_length"),
        ({"context": [1024, 2048]}, "give context as one value"),
        ({"batch_sizes": [4, 2]}, "ascending order"),
    ],
)
def test_a_schedule_refuses_what_it_chooses_itself_or_cannot_order(fields, message):
    with pytest.raises(SpecModelError, match=message):
        gamma_schedule(**fields)


# --- what the site prints and the simulator stores (the default configuration's build) --------


def _simulator(generated) -> SimulatorData:
    html = (generated / "html" / "simulator.html").read_text(encoding="utf-8")
    meta = json.loads(html.split('<script type="application/json" id="specsim-meta">', 1)[1].split("</script>")[0])
    blobs = {p.name: gzip.decompress(p.read_bytes()) for p in (generated / "data" / "sim").glob("*.bin.gz")}
    return SimulatorData(meta, blobs)


def test_the_page_prints_the_models_schedule_under_each_engine(generated):
    for name, engine in (("gamma-schedule", "ideal"), ("gamma-schedule-vllm", "vllm")):
        printed = (generated / "outputs" / f"{name}.txt").read_text().strip()
        assert printed == vllm_schedule_json(gamma_schedule(engine=engine).ranges)


def test_the_simulator_stores_the_models_schedule_and_best_gamma(generated):
    """For the default setting and random others: the stored line is the model's JSON, and the
    best gamma at each rung of the ladder is the schedule's there (off past the loads it covers)."""
    sim = _simulator(generated)
    axes = sim.meta["axes"]
    rng = random.Random(20261204)
    settings = [{name: values[0] for name, values in axes.items()}]
    settings[0].update({"drafter": SiteSettings().deployment.draft, "context": 2048, "alpha": 0.75})
    settings += [{name: rng.choice(values) for name, values in axes.items()} for _ in range(5)]
    contexts, rungs = axes["context"], axes["concurrency"]
    for setting in settings:
        assert slice_file(sim.meta, setting) in sim.blobs
        fields = {k: setting[k] for k in ("drafter", "acceptance", "alpha", "engine", "context")}
        schedule = gamma_schedule(**fields)
        numbers = sim.read(sim.meta["schedule"], setting).reshape(len(contexts), -1)
        assert schedule_line(numbers[contexts.index(setting["context"])]) == vllm_schedule_json(schedule.ranges)
        best = sim.read(sim.meta["best_gamma"], setting).reshape(len(rungs), len(contexts))
        top = int(schedule.batch_sizes[-1])
        expected = [int(schedule.gamma[b - 1]) if b <= top else OFF for b in rungs]
        assert best[:, contexts.index(setting["context"])].tolist() == expected, setting
