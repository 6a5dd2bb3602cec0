"""Hostile engine profiles: a constant no real engine can have (NaN, an infinity, 1e308, 0 where
zero means nothing, a negative time, a picosecond, an hour) is refused when the profile is
read, by ``point``, ``advise`` and ``sweep`` (``--engine-profile``) and by the site build
(``engine_profile`` in ``--config``): one line naming the constant, its value, the file and
the allowed range, exit status 2, before anything is computed. A profile file cannot take
the key of a built-in engine. And whatever reaches the model, no NaN or infinity leaves it:
:func:`specmodel.model.evaluate.evaluate` refuses to return one.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import time
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np
import pytest

from sitebuild import build as site_build
from sitebuild.config import load_site_settings
from specmodel.errors import SpecModelError
from specmodel.model.engines import EngineProfile, bounds_of, engine_catalog
from specmodel.model.evaluate import evaluate
from specmodel.model.profile_file import load_profile, profile_text, toml_value
from specmodel.model.settings import Settings
from specmodel.records import as_mapping, validate
from tests.cli_runner import cli

ROOT = Path(__file__).resolve().parents[1]
LOG = str(ROOT / "tests" / "data" / "vllm" / "draft-model-b8.log")
BENCH = ROOT / "tests" / "data" / "bench"
CONFIG = '{"model": "Qwen/Qwen3-0.6B", "num_speculative_tokens": 4}'
ADVISE = ("advise", "--log", LOG, "--concurrency", "8", "--speculative-config", CONFIG, "--hardware", "h100-sxm")
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}

#: Every fixed time of a profile: per pass, per sequence, per lookup, per iteration (seconds).
TIMES = (
    "target_pass_s",
    "sequence_pass_s",
    "draft_model_pass_s",
    "head_pass_s",
    "fused_head_pass_s",
    "ngram_lookup_s",
    "iteration_s",
)
#: Values no real engine's time can take, as TOML spells them.
BAD_TIMES = {"inf": "inf", "1e308": "1e308", "nan": "nan", "negative": "-0.001", "tiny": "1e-12", "huge": "3600.0"}


def profile_file(folder: Path, key: str = "mine", **changes: str) -> Path:
    """The public vllm profile under ``key`` (without its fit) with ``changes`` written as TOML
    literals, in ``folder/KEY.toml``."""
    text = profile_text(replace(engine_catalog()["vllm"], key="placeholder", fit=None))
    lines = [
        line for line in text.replace("[placeholder", f"[{key}").splitlines() if line.split(" = ")[0] not in changes
    ]
    head = lines.index(f"[{key}]")
    lines[head + 1 : head + 1] = [f"{name} = {value}" for name, value in changes.items()]
    path = folder / f"{key}.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def refused(status: int, out: str, err: str, *needles: str) -> None:
    """Exit 2, nothing on stdout, one short line on stderr naming each needle, no traceback."""
    assert status == 2, (status, err[-500:])
    assert out == "" and err.count("\n") == 1 and "Traceback" not in err and len(err) < 600, err
    for needle in needles:
        assert needle in err, (needle, err)


@pytest.fixture
def no_computing(monkeypatch):
    """The model fails the test if it is asked to price anything."""
    monkeypatch.setattr(
        "specmodel.model.evaluate._evaluate_grid", lambda *a, **k: pytest.fail("the model ran before the refusal")
    )


# --- every time constant, every command ------------------------------------------------------


@pytest.mark.parametrize("value", BAD_TIMES.values(), ids=BAD_TIMES.keys())
@pytest.mark.parametrize("name", TIMES)
def test_a_time_out_of_range_is_refused_by_every_command_before_computing(tmp_path, no_computing, name, value):
    path = profile_file(tmp_path, **{name: value})
    allowed = bounds_of(name).text()
    for command in (("point",), ADVISE, ("sweep", "--out", str(tmp_path / "grid.csv"))):
        status, out, err = cli(*command, "--engine-profile", str(path))
        refused(status, out, err, name, "mine.toml", allowed, "(got ")
    assert not (tmp_path / "grid.csv").exists()
    site = tmp_path / "site.toml"
    site.write_text(f'engine_profile = "{path.name}"\n')
    with pytest.raises(SpecModelError, match=name) as caught:
        load_site_settings(site)
    assert "\n" not in str(caught.value) and allowed in str(caught.value)


@pytest.mark.parametrize("name", TIMES)
def test_a_time_of_zero_is_no_such_cost_and_prices_finite_numbers(tmp_path, name):
    status, out, err = cli("point", "--engine-profile", str(profile_file(tmp_path, **{name: "0"})), "--json")
    assert status == 0, err
    assert '"throughput_speedup": ' in out and "NaN" not in out and "Infinity" not in out


@pytest.mark.parametrize("name", TIMES)
def test_the_ends_of_a_times_range_are_allowed(tmp_path, name):
    bounds = bounds_of(name)
    for end in (bounds.low, bounds.high):
        profile = load_profile(profile_file(tmp_path, **{name: repr(end)}))
        assert getattr(profile, name) == end


@pytest.mark.parametrize("value", BAD_TIMES.values(), ids=BAD_TIMES.keys())
def test_the_site_build_refuses_a_bad_profile_at_once_and_writes_nothing(tmp_path, value):
    path = profile_file(tmp_path, target_pass_s=value)
    config = tmp_path / "site.toml"
    config.write_text(f'engine_profile = "{path.name}"\n')
    out = tmp_path / "generated"
    start = time.monotonic()
    run = subprocess.run(
        [sys.executable, str(ROOT / "build_figures.py"), "--out", str(out), "--config", str(config)],
        capture_output=True, text=True, env=ENV, cwd=tmp_path, timeout=60,
    )  # fmt: skip
    elapsed = time.monotonic() - start
    refused(run.returncode, run.stdout, run.stderr, "build_figures.py: error:", "target_pass_s", "mine.toml")
    assert "0 or 1e-06 to 1 s" in run.stderr
    assert not out.exists() and elapsed < 30  # a full build takes minutes
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.toml", "site.toml"]


@pytest.mark.parametrize("name", TIMES)
def test_the_site_build_in_process_names_each_constant(tmp_path, no_computing, capsys, name):
    path = profile_file(tmp_path, **{name: "inf"})
    config = tmp_path / "site.yaml"
    config.write_text(f"engine_profile: {path.name}\n")
    status = site_build.main(["--out", str(tmp_path / "generated"), "--config", str(config)])
    err = capsys.readouterr().err
    refused(status, "", err, name, "(got inf)", bounds_of(name).text())
    assert not (tmp_path / "generated").exists()


# --- the other constants ---------------------------------------------------------------------


OTHERS = {
    "overlap-nan": ("overlap", "nan"),
    "overlap-below-one": ("overlap", "0.5"),
    "overlap-negative-infinity": ("overlap", "-inf"),
    "overlap-1e308": ("overlap", "1e308"),
    "compute-efficiency-zero": ("compute_efficiency", "0.0"),
    "compute-efficiency-tiny": ("compute_efficiency", "1e-12"),
    "compute-efficiency-above-one": ("compute_efficiency", "1.5"),
    "memory-efficiency-nan": ("memory_efficiency", "nan"),
    "memory-efficiency-inf": ("memory_efficiency", "inf"),
    "matched-acceptance-nan": ("ngram_matched_acceptance", "nan"),
    "matched-acceptance-zero": ("ngram_matched_acceptance", "0.0"),
    "matched-acceptance-above-one": ("ngram_matched_acceptance", "2.0"),
    "token-budget-zero": ("token_budget", "0"),
    "token-budget-huge": ("token_budget", str(2**40)),
    "token-budget-fraction": ("token_budget", "8192.5"),
    "time-as-a-boolean": ("target_pass_s", "true"),
    "time-as-a-string": ("target_pass_s", '"0.001"'),
}


@pytest.mark.parametrize(("name", "value"), OTHERS.values(), ids=OTHERS.keys())
def test_every_other_constant_out_of_range_is_one_line(tmp_path, no_computing, name, value):
    status, out, err = cli("point", "--engine-profile", str(profile_file(tmp_path, **{name: value})))
    refused(status, out, err, name, "mine.toml", "--engine-profile")


def test_an_overlap_of_inf_is_the_roofline_and_allowed(tmp_path):
    assert load_profile(profile_file(tmp_path, overlap="inf")).overlap == math.inf


@pytest.mark.parametrize(
    ("table", "says"),
    [
        ("residuals = [0.1, nan]", "residuals"),
        ("residuals = [0.1, -1.0]", "residuals"),
        ("relative_standard_errors = [inf]", "relative_standard_errors"),
        ("median_abs_error = -0.1", "median_abs_error"),
        ("held_out = { in_sample = [0.1, nan, 0.2] }", "held_out"),
    ],
    ids=["residual-nan", "residual-minus-one", "standard-error-inf", "negative-error", "held-out-nan"],
)
def test_a_fit_record_with_a_number_that_is_not_finite_is_refused(tmp_path, table, says):
    """A fit's errors set the interval ``point`` prints: they must be numbers too."""
    fit_record = engine_catalog()["vllm"].fit
    assert fit_record is not None
    fields = {k: v for k, v in asdict(fit_record).items() if k != "held_out" and v is not None}
    fields.pop(table.split(" = ")[0], None)
    fit = "\n".join(f"{k} = {toml_value(v)}" for k, v in fields.items()) + "\n" + table + "\n"
    path = profile_file(tmp_path)
    path.write_text(path.read_text() + "\n[mine.fit]\n" + fit)
    status, out, err = cli("point", "--engine-profile", str(path))
    refused(status, out, err, says, "mine.toml")


