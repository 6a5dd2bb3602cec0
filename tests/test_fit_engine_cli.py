"""``specmodel fit-engine`` and the benchmark-result readers."""

from __future__ import annotations

import json
import math
import os
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from specmodel.cli import main
from specmodel.engine_fit import Timing, fit_runs
from specmodel.measurements import Measurement, predict
from specmodel.model.engines import engine_catalog
from specmodel.model.evaluate import evaluate
from specmodel.model.profile_file import load_profile
from specmodel.model.scenario import Scenario
from specmodel.model.settings import Settings
from specmodel.server_runs import Deployment, load_runs, paired_measurements
from tests.cli_runner import cli

BENCH = Path(__file__).parent / "data" / "bench"
FIXTURES = sorted(p for p in BENCH.iterdir() if p.suffix in (".json", ".jsonl"))


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_every_fixture_parses(path: Path) -> None:
    runs = load_runs([path])
    assert runs
    for run in runs:
        assert run.engine in ("vllm", "sglang")
        assert run.mean_tpot_s is not None and 0 < run.mean_tpot_s < 1
        assert run.output_throughput and run.mean_output_tokens and run.mean_output_tokens > 1
        if "REAL" not in path.name:
            assert run.max_concurrency == 16
            assert run.speculative == ("spec" in path.name or run.line == 2)


def test_acceptance_and_k_are_read() -> None:
    spec = load_runs([BENCH / "vllm-main-spec-c16.json"])[0]
    assert spec.num_speculative_tokens == 3 and spec.per_position_acceptance is not None
    assert spec.mean_acceptance_length == pytest.approx(2.41, abs=0.01)
    sglang = load_runs([BENCH / "sglang-0.5.jsonl"])[1]
    assert (sglang.method, sglang.num_speculative_tokens, sglang.mean_acceptance_length) == ("eagle3", 3, 2.4468)


def test_pairing_gives_the_tpot_ratio() -> None:
    runs = load_runs([BENCH / "vllm-main-plain-c16.json", BENCH / "vllm-main-spec-c16.json"])
    (row,) = paired_measurements(runs, Deployment(hardware="h100-sxm"))
    assert row.target == "llama-3.1-8b" and row.method == "eagle3" and row.batch == 16
    assert row.measured_speedup == pytest.approx(8.93 / 5.12)


def _bad(tmp_path: Path, name: str, record: dict[str, object]) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(record))
    return path


@pytest.mark.parametrize("case", ["not-a-result", "no-concurrency", "no-acceptance", "two-models", "plain-disagree"])
def test_bad_input_is_one_line_exit_2(case: str, tmp_path: Path) -> None:
    plain = json.loads((BENCH / "vllm-main-plain-c16.json").read_text())
    files = {
        "not-a-result": [_bad(tmp_path, "x.json", {"hello": 1})],
        "no-concurrency": [_bad(tmp_path, "p.json", {**plain, "max_concurrency": None})],
        "no-acceptance": [BENCH / "vllm-0.12-plain-c16.json", BENCH / "vllm-0.12-spec-c16.json"],
        "two-models": [
            BENCH / "vllm-main-plain-c16.json",
            _bad(tmp_path, "q.json", {**plain, "model_id": "Qwen/Qwen3-8B"}),
        ],
        "plain-disagree": [
            BENCH / "vllm-main-plain-c16.json",
            _bad(tmp_path, "r.json", {**plain, "mean_tpot_ms": 12.0}),
        ],
    }[case]
    code, _, err = cli("fit-engine", *map(str, files), "--hardware", "h100-sxm", "--out", str(tmp_path / "o.toml"))
    assert code == 2 and err.count("\n") == 1 and err.startswith("specmodel: error:")
    assert any(f.name in err for f in files) or case == "two-models" and "Qwen" in err
    assert not (tmp_path / "o.toml").exists()


