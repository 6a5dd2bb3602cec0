"""Command line: ``specmodel point``, ``sweep``, ``calibrate`` and ``advise``.

The settings are resolved once here (the package defaults) and passed to everything the
commands call. Bad input prints one line naming the value and what is allowed, and exits
with status 2 without writing anything; so do an interrupt and a closed pipe.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from specmodel.cli import commands, sweep
from specmodel.cli.options import (
    Parser,
    deployment_options,
    drafter_option,
    engine_options,
    parallel_options,
    rates,
    scenario_options,
)
from specmodel.errors import SpecModelError
from specmodel.model.scenario import DEFAULTS
from specmodel.model.settings import Settings

COMMANDS: dict[str, Callable[[argparse.Namespace, Settings], str]] = {
    "point": commands.run_point,
    "sweep": sweep.run_sweep,
    "calibrate": commands.run_calibrate,
    "advise": commands.run_advise,
}


def build_parser(settings: Settings | None = None) -> argparse.ArgumentParser:
    settings = settings or Settings()
    parser = Parser(prog="specmodel", description="Roofline cost model of speculative decoding.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    point = sub.add_parser("point", help="evaluate one scenario")
    scenario_options(point, settings)
    point.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    sweep = sub.add_parser(
        "sweep",
        help="evaluate the default grid and write it to a file",
        description="Evaluate the default grid (every concurrency, context, gamma, drafter, "
        "acceptance profile, alpha and engine) and write one row per scenario.",
    )
    sweep.add_argument("--out", required=True, type=Path, help="output file, .csv or .parquet")
    sweep.add_argument(
        "--per-position",
        type=rates,
        metavar="U1,U2,...",
        default=None,
        help="measured per-position acceptance for every scenario (replaces the acceptance and alpha "
        "axes; gamma is its length)",
    )
    sweep.add_argument(
        "--mean-acceptance-length",
        type=float,
        metavar="M",
        default=None,
        help="measured mean acceptance length for every scenario (replaces the acceptance and alpha axes)",
    )
    engine_options(sweep, settings)
    deployment_options(sweep, settings)
    parallel_options(sweep, grid=True)
    calibrate = sub.add_parser("calibrate", help="compare the model with a calibration table")
    calibrate.add_argument(
        "--table",
        type=Path,
        default=None,
        help="calibration CSV (default: the article's table, shipped with the package)",
    )
    calibrate.add_argument("--markdown", action="store_true", help="print a Markdown table")
    _advise_parser(sub, settings)
    return parser


def _advise_parser(sub: Any, settings: Settings) -> None:
    advise = sub.add_parser(
        "advise", help="advise on gamma and drafter from a vLLM server's spec-decode metrics",
        description="Infer per-position acceptance from a vLLM log or Prometheus scrape, predict the speedup "
                    "of each gamma at the given concurrency, and say whether to keep, lower gamma, switch to a "
                    "zero-cost drafter or turn speculation off.")  # fmt: skip
    source = advise.add_mutually_exclusive_group(required=True)
    source.add_argument("--log", type=Path, metavar="FILE", help="vLLM log holding 'SpecDecoding metrics:' lines")
    source.add_argument(
        "--metrics",
        type=Path,
        metavar="FILE",
        help="Prometheus scrape of vLLM's /metrics (text exposition; several scrapes appended "
        "give the increase between the first and the last)",
    )
    advise.add_argument("--concurrency", type=int, required=True, help="concurrent sequences B the server runs")
    advise.add_argument(
        "--context", type=int, default=DEFAULTS["context"], help="prompt tokens per sequence (default: %(default)s)"
    )
    drafter = advise.add_mutually_exclusive_group(required=True)
    drafter_option(drafter)
    drafter.add_argument(
        "--speculative-config",
        metavar="JSON",
        help='vLLM\'s --speculative-config, e.g. \'{"method": "ngram", "num_speculative_tokens": 3}\'',
    )
    advise.add_argument(
        "--engine",
        metavar="NAME",
        default="vllm",
        help=f"engine whose profile prices the passes, one of {', '.join(settings.engines)} "
        "(default: %(default)s: it reads a vLLM server)",
    )
    deployment_options(advise, settings)
    parallel_options(advise)
    advise.add_argument("--json", action="store_true", help="print one JSON object instead of text")


def main(argv: list[str] | None = None, settings: Settings | None = None) -> int:
    settings = settings or Settings()
    try:
        args = build_parser(settings).parse_args(argv)
        text = COMMANDS[args.command](args, settings)
        print(text, flush=True)
    except SpecModelError as exc:
        print(f"specmodel: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("specmodel: interrupted", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader went away (e.g. `specmodel point | head -1`): say nothing more.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 2
    return 0


__all__ = ["COMMANDS", "build_parser", "main"]
