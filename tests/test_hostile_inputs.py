"""Hostile input, third round: files that are not files, trees that contradict what was
measured on them, and the process's environment.

1. Every file a command reads is opened without blocking and refused at once, in one line
   naming the option and the file, unless it is a regular file: a FIFO (which would otherwise
   wait for a writer forever), a device (/dev/zero, /dev/null), a socket.
2. A measured mean acceptance length (tokens per verify pass) above what the deployed tree's
   verified positions can yield is refused, naming both values and where each came from.
3. An output encoding that cannot write a character (``PYTHONIOENCODING=ascii``, a C locale)
   degrades to backslash escapes; a working folder removed under the process is one line, or
   nothing at all where the command does not need it.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from specmodel.errors import SpecModelError
from specmodel.model.trees import check_tokens_per_pass, max_tokens_per_pass
from tests.cli_runner import cli

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
LOG = str(DATA / "vllm" / "draft-model-b8.log")
BENCH = (str(DATA / "bench" / "vllm-main-plain-c16.json"), str(DATA / "bench" / "vllm-main-spec-c16.json"))
EAGLE3 = '{"method": "eagle3", "model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "num_speculative_tokens": 3}'
DEPLOYMENT = ("--hardware", "h100-sxm", "--target", "qwen3-8b", "--tensor-parallel", "1")
ADVISE = ("advise", "--concurrency", "8", "--drafter", "qwen3-0.6b", *DEPLOYMENT)
#: The longest a refusal may take: far more than the tool's start, far less than a hang.
PROMPT_S = 20


def env(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), **extra}


def run(*argv: str, cwd: Path = ROOT, **extra: str) -> subprocess.CompletedProcess:
    """``specmodel ARGV`` in a fresh process, never waiting more than 30 s."""
    return subprocess.run([sys.executable, "-m", "specmodel", *argv], capture_output=True, text=True, cwd=cwd,
                          env=env(**extra), timeout=30)  # fmt: skip


def build(*argv: str) -> subprocess.CompletedProcess:
    """``build_figures.py ARGV`` in a fresh process, never waiting more than 30 s."""
    return subprocess.run([sys.executable, str(ROOT / "build_figures.py"), *argv], capture_output=True, text=True,
                          cwd=ROOT, env=env(), timeout=30)  # fmt: skip


def refused(status: int, err: str, *needles: str) -> None:
    """Exit 2, one line on stderr, no traceback, naming each needle."""
    assert status == 2, (status, err[-500:])
    assert err.count("\n") == 1 and err.endswith("\n") and "Traceback" not in err, err[-500:]
    for needle in needles:
        assert needle in err, (needle, err)


# --- 1. input files that are not regular files ---------------------------------------------


def file_options(path: str, tmp: Path) -> dict[str, tuple[str, ...]]:
    """Every command line that reads a user's file, reading ``path`` there, by an id."""
    out = str(tmp / "grid.csv")
    return {
        "point --engine-profile": ("point", "--engine-profile", path),
        "point --hardware-file": ("point", "--hardware-file", path),
        "point --target": ("point", "--target", path),
        "sweep --engine-profile": ("sweep", "--out", out, "--engine-profile", path),
        "calibrate --table": ("calibrate", "--table", path),
        "advise --log": (*ADVISE, "--log", path),
        "advise --metrics": (*ADVISE, "--metrics", path),
        "advise --bench": ("advise", "--bench", path, "--speculative-config", EAGLE3, "--hardware", "h100-sxm"),
        "advise --bench second file": ("advise", "--bench", BENCH[0], path, "--speculative-config", EAGLE3),
        "advise --load": (*ADVISE, "--log", LOG, "--load", path),
        "advise --engine-profile": (*ADVISE, "--log", LOG, "--engine-profile", path),
        "advise --hardware-file": ("advise", "--log", LOG, "--concurrency", "8", "--hardware-file", path),
        "advise --target": ("advise", "--log", LOG, "--concurrency", "8", "--hardware", "h100-sxm", "--target", path),
        "fit-engine FILE": ("fit-engine", path, "--out", str(tmp / "mine.toml")),
        "plan --log": ("plan", "--hardware", "h100-sxm", "--target", "Qwen/Qwen3-8B", "--log", path),
        "plan --metrics": ("plan", "--hardware", "h100-sxm", "--target", "Qwen/Qwen3-8B", "--metrics", path),
    }