def test_fit_engine_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "mine.toml"
    files = [BENCH / "sglang-0.5.jsonl"]
    code, _, err = cli("fit-engine", *map(str, files), "--hardware", "h100-sxm", "--out", str(out), "--name", "lab")
    assert code == 0, err
    assert "sequence_pass_s kept at the public value" in err and "one concurrency" in err
    profile = load_profile(out)
    assert profile.key == "lab" and profile.fit is not None
    assert profile.fit.inputs[0][0] == "sglang-0.5.jsonl" and len(profile.fit.inputs[0][1]) == 64
    assert "target_pass_s" in profile.fit.fitted and "overlap" not in profile.fit.fitted
    domain = profile.domain
    assert domain is not None and domain.targets == ("llama-3.1-8b",) and domain.hardware == ("h100-sxm",)
    assert domain.drafters == ("eagle3",)
    assert (domain.tensor_parallel, domain.concurrency, domain.engine_versions) == ((1,), (16, 16), ("sglang 0.5.6",))
    assert [p.name for p in tmp_path.iterdir()] == ["mine.toml"]  # no temporary left
    settings = Settings().with_engine(profile)
    scenario = {"concurrency": 16, "context": 1024, "generated_tokens": 512, "target": "llama-3.1-8b",
                "hardware": "h100-sxm", "drafter": "eagle3", "mean_acceptance_length": 2.4468, "gamma": 3}  # fmt: skip
    ev = evaluate(**scenario, engine="lab", settings=settings)  # type: ignore[arg-type]
    assert float(ev.decode_speedup) == pytest.approx(8.71 / 5.08, rel=0.03)


def test_a_run_without_acceptance_takes_the_one_given(tmp_path: Path) -> None:
    """vLLM 0.12's bench serve JSON has no spec_decode_* fields: the error names the option,
    and with it the same two files fit; a length outside (1, k + 1] is one line, exit 2."""
    files = [str(BENCH / "vllm-0.12-plain-c16.json"), str(BENCH / "vllm-0.12-spec-c16.json")]
    argv = ["fit-engine", *files, "--hardware", "h100-sxm", "--out", str(tmp_path / "o.toml")]
    code, _, err = cli(*argv)
    assert code == 2 and "--mean-acceptance-length" in err
    for bad in ("1", "9"):
        code, _, err = cli(*argv, "--mean-acceptance-length", bad)
        assert code == 2 and err.count("\n") == 1 and "at most 4" in err, err
    assert not (tmp_path / "o.toml").exists()
    code, _, err = cli(*argv, "--mean-acceptance-length", "2.3")
    assert code == 0, err
    profile = load_profile(tmp_path / "o.toml")
    assert profile.fit is not None
    assert profile.domain is not None and profile.domain.engine_versions == ("vllm (version unstated)",)


@pytest.mark.parametrize("kind", ["symlink", "fifo", "folder"])
def test_out_special_refused(kind: str, tmp_path: Path) -> None:
    out = tmp_path / "o.toml"
    if kind == "symlink":
        (tmp_path / "t").write_text("keep")
        out.symlink_to(tmp_path / "t")
    elif kind == "fifo":
        os.mkfifo(out)
    else:
        out.mkdir()
    code, _, err = cli("fit-engine", str(BENCH / "sglang-0.5.jsonl"), "--hardware", "h100-sxm", "--out", str(out))
    assert code == 2 and err.count("\n") == 1 and "--out" in err
    if kind == "symlink":
        assert (tmp_path / "t").read_text() == "keep"


TRUE_FACTORS = {"target_pass_s": 1.6, "head_pass_s": 0.7, "overlap": 1.15}


def test_round_trip_recovers_known_constants() -> None:
    public = engine_catalog()["vllm"]
    truth = replace(public, **{k: getattr(public, k) * f for k, f in TRUE_FACTORS.items()})
    settings = Settings().with_engine(truth)
    rows, timings = [], []
    for batch in (1, 16, 64):
        row = Measurement(source=f"synthetic b{batch}", engine="vllm", hardware="h100-sxm", target="llama-3.1-8b",
                          method="eagle3", batch=batch, prompt_tokens=1024, output_tokens=512, num_speculative_tokens=3,
                          mean_acceptance_length=2.4, measured_speedup=1.0,
                          speedup_definition="vanilla TPOT / speculative TPOT")  # fmt: skip
        rows.append(row.model_copy(update={"measured_speedup": float(predict([row], "vllm", settings)[0])}))
        scenario = {"concurrency": batch, "context": 1024, "generated_tokens": 512, "target": "llama-3.1-8b",
                    "hardware": "h100-sxm", "tensor_parallel": 1, "drafter": "eagle3"}  # fmt: skip
        ev = evaluate(**scenario, engine="vllm", settings=settings)  # type: ignore[arg-type]
        timings.append(Timing(Scenario(**scenario), 1.0 / float(ev.base_tokens_per_s_per_sequence)))
    result = fit_runs(public, rows, timings)
    for name in TRUE_FACTORS:
        assert name in result.fitted
        off = abs(math.log(result.fitted[name] / getattr(truth, name)))
        assert off <= 2 * result.relative_se[name], (name, result.fitted[name], getattr(truth, name))
    assert np.max(np.abs(result.errors)) < 0.02


