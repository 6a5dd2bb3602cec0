"""Command line: ``specmodel point``, ``sweep``, ``calibrate`` and ``advise``.

The settings are resolved once here (the package defaults) and passed to everything the
commands call. Bad input prints one line naming the value and what is allowed, and exits
with status 2 without writing anything; so do an interrupt and a closed pipe.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from specmodel.errors import SpecModelError
from specmodel.model.drafters import all_drafter_names
from specmodel.model.evaluate import evaluate, scenario_grid
from specmodel.model.scenario import DEFAULTS, PROFILES, ScenarioGrid
from specmodel.model.settings import Settings, current
from specmodel.model.specs import architecture_catalog, hardware_catalog
from specmodel.readouts import BY_KEY, READOUTS, point_readouts
from specmodel.safe_input import excerpt

SWEEP_FORMATS = (".csv", ".parquet")


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr and exit status 2."""

    def error(self, message: str) -> Any:  # noqa: D401 - argparse API
        self.exit(2, f"specmodel: error: {message}\n")


def _scenario_options(parser: argparse.ArgumentParser, settings: Settings) -> None:
    parser.add_argument(
        "--concurrency", type=int, default=DEFAULTS["concurrency"], help="concurrent sequences B (default: %(default)s)"
    )
    parser.add_argument(
        "--context", type=int, default=DEFAULTS["context"], help="prompt tokens per sequence (default: %(default)s)"
    )
    parser.add_argument(
        "--gamma",
        type=int,
        default=DEFAULTS["gamma"],
        help="draft tokens per iteration, num_speculative_tokens (default: %(default)s)",
    )
    _drafter_option(parser, default=settings.deployment.draft)
    parser.add_argument(
        "--acceptance",
        choices=PROFILES,
        default=DEFAULTS["acceptance"],
        help="acceptance across draft positions (default: %(default)s)",
    )
    parser.add_argument(
        "--alpha",
        type=float,
        default=DEFAULTS["alpha"],
        help="acceptance rate, strictly between 0 and 1 (default: %(default)s)",
    )
    _deployment_options(parser, settings)


def _drafter_option(parser: Any, default: str | None = None) -> None:
    parser.add_argument(
        "--drafter",
        metavar="NAME",
        default=default,
        help="where drafts come from: a smaller model sharing the target's vocabulary, ngram, or "
        "a head on the target (eagle, eagle-32k, mtp); one of "
        + ", ".join(all_drafter_names())
        + (" (default: %(default)s)" if default else ""),
    )


def _deployment_options(parser: argparse.ArgumentParser, settings: Settings) -> None:
    """``--hardware`` and ``--target``; names are checked by the model, which lists the known ones."""
    parser.add_argument(
        "--hardware",
        metavar="NAME",
        default=settings.deployment.hardware,
        help="accelerator, one of " + ", ".join(hardware_catalog()) + " (default: %(default)s)",
    )
    parser.add_argument(
        "--target",
        metavar="NAME",
        default=settings.deployment.target,
        help="target model, one of " + ", ".join(architecture_catalog()) + " (default: %(default)s)",
    )


def build_parser(settings: Settings | None = None) -> argparse.ArgumentParser:
    settings = settings or current()
    parser = _Parser(prog="specmodel", description="Roofline cost model of speculative decoding.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    point = sub.add_parser("point", help="evaluate one scenario")
    _scenario_options(point, settings)
    point.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    sweep = sub.add_parser("sweep", help="evaluate the default grid and write it to a file")
    sweep.add_argument("--out", required=True, type=Path, help="output file, .csv or .parquet")
    _deployment_options(sweep, settings)
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
        "advise",
        help="advise on gamma and drafter from a vLLM server's spec-decode metrics",
        description="Infer per-position acceptance from a vLLM log or Prometheus scrape, predict the speedup "
        "of each gamma at the given concurrency, and say whether to keep, lower gamma, switch to a "
        "zero-cost drafter or turn speculation off.",
    )
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
    _drafter_option(drafter)
    drafter.add_argument(
        "--speculative-config",
        metavar="JSON",
        help='vLLM\'s --speculative-config, e.g. \'{"method": "ngram", "num_speculative_tokens": 3}\'',
    )
    _deployment_options(advise, settings)
    advise.add_argument("--json", action="store_true", help="print one JSON object instead of text")


def format_table(values: dict[str, Any]) -> str:
    """The point readouts as an aligned two-column table."""
    rows = [(r.label, r.format(values[r.key])) for r in READOUTS]
    rows.append(("Per-position acceptance", ", ".join(f"{x:.3f}" for x in values["per_position"])))
    rows.append(("Fits on the card", "yes" if values["fits"] else "no"))
    width = max(len(label) for label, _ in rows)
    return "\n".join(f"{label:<{width}}  {text}" for label, text in rows)


