"""Command line: ``specmodel point``, ``specmodel sweep``.

Bad input prints one line naming the value and what is allowed, and exits with status 2
without writing anything.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from specmodel.drafters import all_drafter_names
from specmodel.errors import SpecModelError
from specmodel.model import PROFILES, SCENARIO_DEFAULTS, defaults, evaluate
from specmodel.readouts import BY_KEY, READOUTS, point_readouts
from specmodel.specs import architecture_catalog, hardware_catalog

SWEEP_FORMATS = (".csv", ".parquet")


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr and exit status 2."""

    def error(self, message: str):  # noqa: D401 - argparse API
        self.exit(2, f"specmodel: error: {message}\n")


def _scenario_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--concurrency", type=int, default=SCENARIO_DEFAULTS["concurrency"],
                        help="concurrent sequences B (default: %(default)s)")
    parser.add_argument("--context", type=int, default=SCENARIO_DEFAULTS["context"],
                        help="prompt tokens per sequence (default: %(default)s)")
    parser.add_argument("--gamma", type=int, default=SCENARIO_DEFAULTS["gamma"],
                        help="draft tokens per iteration, num_speculative_tokens (default: %(default)s)")
    _drafter_option(parser, default=defaults()["drafter"])
    parser.add_argument("--acceptance", choices=PROFILES, default=SCENARIO_DEFAULTS["acceptance"],
                        help="acceptance across draft positions (default: %(default)s)")
    parser.add_argument("--alpha", type=float, default=SCENARIO_DEFAULTS["alpha"],
                        help="acceptance rate, strictly between 0 and 1 (default: %(default)s)")
    _deployment_options(parser)


def _drafter_option(parser, default: str | None = None) -> None:
    parser.add_argument("--drafter", metavar="NAME", default=default,
                        help="where drafts come from: a smaller model sharing the target's vocabulary, ngram, or "
                             "a head on the target (eagle, eagle-32k, mtp); one of " + ", ".join(all_drafter_names())
                             + (" (default: %(default)s)" if default else ""))


