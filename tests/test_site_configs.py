"""The site builds for every valid configuration, and says so where the deployment does not fit.

Each configuration is one a ``--config`` file may hold: a deployment that one card cannot
hold, constants at the ends of the ranges their validation allows. The generated files are
computed in-process (:func:`sitebuild.build.outputs`) without the command outputs, which do not
depend on the configuration; one build of a deployment that does not fit runs the whole
``build_figures.py``, the simulator's data included.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from sitebuild import build, deployment
from sitebuild.claims.prose import DOCS, page_blocks, sentence
from sitebuild.config import SiteSettings
from specmodel.safe_input import validated

ROOT = Path(__file__).resolve().parents[1]

#: A number the page must never print: NaN or an infinity, as Python or JSON spells them.
NOT_A_NUMBER = re.compile(r"(?<![\w-])-?(nan|inf|infinity)(?![\w-])", re.IGNORECASE)

#: What the article says where the deployment does not hold even one sequence.
DOES_NOT_FIT = "does not fit"

LLAMA_405B = {"target": "llama-3.1-405b", "draft": "llama-3.2-1b", "big_draft": "llama-3.2-3b"}

#: id -> (the configuration file's content, whether the article's scenario fits).
CONFIGS: dict[str, tuple[dict[str, dict[str, object]], bool]] = {
    "l40s-qwen3-32b": ({"deployment": {"hardware": "l40s", "target": "qwen3-32b"}}, True),
    "llama-405b-one-card": ({"deployment": {**LLAMA_405B, "tensor_parallel": 1}}, False),
    "llama-405b-fewest": ({"deployment": LLAMA_405B}, False),
    "moe-target-on-eight-gpus": ({"deployment": {"target": "qwen3-235b-a22b"}}, True),
    "memory-share-lowest": ({"constants": {"GPU_MEMORY_UTILIZATION": 0.01}}, False),
    "falling-ratio-tiny": ({"constants": {"FALLING_RATIO": 1e-9}}, True),
    "compute-efficiency-lowest": ({"constants": {"COMPUTE_EFFICIENCY": 0.01}}, True),
    "generated-tokens-highest-the-article-allows": ({"constants": {"GENERATED_TOKENS": 6144}}, True),
    "workspace-highest": ({"constants": {"WORKSPACE_BYTES": 2.0**50}}, False),
    "every-constant-lowest": (
        {
            "constants": {
                "MEMORY_EFFICIENCY": 0.01,
                "COMPUTE_EFFICIENCY": 0.01,
                "GENERATED_TOKENS": 1,
                "KV_READ_FRACTION": 0.0,
                "FLOPS_PER_PARAMETER": 1e-9,
                "FALLING_RATIO": 1e-9,
                "WORKSPACE_BYTES": 0.0,
            }
        },
        True,
    ),
    "every-constant-highest": (
        {
            "constants": {
                "MEMORY_EFFICIENCY": 1.0,
                "COMPUTE_EFFICIENCY": 1.0,
                "KV_READ_FRACTION": 1.0,
                "FLOPS_PER_PARAMETER": 16.0,
                "FALLING_RATIO": 1.0,
                "GPU_MEMORY_UTILIZATION": 1.0,
            }
        },
        True,
    ),
}


def _settings(config: dict[str, dict[str, object]]) -> SiteSettings:
    """The site's settings for ``config`` as ``load_site_settings`` reads them from a file."""
    return validated(SiteSettings, config, "config")


def _text_outputs(files: dict[str, str | bytes]) -> dict[str, str]:
    """The generated files the page prints from: tables, numbers, claims, figure fragments."""
    printed = ("tables/", "figures/", "numbers.json", "claims.json")
    return {k: v for k, v in files.items() if isinstance(v, str) and k.startswith(printed)}


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} in a figure's JSON: a browser's JSON.parse refuses it")


def _printed_texts(files: dict[str, str | bytes]) -> dict[str, str]:
    """Every text the article prints: the tables and figure fragments, and of numbers.json and
    claims.json each number's text, each claim's wording with its values in place, and the text
    of every value a claim computed (even one its wording leaves out)."""
    texts = {k: v for k, v in _text_outputs(files).items() if not k.endswith(".json")}
    numbers = json.loads(str(files["numbers.json"]))
    texts.update({f"number {k}": v["text"] for k, v in numbers.items()})
    claims = json.loads(str(files["claims.json"]))
    texts.update({f"claim {k}": _worded(k, c) for k, c in claims.items()})
    texts.update({f"claim {k}, {n}": v["text"] for k, c in claims.items() for n, v in c["values"].items()})
    return texts


