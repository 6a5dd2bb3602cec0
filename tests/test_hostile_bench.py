"""Serving-benchmark results as ``vllm bench serve`` really writes them, and hostile ones.

:func:`vllm_result` builds a result exactly as ``vllm/benchmarks/serve.py`` writes it with
``--save-result --save-detailed`` (the keys in its order, Python's types, ``json.dump``'s
number formats; per-request lists of 256 to 512 requests with their inter-token latencies and
generated texts): such a result holds far more values than a configuration may, and is read by
``advise --bench`` and ``fit-engine``, as one file (``--append-result``), as two, or as a
folder of them. Each hostile field is one line naming the file and the field, exit status 2.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from specmodel.errors import SpecModelError
from specmodel.server_runs import load_runs
from specmodel.structured_input import MAX_ITEMS, check_shape
from specmodel.vllm.deployment import load_bench_deployment
from tests.cli_runner import cli

MODEL = "meta-llama/Llama-3.1-8B-Instruct"
EAGLE3 = {"method": "eagle3", "model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "num_speculative_tokens": 3}
#: The acceptance of the speculative run, per position (vLLM's ``spec_decode_per_position_acceptance_rates``).
ACCEPTANCE = (0.71, 0.44, 0.26)
#: Texts a completion may hold that JSON escapes, or that look like JSON's non-numbers.
TEXTS = (
    ' The values were [1.5, NaN, Infinity], and {"a": -Infinity} came next.',
    ' naïve café – 東京 "quoted"\n\ttabbed\\path',
    " def f(x):\n    return float('nan') if x else float('inf')",
)
WORDS = ("the", "of", "model", "token", "server", "batch", "draft", "accept", "verify", "decode", "prefill", "cache")


# --- a result as vLLM writes it -----------------------------------------------------------


def _steps(rng: np.random.Generator, output_len: int, acceptance: tuple[float, ...] | None) -> list[int]:
    """Tokens per engine step after the first token: 1 without speculation; with it, 1 + the
    drafted tokens accepted in a row (position j accepted with probability u_j / u_{j-1})."""
    if acceptance is None:
        return [1] * (output_len - 1)
    steps, left = [], output_len - 1
    conditional = [u / (acceptance[j - 1] if j else 1.0) for j, u in enumerate(acceptance)]
    while left > 0:
        accepted = 0
        while accepted < len(conditional) and rng.random() < conditional[accepted]:
            accepted += 1
        steps.append(min(left, accepted + 1))
        left -= steps[-1]
    return steps


def _text(rng: np.random.Generator, i: int) -> str:
    words = " ".join(rng.choice(WORDS, 300))
    return words + TEXTS[i % len(TEXTS)] if i % 8 == 0 else " " + words


def _stats(name: str, values: list[float]) -> dict[str, float]:
    """``process_one_metric``: mean, median, std and the 99th percentile, milliseconds."""
    x = np.asarray(values or [0.0])
    stats = {"mean": np.mean(x), "median": np.median(x), "std": np.std(x), "p99": np.percentile(x, 99)}
    return {f"{stat}_{name}_ms": float(value) * 1000 for stat, value in stats.items()}


def _peaks(starts: np.ndarray, ttfts: np.ndarray, itls: list[list[float]], latencies: np.ndarray) -> tuple[float, int]:
    """``calculate_metrics``: the most output tokens in one second, and the most requests at once."""
    t0 = starts.min()
    times = np.concatenate([s + t + np.concatenate([[0.0], np.cumsum(i)]) for s, t, i in zip(starts, ttfts, itls)])
    buckets = np.bincount((times - t0).astype(int))
    events = sorted([(s, 1) for s in starts] + [(s + lat, -1) for s, lat in zip(starts, latencies)])
    return float(buckets.max()), int(max(np.cumsum([d for _, d in events])))


def _per_request(rng: np.random.Generator, requests: int, output_len: int, tpot_ms: float, spec: bool) -> dict:
    """The per-request lists of ``benchmark()`` (seconds), and the speculative steps taken."""
    acceptance = ACCEPTANCE if spec else None
    steps = [_steps(rng, output_len, acceptance) for _ in range(requests)]
    ttfts = rng.normal(0.05, 0.008, requests).clip(0.02)
    itls = [list(rng.normal(tpot_ms / 1000 * sum(s) / len(s), 2e-4, len(s)).clip(1e-4)) for s in steps]
    latencies = ttfts + np.array([sum(i) for i in itls])
    starts = 81234.5 + np.arange(requests) * 4e-4
    return {"steps": steps, "ttfts": ttfts, "itls": itls, "latencies": latencies, "starts": starts}


def _spec_decode(steps: list[list[int]], k: int) -> dict[str, Any]:
    """The ``spec_decode_*`` fields from the steps: one draft of k tokens each, its accepted ones."""
    accepted = [s - 1 for request in steps for s in request]
    drafts, taken = len(accepted), sum(accepted)
    per_position = [sum(a > j for a in accepted) / drafts for j in range(k)]
    return {
        "spec_decode_acceptance_rate": taken / (k * drafts) * 100, "spec_decode_acceptance_length": 1 + taken / drafts,
        "spec_decode_num_drafts": drafts, "spec_decode_draft_tokens": k * drafts, "spec_decode_accepted_tokens": taken,
        "spec_decode_per_position_acceptance_rates": per_position,
    }  # fmt: skip


def vllm_result(spec: bool, requests: int = 256, output_len: int = 512, seed: int = 0, **metadata: Any) -> dict:
    """A ``vllm bench serve --save-result --save-detailed --max-concurrency 16 --dataset-name random
    --random-input-len 1024 --random-output-len OUTPUT_LEN --num-prompts REQUESTS`` result of
    Llama-3.1-8B on one H100, plain or with EAGLE-3 (k = 3), as ``vllm/benchmarks/serve.py``
    (``main_async`` and ``benchmark``) builds it: the settings, ``--metadata`` pairs as strings,
    the totals, the per-request lists, the peaks, ``spec_decode_*`` (with speculation) and the
    TTFT, TPOT and ITL statistics (``--percentile-metrics`` default ttft,tpot,itl; p99)."""
    rng = np.random.default_rng(seed + spec)
    r = _per_request(rng, requests, output_len, 5.12 if spec else 8.93, spec)
    duration = float((r["starts"] + r["latencies"]).max() - r["starts"].min() + 0.01)
    tpots = [float(sum(i)) / (output_len - 1) for i in r["itls"]]
    peak_tokens, peak_requests = _peaks(r["starts"], r["ttfts"], r["itls"], r["latencies"])
    extra = {"gpu": "H100-SXM-80GB", "tp": "1"} | ({"speculative_config": json.dumps(EAGLE3)} if spec else {})
    return {
        "date": "20261125-092240", "endpoint_type": "openai", "backend": "openai", "label": None, "model_id": MODEL,
        "tokenizer_id": MODEL, "num_prompts": requests, **extra, **metadata, "request_rate": "inf",
        "burstiness": 1.0, "max_concurrency": 16, "duration": duration, "completed": requests, "failed": 0,
        "total_input_tokens": 1024 * requests, "total_output_tokens": output_len * requests,
        "request_throughput": requests / duration, "request_goodput": None,
        "output_throughput": output_len * requests / duration, "total_token_throughput": 1536 * requests / duration,
        "input_lens": [1024] * requests, "output_lens": [output_len] * requests,
        "ttfts": [float(t) for t in r["ttfts"]], "itls": [[float(x) for x in i] for i in r["itls"]],
        "latencies": [float(x) for x in r["latencies"]], "start_times": [float(x) for x in r["starts"]],
        "queue_times": [float(x) for x in rng.uniform(0, 0.002, requests)],
        "generated_texts": [_text(rng, i) for i in range(requests)], "errors": [""] * requests,
        "max_output_tokens_per_s": peak_tokens, "max_concurrent_requests": peak_requests, "rtfx": 0.0,
        **(_spec_decode(r["steps"], 3) if spec else {}),
        **_stats("ttft", list(r["ttfts"])), **_stats("tpot", tpots), **_stats("itl", sum(r["itls"], [])),
    }  # fmt: skip


def write(path: Path, *results: dict) -> Path:
    """``results`` written as ``vllm bench serve`` writes them: ``json.dump`` (NaN and Infinity as
    Python writes them), one per line as ``--append-result`` appends them (a newline between)."""
    with path.open("w", encoding="utf-8") as out:
        for i, result in enumerate(results):
            out.write("\n" if i else "")
            json.dump(result, out)
    return path


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The plain and speculative results, and the files and folders they are written to."""
    folder = tmp_path_factory.mktemp("bench")
    plain, spec = vllm_result(False), vllm_result(True)
    results = folder / "results"
    results.mkdir()
    names = ("openai-infqps-concurrency16-Llama-3.1-8B-Instruct-20261125-0904", "openai-infqps-concurrency16-"
             "Llama-3.1-8B-Instruct-20261125-0922")  # fmt: skip
    write(results / f"{names[0]}.json", plain)
    write(results / f"{names[1]}.json", spec)
    (results / f"{names[1]}.pytorch.json").write_text("[]")  # beside a result under SAVE_TO_PYTORCH_BENCHMARK_FORMAT
    (results / f"{names[1]}.timeline.html").write_text("<html></html>")  # --plot-timeline
    return {"plain": plain, "spec": spec, "appended": write(folder / "appended.json", plain, spec),
            "folder": results, "files": sorted(results.glob("*[0-9].json"))}  # fmt: skip


