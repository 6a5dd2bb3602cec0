"""``specmodel plan``: the benchmark commands, and their results read back as vLLM writes them."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from specmodel.server_runs import Deployment, load_runs, paired_measurements
from specmodel.vllm.deployment import load_bench_deployment
from tests.cli_runner import cli

BENCH = Path(__file__).parent / "data" / "bench"
MODEL = "meta-llama/Llama-3.1-8B-Instruct"
CONFIG = '{"method": "eagle3", "model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "num_speculative_tokens": 3}'
BASE = ("plan", "--target", MODEL, "--hardware", "h100-sxm", "--tensor-parallel", "2", "--speculative-config", CONFIG)


def _runs(tmp_path: Path, *extra: str) -> list[dict]:
    status, out, err = cli(*BASE, "--concurrency", "8,32", "--result-dir", str(tmp_path), "--json", *extra)
    assert status == 0, err
    return json.loads(out)


def test_commands_name_the_model_concurrencies_and_metadata(tmp_path: Path) -> None:
    runs = _runs(tmp_path)
    assert [(r["server"], r["max_concurrency"]) for r in runs] == [
        (server, c) for server in ("plain", "gamma-1", "gamma-2", "gamma-3") for c in (8, 32)
    ]
    for run in runs:
        serve, bench = shlex.split(run["serve_command"]), shlex.split(run["bench_command"])
        assert serve[:5] == ["vllm", "serve", MODEL, "--tensor-parallel-size", "2"]
        assert bench[bench.index("--model") + 1] == MODEL
        assert bench[bench.index("--max-concurrency") + 1] == str(run["max_concurrency"])
        assert "--save-result" in bench
        metadata = bench[bench.index("--metadata") + 1 :]
        assert {"tensor_parallel_size=2", "hardware=h100-sxm", f"model={MODEL}"} <= set(metadata)
        k = run["num_speculative_tokens"]
        assert (f"num_speculative_tokens={k}" in metadata) == (k is not None)
        assert ("--speculative-config" in serve) == (k is not None)
        assert Path(run["result_file"]).parent == tmp_path


def test_gammas_option_adds_the_deployed_one(tmp_path: Path) -> None:
    runs = _runs(tmp_path, "--gammas", "2,5")
    assert sorted({r["num_speculative_tokens"] or 0 for r in runs}) == [0, 2, 3, 5]


def test_text_output_lists_servers_and_the_readers(tmp_path: Path) -> None:
    status, out, _ = cli(*BASE, "--concurrency", "16", "--result-dir", str(tmp_path))
    assert status == 0
    assert out.count("vllm serve ") == 4 and out.count("vllm bench serve ") == 4
    assert "specmodel fit-engine" in out and "--bench" in out


def _written(run: dict, tmp_path: Path) -> Path:
    """The result vLLM would save for ``run``: its fields, and the --metadata pairs merged at
    the top level as strings (split at the first '=', stripped)."""
    name = "vllm-main-plain-c16.json" if run["num_speculative_tokens"] is None else "vllm-main-spec-c16.json"
    record = json.loads((BENCH / name).read_text())
    for key in ("gpu", "tp", "speculative_config"):
        record.pop(key, None)
    bench = shlex.split(run["bench_command"])
    record.update(model_id=MODEL, tokenizer_id=MODEL, max_concurrency=run["max_concurrency"])
    if run["num_speculative_tokens"] is not None:
        k = run["num_speculative_tokens"]
        record["spec_decode_per_position_acceptance_rates"] = [0.7, 0.45, 0.25][:k]
        record["spec_decode_acceptance_length"] = 1 + sum(record["spec_decode_per_position_acceptance_rates"])
        record["mean_tpot_ms"] = 8.93 / (1 + 0.2 * k)
    for item in bench[bench.index("--metadata") + 1 :]:
        key, value = item.split("=", 1)
        record[key.strip()] = value.strip()
    path = tmp_path / bench[bench.index("--result-filename") + 1]
    path.write_text(json.dumps(record))
    assert str(path) == run["result_file"]
    return path


def test_results_are_read_back_with_the_deployment(tmp_path: Path) -> None:
    paths = [_written(run, tmp_path) for run in _runs(tmp_path)]
    runs = load_runs(paths)
    assert sorted((r.max_concurrency, r.num_speculative_tokens) for r in runs if r.speculative) == [
        (c, k) for c in (8, 32) for k in (1, 2, 3)
    ]
    rows = paired_measurements(runs, Deployment(hardware="h100-sxm", tensor_parallel=2))
    assert {(r.target, r.method, r.batch, r.num_speculative_tokens) for r in rows} == {
        ("llama-3.1-8b", "eagle3", c, k) for c in (8, 32) for k in (1, 2, 3)
    }
    stated = load_bench_deployment(paths[-1])
    assert stated.tensor_parallel_size is not None and stated.tensor_parallel_size.value == 2
    assert stated.hardware is not None and stated.hardware.value == "h100-sxm"
    assert stated.model is not None and stated.model.value == MODEL
    assert stated.speculative_config is not None and stated.speculative_config.value["num_speculative_tokens"] == 3


def test_bad_input_is_one_line(tmp_path: Path) -> None:
    bad = [
        (*BASE, "--concurrency", "8,,32"),
        (*BASE, "--concurrency", "0"),
        (*BASE, "--concurrency", "8", "--gammas", "99"),
        ("plan", "--target", "llama-3.1-8b", "--hardware", "h100-sxm", "--drafter", "ngram", "--concurrency", "8"),
        ("plan", "--target", MODEL, "--hardware", "no-such-card", "--drafter", "ngram", "--concurrency", "8"),
        ("plan", "--target", MODEL, "--hardware", "h100-sxm", "--drafter", "eagle3", "--concurrency", "8"),
        ("plan", "--target", MODEL, "--hardware", "h100-sxm", "--drafter", "ngram", "--concurrency", "8"),
        (*BASE,),
    ]
    for argv in bad:
        status, out, err = cli(*argv, "--result-dir", str(tmp_path))
        assert status == 2 and out == "", argv
        assert err.count("\n") <= 1, (argv, err)  # argparse's usage errors go to the process's stderr
        assert not err or err.startswith("specmodel: error:"), (argv, err)
