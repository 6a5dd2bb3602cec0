"""The command line follows its ecosystem: ``--version``, no abbreviated options, vLLM's option
names, ``-`` for standard input and gzip read as is, JSON errors under ``--json``, exit 130 on
Ctrl-C, an opt-in exit status for advise's verdict, the engines' defaults said, a report that
records how it was made."""

from __future__ import annotations

import argparse
import gzip
import hashlib
import importlib.metadata
import io
import json
import os
import re
import tempfile
import tomllib
from pathlib import Path

import pytest

import specmodel
from specmodel import safe_input
from specmodel.cli import COMMANDS, build_parser, commands
from specmodel.errors import SpecModelError
from specmodel.vllm.advise import ADVICE
from tests.cli_runner import cli

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
LOG = DATA / "vllm" / "draft-model-b8.log"
SCRAPE = DATA / "vllm-deployments" / "qwen3-8b-c256.prom"
CONFIG = '{"model": "Qwen/Qwen3-0.6B", "num_speculative_tokens": 4}'
ADVISE_LOG = ("advise", "--concurrency", "8", "--speculative-config", CONFIG, "--hardware", "h100-sxm")
ADVISE_SCRAPE = ("advise", "--hardware", "h100-sxm", "--tensor-parallel", "1", "--drafter", "qwen3-0.6b")


def _stdin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data)))


def _named(result: tuple[int, str, str], path: Path | str) -> tuple[int, str, str]:
    """A run's result with the input's name (in the messages saying where each field came from) made FILE."""
    status, out, err = result
    return status, out.replace(safe_input.path_text(path), "FILE"), err.replace(safe_input.path_text(path), "FILE")


def _parsers() -> list[argparse.ArgumentParser]:
    parser = build_parser()
    subs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return [parser, *subs.choices.values()]


# --- version and abbreviations ----------------------------------------------------------------


def test_version_is_the_package_metadata():
    assert specmodel.__version__ == importlib.metadata.version("specmodel")
    status, out, err = cli("--version")
    assert (status, out, err) == (0, f"specmodel {specmodel.__version__}\n", "")


def test_no_option_is_taken_from_a_prefix_of_its_name():
    assert all(p.allow_abbrev is False for p in _parsers())
    status, out, err = cli("point", "--conc", "8")
    assert status == 2 and out == "" and err.count("\n") == 1 and "--conc" in err


# --- vLLM's names -----------------------------------------------------------------------------

ALIASES = {
    "tensor_parallel": ("--tensor-parallel", "--tensor-parallel-size"),
    "draft_tensor_parallel": ("--draft-tensor-parallel", "--draft-tensor-parallel-size"),
    "gamma": ("--gamma", "--num-speculative-tokens"),
    "num_speculative_tokens": ("--gamma", "--num-speculative-tokens"),
    "model_name": ("--model-name", "--served-model-name"),
}
#: The commands whose options take vLLM's names beside ours.
VLLM_NAMED = ("specmodel", "specmodel point", "specmodel sweep", "specmodel advise", "specmodel fit-engine")


def test_each_concept_has_both_names_wherever_it_is_an_option():
    seen = set()
    for parser in (p for p in _parsers() if p.prog in VLLM_NAMED):
        for action in parser._actions:
            if action.dest in ALIASES and action.option_strings:
                assert set(action.option_strings) == set(ALIASES[action.dest]), (parser.prog, action.dest)
                seen.add(action.dest)
            # vLLM's names that already match are ours
            assert not {"--max-model-len-size", "--gpu-memory-util"} & set(action.option_strings)
    assert seen == set(ALIASES)


def test_vllm_names_give_the_same_scenario():
    ours = cli("point", "--tensor-parallel", "2", "--gamma", "3", "--draft-tensor-parallel", "1", "--json")
    vllm = cli("point", "--tensor-parallel-size", "2", "--num-speculative-tokens", "3",
               "--draft-tensor-parallel-size", "1", "--json")  # fmt: skip
    assert ours[0] == 0 and ours == vllm


@pytest.mark.parametrize(
    "pair", [("--tensor-parallel", "--tensor-parallel-size"), ("--gamma", "--num-speculative-tokens")]
)
def test_both_spellings_are_one_option_given_twice(pair):
    status, out, err = cli("point", pair[0], "2", pair[1], "2")
    assert status == 2 and out == "" and "given twice" in err and err.count("\n") == 1