def _values(data: Any) -> int:
    """Values in parsed JSON, counted as :func:`specmodel.structured_input.check_shape` counts them."""
    if isinstance(data, dict):
        return 1 + sum(1 + _values(v) for v in data.values())
    return 1 + sum(map(_values, data)) if isinstance(data, list) else 1


def refused(status: int, err: str, *needles: str) -> None:
    """Exit 2 and one line on stderr, no traceback, naming each needle."""
    assert status == 2, (status, err[-500:])
    assert err.count("\n") == 1 and err.startswith("specmodel: error: ") and "Traceback" not in err, err[-500:]
    for needle in needles:
        assert needle in err, (needle, err)


# --- real results are read ------------------------------------------------------------------


def test_a_detailed_result_holds_more_values_than_a_configuration_and_is_read(runs):
    spec = runs["spec"]
    assert len(spec["itls"]) == 256 and 100 < len(spec["itls"][0]) < 511 and len(runs["plain"]["itls"][0]) == 511
    assert _values(runs["plain"]) > MAX_ITEMS
    with pytest.raises(SpecModelError, match="a configuration has far fewer"):
        check_shape(runs["plain"], "a configuration")
    assert '[1.5, NaN, Infinity], and {\\"a\\": -Infinity}' in runs["appended"].read_text()
    plain_run, spec_run = load_runs([runs["appended"]])
    assert plain_run.mean_tpot_s == pytest.approx(runs["plain"]["mean_tpot_ms"] / 1000, rel=1e-12)
    assert spec_run.mean_tpot_s == pytest.approx(spec["mean_tpot_ms"] / 1000, rel=1e-12)
    assert spec_run.per_position_acceptance == tuple(spec["spec_decode_per_position_acceptance_rates"])
    assert spec_run.num_speculative_tokens == 3 and spec_run.method == "eagle3" and not plain_run.speculative
    assert (spec_run.mean_prompt_tokens, spec_run.mean_output_tokens, spec_run.max_concurrency) == (1024, 512, 16)
    stated = load_bench_deployment(runs["folder"])
    assert stated.speculative_config is not None and stated.speculative_config.value["num_speculative_tokens"] == 3
    assert stated.running is not None and stated.running.value == (16.0, 16.0)


