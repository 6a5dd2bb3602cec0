"""Command line: ``specmodel point``, ``sweep``, ``calibrate`` and ``advise``.

The settings are resolved once here (the package defaults) and passed to everything the
commands call. Bad input prints one line naming the value and what is allowed (under ``--json``,
one JSON object ``{"error": ..., "exit_status": 2}`` on stderr), and exits with status 2 without
writing anything; an interrupt (Ctrl-C) exits with status 130. ``-`` as a ``--log``,
``--metrics`` or ``--bench`` file is standard input. What the output's encoding cannot write
comes out as a backslash escape; a working folder removed under the process is one line
where a command needs it. The output is composed whole and
written once: a reader that went away ends it quietly with status 141, a write that fails (a
full disk, ``ulimit -f``) with one line and status 1, never leaving a truncated file.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import signal
import stat
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from specmodel.cli import commands, sweep
from specmodel.cli.options import (
    Parser,
    UsageError,
    concurrency_text,
    deployment_options,
    drafter_option,
    engine_profile_option,
    format_options,
    parallel_options,
    runs_acceptance_option,
    scenario_options,
    server_options,
    with_engine_profile,
)
from specmodel.errors import SpecModelError
from specmodel.model.scenario import DEFAULTS
from specmodel.model.settings import Settings
from specmodel.safe_input import STANDARD_INPUT, standard_input, working_folder_gone

COMMANDS: dict[str, Callable[[argparse.Namespace, Settings], str]] = {
    "point": commands.run_point,
    "sweep": sweep.run_sweep,
    "calibrate": commands.run_calibrate,
    "advise": commands.run_advise,
}


class _Version(argparse.Action):
    """``--version``: the installed version, read only when asked (importlib.metadata is slow
    to import, and no other option needs it)."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: str | None = None) -> None:
        import specmodel

        print(f"specmodel {specmodel.__version__}")
        parser.exit()


#: Commands whose parsers import what they alone need (the fitter, the benchmark planner): built
#: in full only when the command line names them or asks for help, else listed by name.
HEAVY_COMMANDS = {
    "fit-engine": "fit an engine profile to your own vLLM / SGLang benchmark results",
    "plan": "print the vllm serve / vllm bench serve commands that measure the gammas to compare",
}