def _deployment_options(parser: argparse.ArgumentParser) -> None:
    """``--hardware`` and ``--target``; names are checked by the model, which lists the known ones."""
    parser.add_argument("--hardware", metavar="NAME", default=defaults()["hardware"],
                        help="accelerator, one of " + ", ".join(hardware_catalog()) + " (default: %(default)s)")
    parser.add_argument("--target", metavar="NAME", default=defaults()["target"],
                        help="target model, one of " + ", ".join(architecture_catalog()) + " (default: %(default)s)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="specmodel", description="Roofline cost model of speculative decoding.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    point = sub.add_parser("point", help="evaluate one scenario")
    _scenario_options(point)
    point.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    sweep = sub.add_parser("sweep", help="evaluate the default grid and write it to a file")
    sweep.add_argument("--out", required=True, type=Path, help="output file, .csv or .parquet")
    _deployment_options(sweep)
    calibrate = sub.add_parser("calibrate", help="compare the model with a calibration table")
    calibrate.add_argument("--table", type=Path, default=Path("tests/data/calibration.csv"),
                           help="calibration CSV (default: %(default)s)")
    calibrate.add_argument("--markdown", action="store_true", help="print a Markdown table")
    _advise_parser(sub)
    return parser


def _advise_parser(sub) -> None:
    advise = sub.add_parser(
        "advise", help="advise on gamma and drafter from a vLLM server's spec-decode metrics",
        description="Infer per-position acceptance from a vLLM log or Prometheus scrape, predict the speedup "
                    "of each gamma at the given concurrency, and say whether to keep, lower gamma, switch to a "
                    "zero-cost drafter or turn speculation off.")
    source = advise.add_mutually_exclusive_group(required=True)
    source.add_argument("--log", type=Path, metavar="FILE",
                        help="vLLM log holding 'SpecDecoding metrics:' lines")
    source.add_argument("--metrics", type=Path, metavar="FILE",
                        help="Prometheus scrape of vLLM's /metrics (text exposition; several scrapes appended "
                             "give the increase between the first and the last)")
    advise.add_argument("--concurrency", type=int, required=True,
                        help="concurrent sequences B the server runs")
    advise.add_argument("--context", type=int, default=SCENARIO_DEFAULTS["context"],
                        help="prompt tokens per sequence (default: %(default)s)")
    drafter = advise.add_mutually_exclusive_group(required=True)
    _drafter_option(drafter)
    drafter.add_argument("--speculative-config", metavar="JSON",
                         help="vLLM's --speculative-config, e.g. '{\"method\": \"ngram\", "
                              "\"num_speculative_tokens\": 3}'")
    _deployment_options(advise)
    advise.add_argument("--json", action="store_true", help="print one JSON object instead of text")


def format_table(values: dict[str, object]) -> str:
    """The point readouts as an aligned two-column table."""
    rows = [(r.label, r.format(values[r.key])) for r in READOUTS]
    rows.append(("Per-position acceptance", ", ".join(f"{x:.3f}" for x in values["per_position"])))
    rows.append(("Fits on the card", "yes" if values["fits"] else "no"))
    width = max(len(label) for label, _ in rows)
    return "\n".join(f"{label:<{width}}  {text}" for label, text in rows)


def run_point(args: argparse.Namespace) -> str:
    ev = evaluate(args.concurrency, args.context, args.gamma, args.drafter, args.acceptance, args.alpha,
                  hardware=args.hardware, target=args.target)
    values = point_readouts(ev)
    if args.json:
        return json.dumps(values)
    head = (f"{args.concurrency} sequence(s), context {args.context}, gamma {args.gamma}, "
            f"drafter {args.drafter}, {args.acceptance} acceptance, alpha {args.alpha}, {args.target} on {args.hardware}")
    return head + "\n" + format_table(values)


def write_atomically(frame, out: Path) -> None:
    """Write ``frame`` to ``out`` (CSV or Parquet by extension) via a temporary file in the
    same folder, renamed into place only once complete."""
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", dir=out.parent)
    os.close(fd)
    try:
        if out.suffix == ".csv":
            frame.to_csv(tmp, index=False)
        else:
            frame.to_parquet(tmp, index=False)
        os.replace(tmp, out)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def run_sweep(args: argparse.Namespace) -> str:
    from specmodel.grid import sweep  # pandas is only needed here

    out: Path = args.out
    if out.suffix not in SWEEP_FORMATS:
        raise SpecModelError(f"--out {str(out)!r} has an unknown extension; allowed: {', '.join(SWEEP_FORMATS)}")
    if not out.parent.is_dir():
        raise SpecModelError(f"--out {str(out)!r}: folder {str(out.parent)!r} does not exist")
    frame = sweep(hardware=args.hardware, target=args.target)
    write_atomically(frame, out)
    return f"wrote {len(frame):,} scenarios to {out}"


def run_calibrate(args: argparse.Namespace) -> str:
    from specmodel.calibration import compare, load_table, markdown_table

    if not args.table.is_file():
        raise SpecModelError(f"--table {str(args.table)!r} is not a file")
    compared = compare(load_table(args.table))
    if args.markdown:
        return markdown_table(compared)
    columns = ["concurrency", "context", "gamma", "drafter", "acceptance", "alpha", "metric", "value", "model",
               "relative_error", "within"]
    return compared[columns].to_string(index=False)


def run_advise(args: argparse.Namespace) -> str:
    from specmodel import advise, vllm_metrics

    if args.speculative_config is not None:
        deployment = advise.deployment_from_speculative_config(args.speculative_config)
    else:
        deployment = advise.deployment_from_drafter(args.drafter, args.target)
    if args.log is not None:
        counters = vllm_metrics.load_log(args.log, "--log")
    else:
        counters = vllm_metrics.load_exposition(args.metrics, "--metrics")
    advice = advise.advise(vllm_metrics.per_position_rate(counters), args.concurrency, args.context, deployment,
                           args.hardware, args.target)
    measured = vllm_metrics.counters_summary(counters)
    if args.json:
        return json.dumps(advise.advice_dict(advice, measured))
    return advise.format_advice(advice, measured)


COMMANDS = {"point": run_point, "sweep": run_sweep, "calibrate": run_calibrate, "advise": run_advise}


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        text = COMMANDS[args.command](args)
    except SpecModelError as exc:
        print(f"specmodel: error: {exc}", file=sys.stderr)
        return 2
    print(text)
    return 0


__all__ = ["BY_KEY", "build_parser", "main"]