@pytest.mark.parametrize("given", ["appended", "files", "folder"])
def test_advise_bench_reads_real_results(runs, given):
    paths = runs[given] if given == "files" else [runs[given]]
    status, out, err = cli("advise", "--bench", *map(str, paths), "--hardware", "h100-sxm", "--json")
    assert status == 0, err
    (row,) = json.loads(out)["bench"]
    assert row["concurrency"] == 16 and row["gamma"] == 3
    assert row["measured_speedup"] == pytest.approx(runs["plain"]["mean_tpot_ms"] / runs["spec"]["mean_tpot_ms"])


@pytest.mark.parametrize("given", ["appended", "folder"])
def test_fit_engine_reads_real_results(runs, given, tmp_path):
    out = tmp_path / "mine.toml"
    status, text, err = cli("fit-engine", str(runs[given]), "--hardware", "h100-sxm", "--out", str(out))
    assert status == 0, err
    assert out.is_file() and f"wrote {out}" in text
    names = [p.name for p in runs["files"]] if given == "folder" else ["appended.json"]
    assert all(name in out.read_text() for name in names)


def test_a_folder_without_results_is_one_line(tmp_path):
    (tmp_path / "notes.txt").write_text("plain and eagle3 runs")
    refused(*cli("advise", "--bench", str(tmp_path), "--hardware", "h100-sxm")[::2], "holds no result file")
    status, _, err = cli("fit-engine", str(tmp_path), "--hardware", "h100-sxm", "--out", str(tmp_path / "o.toml"))
    refused(status, err, "holds no result file", tmp_path.name)
    assert not (tmp_path / "o.toml").exists()


