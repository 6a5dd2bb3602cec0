"""``advise``'s gamma schedule by batch size and the output tokens per second of the load the
server saw (specmodel.vllm.load, specmodel.schedule)."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from specmodel.cli import main
from specmodel.errors import SpecModelError
from specmodel.model.settings import Settings
from specmodel.schedule import GammaRange, check_vllm_schedule, vllm_speculative_config
from specmodel.vllm import load as load_module
from specmodel.vllm.advise import advise, predictions
from specmodel.vllm.speculative_config import served_drafter

DATA = Path(__file__).parent / "data" / "vllm-deployments"
LOG = DATA / "llama-3-70b-eagle-tp4.log"
#: A Prometheus range export (the JSON answer of /api/v1/query_range, resultType "matrix" of
#: [unix time, "value"] pairs: https://prometheus.io/docs/prometheus/latest/querying/api/#range-queries)
#: of vllm:num_requests_running, one sample every 15 s: 0, 8, 8, 16, 16, 16, 32, 32, 64, NaN.
RANGE = DATA / "llama-3-70b-running-range.json"
ADVISE = ["advise", "--log", str(LOG), "--hardware", "h100-sxm"]
PER_POSITION = [0.791, 0.579, 0.42, 0.286, 0.186]


@pytest.fixture(autouse=True)
def stand_in_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    """``specmodel.uncertainty.speedup_interval`` stood in for: 10% either side of the speedup."""

    def speedup_interval(settings, engine, drafter, concurrency, speedup, level=0.8):  # type: ignore[no-untyped-def]
        s = np.asarray(speedup, dtype=float)
        return s * 0.9, s * 1.1

    module = types.ModuleType("specmodel.uncertainty")
    module.speedup_interval = speedup_interval  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "specmodel.uncertainty", module)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_schedule_is_the_argmax_of_the_model_in_each_range() -> None:
    settings = Settings()
    served = served_drafter("eagle", "llama-3-70b")
    a = advise(PER_POSITION, 28, 2048, served, "h100-sxm", "llama-3-70b", settings, tensor_parallel=4, observed=True)
    result = load_module.load_advice(a, settings, load_module.load_of_samples([16, 24, 28], "log"), None)
    s = result.schedule
    batch = s.batch_sizes
    evs = predictions(PER_POSITION, batch, 2048, "eagle", "h100-sxm", "llama-3-70b", settings, "vllm",
                      {"tensor_parallel": 4})  # fmt: skip
    speedup = np.stack([np.broadcast_to(e.speedup, batch.shape) for e in evs], axis=-1)
    for r in s.ranges:
        rows = (batch >= r.low) & (batch <= r.high)
        best = np.argmax(speedup[rows], axis=-1) + 1
        top = speedup[rows].max(axis=-1)
        if r.gamma == 0:
            assert np.all(np.round(top, 2) <= 1.03) or not np.all(s.fits[rows])
        else:
            assert np.all(best == r.gamma) and np.all(np.round(top, 2) > 1.03)
    assert {r.gamma for r in s.ranges} <= set(range(len(PER_POSITION) + 1))
    assert s.ranges[0].low == 1 and all(a.high + 1 == b.low for a, b in zip(s.ranges, s.ranges[1:]))


# vLLM's rules for num_speculative_tokens_per_batch_size: validate_and_normalize_dynamic_sd_schedule
# in vllm/v1/spec_decode/dynamic/utils.py (vllm-project/vllm): entries [start, end, K] of whole
# numbers, start and end positive, start <= end, K >= 0, ranges sorted and non-overlapping, the first
# starting at 1; vllm/config/speculative.py: num_speculative_tokens > 0, the field a
# list[tuple[int, int, int]]; docs/features/speculative_decoding/dynamic_speculative_decoding.md:
# every K at most num_speculative_tokens.
VLLM_RULE_BREAKERS = [
    ({"num_speculative_tokens": 0, "num_speculative_tokens_per_batch_size": [[1, 8, 0]]}, "above 0"),
    ({"num_speculative_tokens": 3, "num_speculative_tokens_per_batch_size": []}, "non-empty"),
    ({"num_speculative_tokens": 3, "num_speculative_tokens_per_batch_size": {"1-8": 3}}, "non-empty list"),
    ({"num_speculative_tokens": 3, "num_speculative_tokens_per_batch_size": [[1, 8]]}, "three whole"),
    ({"num_speculative_tokens": 3, "num_speculative_tokens_per_batch_size": [[1, 8.5, 3]]}, "three whole"),
    ({"num_speculative_tokens": 3, "num_speculative_tokens_per_batch_size": [[0, 8, 3]]}, "positive"),
    ({"num_speculative_tokens": 3, "num_speculative_tokens_per_batch_size": [[9, 8, 3]]}, "start <= end"),
    ({"num_speculative_tokens": 3, "num_speculative_tokens_per_batch_size": [[1, 8, -1]]}, "outside 0"),
    ({"num_speculative_tokens": 3, "num_speculative_tokens_per_batch_size": [[1, 8, 4]]}, "outside 0"),
    ({"num_speculative_tokens": 3, "num_speculative_tokens_per_batch_size": [[2, 8, 3]]}, "start at batch size 1"),
    ({"num_speculative_tokens": 3, "num_speculative_tokens_per_batch_size": [[1, 8, 3], [8, 16, 2]]}, "overlaps"),
    ({"num_speculative_tokens": 3, "num_speculative_tokens_per_batch_size": [[9, 16, 2], [1, 8, 3]]}, "start at"),
]


@pytest.mark.parametrize(("config", "reason"), VLLM_RULE_BREAKERS)
def test_vllm_rules_refuse(config: dict, reason: str) -> None:
    with pytest.raises(SpecModelError, match=reason):
        check_vllm_schedule(config)


def test_vllm_rules_accept_gaps_and_the_written_schedule() -> None:
    check_vllm_schedule(
        {"num_speculative_tokens": 3, "num_speculative_tokens_per_batch_size": [[1, 8, 3], [32, 64, 0]]}
    )
    config = vllm_speculative_config((GammaRange(1, 4, 3), GammaRange(5, 9, 1), GammaRange(10, 20, 0)))
    assert config == {"num_speculative_tokens": 3, "num_speculative_tokens_per_batch_size": [[1, 4, 3], [5, 9, 1],
                                                                                              [10, 20, 0]]}  # fmt: skip
    assert vllm_speculative_config((GammaRange(1, 20, 0),))["num_speculative_tokens"] == 1


def test_log_running_lines_text_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, text, _ = run(capsys, *ADVISE)
    assert code == 0
    assert "Gamma by batch size" in text and "num_speculative_tokens_per_batch_size" in text
    assert "SGLang has no per-batch-size setting" in text
    assert "16 (20%), 24 (20%), 28 (20%), 30 (20%), 32 (20%)" in text
    for label in ("no speculation", "deployed gamma", "best fixed gamma", "schedule by batch size"):
        assert label in text
    assert "drafting 0 tokens" in text
    code, out, _ = run(capsys, *ADVISE, "--json")
    data = json.loads(out)
    config = json.loads(data["schedule"]["speculative_config"])
    assert config["method"] == "eagle"
    check_vllm_schedule(config)
    assert data["sglang_schedule"]["available"] is False
    assert data["load"]["concurrency"] == [16, 24, 28, 30, 32]
    tokens = data["load_tokens_per_s"]
    assert set(tokens) == {"off", "deployed", "best_fixed", "schedule"}
    for t in tokens.values():
        assert t["low"] <= t["value"] <= t["high"]
    assert tokens["off"]["low"] == tokens["off"]["value"] == tokens["off"]["high"]
    assert tokens["deployed"]["gamma"] == 5
    assert tokens["schedule"]["value"] >= tokens["best_fixed"]["value"] - 1e-6
    assert tokens["best_fixed"]["value"] >= tokens["deployed"]["value"] - 1e-6


def test_load_from_a_range_export(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, *ADVISE, "--load", str(RANGE), "--json")
    assert code == 0
    data = json.loads(out)
    assert data["load"]["concurrency"] == [8, 16, 32, 64]
    assert data["load"]["share"] == pytest.approx([0.25, 0.375, 0.25, 0.125])
    assert data["load"]["samples"] == 8


def test_weighted_concurrency_and_a_plain_one(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, *ADVISE, "--concurrency", "8:0.5,32:0.3,128:0.2", "--override", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["load"]["concurrency"] == [8, 32, 128]
    assert data["load"]["share"] == pytest.approx([0.5, 0.3, 0.2])
    assert data["concurrency"] == 8
    code, out, _ = run(capsys, *ADVISE, "--concurrency", "24", "--json")
    assert code == 0 and json.loads(out)["concurrency"] == 24


@pytest.mark.parametrize(
    "extra",
    [
        ["--concurrency", "8:x"],
        ["--concurrency", "8:0.5,0:0.5"],
        ["--concurrency", "8:-1"],
        ["--concurrency", "8:0.5", "--load", str(RANGE)],
        ["--load", str(LOG)],
        ["--load", "no-such-file.json"],
    ],
)
def test_bad_load_is_one_line_exit_2(capsys: pytest.CaptureFixture[str], extra: list[str]) -> None:
    code, out, err = run(capsys, *ADVISE, *extra)
    assert code == 2 and out == ""
    assert err.startswith("specmodel: error: ") and err.count("\n") == 1


def test_range_export_shapes() -> None:
    with pytest.raises(SpecModelError, match="status success"):
        load_module.range_export_samples({"status": "error"}, "x")
    with pytest.raises(SpecModelError, match="matrix"):
        load_module.range_export_samples({"status": "success", "data": {"resultType": "vector", "result": []}}, "x")
    two = {"status": "success", "data": {"resultType": "matrix", "result": [
        {"metric": {"engine": "0"}, "values": [[1, "3"], [2, "4"]]},
        {"metric": {"engine": "1"}, "values": [[1, "5"], [2, "NaN"]]},
    ]}}  # fmt: skip
    assert load_module.range_export_samples(two, "x").tolist() == [8.0, 4.0]