def test_fit_engine_takes_both_names():
    args = build_parser().parse_args(["fit-engine", "a.json", "--out", "p.toml", "--gamma", "3",
                                      "--tensor-parallel-size", "2"])  # fmt: skip
    assert (args.num_speculative_tokens, args.tensor_parallel) == (3, 2)


# --- standard input and gzip ------------------------------------------------------------------


def test_a_log_from_standard_input_or_gzip_gives_the_same_advice(monkeypatch, tmp_path):
    expected = _named(cli(*ADVISE_LOG, "--log", str(LOG), "--json"), LOG)
    assert expected[0] == 0, expected[2]
    packed = tmp_path / "vllm.log.gz"
    packed.write_bytes(gzip.compress(LOG.read_bytes()))
    assert _named(cli(*ADVISE_LOG, "--log", str(packed), "--json"), packed) == expected
    for data in (LOG.read_bytes(), packed.read_bytes()):
        _stdin(monkeypatch, data)
        assert _named(cli(*ADVISE_LOG, "--log", "-", "--json"), "-") == expected


def test_a_gzip_scrape_and_a_scrape_on_standard_input(monkeypatch, tmp_path):
    expected = _named(cli(*ADVISE_SCRAPE, "--metrics", str(SCRAPE), "--json"), SCRAPE)
    assert expected[0] == 0, expected[2]
    packed = tmp_path / "metrics.prom.gz"
    packed.write_bytes(gzip.compress(SCRAPE.read_bytes()))
    assert _named(cli(*ADVISE_SCRAPE, "--metrics", str(packed), "--json"), packed) == expected
    _stdin(monkeypatch, packed.read_bytes())
    assert _named(cli(*ADVISE_SCRAPE, "--metrics", "-", "--json"), "-") == expected


def test_bench_files_from_standard_input(monkeypatch):
    plain, spec = DATA / "bench" / "vllm-0.12-plain-c16.json", DATA / "bench" / "vllm-0.12-spec-c16.json"
    given = ("advise", "--hardware", "h100-sxm", "--tensor-parallel", "1", "--json", "--bench", str(plain))
    expected = cli(*given, str(spec))
    _stdin(monkeypatch, spec.read_bytes())
    assert cli(*given, "-")[:2] == expected[:2]


def test_standard_input_is_named_read_once_and_its_copy_removed(monkeypatch, tmp_path):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    _stdin(monkeypatch, b"no metrics here\n")
    status, _, err = cli(*ADVISE_LOG, "--log", "-")
    assert status == 2 and "'-' (standard input)" in err and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []
    status, _, err = cli("advise", "--bench", "-", "-", "--hardware", "h100-sxm")
    assert status == 2 and "read once" in err
    _stdin(monkeypatch, b"\x00" * 10)
    status, _, err = cli(*ADVISE_LOG, "--log", "-")
    assert status == 2 and "binary" in err


def test_a_terminal_is_not_read_as_standard_input(monkeypatch):
    leader, follower = os.openpty()
    try:
        with open(follower, "rb", closefd=False) as raw:
            monkeypatch.setattr("sys.stdin", io.TextIOWrapper(raw))
            status, _, err = cli(*ADVISE_LOG, "--log", "-")
    finally:
        os.close(leader)
        os.close(follower)
    assert status == 2 and "terminal" in err


def test_a_gzip_bomb_is_refused_by_what_it_decompresses_to(tmp_path):
    bomb = tmp_path / "bomb.prom.gz"
    bomb.write_bytes(gzip.compress(b"a" * 5_000_000))
    assert bomb.stat().st_size < 100_000
    with pytest.raises(SpecModelError, match="decompresses to more than 1,000,000 bytes"):
        safe_input.read_limited_text(bomb, "--metrics x", 1_000_000)
    with pytest.raises(SpecModelError, match="decompresses to more than 1,000 bytes"), \
            safe_input._opened(bomb, "--log x", 1_000) as handle:  # fmt: skip
        while handle.read(300):
            pass


def test_a_corrupt_gzip_file_is_one_line(tmp_path):
    cut = tmp_path / "cut.log.gz"
    cut.write_bytes(gzip.compress(LOG.read_bytes())[:-20])
    status, _, err = cli(*ADVISE_LOG, "--log", str(cut))
    assert status == 2 and "gzip" in err and err.count("\n") == 1


# --- errors under --json, interrupts -----------------------------------------------------------


@pytest.mark.parametrize("argv", [("point", "--concurrency", "x"), ("point", "--concurrency", "0"),
                                  ("point", "--conc", "8")])  # fmt: skip
