"""The two speedups: decode alone (plain over speculative time per output
token, a TPOT ratio) and end-to-end output throughput (the prompts' prefill counted, as a
serving benchmark measures it), and the measurements priced each under its own definition.

The identity behind them: with b and s the plain and speculative decode times of a run and
Db, Ds >= 0 the time the prefill adds to each, the throughput speedup (b + Db) / (s + Ds) is a
mediant of the decode speedup b / s and the prefill's ratio Db / Ds, so it lies between them.
The prefill is the same arithmetic in both runs (T prompt tokens per sequence), spread over
fewer, busier passes when speculating (less memory time to hide it under), so Ds >= Db: the
prefill's ratio is at most 1, the throughput speedup is at most the decode speedup wherever
speculation wins, and it tends to that ratio, about 1, when long prompts make the prefill
dominate, while the decode speedup stays.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import specmodel.model.evaluate as evaluate_module
from specmodel import evaluate
from specmodel.cli import main
from specmodel.errors import SpecModelError
from specmodel.measurements import (
    MEASUREMENTS_FILE,
    SPEEDUP_DEFINITIONS,
    Measurement,
    load_measurements,
    predict,
    speedup_readout,
)
from specmodel.model.timing import Timing

DECODE = "vanilla TPOT / speculative TPOT"
THROUGHPUT = "output throughput with / without speculation at the same max concurrency"
GRID = {
    "concurrency": np.array([1, 4, 16, 64, 256])[:, None, None],
    "context": np.array([0, 256, 2048, 8192, 32000])[None, :, None],
    "gamma": np.array([1, 2, 4, 8])[None, None, :],
}


def _timed(monkeypatch: pytest.MonkeyPatch, **fields) -> tuple:
    """The evaluation of ``fields`` and the :class:`Timing` it was computed from."""
    seen: list[Timing] = []
    real = evaluate_module._throughputs

    def spy(timing: Timing, *args, **kwargs):
        seen.append(timing)
        return real(timing, *args, **kwargs)

    monkeypatch.setattr(evaluate_module, "_throughputs", spy)
    ev = evaluate(**fields)
    assert len(seen) == 1
    return ev, seen[0]


@pytest.mark.parametrize("engine", ["ideal", "vllm"])
@pytest.mark.parametrize("drafter", ["qwen3-0.6b", "ngram", "eagle"])
def test_under_cohort_batching_the_two_speedups_are_todays_speedup(engine, drafter):
    ev = evaluate(engine=engine, batching="cohort", drafter=drafter, **GRID)
    np.testing.assert_array_equal(ev.decode_speedup, ev.speedup)
    np.testing.assert_array_equal(ev.throughput_speedup, ev.speedup)


def test_the_ideal_engine_is_cohort_so_its_speedups_coincide():
    ev = evaluate(engine="ideal", **GRID)
    np.testing.assert_array_equal(ev.decode_speedup, ev.throughput_speedup)


def test_without_a_prompt_steady_batching_has_no_prefill_and_one_speedup():
    ev = evaluate(engine="vllm", batching="steady", context=0, concurrency=[1, 16, 128])
    np.testing.assert_array_equal(ev.decode_speedup, ev.throughput_speedup)


@pytest.mark.parametrize("drafter", ["qwen3-0.6b", "qwen3-1.7b", "ngram", "eagle", "eagle3"])
@pytest.mark.parametrize("tensor_parallel", [1, 2])
def test_the_throughput_speedup_is_a_mediant_of_decode_and_prefill(monkeypatch, drafter, tensor_parallel):
    ev, t = _timed(monkeypatch, engine="vllm", batching="steady", drafter=drafter, tensor_parallel=tensor_parallel,
                   **GRID)  # fmt: skip
    b, s = t.base_decode_seconds, t.spec_decode_seconds
    db, ds = t.base_seconds - b, t.spec_seconds - s
    np.testing.assert_allclose(ev.decode_speedup.ravel(), b / s, rtol=1e-12)
    np.testing.assert_allclose(ev.throughput_speedup.ravel(), (b + db) / (s + ds), rtol=1e-12)
    assert np.all(db >= 0) and np.all(ds >= 0)
    assert np.all(ds >= db * (1 - 1e-12))  # the same prefill costs speculation at least as much
    prefill = ds > 0
    ratio = db[prefill] / ds[prefill]
    dec, thr = ev.decode_speedup.ravel()[prefill], ev.throughput_speedup.ravel()[prefill]
    tol = 1e-12
    assert np.all(thr >= np.minimum(dec, ratio) * (1 - tol)) and np.all(thr <= np.maximum(dec, ratio) * (1 + tol))
    assert np.all(ratio <= 1 + tol)
    wins = dec > 1
    assert np.all(thr[wins] <= dec[wins] * (1 + tol))  # decode >= throughput where speculation wins


def test_at_long_context_the_throughput_speedup_tends_to_one_while_decode_stays(monkeypatch):
    """Llama-3.1-8B with an EAGLE head under the fitted engine, 2k to 128k tokens of prompt: the
    prefill takes a growing share of the wall time, so the gain in output throughput shrinks
    towards the prefill's ratio (about 1), bounded by ``(decode - 1)(1 - share)`` (the mediant
    of the two ratios, the prefill costing speculation at least as much), while the gain per
    output token does not shrink. With sixteen requests it is within 5% of even at 128k. At one
    request a prompt's prefill and its decode take turns (no other sequence decodes while vLLM
    prefills the prompt in chunks of its token budget), so there the gain shrinks only as fast
    as the prefill's share grows (bounds loose enough to hold across refits of the profile)."""
    context = np.array([2048, 8192, 32768, 65536, 128000])
    for concurrency in (1, 16):
        ev, t = _timed(monkeypatch, engine="vllm", target="llama-3.1-8b", drafter="eagle", concurrency=concurrency,
                       context=context)  # fmt: skip
        share = (t.spec_seconds - t.spec_decode_seconds) / t.spec_seconds
        assert np.all(np.diff(share) > 0) and share[-1] > 0.5, share
        gap, decode = np.abs(ev.throughput_speedup - 1), ev.decode_speedup
        assert np.all(np.diff(gap) < 0), gap
        assert np.all(gap <= (decode - 1) * (1 - share) * (1 + 1e-12)), (gap, decode, share)
        assert np.all(decode > 1.5) and np.all(np.diff(decode) > 0), decode
        assert np.all(decode >= ev.throughput_speedup)
        if concurrency == 16:
            assert gap[-1] < 0.05 and gap[-1] < gap[0] / 10, gap