#: The id of each command line of :func:`file_options` and the option its error must name.
OPTIONS = {key: key.split()[-1] if key.split()[-1].startswith("--") else "" for key in file_options("x", Path("."))}
OPTIONS["advise --bench second file"] = "--bench"
OPTIONS["fit-engine FILE"] = "bench file"
OPTIONS["calibrate --table"] = "calibration table"
for _key in ("point --target", "advise --target"):  # a model's config.json is named by its path alone
    OPTIONS[_key] = ""


@pytest.fixture
def fifo(tmp_path: Path) -> Iterator[Path]:
    """A named pipe no process writes to: opening it to read would wait forever."""
    path = tmp_path / "pipe" / "config.json"  # named as --target expects a file
    path.parent.mkdir()
    os.mkfifo(path)
    yield path
    path.unlink()


@pytest.fixture
def unix_socket(tmp_path: Path) -> Iterator[Path]:
    """A Unix socket's file, bound and left unread."""
    path = tmp_path / "s" / "config.json"
    path.parent.mkdir()
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(path))
        yield path
    path.unlink()


def expect_refusal(result: subprocess.CompletedProcess, key: str, path: Path | str, kind: str, took: float) -> None:
    refused(result.returncode, result.stderr, OPTIONS[key], f"{Path(path).name}'", kind)
    assert result.stdout == "" and took < PROMPT_S, (took, result.stdout[:200])


@pytest.mark.parametrize("key", list(OPTIONS))
def test_a_fifo_is_refused_at_once_by_every_option_that_reads_a_file(tmp_path, fifo, key):
    start = time.monotonic()
    result = run(*file_options(str(fifo), tmp_path)[key])
    expect_refusal(result, key, fifo, "named pipe (FIFO)", time.monotonic() - start)
    assert not (tmp_path / "grid.csv").exists() and not (tmp_path / "mine.toml").exists()


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/null"])
@pytest.mark.parametrize("key", list(OPTIONS))
def test_a_device_is_refused_by_every_option_that_reads_a_file(tmp_path, key, device):
    status, out, err = cli(*file_options(device, tmp_path)[key])
    refused(status, err, OPTIONS[key], f"{device}'", "is a character device, not a regular file")
    assert out == ""


@pytest.mark.parametrize("key", list(OPTIONS))
def test_a_socket_is_refused_by_every_option_that_reads_a_file(tmp_path, unix_socket, key):
    status, out, err = cli(*file_options(str(unix_socket), tmp_path)[key])
    refused(status, err, OPTIONS[key], "config.json'", "is a socket, not a regular file")
    assert out == ""


def test_standard_input_is_still_read_where_it_was(tmp_path):
    with open(LOG, "rb") as log:
        result = subprocess.run([sys.executable, "-m", "specmodel", *ADVISE, "--log", "-"], stdin=log,
                                capture_output=True, text=True, cwd=ROOT, env=env(), timeout=60)  # fmt: skip
    assert result.returncode == 0 and "Verdict:" in result.stdout, result.stderr[-500:]


def site_config(tmp_path: Path, profile: str) -> Path:
    config = tmp_path / "site.toml"
    config.write_text(f'engine_profile = "{profile}"\n')
    return config


@pytest.mark.parametrize("kind", ["fifo", "/dev/zero", "/dev/null", "socket"])
@pytest.mark.parametrize("option", ["--config", "--calibration", "engine_profile"])
def test_the_site_build_refuses_a_file_that_is_not_a_file_at_once(tmp_path, option, kind, request):
    path = {"fifo": "fifo", "socket": "unix_socket"}.get(kind)
    path = str(request.getfixturevalue(path)) if path else kind
    out = tmp_path / "generated"
    argv = ["--out", str(out)]
    argv += ["--config", str(site_config(tmp_path, path))] if option == "engine_profile" else [option, path]
    start = time.monotonic()
    result = build(*argv)
    took = time.monotonic() - start
    words = {"fifo": "named pipe (FIFO)", "socket": "a socket"}.get(kind, "a character device")
    refused(result.returncode, result.stderr, repr(path), words, "config" if option != "--calibration" else "")
    assert took < PROMPT_S and not out.exists()