def test_a_constant_the_rows_pin_no_closer_than_its_prior_stays_public() -> None:
    """At batch 1 and 4 a verify pass is far from compute-bound: the overlap of memory and
    arithmetic moves the speedups (more than the least sensitivity the fit notices) but barely,
    so the two rows alone would set it only to within a factor far wider than its prior's; it is
    kept, with that reason, while the head's fixed time, which those rows do pin, is fitted."""
    public = engine_catalog()["vllm"]
    rows = [
        Measurement(
            source=f"synthetic b{batch}",
            engine="vllm",
            hardware="h100-sxm",
            target="llama-3.1-8b",
            method="eagle3",
            batch=batch,
            prompt_tokens=512,
            output_tokens=256,
            num_speculative_tokens=3,
            mean_acceptance_length=2.4,
            measured_speedup=speedup,
            speedup_definition="vanilla TPOT / speculative TPOT",
        )  # fmt: skip
        for batch, speedup in ((1, 1.8), (4, 1.75))
    ]
    result = fit_runs(public, rows, [])
    assert "overlap" not in result.fitted
    assert "no closer than the public value's prior" in result.kept["overlap"]
    assert "head_pass_s" in result.fitted


def test_point_uses_the_written_profile(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "mine.toml"
    fit = ["fit-engine", str(BENCH / "sglang-0.5.jsonl"), "--hardware", "h100-sxm", "--out", str(out)]
    code, _, err = cli(*fit)
    assert code == 0, err
    argv = ["point", "--engine-profile", str(out), "--target", "llama-3.1-8b", "--hardware", "h100-sxm", "--json"]
    assert main([*argv, "--drafter", "eagle3", "--concurrency", "16"]) == 0
    assert json.loads(capsys.readouterr().out)["engine"] == "my-server"


def test_advise_bench_takes_the_acceptance_given_for_runs_without_one() -> None:
    """``advise --bench`` pairs runs as ``fit-engine`` does: the option fills a speculative
    run without acceptance; with a log it is refused, since the log carries its own."""
    files = [str(BENCH / "vllm-0.12-plain-c16.json"), str(BENCH / "vllm-0.12-spec-c16.json")]
    # The speculative run's metadata names its card gpu=H100-SXM-80GB, which advise does not
    # match to the catalogue's h100-sxm (it reads it as another card): the card is given, over the file.
    argv = ["advise", "--bench", *files, "--drafter", "eagle3", "--hardware", "h100-sxm"]
    code, _, err = cli(*argv)
    assert code == 2 and "--mean-acceptance-length" in err
    code, out, err = cli(*argv, "--mean-acceptance-length", "2.3")
    assert code == 0 and "measured 1.74x" in out, err
    log = str(BENCH.parent / "vllm" / "v1-current.log")
    code, _, err = cli(
        "advise", "--log", log, "--concurrency", "8", "--drafter", "eagle3", "--mean-acceptance-length", "2.3"
    )
    assert code == 2 and "goes with --bench" in err


def test_the_servers_token_budget_is_fitted_with_and_written(tmp_path: Path) -> None:
    """``--max-num-batched-tokens``: the runs are priced with the server's budget, and the
    profile written carries it."""
    out = tmp_path / "mine.toml"
    code, _, err = cli("fit-engine", str(BENCH / "sglang-0.5.jsonl"), "--hardware", "h100-sxm", "--out", str(out),
                       "--max-num-batched-tokens", "2048")  # fmt: skip
    assert code == 0, err
    assert load_profile(out).token_budget == 2048