def test_infinity_where_vllm_writes_it_is_read(runs, tmp_path):
    """``--burstiness inf`` is written ``Infinity``; a field not read may hold it."""
    plain = write(tmp_path / "plain.json", {**runs["plain"], "burstiness": math.inf, "p99_itl_ms": math.nan})
    status, _, err = cli("advise", "--bench", str(plain), str(runs["files"][1]), "--hardware", "h100-sxm")
    assert status == 0, err


def test_a_tpot_of_zero_is_not_measured(runs, tmp_path):
    """vLLM writes ``mean_tpot_ms`` 0 when no request gave a second token (``np.mean([] or 0)``)."""
    plain = write(tmp_path / "plain.json", {**runs["plain"], "mean_tpot_ms": 0.0})
    status, _, err = cli("fit-engine", str(plain), str(runs["files"][1]), "--hardware", "h100-sxm",
                         "--out", str(tmp_path / "o.toml"))  # fmt: skip
    refused(status, err, "plain.json", "no mean_tpot_ms", "0: no request gave more than one output token")


# --- hostile results are one line -------------------------------------------------------------

DEEP = "[" * 5000 + "]" * 5000
#: name: (a change to the speculative result, or a text substitution in its JSON; what the line names).
HOSTILE: dict[str, tuple[Any, tuple[str, ...]]] = {
    "nested speculative_config": ({"speculative_config": DEEP}, ("speculative_config", "nests deeper than 32")),
    "nested speculative_config object": (
        {"speculative_config": json.dumps({"method": [[[[["eagle3"]]]]]})},
        ("speculative_config: method",),
    ),
    "long speculative_config": ({"speculative_config": " " * 70_000 + "{}"}, ("speculative_config", "65,536")),
    "nested result": ({"rps_change_events": json.loads("[" * 40 + "]" * 40)}, ("nests deeper than 16 levels",)),
    "completed as a string": ({"completed": "256"}, ("completed is '256'", "JSON integer")),
    "completed as a list": ({"completed": [256]}, ("completed is [256]", "JSON integer")),
    "drafts as a string": ({"spec_decode_num_drafts": "54387"}, ("spec_decode_num_drafts", "JSON integer")),
    "k as a list": ({"speculative_config": '{"num_speculative_tokens": [3]}'}, ("num_speculative_tokens is [3]",)),
    "k in words": ({"num_spec_tokens": "three"}, ("num_spec_tokens is 'three'", "1 to 32")),
    "completed 1e400": (('"completed": 256', '"completed": 1e400'), ("completed is Infinity", "JSON integer")),
    "a 400-digit count": (
        ('"total_output_tokens": 131072', '"total_output_tokens": 1' + "0" * 400),
        ("total_output_tokens is Infinity",),
    ),  # fmt: skip
    "a count past 10^15": ({"total_input_tokens": 10**17}, ("total_input_tokens is 100000000000000000", "10^15")),
    "tokens per request": ({"total_output_tokens": 10**13}, ("total_output_tokens", "tokens per request")),
    "mean_tpot_ms 1e200": ({"mean_tpot_ms": 1e200}, ("mean_tpot_ms is 1e+200", "(an hour)")),
    "mean_tpot_ms below a microsecond": ({"mean_tpot_ms": 1e-9}, ("mean_tpot_ms is 1e-09", "(a microsecond)")),
    "negative completed": ({"completed": -256}, ("completed is -256", "from 0")),
    "NaN TPOT": ({"mean_tpot_ms": math.nan}, ("mean_tpot_ms is NaN", "finite")),
    "Infinity throughput": ({"output_throughput": math.inf}, ("output_throughput is Infinity", "finite")),
    "NaN acceptance": (
        {"spec_decode_per_position_acceptance_rates": [0.7, math.nan, 0.2]},
        ("spec_decode_per_position_acceptance_rates[1] is NaN",),
    ),  # fmt: skip
    "NaN acceptance length": ({"spec_decode_acceptance_length": math.nan}, ("spec_decode_acceptance_length is NaN",)),
    "drafts past k": (
        {"spec_decode_per_position_acceptance_rates": [], "spec_decode_draft_tokens": 10**12},
        ("spec_decode_draft_tokens", "tokens per draft"),
    ),  # fmt: skip
    "model_id a number": ({"model_id": 8}, ("model_id is 8",)),
    "acceptance length past k + 1": ({"spec_decode_acceptance_length": 30.0}, ("spec_decode_acceptance_length 30",)),
}