def test_a_regular_file_of_binary_bytes_is_still_read_and_refused_as_binary(tmp_path):
    zeros = tmp_path / "zeros.log"
    zeros.write_bytes(b"\x00" * 4096)
    status, _, err = cli(*ADVISE, "--log", str(zeros))
    refused(status, err, "--log", "zeros.log'", "binary file (NUL byte at offset 0)")


def test_a_file_name_holding_a_nul_byte_is_one_line(tmp_path):
    from sitebuild.config import load_site_settings

    with pytest.raises(SpecModelError, match="engine_profile .*: a file's name cannot hold a NUL byte"):
        load_site_settings(site_config(tmp_path, "a\\u0000b.toml"))


def test_open_input_refuses_before_reading(tmp_path, fifo):
    from specmodel.safe_input import open_input

    with pytest.raises(SpecModelError, match=r"^--x 'pipe' is a named pipe \(FIFO\), not a regular file"):
        open_input(fifo, "--x 'pipe'")
    regular = tmp_path / "a.txt"
    regular.write_bytes(b"text\n")
    with open_input(regular, "--x") as handle:
        assert handle.read() == b"text\n"


# --- 2. trees that contradict their measurements ----------------------------------------------

#: A log measuring 4.9 tokens per verify pass, drafting 4 positions.
HIGH_LOG = (
    "(APIServer pid=1) INFO 09-09 11:50:20 [api_server.py:1896] vLLM API server version 0.11.0\n"
    "(APIServer pid=1) INFO 09-09 11:51:35 [metrics.py:96] SpecDecoding metrics: Mean acceptance length: 4.90, "
    "Accepted throughput: 1045.57 tokens/s, Drafted throughput: 2542.05 tokens/s, Accepted: 3900 tokens, "
    "Drafted: 4000 tokens, Per-position acceptance rate: 0.990, 0.980, 0.970, 0.960, "
    "Avg Draft acceptance rate: 97.5%\n"
)
TREE_ADVISE = ("advise", "--concurrency", "8", "--drafter", "eagle3", "--hardware", "h100-sxm",
               "--target", "llama-3.1-8b", "--tensor-parallel", "1", "--tree-topk", "2")  # fmt: skip


def test_the_most_tokens_a_pass_yields():
    # A chain of gamma 4 verifies 5 positions: 5 tokens; a tree's Q_v positions bound it below that.
    assert max_tokens_per_pass(4, 5) == 5 and max_tokens_per_pass(4, 3) == 3 and max_tokens_per_pass(30, 5) == 5
    assert max_tokens_per_pass(4, 8) == 5  # a wide tree is bound by its depth
    check_tokens_per_pass(3.0, 4, 3, "m", "t")  # at the bound: every guess accepted, allowed
    with pytest.raises(SpecModelError, match="3.01"):
        check_tokens_per_pass(3.01, 4, 3, "m", "t")


def test_point_refuses_a_mean_length_the_tree_cannot_yield():
    status, out, err = cli("point", "--gamma", "30", "--tree-topk", "2", "--verify-tokens", "5",
                           "--mean-acceptance-length", "30")  # fmt: skip
    refused(status, err, "mean acceptance length 30", "mean_acceptance_length", "5 positions verified",
            "verify_tokens", "at most 5 tokens per pass")  # fmt: skip
    assert out == ""


def test_point_refuses_per_position_acceptance_the_tree_cannot_yield():
    status, _, err = cli("point", "--tree-topk", "2", "--verify-tokens", "3", "--per-position", "0.99,0.98,0.97,0.96")
    refused(status, err, "mean acceptance length 4.9", "per_position", "3 positions verified", "at most 3")