def _worded(name: str, said: dict) -> str:
    """A claim of claims.json as the page prints it: the branch its outcomes pick from the
    page's block, with each value's text in place."""
    values = {k: v["text"] for k, v in said["values"].items()}
    return sentence(name, said["outcomes"], values, page_blocks(DOCS)[name])


def _check(files: dict[str, str | bytes], fits: bool) -> None:
    """The checks every configuration's generated files must pass."""
    for name, text in _printed_texts(files).items():
        assert not NOT_A_NUMBER.search(text), f"{name}: {NOT_A_NUMBER.search(text)!r} in {text[:300]!r}"
    for name, text in files.items():
        if name.startswith("figdata/") and name.endswith(".json"):
            figure = json.loads(str(text), parse_constant=_reject_constant)
            assert figure["layout"], name
    said = json.loads(str(files["claims.json"]))["deployment"]
    assert (said["outcomes"]["outcome"] == "unfit") is (not fits), said["outcomes"]
    assert (DOES_NOT_FIT in _worded("deployment", said)) is (not fits), _worded("deployment", said)


@pytest.mark.slow
@pytest.mark.parametrize("config, fits", list(CONFIGS.values()), ids=list(CONFIGS))
def test_the_site_builds_for_a_valid_configuration(config, fits, monkeypatch):
    """numbers, claims, figures and tables for the configuration: no exception, no NaN or
    infinity printed, figure JSON a browser can parse, and "does not fit" where it does not."""
    monkeypatch.setattr(build, "CLI_EXAMPLES", {})  # the command line's own defaults: no config
    monkeypatch.setattr(build.simulator, "evaluate_grid", lambda settings: None)
    monkeypatch.setattr(build.simulator, "simulator_data", lambda grid: SimpleNamespace(blobs={}))
    monkeypatch.setattr(build.simulator_markup, "simulator_html", lambda settings, sim: "")
    _check(build.outputs(_settings(config)), fits)


def test_l40s_with_a_32b_target_runs_on_the_fewest_gpus_that_hold_it():
    """One 48 GB L40S cannot hold Qwen3-32B; the article then runs it on two, and says so."""
    settings = deployment.resolved(_settings(CONFIGS["l40s-qwen3-32b"][0]))
    assert settings.deployment.tensor_parallel == 2


@pytest.mark.slow
def test_build_figures_writes_the_whole_site_for_a_deployment_that_does_not_fit(tmp_path):
    """The command itself, simulator data included: exit 0, no traceback, and the article says
    the deployment does not fit."""
    config = tmp_path / "tiny.toml"
    config.write_text("[constants]\nGPU_MEMORY_UTILIZATION = 0.01\n")
    out = tmp_path / "generated"
    result = subprocess.run(
        [sys.executable, "build_figures.py", "--config", str(config), "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Traceback" not in result.stderr
    files: dict[str, str | bytes] = {
        str(p.relative_to(out)): p.read_text() for p in out.rglob("*") if p.suffix in {".md", ".json", ".html"}
    }
    _check(files, fits=False)
    assert list(out.glob("data/sim/*.bin.gz")) and (out / "html" / "simulator.html").stat().st_size > 0


@pytest.mark.parametrize(
    "deployment_text, message",
    [
        ("tensor_parallel = 64", "tensor_parallel must be an integer from 1 to 8"),
        ("tensor_parallel = 3", "does not divide qwen3-8b's 32 attention heads; allowed on h100-sxm: 1, 2, 4, 8"),
    ],
)
def test_gpus_the_card_or_the_model_refuse_stop_the_config_at_once(tmp_path, deployment_text, message):
    """A ``tensor_parallel`` the validation range allows but the card's group or the target's heads do
    not is one error when the file is read, naming what is allowed, not a failure halfway through."""
    from sitebuild.config import load_site_settings
    from specmodel.errors import SpecModelError

    config = tmp_path / "gpus.toml"
    config.write_text(f"[deployment]\n{deployment_text}\n")
    with pytest.raises(SpecModelError, match=re.escape(message)) as raised:
        load_site_settings(config)
    assert "\n" not in str(raised.value)


def test_more_generated_tokens_than_the_articles_prompts_leave_room_for_is_one_error():
    """GENERATED_TOKENS within the model's range but past what the article's longest prompts leave
    of a target's context window (2,048-token prompts on Llama-3-70B, 8,192 positions) is refused
    before anything is computed, naming the largest value the article can use."""
    from specmodel.errors import SpecModelError

    settings = _settings({"constants": {"GENERATED_TOKENS": 65536}})
    with pytest.raises(SpecModelError, match="GENERATED_TOKENS must be at most 6,144") as raised:
        build.outputs(settings)
    assert "\n" not in str(raised.value)
