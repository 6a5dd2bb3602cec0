"""The commands ``point``, ``calibrate`` and ``advise`` (``sweep`` is :mod:`specmodel.cli.sweep`). Each takes the parsed
options and the settings resolved once by :func:`specmodel.cli.main`, and returns its text."""

from __future__ import annotations

import argparse
import dataclasses
import json
from typing import Any

from specmodel.cli.options import scenario_fields
from specmodel.formatting import plain
from specmodel.model.evaluate import evaluate, scenario_grid
from specmodel.model.scenario import DEFAULTS
from specmodel.model.settings import Settings
from specmodel.readouts import READOUTS, point_readouts


def format_table(values: dict[str, Any]) -> str:
    """The point readouts as an aligned two-column table."""
    rows = [(r.label, r.format(values[r.key])) for r in READOUTS]
    rows.append(("Per-position acceptance", ", ".join(f"{x:.3f}" for x in values["per_position"])))
    if values["ngram_match_rate"] < 1:
        rows.append(("Iterations with an n-gram match", f"{values['ngram_match_rate']:.0%}"))
    rows.append(("Fits on the card", "yes" if values["fits"] else "no"))
    width = max(len(label) for label, _ in rows)
    return "\n".join(f"{label:<{width}}  {text}" for label, text in rows)


def _acceptance_text(fields: dict[str, Any], values: dict[str, Any]) -> str:
    """How the acceptance was given, and the alpha the model used."""
    if "per_position" in fields:
        return "measured per-position acceptance"
    if "mean_acceptance_length" in fields:
        return (
            f"mean acceptance length {plain(fields['mean_acceptance_length'])}: same acceptance at every "
            f"position, alpha {values['alpha']:.4f}"
        )
    return f"{fields.get('acceptance', DEFAULTS['acceptance'])} acceptance, alpha {values['alpha']:g}"


def run_point(args: argparse.Namespace, settings: Settings) -> str:
    fields = scenario_fields(args)
    grid = scenario_grid(settings=settings, **fields)
    values = point_readouts(evaluate(grid, settings=settings))
    values.update(
        engine=str(grid.engine.reshape(-1)[0]),
        batching=str(grid.batching.reshape(-1)[0]),
        gamma=int(grid.gamma.reshape(-1)[0]),
        generated_tokens=grid.generated_tokens,
        draft_tensor_parallel=int(grid.draft_tensor_parallel.reshape(-1)[0]),
        tree_topk=int(grid.tree_topk.reshape(-1)[0]),
        verify_tokens=int(grid.verify_tokens.reshape(-1)[0]),
    )
    if args.json:
        return json.dumps(values, allow_nan=False)
    head = (
        f"{args.concurrency} sequence(s), context {args.context}, {values['generated_tokens']} generated tokens, "
        f"gamma {values['gamma']}{_tree_text(values)}, drafter {args.drafter}, {_acceptance_text(fields, values)}, "
        f"{args.target} on {_gpus_text(args.hardware, values)}, engine {values['engine']} "
        f"({values['batching']} batching)"
    )
    return head + "\n" + format_table(values)


def _tree_text(values: dict[str, Any]) -> str:
    """`` (a tree: K candidates per step, V positions verified)`` or nothing for a chain."""
    if values["tree_topk"] == 1 and values["verify_tokens"] == values["gamma"] + 1:
        return ""
    return f" (a tree: {values['tree_topk']} candidates per step, {values['verify_tokens']} positions verified)"


def _gpus_text(hardware: str, values: dict[str, Any]) -> str:
    """``h100-sxm`` or ``4x h100-sxm (tensor parallel; drafter on 1)``."""
    n, d = int(values["gpus"]), values["draft_tensor_parallel"]
    if n == 1:
        return hardware
    return f"{n}x {hardware} (tensor parallel{'' if d == n else f'; drafter on {d}'})"


def run_calibrate(args: argparse.Namespace, settings: Settings) -> str:
    from specmodel.calibration import compare, load_table, markdown_table, text_table

    compared = compare(load_table(args.table), settings)
    return markdown_table(compared) if args.markdown else text_table(compared)


def run_advise(args: argparse.Namespace, settings: Settings) -> str:
    from specmodel.vllm import advice_text, advise, speculative_config
    from specmodel.vllm.counters import counters_summary, per_position_rate
    from specmodel.vllm.logs import load_log
    from specmodel.vllm.prometheus import load_exposition

    if args.speculative_config is not None:
        served = speculative_config.served_drafter_from_config(args.speculative_config)
    else:
        served = speculative_config.served_drafter(args.drafter, args.target)
    served = dataclasses.replace(
        served,
        draft_tensor_parallel=args.draft_tensor_parallel or served.draft_tensor_parallel,
        tree_topk=args.tree_topk or served.tree_topk,
        verify_tokens=args.verify_tokens or served.verify_tokens,
    )
    counters = load_log(args.log, "--log") if args.log is not None else load_exposition(args.metrics, "--metrics")
    advice = advise.advise(
        per_position_rate(counters),
        args.concurrency,
        args.context,
        served,
        args.hardware,
        args.target,
        settings,
        engine=args.engine,
        tensor_parallel=args.tensor_parallel or 1,
    )
    measured = counters_summary(counters)
    notes = tuple(counters.notes)
    if args.json:
        return json.dumps(advice_text.advice_dict(advice, measured, notes), allow_nan=False)
    return advice_text.format_advice(advice, measured, notes)