def _long_context(row: Measurement, definition: str) -> Measurement:
    """``row`` at a long prompt, where the two definitions differ, under ``definition``."""
    return row.model_copy(update={"prompt_tokens": 60000, "speedup_definition": definition})


def test_predict_prices_each_row_under_its_own_definition():
    rows = load_measurements(MEASUREMENTS_FILE)
    assert {r.speedup_definition for r in rows} == set(SPEEDUP_DEFINITIONS)
    row = next(r for r in rows if r.per_position_acceptance is None and r.batch == 1)
    mixed = [_long_context(row, DECODE), _long_context(row, THROUGHPUT), _long_context(row, DECODE)]
    predicted = predict(mixed, "vllm")
    ev = evaluate(**mixed[0].scenario(), engine="vllm")
    assert predicted[0] == pytest.approx(float(ev.decode_speedup), rel=1e-12)
    assert predicted[1] == pytest.approx(float(ev.throughput_speedup), rel=1e-12)
    assert predicted[2] == predicted[0]
    assert predicted[0] > 1.2 * predicted[1]
    ideal = predict(mixed, "ideal")  # cohort: both definitions are the same number
    assert ideal[0] == ideal[1] == ideal[2]


def test_predict_on_the_file_reads_each_definition():
    rows = load_measurements(MEASUREMENTS_FILE)
    predicted = predict(rows, "vllm")
    for row, value in zip(rows, predicted, strict=True):
        ev = evaluate(**row.scenario(), engine="vllm")
        assert value == pytest.approx(float(getattr(ev, speedup_readout(row.speedup_definition))), rel=1e-9)


def test_an_unknown_definition_is_refused_naming_the_allowed_ones():
    row = load_measurements(MEASUREMENTS_FILE)[0]
    odd = row.model_copy(update={"speedup_definition": "tokens per second, mean of three runs"})
    with pytest.raises(SpecModelError) as caught:
        predict([row, odd], "vllm")
    message = str(caught.value)
    assert "tokens per second, mean of three runs" in message
    assert all(definition in message for definition in SPEEDUP_DEFINITIONS)
    with pytest.raises(ValueError, match="vanilla TPOT / speculative TPOT"):
        Measurement.model_validate({**row.model_dump(), "speedup_definition": "latency"})


def test_the_point_command_names_both(capsys):
    assert (
        main(["point", "--engine", "vllm", "--target", "llama-3.1-8b", "--drafter", "eagle", "--context", "100000"])
        == 0
    )
    table = capsys.readouterr().out
    assert "Speedup over plain decoding: decode (TPOT)" in table
    assert "Speedup over plain decoding: throughput" in table
    assert main(["point", "--json", "--engine", "vllm", "--context", "8192"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["speedup"] == data["throughput_speedup"] < data["decode_speedup"]
