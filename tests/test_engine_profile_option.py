"""``--engine-profile PROFILE.toml`` on ``point``, ``sweep`` and ``advise``, and in the site's
configuration: a profile file (as ``profile_text`` writes one) becomes the engine, and the
numbers are the model's with that profile; a bad file is one line and exit status 2."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from sitebuild.config import load_site_settings
from specmodel.model.evaluate import evaluate, scenario_grid
from specmodel.model.profile_file import profile_text
from specmodel.model.settings import Settings
from tests.cli_runner import cli

ROOT = Path(__file__).resolve().parents[1]
LOG = ROOT / "tests" / "data" / "vllm" / "draft-model-b8.log"
CONFIG = '{"model": "Qwen/Qwen3-0.6B", "num_speculative_tokens": 4}'


def my_profile(key: str = "my-server"):
    """The public vLLM profile with a slower fixed pass and another key."""
    public = Settings().engine("vllm")
    return replace(public, key=key, target_pass_s=3 * public.target_pass_s, fit=None)


@pytest.fixture
def profile_file(tmp_path):
    path = tmp_path / "my-server.toml"
    path.write_text(profile_text(my_profile()))
    return path


def test_point_uses_the_profile_and_equals_the_model(profile_file):
    status, out, _ = cli("point", "--concurrency", "16", "--engine-profile", str(profile_file), "--json")
    assert status == 0
    mine = json.loads(out)
    _, public_out, _ = cli("point", "--concurrency", "16", "--engine", "vllm", "--json")
    p = my_profile()
    settings = Settings().with_engine(p)
    expected = evaluate(scenario_grid(concurrency=16, engine=p.key, settings=settings), settings=settings)
    assert mine["engine"] == "my-server"
    assert mine["throughput_speedup"] == pytest.approx(float(expected.throughput_speedup))
    assert mine["throughput_speedup"] != pytest.approx(json.loads(public_out)["throughput_speedup"], rel=1e-3)


def test_engine_naming_the_profile_key_is_allowed_and_another_is_refused(profile_file):
    assert cli("point", "--engine-profile", str(profile_file), "--engine", "my-server")[0] == 0
    status, out, err = cli("point", "--engine-profile", str(profile_file), "--engine", "vllm")
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and "contradicts --engine-profile" in err and "'my-server'" in err


def test_sweep_fixes_the_engine_axis_to_the_profile(profile_file, tmp_path):
    out = tmp_path / "grid.csv"
    args = ("--per-position", "0.8,0.6", "--tensor-parallel", "1", "--hardware", "h100-sxm")
    assert cli("sweep", "--out", str(out), "--engine-profile", str(profile_file), *args)[0] == 0
    frame = pd.read_csv(out)
    assert set(frame.engine) == {"my-server"}
    row = frame[(frame.concurrency == 16) & (frame.drafter == "eagle")].iloc[0]
    p = my_profile()
    settings = Settings().with_engine(p)
    grid = scenario_grid(
        concurrency=16,
        context=int(row.context),
        drafter="eagle",
        per_position=(0.8, 0.6),
        engine=p.key,
        settings=settings,
    )
    assert row.throughput_speedup == pytest.approx(float(evaluate(grid, settings=settings).throughput_speedup))


def test_advise_prices_the_passes_with_the_profile(profile_file):
    card = ("--hardware", "h100-sxm")  # the log states the model, the drafter and one GPU, not the card
    base = ("advise", "--log", str(LOG), "--concurrency", "8", "--speculative-config", CONFIG, *card, "--json")
    status, out, _ = cli(*base, "--engine-profile", str(profile_file))
    assert status == 0
    mine, public = json.loads(out), json.loads(cli(*base)[1])
    assert mine["engine"] == "my-server" and public["engine"] == "vllm"
    assert mine["predicted_speedup"] != public["predicted_speedup"]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("[a]\ntarget_pass_s = 0.001\n[b]\ntarget_pass_s = 0.001\n", "exactly one table"),
        ('[a]\nname = "a"\ndescription = "a"\nbatching = "steady"\nwarp_factor = 9\n', "warp_factor"),
        ('[a]\nname = "a"\ndescription = "a"\nbatching = "steady"\ntarget_pass_s = -1.0\n', "target_pass_s"),
        ("this is not TOML = = =\n", "--engine-profile"),
    ],
    ids=["two-tables", "unknown-field", "negative-time", "not-toml"],
)
def test_a_bad_profile_file_is_one_line_and_status_2(tmp_path, text, says):
    bad = tmp_path / "bad.toml"
    bad.write_text(text)
    for command in (("point",), ("advise", "--log", str(LOG), "--concurrency", "8", "--drafter", "ngram")):
        status, out, err = cli(*command, "--engine-profile", str(bad))
        assert status == 2 and out == ""
        assert err.count("\n") == 1 and says in err and "bad.toml" in err


def test_a_missing_profile_file_is_one_line(tmp_path):
    status, _, err = cli("point", "--engine-profile", str(tmp_path / "absent.toml"))
    assert status == 2 and err.count("\n") == 1 and "absent.toml" in err


def test_site_config_engine_profile_replaces_the_articles_real_engine(tmp_path, profile_file):
    config = tmp_path / "site.toml"
    config.write_text(f'engine_profile = "{profile_file.name}"\n[deployment]\nhardware = "h100-sxm"\n')
    settings = load_site_settings(config)
    assert settings.engines["vllm"].target_pass_s == my_profile().target_pass_s
    assert settings.engines["vllm"].key == "vllm"
    assert settings.deployment.hardware == "h100-sxm"


def test_site_config_with_a_bad_engine_profile_is_one_line(tmp_path):
    config = tmp_path / "site.toml"
    config.write_text('engine_profile = "absent.toml"\n')
    with pytest.raises(Exception, match="absent.toml") as caught:
        load_site_settings(config)
    assert "\n" not in str(caught.value)


def test_the_articles_real_engine_numbers_follow_the_site_profile(tmp_path):
    from sitebuild.config import SiteSettings
    from sitebuild.numbers import engines

    p = replace(my_profile(), head_pass_s=2 * my_profile().head_pass_s)
    (tmp_path / "mine.toml").write_text(profile_text(p))
    config = tmp_path / "site.yaml"
    config.write_text("engine_profile: mine.toml\n")
    mine, public = engines.numbers(load_site_settings(config)), engines.numbers(SiteSettings())
    assert mine["vllm_head_pass_ms"].value == pytest.approx(2 * public["vllm_head_pass_ms"].value)


def test_the_worked_example_on_the_command_line_page_is_computed():
    import re

    from sitebuild.config import SiteSettings
    from sitebuild.numbers import calibrate

    page = (ROOT / "docs" / "cli.md").read_text()
    section = page[page.index("## Calibrate it to your server") : page.index("## From Python")]
    names = set(re.findall(r"\{\{ (calib_\w+) \}\}", section))
    numbers = calibrate.numbers(SiteSettings())
    assert names and names <= set(numbers)
    assert numbers["calib_one_gpu_series"].value >= 1 and numbers["calib_four_gpus_series"].value >= 1
    validation = (ROOT / "docs" / "validation.md").read_text()
    assert set(re.findall(r"\{\{ (calib_\w+) \}\}", validation)) <= set(numbers)


def test_the_benchmark_and_the_pages_use_one_calibration():
    """bench_calibrate_server.py prints what the pages quote: both call sitebuild.server_calibration."""
    bench = (ROOT / "benchmarks" / "bench_calibrate_server.py").read_text()
    assert "from sitebuild.server_calibration import" in bench and "fit_runs" not in bench


POINT = ["point", "--engine", "vllm", "--target", "llama-3.1-8b", "--drafter", "eagle", "--concurrency", "128",
         "--context", "838", "--generated-tokens", "322", "--mean-acceptance-length", "2.3", "--json"]  # fmt: skip


def test_max_num_batched_tokens_sets_the_budget_and_equals_the_model():
    """A server with a smaller token budget prefills prompts in smaller chunks: the numbers are
    the model's with that budget, the decode-only speedup (no prefill) is untouched."""
    status, out, err = cli(*POINT, "--max-num-batched-tokens", "512")
    assert status == 0, err
    small = json.loads(out)
    public = Settings().engine("vllm")
    settings = Settings().with_engine(replace(public, token_budget=512))
    ev = evaluate(engine="vllm", target="llama-3.1-8b", drafter="eagle", concurrency=128, context=838,
                  generated_tokens=322, mean_acceptance_length=2.3, settings=settings)  # fmt: skip
    assert small["throughput_speedup"] == pytest.approx(float(ev.throughput_speedup), rel=1e-9)
    status, out, _ = cli(*POINT)
    default = json.loads(out)
    assert small["throughput_speedup"] != pytest.approx(default["throughput_speedup"], rel=1e-3)
    assert small["decode_speedup"] == pytest.approx(default["decode_speedup"], rel=1e-12)


@pytest.mark.parametrize("value", ["0", "-5"])
def test_a_budget_below_one_token_is_one_line_and_status_2(value):
    status, out, err = cli(*POINT, "--max-num-batched-tokens", value)
    assert status == 2 and not out and "--max-num-batched-tokens must be at least 1" in err
    assert len(err.strip().splitlines()) == 1


def test_the_budget_reaches_a_profile_file_too(profile_file):
    status, out, err = cli("point", "--engine-profile", str(profile_file), "--concurrency", "64", "--context", "2048",
                           "--batching", "steady", "--json", "--max-num-batched-tokens", "1024")  # fmt: skip
    assert status == 0, err
    settings = Settings().with_engine(replace(my_profile(), token_budget=1024))
    ev = evaluate(engine="my-server", concurrency=64, context=2048, batching="steady", settings=settings)
    assert json.loads(out)["throughput_speedup"] == pytest.approx(float(ev.throughput_speedup), rel=1e-9)