def test_the_public_profiles_are_within_every_range():
    for profile in engine_catalog().values():
        assert validate(EngineProfile, asdict(profile)) == profile


# --- built-in keys ---------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["vllm", "ideal"])
def test_a_profile_file_cannot_take_a_built_in_engines_key(tmp_path, no_computing, key):
    path = profile_file(tmp_path, key=key)
    for command in (("point",), ADVISE, ("sweep", "--out", str(tmp_path / "grid.csv"))):
        status, out, err = cli(*command, "--engine-profile", str(path))
        refused(status, out, err, f"'{key}'", "built-in engine", f"{key}.toml", f"[{key}-mine]")
    site = tmp_path / "site.toml"
    site.write_text(f'engine_profile = "{path.name}"\n')
    with pytest.raises(SpecModelError, match="built-in engine"):
        load_site_settings(site)


def test_the_public_engine_keeps_its_numbers_next_to_a_profile_of_ones_own(tmp_path):
    """``--engine vllm`` is the public profile whatever file is given: the file is its own engine."""
    path = profile_file(tmp_path, target_pass_s="0.01")
    assert cli("point", "--engine-profile", str(path), "--engine", "vllm")[0] == 2
    mine, public = (
        cli("point", *args, "--json")[1] for args in (("--engine-profile", str(path)), ("--engine", "vllm"))
    )
    assert '"engine": "mine"' in mine and '"engine": "vllm"' in public and mine != public