def _hostile(runs: dict[str, Any], tmp_path: Path, case: str) -> Path:
    change, _ = HOSTILE[case]
    path = tmp_path / "hostile-run.json"
    if isinstance(change, dict):
        return write(path, {**runs["spec"], **change})
    path.write_text(json.dumps(runs["spec"]).replace(*change))
    assert change[1] in path.read_text()
    return path


@pytest.mark.parametrize("case", list(HOSTILE))
def test_a_hostile_result_is_one_line_naming_the_field(runs, tmp_path, case):
    bad = _hostile(runs, tmp_path, case)
    plain = str(runs["files"][0])
    needles = (bad.name, *HOSTILE[case][1])
    refused(*cli("advise", "--bench", plain, str(bad), "--hardware", "h100-sxm")[::2], *needles)
    out = tmp_path / "o.toml"
    refused(*cli("fit-engine", plain, str(bad), "--hardware", "h100-sxm", "--out", str(out))[::2], *needles)
    assert not out.exists()


def test_metadata_of_infinity_is_one_line(runs, tmp_path):
    """The deployment a result's ``--metadata`` states (read by ``advise``, not by ``fit-engine``)."""
    bad = write(tmp_path / "hostile-run.json", {**runs["spec"], "gpu_memory_utilization": "inf"})
    status, _, err = cli("advise", "--bench", str(runs["files"][0]), str(bad), "--hardware", "h100-sxm")
    refused(status, err, bad.name, "metadata gpu_memory_utilization='inf' is not a positive finite number")


def test_an_sglang_line_is_checked_as_a_vllm_result(tmp_path):
    """SGLang's ``bench_serving`` lines share the checks: a count as a string is one line."""
    sglang = Path(__file__).parent / "data" / "bench" / "sglang-0.5.jsonl"
    lines = sglang.read_text().splitlines()
    record = json.loads(lines[1])  # its request_rate is Infinity, as SGLang writes it
    record["server_info"]["speculative_num_steps"] = "3"
    bad = tmp_path / "sglang.jsonl"
    bad.write_text(lines[0] + "\n" + json.dumps(record) + "\n")
    status, _, err = cli("fit-engine", str(bad), "--hardware", "h100-sxm", "--out", str(tmp_path / "o.toml"))
    refused(status, err, "sglang.jsonl' line 2", "server_info.speculative_num_steps is '3'", "0 to 32")