def build_parser(settings: Settings | None = None, command: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; ``command``, where known, the subcommand about to run: the
    parsers of :data:`HEAVY_COMMANDS` other than it are then listed by name only (their
    modules stay unimported)."""
    settings = settings or Settings()
    parser = Parser(prog="specmodel", description="Roofline cost model of speculative decoding.")
    parser.add_argument("--version", action=_Version, nargs=0, help="print the version and exit")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    point = sub.add_parser("point", help="evaluate one scenario")
    scenario_options(point, settings)
    point.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    sweep.add_sweep_parser(sub, settings)
    calibrate = sub.add_parser("calibrate", help="compare the model with a calibration table")
    calibrate.add_argument(
        "--table",
        type=Path,
        default=None,
        help="calibration CSV (default: the article's table, shipped with the package)",
    )
    calibrate.add_argument("--markdown", action="store_true", help="print a Markdown table")
    _advise_parser(sub, settings)
    light = command is not None and command in COMMANDS and command not in HEAVY_COMMANDS
    for name, summary in HEAVY_COMMANDS.items():
        if light:
            sub.add_parser(name, help=summary)
        else:
            _heavy_parser(name, sub, settings)
    return parser


def _heavy_parser(name: str, sub: Any, settings: Settings) -> None:
    """The full parser of one of :data:`HEAVY_COMMANDS`, its command registered."""
    if name == "fit-engine":  # an engine profile fitted to the user's own benchmark runs
        from specmodel.cli import fit_engine

        fit_engine.add_parser(sub, settings)
        COMMANDS.setdefault("fit-engine", fit_engine.run_fit_engine)
    else:  # the benchmark commands that measure the gammas to compare
        from specmodel.cli import plan

        plan.add_parser(sub, settings)
        COMMANDS.setdefault("plan", plan.run_plan)


def _advise_parser(sub: Any, settings: Settings) -> None:
    advise = sub.add_parser(
        "advise", help="advise on gamma and drafter from a vLLM server's spec-decode metrics",
        description="Infer per-position acceptance from a vLLM log, a Prometheus scrape or benchmark results "
                    "(--bench), predict the speedup of each gamma at the given concurrency, and say whether to "
                    "keep, lower gamma, switch to a zero-cost drafter or turn speculation off.")  # fmt: skip
    _advise_sources(advise)
    runs_acceptance_option(advise, "with --bench: ")
    _advise_load_options(advise)
    advise.add_argument(
        "--context",
        type=int,
        default=None,
        help=f"prompt tokens per request (default: what the files state, else {DEFAULTS['context']})",
    )
    drafter = advise.add_mutually_exclusive_group()
    drafter_option(drafter)
    drafter.add_argument(
        "--speculative-config",
        metavar="JSON",
        help='vLLM\'s --speculative-config, e.g. \'{"method": "ngram", "num_speculative_tokens": 3}\'',
    )
    advise.add_argument(
        "--engine",
        metavar="NAME",
        default=None,
        help=f"engine whose profile prices the passes, one of {', '.join(settings.engines)} "
        f"(default: vllm: it reads a vLLM server; or the --engine-profile's; point's default is {DEFAULTS['engine']})",
    )
    engine_profile_option(advise)
    deployment_options(advise, settings, served=True)
    format_options(advise)
    server_options(advise)
    parallel_options(advise)
    advise.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    advise.add_argument(
        "--report",
        type=Path,
        metavar="FILE.html",
        default=None,
        help="also write the advice as a self-contained HTML page (figures of the speedup across concurrency "
        "and against gamma, the verdict, how it was made: version, inputs and their SHA-256, command line, "
        "date), viewable offline",
    )
    advise.add_argument(
        "--exit-status",
        action="store_true",
        help="exit with a status that says the verdict, to gate a canary: 0 for keep, else 10 + the verdict's "
        "place in the list of verdicts (docs/cli.md lists each with its status); "
        "without it, 0 whatever the verdict",
    )


def _advise_load_options(advise: Any) -> None:
    """The load ``advise`` prices the schedule by batch size over: one concurrency or a
    weighted list of them, or a Prometheus range export."""
    advise.add_argument(
        "--concurrency",
        type=concurrency_text,
        default=None,
        help="concurrent sequences B the server runs (required with --log and --metrics; with --bench, "
        "default: the largest concurrency run with speculation); or the load as batch sizes with their shares "
        "of time, N:WEIGHT,... (8:0.5,32:0.3,128:0.2; the verdict is priced at its median)",
    )
    advise.add_argument(
        "--load",
        type=Path,
        metavar="FILE",
        default=None,
        help="the load the server saw: a Prometheus range export of vllm:num_requests_running (the JSON answer "
        "of /api/v1/query_range); default: the running requests the files state",
    )


def _advise_sources(advise: Any) -> None:
    """Where ``advise`` reads what the server measured: a log, a scrape or benchmark runs."""
    source = advise.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--log",
        type=Path,
        metavar="FILE",
        help="vLLM log holding 'SpecDecoding metrics:' lines (- for standard input; gzip read as is)",
    )
    source.add_argument(
        "--metrics",
        type=Path,
        metavar="FILE",
        help="Prometheus scrape of vLLM's /metrics (text exposition; several scrapes appended "
        "give the increase between the first and the last; - for standard input; gzip read as is)",
    )
    source.add_argument(
        "--bench",
        type=Path,
        nargs="+",
        metavar="FILE",
        help="vllm bench serve --save-result JSON (--save-detailed too), SGLang bench_serving lines or a "
        "measurements CSV, or a folder of them: plain and "
        "speculative runs at the same --max-concurrency; the engine is calibrated to them (unless "
        "--engine-profile) and the measured speedups are shown beside the predictions (- for standard input)",
    )
    source.add_argument(
        "--url",
        metavar="http://HOST:PORT",
        default=None,
        help="a running vLLM server: its /metrics is scraped twice, --window seconds apart (the rates between "
        "the two), and /v1/models read for the model and max_model_len",
    )


#: Exit status of an interrupt (Ctrl-C): 128 + SIGINT, as a shell reports a process it killed.
INTERRUPTED = 130

#: The options whose files may be ``-``, standard input (read once, whichever option takes it).
STANDARD_INPUT_OPTIONS = ("log", "metrics", "bench")


def main(argv: list[str] | None = None, settings: Settings | None = None) -> int:
    _tolerant_output()
    settings = settings or Settings()
    argv = sys.argv[1:] if argv is None else list(argv)
    as_json = _json_requested(argv)
    with contextlib.suppress(AttributeError, ValueError):  # not in the main thread: leave it
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # past `ulimit -f`: an error, not a kill
    try:
        args = build_parser(settings, argv[0] if argv else None).parse_args(argv)
        args.command_line = ("specmodel", *argv)
        with _standard_input(args):
            text = COMMANDS[args.command](args, with_engine_profile(args, settings))
    except UsageError as exc:
        return _fail(exc.message, 2, as_json)
    except SpecModelError as exc:
        return _fail(str(exc), 2, as_json)
    except FileNotFoundError:
        if not working_folder_gone():
            raise
        return _fail(WORKING_FOLDER_GONE, 2, as_json)
    except KeyboardInterrupt as exc:
        if type(exc) is not KeyboardInterrupt:  # the interrupt of a program running this in-process
            raise
        return _fail("interrupted", INTERRUPTED, as_json, label="")
    status = write_stdout(text + "\n", "specmodel")
    return commands.verdict_status(args) if status == 0 else status


#: What a command that needs the working folder says when it has been removed under the process.
WORKING_FOLDER_GONE = "the working folder no longer exists: change to a folder that exists, or give absolute paths"


def _tolerant_output() -> None:
    """Let stdout and stderr write what their encoding cannot (``PYTHONIOENCODING=ascii``, a C
    locale): such a character comes out as a backslash escape (``\\u03b3`` for gamma), never as
    an error. Streams that cannot be reconfigured (in memory) are left as they are."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(ValueError, OSError):
                reconfigure(errors="backslashreplace")


def _json_requested(argv: list[str]) -> bool:
    """Whether ``--json`` is among the options (before a ``--``), so that errors are JSON too."""
    return "--json" in argv[: argv.index("--")] if "--" in argv else "--json" in argv


def _fail(message: str, status: int, as_json: bool, label: str = "error: ") -> int:
    """Say ``message`` on stderr (``specmodel: error: MESSAGE``, or under ``--json`` one JSON
    object ``{"error": MESSAGE, "exit_status": STATUS}``) and return ``status``."""
    if as_json:
        print(json.dumps({"error": message, "exit_status": status}, ensure_ascii=False), file=sys.stderr)
    else:
        print(f"specmodel: {label}{message}", file=sys.stderr)
    return status


@contextlib.contextmanager
def _standard_input(args: argparse.Namespace) -> Iterator[None]:
    """The options given ``-`` read standard input: it is copied once to a temporary file that
    they then name (it can be read once; a second ``-`` is refused)."""
    given = [(name, i) for name in STANDARD_INPUT_OPTIONS for i, path in enumerate(_paths(args, name))
             if str(path) == STANDARD_INPUT]  # fmt: skip
    if not given:
        yield
        return
    if len(given) > 1:
        raise SpecModelError("standard input (-) can be read once: give - to one file only")
    name, index = given[0]
    with standard_input(f"--{name} -") as copy:
        value = getattr(args, name)
        if isinstance(value, list):
            value[index] = copy
        else:
            setattr(args, name, copy)
        yield


def _paths(args: argparse.Namespace, name: str) -> list[Any]:
    """The files an option names: none, one, or a list (``--bench``)."""
    value = getattr(args, name, None)
    return [] if value is None else value if isinstance(value, list) else [value]


def write_stdout(text: str, prog: str) -> int:
    """Write ``text`` to stdout in one go and return the exit status: 0; 141 (as if killed by
    SIGPIPE), saying nothing, when the reader has gone; 1 with one line on stderr when the
    write fails (a full disk, ``ulimit -f``), after cutting a regular file back to where it
    was, so that it never holds a truncated output."""
    start = _end_of(sys.stdout)
    try:
        _write_all(sys.stdout, text)
    except BrokenPipeError:
        _silence_stdout()
        return 141
    except OSError as exc:
        if start is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(sys.stdout.fileno(), start)
        _silence_stdout()
        print(f"{prog}: error: cannot write the output: {exc.strerror or exc}", file=sys.stderr)
        return 1
    return 0


def _write_all(stream: Any, text: str) -> None:
    """Write ``text`` to ``stream``, to its file descriptor where it has one: Python's buffered
    writer takes a short write (past ``ulimit -f``) as success and drops the rest."""
    try:
        fd = stream.fileno()
    except (OSError, ValueError):  # an in-memory stream
        stream.write(text)
        stream.flush()
        return
    stream.flush()
    data = memoryview(text.encode(stream.encoding or "utf-8", getattr(stream, "errors", None) or "strict"))
    while data:
        data = data[os.write(fd, data) :]


def _end_of(stream: Any) -> int | None:
    """Where a write to ``stream`` will start if it is a regular file (None otherwise)."""
    try:
        stream.flush()
        fd = stream.fileno()
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None
        return info.st_size if fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_APPEND else os.lseek(fd, 0, os.SEEK_CUR)
    except (OSError, ValueError):
        return None


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so that the flush at exit does not fail (and print) again."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


__all__ = ["COMMANDS", "build_parser", "main", "write_stdout"]