def _scenario(args: argparse.Namespace, settings: Settings) -> ScenarioGrid:
    """The scenario the options describe, validated by the model (one line per problem)."""
    fields = {
        k: getattr(args, k)
        for k in ("concurrency", "context", "gamma", "drafter", "acceptance", "alpha", "hardware", "target")
    }
    return scenario_grid(settings=settings, **fields)


def run_point(args: argparse.Namespace, settings: Settings) -> str:
    values = point_readouts(evaluate(_scenario(args, settings), settings=settings))
    if args.json:
        return json.dumps(values, allow_nan=False)
    head = (
        f"{args.concurrency} sequence(s), context {args.context}, gamma {args.gamma}, "
        f"drafter {args.drafter}, {args.acceptance} acceptance, alpha {args.alpha}, {args.target} on {args.hardware}"
    )
    return head + "\n" + format_table(values)


def write_atomically(frame: Any, out: Path) -> None:
    """Write ``frame`` to ``out`` (CSV or Parquet by extension) via a temporary file in the
    same folder, renamed into place only once complete; the temporary file is removed on
    any failure, Ctrl-C or SIGTERM."""
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", dir=out.parent)
    os.close(fd)
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        if out.suffix == ".csv":
            frame.to_csv(tmp, index=False)
        else:
            frame.to_parquet(tmp, index=False)
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)
        os.replace(tmp, out)
    finally:
        signal.signal(signal.SIGTERM, previous)
        if os.path.exists(tmp):
            os.unlink(tmp)


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def check_sweep_output(out: Path) -> None:
    """Refuse an output path before computing anything: a known extension, an existing
    folder that we may write in, and no folder at the path itself."""
    if out.suffix not in SWEEP_FORMATS:
        raise SpecModelError(f"--out {excerpt(str(out))} has an unknown extension; allowed: {', '.join(SWEEP_FORMATS)}")
    if out.is_dir():
        raise SpecModelError(f"--out {excerpt(str(out))} is a folder; give a file name ending in .csv or .parquet")
    parent = out.parent
    if not parent.is_dir():
        raise SpecModelError(f"--out {excerpt(str(out))}: folder {excerpt(str(parent))} does not exist")
    if not os.access(parent, os.W_OK) or str(parent.resolve()).startswith(("/proc", "/sys", "/dev")):
        raise SpecModelError(f"--out {excerpt(str(out))}: cannot write in folder {excerpt(str(parent))}")


def run_sweep(args: argparse.Namespace, settings: Settings) -> str:
    from specmodel.grid import sweep  # pandas is only needed here

    out: Path = args.out
    check_sweep_output(out)
    frame = sweep(hardware=args.hardware, target=args.target, settings=settings)
    try:
        write_atomically(frame, out)
    except OSError as exc:
        raise SpecModelError(f"--out {excerpt(str(out))}: cannot write: {exc.strerror or exc}") from None
    return f"wrote {len(frame):,} scenarios to {out}"


def run_calibrate(args: argparse.Namespace, settings: Settings) -> str:
    from specmodel.calibration import compare, load_table, markdown_table

    compared = compare(load_table(args.table), settings)
    if args.markdown:
        return markdown_table(compared)
    columns = [
        "concurrency",
        "context",
        "gamma",
        "drafter",
        "acceptance",
        "alpha",
        "metric",
        "value",
        "model",
        "relative_error",
        "within",
    ]
    return str(compared[columns].to_string(index=False))


def run_advise(args: argparse.Namespace, settings: Settings) -> str:
    from specmodel.vllm import advice_text, advise, speculative_config
    from specmodel.vllm.logs import load_log
    from specmodel.vllm.metrics import counters_summary, per_position_rate
    from specmodel.vllm.prometheus import load_exposition

    if args.speculative_config is not None:
        deployment = speculative_config.deployment_from_speculative_config(args.speculative_config)
    else:
        deployment = speculative_config.deployment_from_drafter(args.drafter, args.target)
    counters = load_log(args.log, "--log") if args.log is not None else load_exposition(args.metrics, "--metrics")
    advice = advise.advise(
        per_position_rate(counters), args.concurrency, args.context, deployment, args.hardware, args.target, settings
    )
    measured = counters_summary(counters)
    if args.json:
        return json.dumps(advice_text.advice_dict(advice, measured), allow_nan=False)
    return advice_text.format_advice(advice, measured)


COMMANDS: dict[str, Callable[[argparse.Namespace, Settings], str]] = {
    "point": run_point,
    "sweep": run_sweep,
    "calibrate": run_calibrate,
    "advise": run_advise,
}


def main(argv: list[str] | None = None) -> int:
    settings = current()
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


__all__ = ["BY_KEY", "build_parser", "main"]