def test_fit_engine_refuses_a_built_in_key_before_reading_the_runs(tmp_path, no_computing):
    out = tmp_path / "vllm.toml"
    runs = (str(BENCH / "sglang-0.5.jsonl"), "--hardware", "h100-sxm", "--out", str(out))
    status, stdout, err = cli("fit-engine", *runs, "--name", "vllm")
    refused(status, stdout, err, "--name 'vllm'", "built-in engine")
    assert not out.exists()


def test_writing_a_profile_under_a_built_in_key_is_refused():
    with pytest.raises(SpecModelError, match="built-in engine"):
        profile_text(engine_catalog()["ideal"])


# --- the guard where predictions leave the model ---------------------------------------------


def unchecked(**changes: float) -> Settings:
    """Settings with an engine ``bad``: the public vllm profile with ``changes``, built without
    validation (as a script could)."""
    public = engine_catalog()["vllm"]
    bad = EngineProfile(**{**as_mapping(public), "key": "bad", **changes})
    return Settings().with_engine(bad)


@pytest.mark.parametrize(
    "changes",
    [{"target_pass_s": math.inf}, {"head_pass_s": math.nan}, {"overlap": math.nan}, {"memory_efficiency": 0.0}],
    ids=["inf-pass", "nan-head", "nan-overlap", "no-bandwidth"],
)
def test_a_non_finite_prediction_never_leaves_the_model(changes):
    (name,) = changes
    with np.errstate(all="ignore"), pytest.raises(SpecModelError) as caught:
        evaluate(
            engine="bad", drafter="eagle", target="llama-3.1-8b", concurrency=[1, 64], settings=unchecked(**changes)
        )
    message = str(caught.value)
    assert "\n" not in message and len(message) < 600
    assert "the model gives " in message and "engine 'bad'" in message and f"{name} = " in message
    assert "concurrency 1" in message and "drafter eagle" in message and "llama-3.1-8b" in message


def test_the_guard_names_the_first_bad_scenario_of_a_grid():
    """Only the scenarios the bad engine prices are non-finite; the message names one of them."""
    settings = unchecked(target_pass_s=math.inf)
    with np.errstate(all="ignore"), pytest.raises(SpecModelError, match=r"concurrency 16, .* engine bad with"):
        evaluate(engine=np.array(["vllm", "bad"])[:, None], concurrency=[16, 32], settings=settings)


def test_valid_inputs_pass_the_guard_with_alpha_left_nan_where_measured():
    ev = evaluate(per_position=[0.8, 0.5, 0.2], engine=np.array(["ideal", "vllm"]), concurrency=[[1], [256]])
    assert np.isnan(ev.alpha).all() and np.isfinite(ev.speedup).all()
