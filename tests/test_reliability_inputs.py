"""Hostile input, second round: every kind of input a user hands the tool is read by
one rule, and a problem is one line and exit status 2 (never a traceback, never the input
echoed whole), or, for an answer, said in the answer (text and strict JSON) rather than hidden.

Families: structured text (YAML, TOML, JSON) within bounds; a server's counters that
contradict each other or are not numbers; the model a scrape names; numbers on the command
line; layout options given as 0; a deployment that does not fit; and the messages themselves.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sitebuild.config import load_site_settings
from specmodel.errors import SpecModelError
from specmodel.vllm.counters import SpecDecodeCounters
from tests.cli_runner import cli
from tests.exposition import format_exposition

ROOT = Path(__file__).resolve().parents[1]
LOG = str(ROOT / "tests" / "data" / "vllm" / "draft-model-b8.log")
GOOD = SpecDecodeCounters(100, 400, 161, (75, 48, 26, 12))
# What identifies the deployment besides the files: LOG states the model, its drafter and one
# GPU (vLLM's default), not the card; a scrape states at most the model (its model_name label).
ADVISE_LOG = [
    "advise",
    "--concurrency",
    "8",
    "--drafter",
    "qwen3-0.6b",
    "--hardware",
    "h100-sxm",
    "--target",
    "qwen3-8b",
]
ADVISE = [*ADVISE_LOG, "--tensor-parallel", "1"]


# --- helpers --------------------------------------------------------------------------------


def refused(status: int, err: str, *needles: str) -> None:
    """Exit 2 and one short line on stderr, no traceback, no numpy repr, naming each needle."""
    assert status == 2, (status, err[-500:])
    assert err.count("\n") == 1 and err.endswith("\n") and "Traceback" not in err, err[-500:]
    assert len(err) < 1000 and "np.float64" not in err and "np.int64" not in err, err[:500]
    for needle in needles:
        assert needle in err, (needle, err)


def strict(text: str) -> dict:
    """``text`` parsed as strict JSON: NaN and infinity are errors."""

    def no_constant(name: str) -> None:
        raise ValueError(f"{name} in JSON output")

    return json.loads(text, parse_constant=no_constant)


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "specmodel", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)  # fmt: skip


def scrape(tmp_path: Path, text: str | bytes, name: str = "m.prom") -> str:
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return str(path)


# --- 1. structured text: YAML, TOML and JSON within one set of bounds -----------------------

CONFIGS = {
    "deep array.toml": ("a = " + "[" * 5000 + "]" * 5000 + "\n", "nests deeper than 32"),
    "deep but parseable.toml": ("a = " + "[" * 100 + "]" * 100 + "\n", "nests deeper than 32"),
    "deep inline tables.toml": ("a = " + "{b = " * 3000 + "1" + "}" * 3000 + "\n", "nests deeper than 32"),
    "deep table header.toml": ("[" + ".".join(["a"] * 100) + "]\nx = 1\n", "nests deeper than 32"),
    "repeated key.toml": ("[constants]\nGENERATED_TOKENS = 1\nGENERATED_TOKENS = 2\n", "GENERATED_TOKENS = 2"),
    "repeated table.toml": ("[constants]\n[constants]\n", "constants"),
    "huge integer.toml": ("[constants]\nGENERATED_TOKENS = " + "9" * 5000 + "\n", "more than 18 digits"),
    "long key.toml": ("[constants]\n" + "k" * 10_000 + " = 1\n", "unknown setting"),
    "long top key.toml": ("k" * 10_000 + " = 1\n", "unknown setting"),
    "deep flow.yaml": ("a: " + "[" * 5000 + "]" * 5000 + "\n", "nests deeper than 32"),
    "deep block.yaml": ("".join("  " * i + "a:\n" for i in range(200)) + "  " * 200 + "b: 1\n", "nests deeper"),
    "repeated key.yaml": ("constants:\n  GENERATED_TOKENS: 1\n  GENERATED_TOKENS: 2\n", "'GENERATED_TOKENS' appears"),
    "repeated section.yaml": ("constants: {}\nconstants: {}\n", "'constants' appears twice"),
    "python object.yaml": ("constants: !!python/object:os.system {}\n", "python/object"),
    "python name.yaml": ("constants: !!python/name:os.system\n", "python/name"),
    "huge integer.yaml": ("constants:\n  GENERATED_TOKENS: " + "9" * 5000 + "\n", "more than 18 digits"),
    "nan.yaml": ("constants:\n  GENERATED_TOKENS: .nan\n", "GENERATED_TOKENS"),
    "utf16.yaml": ("constants: {}\n".encode("utf-16"), "binary"),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_a_hostile_settings_file_is_one_line(tmp_path, name):
    text, needle = CONFIGS[name]
    path = tmp_path / name.replace(" ", "-")
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(SpecModelError) as caught:
        load_site_settings(path)
    message = str(caught.value)
    assert "\n" not in message and len(message) < 1000 and needle in message, message[:500]
    assert path.name in message


@pytest.mark.parametrize("name", ["deep array.toml", "repeated key.yaml"])
def test_the_site_build_refuses_a_hostile_settings_file_end_to_end(tmp_path, name):
    text, needle = CONFIGS[name]
    path = tmp_path / name.replace(" ", "-")
    path.write_text(text)
    result = subprocess.run([sys.executable, str(ROOT / "build_figures.py"), "--config", str(path), "--out",
                             str(tmp_path / "out")], capture_output=True, text=True, cwd=ROOT, timeout=300)  # fmt: skip
    refused(result.returncode, result.stderr, needle)
    assert not (tmp_path / "out").exists()


SPECULATIVE_CONFIGS = {
    "5,000 digits": ('{"method": "ngram", "num_speculative_tokens": ' + "9" * 5000 + "}", "5,000 digits"),
    "boolean": ('{"method": "ngram", "num_speculative_tokens": true}', "num_speculative_tokens True"),
    "float": ('{"method": "ngram", "num_speculative_tokens": 4.0}', "num_speculative_tokens 4.0"),
    "string": ('{"method": "ngram", "num_speculative_tokens": "4"}', "num_speculative_tokens '4'"),
    "negative": ('{"method": "ngram", "num_speculative_tokens": -4}', "from 1 to 32"),
    "repeated key": ('{"method": "ngram", "num_speculative_tokens": 4, "num_speculative_tokens": 3}', "appears twice"),
    "NaN": ('{"method": "ngram", "num_speculative_tokens": NaN}', "NaN"),
    "1e400": ('{"method": "ngram", "num_speculative_tokens": 1e400}', "'1e400'"),
    "slipped key": ('{"method": "ngram", "num_speculative_token": 4}', "did you mean 'num_speculative_tokens'"),
    "deep": ("[" * 30_000 + "]" * 30_000, "--speculative-config"),
    "deep inside": ('{"method": "ngram", "x": ' + "[" * 40 + "]" * 40 + "}", "nests deeper than 32"),
    "10 MB": ('{"method": "' + "x" * 10_000_000 + '"}', "characters long"),
    "deep token tree": ('{"method": "eagle", "speculative_token_tree": "' + "[" * 300 + "]" * 300 + '"}',
                        "speculative_token_tree"),
    "long method": ('{"method": "' + "x" * 60_000 + '_mtp"}', "not a method name"),
    "method a number": ('{"method": 3}', "method 3"),
    "zero GPUs": ('{"method": "ngram", "num_speculative_tokens": 4, "draft_tensor_parallel_size": 0}', "size 0"),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(SPECULATIVE_CONFIGS))
def test_a_hostile_speculative_config_is_one_line(name):
    config, needle = SPECULATIVE_CONFIGS[name]
    refused(*cli("advise", "--log", LOG, "--concurrency", "8", "--speculative-config", config)[::2], needle)


def test_a_5000_digit_speculative_config_is_refused_end_to_end():
    result = run("advise", "--log", LOG, "--concurrency", "8", "--speculative-config",
                 '{"method": "ngram", "num_speculative_tokens": ' + "9" * 5000 + "}")  # fmt: skip
    refused(result.returncode, result.stderr, "--speculative-config")


# --- 2. a server's counters: contradictions and values that are no counts ------------------

_GOOD_TEXT = format_exposition(GOOD)
SCRAPES = {
    "drafts but no draft tokens": (format_exposition(SpecDecodeCounters(100, 0, 0, (0, 0, 0, 0))), "undefined"),
    "more drafts than draft tokens": (format_exposition(SpecDecodeCounters(100, 50, 20, (20, 0, 0, 0))), "50 draft"),
    "accepted above drafted": (format_exposition(SpecDecodeCounters(100, 400, 450, (100, 100, 100, 100))), "exceed"),
    "position above drafts": (format_exposition(SpecDecodeCounters(100, 400, 161, (120, 20, 15, 6))), "position 0"),
    "position rising": (format_exposition(SpecDecodeCounters(100, 400, 161, (40, 60, 40, 21))), "position 1"),
    "accepted above drafted at a position": (
        format_exposition(SpecDecodeCounters(100, 300, 161, (75, 48, 26, 12), (100, 100, 90, 10))), "position 3"),
    "more drafted positions than accepted": (
        format_exposition(SpecDecodeCounters(100, 400, 161, (75, 48, 26, 12), (100, 100, 100, 100, 0))), "5 positions"),
    "a missing position": (_GOOD_TEXT.replace('position="2"', 'position="7"'), "positions [0, 1, 3, 7]"),
    "33 positions": (format_exposition(SpecDecodeCounters(100, 3300, 0, (0,) * 33)), "33 positions"),
    "decreasing across scrapes": (
        _GOOD_TEXT + format_exposition(SpecDecodeCounters(90, 400, 161, (75, 48, 26, 12))), "decreases"),
    "infinite": (_GOOD_TEXT.replace("} 100.0", "} +Inf", 1), "is inf"),
    "NaN": (_GOOD_TEXT.replace("} 100.0", "} NaN", 1), "is nan"),
    "1e400": (_GOOD_TEXT.replace("} 100.0", "} 1e400", 1), "whole number"),
    "negative": (_GOOD_TEXT.replace("} 100.0", "} -5.0", 1), "is -5"),
    "fractional": (_GOOD_TEXT.replace("} 100.0", "} 100.5", 1), "is 100.5"),
    "utf-16": (_GOOD_TEXT.encode("utf-16"), "binary"),
    "a NUL byte": (_GOOD_TEXT.encode() + b"\x00", "binary"),
    "a 10 MB line": (_GOOD_TEXT + "x" * 10_000_000 + "\n", "not Prometheus text"),
}  # fmt: skip
for _label in ("٣", "３", "1_0", "+1", " 1", "01", "3 ", "-1"):
    SCRAPES[f"position {_label!r}"] = (_GOOD_TEXT.replace('position="3"', f'position="{_label}"'), "position label")


@pytest.mark.parametrize("name", sorted(SCRAPES))
def test_a_scrape_that_contradicts_itself_is_one_line(tmp_path, name):
    text, needle = SCRAPES[name]
    path = scrape(tmp_path, text)
    for extra in ([], ["--json"]):
        status, out, err = cli(*ADVISE, "--metrics", path, *extra)
        refused(status, err, needle, "m.prom")
        assert out == ""


LOGS = {
    "no drafts (NaN rates)": ("Mean acceptance length: nan, Accepted throughput: 0.00 tokens/s, Drafted throughput: "
                              "0.00 tokens/s, Accepted: 0 tokens, Drafted: 0 tokens, Per-position acceptance rate: "
                              "nan, nan, nan, nan, Avg Draft acceptance rate: nan%", "no drafts"),
    "unicode digits": ("Mean acceptance length: 2.65, Accepted: 1280 tokens, Drafted: ３112 tokens, Per-position "
                       "acceptance rate: 0.762, 0.482, 0.279, 0.122", "'３112 tokens'"),
    "accepted above drafted": ("Mean acceptance length: 2.65, Accepted: 5000 tokens, Drafted: 3112 tokens, "
                               "Per-position acceptance rate: 0.762, 0.482, 0.279, 0.122, Avg Draft acceptance rate: "
                               "41.1%", "exceeds"),
    "a 5,000-digit count": ("Mean acceptance length: 2.65, Accepted: 1280 tokens, Drafted: " + "9" * 5000 +
                            " tokens, Per-position acceptance rate: 0.762, 0.482, 0.279, 0.122", "malformed"),
    "a 10 MB metrics line": ("Mean acceptance length: 2.65" + "y" * 10_000_000, "longer than"),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(LOGS))
def test_a_hostile_log_is_one_line(tmp_path, name):
    body, needle = LOGS[name]
    path = tmp_path / "vllm.log"
    path.write_text("INFO 09-09 11:51:35 [metrics.py:96] SpecDecoding metrics: " + body + "\n")
    refused(*cli(*ADVISE, "--log", str(path), "--json")[::2], needle, "vllm.log")


def test_undefined_acceptance_is_refused_end_to_end_in_json(tmp_path):
    path = scrape(tmp_path, format_exposition(SpecDecodeCounters(10, 0, 0, (0, 0))))
    result = run(*ADVISE, "--metrics", path, "--json")
    refused(result.returncode, result.stderr, "acceptance is undefined")
    assert "nan" not in result.stdout.lower()


# --- 3. the model a scrape names ---------------------------------------------------------------


def _two_models(first: str = "Qwen/Qwen3-8B", second: str = "other-model") -> str:
    """One scrape holding the counters of two models (as a server behind a router could)."""
    a, b = format_exposition(GOOD, model_name=first).splitlines(), format_exposition(GOOD, model_name=second)
    merged = []
    for line, other in zip(a, b.splitlines(), strict=True):
        merged += [line] if line.startswith("#") else [line, other]
    return "\n".join(merged) + "\n"


@pytest.mark.parametrize(("text", "extra", "needles"), [
    (_two_models(), [], ("2 models", "--model-name", "'Qwen/Qwen3-8B'", "'other-model'")),
    (_two_models(), ["--model-name", "nope"], ("'nope' is not in the scrape",)),
    (_two_models(), ["--model-name", "x" * 100_000], ("--model-name", "is not a name")),
    (format_exposition(GOOD, model_name="meta-llama/Llama-3.1-70B-Instruct"), [],
     ("Llama-3.1-70B-Instruct", "llama-3.1-70b", "--target qwen3-8b contradicts", "leave --target out")),
    (format_exposition(GOOD, model_name="Qwen/Qwen3-32B-AWQ"), [], ("qwen3-32b", "--target qwen3-8b contradicts")),
    (_two_models(second="meta-llama/Llama-3.1-70B-Instruct"), ["--model-name", "meta-llama/Llama-3.1-70B-Instruct"],
     ("llama-3.1-70b", "qwen3-8b")),
])  # fmt: skip
def test_a_scrape_of_another_model_is_refused(tmp_path, text, extra, needles):
    refused(*cli(*ADVISE, "--metrics", scrape(tmp_path, text), *extra)[::2], *needles)


def test_model_name_chooses_one_model_of_a_scrape(tmp_path):
    path = scrape(tmp_path, _two_models())
    status, out, _ = cli(*ADVISE, "--metrics", path, "--model-name", "Qwen/Qwen3-8B", "--json")
    assert status == 0 and strict(out)["measured"]["num_drafts"] == 100  # one model's, not the sum
    status, out, _ = cli(*ADVISE, "--metrics", path, "--model-name", "other-model", "--json")
    assert status == 0 and "the server names 'other-model'" in strict(out)["sources"]["model"]


def test_a_name_outside_the_catalogue_needs_a_target_and_is_said(tmp_path):
    path = scrape(tmp_path, format_exposition(GOOD, model_name='my-chat"model\\n'))
    without_target = [a for a in ADVISE if a not in ("--target", "qwen3-8b")]
    refused(
        *cli(*without_target, "--metrics", path)[::2], "'my-chat\"model\\\\n'", "not in the catalogue", "give --target"
    )
    status, out, _ = cli(*ADVISE, "--metrics", path)
    assert status == 0 and "qwen3-8b (--target (the server names 'my-chat\"model\\\\n'" in out


def test_model_name_with_a_log_is_refused():
    refused(*cli(*ADVISE, "--log", LOG, "--model-name", "x")[::2], "--model-name", "--log")


def test_two_models_are_refused_end_to_end(tmp_path):
    result = run(*ADVISE, "--metrics", scrape(tmp_path, _two_models()))
    refused(result.returncode, result.stderr, "--model-name")


# --- 4. numbers on the command line ---------------------------------------------------------

BAD_NUMBERS = [
    (["point", "--concurrency", "３"], "'３' is not a whole number"),
    (["point", "--concurrency", "٣"], "'٣' is not a whole number"),
    (["point", "--concurrency", "1_0"], "'1_0' is not a whole number"),
    (["point", "--concurrency", "9" * 5000], "at most 18"),
    (["point", "--alpha", "nan"], "'nan' is not a finite"),
    (["point", "--alpha", "inf"], "'inf' is not a finite"),
    (["point", "--alpha", "１.5"], "--alpha"),
    (["point", "--mean-acceptance-length", "1e400"], "--mean-acceptance-length"),
    (["point", "--per-position", "0.8,,0.3"], "position 2"),
    (["point", "--per-position", "0.8,0.3,"], "position 3"),
    (["point", "--per-position", "0.8,abc"], "position 2: 'abc'"),
    (["point", "--per-position", "0.8,nan"], "position 2"),
    (["point", "--per-position", ",".join(["0.5"] * 100)], "at most 32"),
    (["point", "--concurrency", "4", "--concurrency", "8"], "--concurrency: given twice"),
    (["point", "--alpha=0.5", "--alpha", "0.6"], "--alpha: given twice"),
    (["sweep", "--out", "x.csv", "--tensor-parallel", "٢"], "--tensor-parallel"),
    (["sweep", "--out", "x.csv", "--per-position", "0.8,,0.3"], "position 2"),
    ([*ADVISE, "--metrics", "/dev/zero"], "character device"),
    ([*ADVISE, "--metrics", "/"], "is a folder"),
    ([*ADVISE, "--log", LOG, "--context", "2048", "--context", "4096"], "--context: given twice"),
    ([*ADVISE, "--log", LOG, "--generated-tokens", "x" * 1_000_000], "--generated-tokens"),
]  # fmt: skip


@pytest.mark.parametrize(("args", "needle"), BAD_NUMBERS, ids=lambda a: " ".join(a)[:50] if isinstance(a, list) else "")
def test_a_number_the_command_line_cannot_mean_is_one_line(args, needle):
    refused(*cli(*args)[::2], needle)


def test_unicode_digits_are_refused_end_to_end():
    result = run("point", "--concurrency", "３")
    refused(result.returncode, result.stderr, "--concurrency")


# --- 5. layout options given as 0: the same rule for point and advise ------------------------


@pytest.mark.parametrize("option", ["--tensor-parallel", "--tree-topk", "--verify-tokens", "--draft-tensor-parallel"])
def test_zero_is_refused_by_advise_as_by_point(option):
    status, _, point_err = cli("point", option, "0")
    refused(status, point_err, " 0 is not allowed")
    status, _, advise_err = cli(*ADVISE_LOG, "--log", LOG, option, "0")
    refused(status, advise_err)
    assert advise_err == point_err


# --- 6. a deployment that cannot fit says so --------------------------------------------------


@pytest.mark.parametrize("args", [
    ["--concurrency", "1024", "--drafter", "qwen3-0.6b"],
    ["--concurrency", "8", "--drafter", "ngram", "--target", "llama-3.1-70b"],
    ["--concurrency", "64", "--context", "32000", "--drafter", "qwen3-0.6b"],
])  # fmt: skip
def test_advise_says_a_deployment_does_not_fit(tmp_path, args):
    model = "meta-llama/Llama-3.1-70B" if "llama-3.1-70b" in args else "Qwen/Qwen3-8B"
    path = scrape(tmp_path, format_exposition(GOOD, model_name=model))
    args = [*args, "--hardware", "h100-sxm", "--tensor-parallel", "1"]  # the scrape states neither
    status, out, _ = cli("advise", "--metrics", path, *args)
    assert status == 0 and "does not fit" in out and "Verdict: does-not-fit" in out and "keep" not in out
    status, out, _ = cli("advise", "--metrics", path, *args, "--json")
    advice = strict(out)
    assert status == 0 and advice["fits"] is False and advice["verdict"] == "does-not-fit"
    assert advice["recommended_gamma"] is None and "does not fit" in advice["reason"]


def test_does_not_fit_end_to_end_is_strict_json(tmp_path):
    result = run("advise", "--metrics", scrape(tmp_path, _GOOD_TEXT), "--concurrency", "1024", "--drafter",
                 "qwen3-0.6b", "--hardware", "h100-sxm", "--tensor-parallel", "1", "--json")  # fmt: skip
    assert result.returncode == 0 and strict(result.stdout)["fits"] is False


def test_advice_that_fits_is_strict_json_and_says_so():
    status, out, _ = cli(*ADVISE_LOG, "--log", LOG, "--json")
    advice = strict(out)
    assert status == 0 and advice["fits"] is True and advice["verdict"] in ("keep", "lower-gamma", "off", "measure")


def test_json_output_never_holds_nan():
    from specmodel.cli.commands import strict_json

    data = strict(strict_json({"a": float("nan"), "b": [1.0, float("inf")], "notes": []}))
    assert data["a"] is None and data["b"] == [1.0, None] and "a, b[1]" in data["notes"][0]


# --- 7. messages: short, plain numbers, no nonsense bound -------------------------------------


@pytest.mark.parametrize(("args", "needle", "absent"), [
    (["point", "--generated-tokens", "50000"], "50,000 generated tokens alone", "at most -"),
    (["point", "--context", "30000", "--generated-tokens", "20000"], "context must be at most 20,960", "at most -"),
    (["point", "--mean-acceptance-length", "9", "--gamma", "2"], "mean_acceptance_length 9 is not allowed", "float"),
    (["point", "--drafter", "x" * 100_000], "--drafter", "x" * 200),
    (["point", "--target", "x" * 100_000], "--target", "x" * 200),
    (["point", "--hardware", "h100\nsxm"], "--hardware", "h100\nsxm"),
    (["point", "--engine", "v" * 201], "--engine", "v" * 200),
    (["advise", "--log", "/nonexistent/" + "d" * 5000 + "/vllm.log", "--concurrency", "8", "--drafter", "ngram"],
     "vllm.log", "d" * 200),
])  # fmt: skip
def test_messages_are_short_and_sensible(args, needle, absent):
    status, _, err = cli(*args)
    refused(status, err, needle)
    assert absent not in err, err[:300]