def test_point_keeps_a_mean_length_the_tree_can_yield():
    status, out, err = cli("point", "--gamma", "4", "--tree-topk", "2", "--verify-tokens", "3",
                           "--mean-acceptance-length", "2.9", "--json")  # fmt: skip
    assert status == 0 and err == "", err


def test_advise_refuses_a_tree_that_contradicts_the_log(tmp_path):
    log = tmp_path / "server.log"
    log.write_text(HIGH_LOG)
    status, out, err = cli(*TREE_ADVISE, "--verify-tokens", "3", "--log", str(log))
    refused(status, err, "mean acceptance length 4.9", f"--log {str(log)!r}", "--verify-tokens 3", "gamma 4",
            "at most 3 tokens per pass")  # fmt: skip
    assert out == ""
    # Five positions verified at gamma 4 yield up to 5 tokens: the same log is advised on.
    status, out, err = cli(*TREE_ADVISE, "--verify-tokens", "5", "--log", str(log))
    assert status == 0 and "Verdict:" in out, err


def test_advise_refuses_a_tree_that_contradicts_the_bench_runs():
    status, out, err = cli("advise", "--bench", *BENCH, "--speculative-config", EAGLE3, "--hardware", "h100-sxm",
                           "--tree-topk", "2", "--verify-tokens", "2")  # fmt: skip
    refused(status, err, "mean acceptance length 2.41", "--bench vllm-main-spec-c16.json", "--verify-tokens 2")


# --- 3. the process's environment -------------------------------------------------------------

ASCII_COMMANDS = {
    "point": ("point",),
    "advise": (*ADVISE, "--log", LOG),
    "sweep --help": ("sweep", "--help"),
    "calibrate --markdown": ("calibrate", "--markdown"),
}


@pytest.mark.parametrize("name", list(ASCII_COMMANDS))
def test_an_ascii_output_encoding_degrades_instead_of_failing(name):
    result = run(*ASCII_COMMANDS[name], PYTHONIOENCODING="ascii")
    assert result.returncode == 0 and result.stderr == "" and result.stdout, result.stderr[-800:]
    result.stdout.encode("ascii")


def test_symbols_the_encoding_lacks_become_escapes():
    # The calibration table names gamma and alpha by their symbols.
    for extra in ({"PYTHONIOENCODING": "ascii"}, {"LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}):
        result = run("calibrate", "--markdown", **extra)
        assert result.returncode == 0 and "\\u03b3=4" in result.stdout, (extra, result.stderr[-800:])


def test_an_error_naming_a_character_the_encoding_lacks_is_one_line():
    result = run("point", "--concurrency", "\uff13", PYTHONIOENCODING="ascii")
    refused(result.returncode, result.stderr, "--concurrency", "\\uff13")


def in_removed_folder(tmp_path: Path, *argv: str) -> subprocess.CompletedProcess:
    """``specmodel ARGV`` run in a folder removed before it starts."""
    script = 'mkdir gone && cd gone && rmdir ../gone && exec "$0" -m specmodel "$@"'
    return subprocess.run(["sh", "-c", script, sys.executable, *argv], capture_output=True, text=True,
                          cwd=tmp_path, env=env(), timeout=60)  # fmt: skip


def test_a_removed_working_folder_is_no_matter_where_nothing_needs_it(tmp_path):
    result = in_removed_folder(tmp_path, "point")
    assert result.returncode == 0 and "Fits on the card" in result.stdout, result.stderr[-800:]


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (("sweep", "--out", "grid.csv"), "the working folder no longer exists"),
        ((*ADVISE, "--log", "server.log"), "--log 'server.log': no such file (the working folder no longer exists)"),
        (("point", "--engine-profile", "mine.toml"), "no such file (the working folder no longer exists)"),
        ((*ADVISE, "--log", LOG, "--report", "advice.html"), "the working folder no longer exists"),
    ],
    ids=["sweep --out", "advise --log", "point --engine-profile", "advise --report"],
)
def test_a_removed_working_folder_is_one_line_where_a_command_needs_it(tmp_path, argv, needle):
    result = in_removed_folder(tmp_path, *argv)
    refused(result.returncode, result.stderr, needle)
    assert sorted(p.name for p in tmp_path.iterdir()) == []