def test_errors_are_one_json_object_under_json(argv):
    status, out, err = cli(*argv, "--json")
    assert status == 2 and out == "" and err.count("\n") == 1
    error = json.loads(err)
    assert set(error) == {"error", "exit_status"} and error["exit_status"] == 2
    plain = cli(*argv)
    assert plain[0] == 2 and plain[2] == f"specmodel: error: {error['error']}\n"


def test_ctrl_c_exits_130(monkeypatch):
    def interrupted(args, settings):
        raise KeyboardInterrupt

    monkeypatch.setitem(COMMANDS, "point", interrupted)
    assert cli("point") == (130, "", "specmodel: interrupted\n")
    status, _, err = cli("point", "--json")
    assert status == 130 and json.loads(err) == {"error": "interrupted", "exit_status": 130}


# --- advise --exit-status -----------------------------------------------------------------------


def test_each_verdict_has_its_own_status_and_the_docs_list_them():
    statuses = commands.verdict_statuses()
    assert list(statuses) == list(ADVICE) and statuses["keep"] == 0
    others = [s for v, s in statuses.items() if v != "keep"]
    assert len(set(others)) == len(others) and not {0, 1, 2, 130, 141} & set(others)
    docs = (ROOT / "docs" / "cli.md").read_text()
    for verdict, status in statuses.items():
        assert re.search(rf"\| `{verdict}` +\| {status} +\|", docs), verdict


@pytest.mark.parametrize("argv", [(*ADVISE_SCRAPE, "--metrics", str(SCRAPE)), (*ADVISE_LOG, "--log", str(LOG))])
def test_advise_exit_status_is_the_verdicts_only_when_asked(argv):
    status, out, err = cli(*argv, "--json")
    assert status == 0, err
    verdict = json.loads(out)["verdict"]
    asked = cli(*argv, "--json", "--exit-status")
    assert asked[0] == commands.verdict_statuses()[verdict] and asked[1] == out


# --- engines' defaults ---------------------------------------------------------------------------


def test_point_and_advise_say_their_default_engines():
    status, out, _ = cli("point")
    assert status == 0 and "engine ideal" in out.splitlines()[0] and "advise's is vllm" in out.splitlines()[0]
    assert "advise's is vllm" not in cli("point", "--engine", "vllm")[1]
    status, out, err = cli(*ADVISE_SCRAPE, "--metrics", str(SCRAPE))
    assert status == 0, err
    assert re.search(r"^  engine +vllm \(advise's default engine.*point's is ideal\)$", out, re.M)


# --- the report's provenance ---------------------------------------------------------------------


def test_the_report_records_how_it_was_made(monkeypatch, tmp_path):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    page = tmp_path / "advice.html"
    argv = (*ADVISE_LOG, "--log", str(LOG), "--report", str(page))
    assert cli(*argv)[0] == 0
    text = page.read_text()
    head = text[text.index('<div class="provenance"') : text.index('<div class="verdict"')]
    assert f"specmodel {specmodel.__version__}" in head and "2023-11-14 22:13:20 UTC" in head
    assert hashlib.sha256(LOG.read_bytes()).hexdigest() in head and str(LOG) in head
    assert "specmodel advise --concurrency 8 --speculative-config" in head
    first = page.read_bytes()
    assert cli(*argv)[0] == 0 and page.read_bytes() == first  # reproducible


def test_source_date_epoch_must_be_seconds():
    from specmodel.vllm.report import report_date

    with pytest.raises(SpecModelError, match="SOURCE_DATE_EPOCH"):
        report_date({"SOURCE_DATE_EPOCH": "yesterday"})
    assert report_date({}).endswith(" UTC")


def test_plotly_is_the_report_extra():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert any(r.startswith("plotly") for r in extras["report"])


def test_a_light_command_lists_the_heavy_ones_with_the_help_their_own_parsers_give():
    """``point`` builds the fitter's and the planner's parsers by name only; the list in
    ``specmodel --help`` reads the same either way."""
    from specmodel.cli import HEAVY_COMMANDS

    full, light = build_parser(), build_parser(command="point")
    helps = {a.dest: a.help for a in full._subparsers._group_actions[0]._choices_actions}  # type: ignore[union-attr]
    assert {name: helps[name] for name in HEAVY_COMMANDS} == HEAVY_COMMANDS
    assert light.parse_args(["point", "--concurrency", "4"]).concurrency == 4
    assert full.format_help() == light.format_help()
