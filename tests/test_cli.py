"""The command line, run as a user would run it."""

import json
import shutil
import subprocess
import sys

import pandas as pd
import pytest

from specmodel import evaluate

REQUIRED_KEYS = {
    "speedup",
    "spec_tokens_per_s",
    "base_tokens_per_s",
    "mean_acceptance_length",
    "per_position",
    "draft_share",
    "arithmetic_ratio",
    "verify_idle",
    "verify_gib",
    "verify_tflop",
    "verify_memory_ms",
    "verify_compute_ms",
    "target_weights_gib",
    "draft_weight_fraction",
    "target_kv_kib",
    "draft_kv_kib",
    "accepted_throughput",
    "drafted_throughput",
    "fits",
    "max_concurrency",
    "max_concurrency_without_draft",
}


def run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "specmodel", *args], capture_output=True, text=True, cwd=cwd)


def test_entry_point_is_installed():
    assert shutil.which("specmodel"), "pip install -e . should install the specmodel command"


def test_point_json_keys_and_values():
    out = run(
        "point",
        "--concurrency",
        "64",
        "--context",
        "2048",
        "--gamma",
        "4",
        "--drafter",
        "qwen3-0.6b",
        "--acceptance",
        "falling",
        "--alpha",
        "0.75",
        "--json",
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert set(data) >= REQUIRED_KEYS
    assert data["speedup"] == pytest.approx(float(evaluate(concurrency=64).speedup))
    assert len(data["per_position"]) == 4
    for key in ("draft_share", "verify_idle", "draft_weight_fraction"):
        assert 0 <= data[key] <= 1


def test_point_defaults_are_the_articles():
    data = json.loads(run("point", "--json").stdout)
    assert data["speedup"] == pytest.approx(
        float(
            evaluate(
                concurrency=1, context=2048, gamma=4, drafter="qwen3-0.6b", acceptance="falling", alpha=0.75
            ).speedup
        )
    )


def test_point_table_is_readable():
    out = run("point")
    assert out.returncode == 0
    assert "Speedup over plain decoding" in out.stdout and "x\n" in out.stdout


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--gamma", "0"], "gamma 0"),
        (["--alpha", "1"], "alpha 1"),
        (["--alpha", "-0.2"], "alpha -0.2"),
        (["--context", "-1"], "context -1"),
        (["--drafter", "eagle9"], "'eagle9'"),
        (["--drafter", "llama-3.2-1b"], "must share the target's vocabulary"),
        (["--hardware", "tpu"], "unknown hardware 'tpu'; allowed: h100-sxm, h200, b200, a100-80gb, mi300x, l40s"),
        # --target also takes a config.json, a model folder or a cached Hugging Face id: an
        # unknown name is refused as a path that does not exist, naming it.
        (["--target", "gpt-5"], "'gpt-5'"),
        (["--gamma", "four"], "'four'"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args, needle):
    out = run("point", *args)
    assert out.returncode == 2
    assert out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0]


@pytest.mark.slow
@pytest.mark.parametrize("ext", ["csv", "parquet"])
def test_sweep_writes_the_default_grid(tmp_path, ext):
    target = tmp_path / f"grid.{ext}"
    out = run("sweep", "--out", str(target))
    assert out.returncode == 0, out.stderr
    frame = pd.read_csv(target) if ext == "csv" else pd.read_parquet(target)
    assert len(frame) == 11 * 8 * 10 * 8 * 2 * 10 * 2 * 4  # eight drafters serve qwen3-8b; two engines; TP 1-8
    assert sorted(p.name for p in tmp_path.iterdir()) == [target.name]


def test_sweep_bad_extension_writes_nothing(tmp_path):
    out = run("sweep", "--out", str(tmp_path / "grid.xlsx"))
    assert out.returncode == 2 and "allowed: .csv, .parquet" in out.stderr
    assert list(tmp_path.iterdir()) == []


def test_calibrate_command(root):
    out = run("calibrate", "--markdown", cwd=root)
    assert out.returncode == 0 and out.stdout.startswith("| scenario |")


def test_point_takes_hardware_and_target_by_name():
    out = run(
        "point",
        "--hardware",
        "b200",
        "--target",
        "llama-3.1-8b",
        "--drafter",
        "llama-3.2-1b",
        "--concurrency",
        "256",
        "--json",
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    ev = evaluate(concurrency=256, drafter="llama-3.2-1b", hardware="b200", target="llama-3.1-8b")
    assert data["speedup"] == pytest.approx(float(ev.speedup))
    assert data["fits"] is bool(ev.fits) and data["max_concurrency"] == int(ev.max_concurrency)
    assert data["max_concurrency_without_draft"] > data["max_concurrency"]


def test_point_reports_a_scenario_that_does_not_fit():
    data = json.loads(run("point", "--concurrency", "1024", "--json").stdout)
    assert data["fits"] is False
    rows = [line.split() for line in run("point", "--concurrency", "1024").stdout.splitlines()]
    assert ["Fits", "on", "the", "card", "no"] in rows


@pytest.mark.parametrize(
    "args",
    [
        ["--drafter", "eagle"],
        ["--drafter", "eagle-32k"],
        ["--target", "qwen3-32b", "--drafter", "qwen3-4b"],
        ["--hardware", "mi300x"],
    ],
)
def test_point_accepts_every_kind_of_drafter_and_deployment(args):
    out = run("point", *args, "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["speedup"] > 0


def test_point_refuses_an_mtp_drafter_the_target_does_not_ship():
    out = run("point", "--drafter", "mtp", "--json")
    assert out.returncode == 2 and out.stdout == "" and out.stderr.count("\n") == 1
    assert "declares no multi-token-prediction layers" in out.stderr


def test_sweep_takes_hardware_and_target(tmp_path):
    target = tmp_path / "g.parquet"
    out = run("sweep", "--out", str(target), "--hardware", "l40s", "--target", "llama-3.1-8b")
    assert out.returncode == 0, out.stderr
    frame = pd.read_parquet(target)
    assert set(frame["drafter"]) == {"llama-3.2-1b", "llama-3.2-3b", "ngram", "eagle", "eagle-32k", "mtp", "eagle3"}
    assert len(frame) == 11 * 8 * 10 * 7 * 2 * 10 * 2 * 4 and "fits" in frame
    row = frame[
        (frame.concurrency == 64)
        & (frame.context == 2048)
        & (frame.gamma == 4)
        & (frame.drafter == "ngram")
        & (frame.acceptance == "falling")
        & (frame.alpha == 0.75)
        & (frame.engine == "ideal")
        & (frame.tensor_parallel == 1)
    ].iloc[0]
    ev = evaluate(concurrency=64, drafter="ngram", hardware="l40s", target="llama-3.1-8b")
    assert row["speedup"] == pytest.approx(float(ev.speedup)) and bool(row["fits"]) == bool(ev.fits)
