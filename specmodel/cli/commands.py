"""The commands ``point``, ``calibrate`` and ``advise`` (``sweep`` is :mod:`specmodel.cli.sweep`). Each takes the parsed
options and the settings resolved once by :func:`specmodel.cli.main`, and returns its text."""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
from typing import TYPE_CHECKING, Any

from specmodel.cli.options import resolve_model_options, scenario_fields
from specmodel.errors import SpecModelError
from specmodel.formatting import plain
from specmodel.model.domain import domain_line, domain_readout, outside_domain
from specmodel.model.drafters import check_declared_head
from specmodel.model.evaluate import evaluate, scenario_grid
from specmodel.model.scenario import DEFAULTS, ScenarioGrid
from specmodel.model.settings import Settings
from specmodel.output_path import check_output, command_inputs
from specmodel.readouts import READOUTS, point_readouts
from specmodel.safe_input import path_text

if TYPE_CHECKING:  # the vLLM side is imported by the advise command only, when it runs
    from specmodel.vllm.counters import SpecDecodeCounters


#: Seconds between the two scrapes of ``advise --url``: long enough for a busy server's
#: counters to move by thousands of drafts.
DEFAULT_WINDOW_S = 10.0

#: What ``point`` says of its default engine, which is not ``advise``'s (that reads a vLLM server).
POINT_ENGINE_NOTE = "; point's default engine, advise's is vllm"
#: What ``advise`` says of its default engine, which is not ``point``'s.
ADVISE_ENGINE_NOTE = f"vllm (advise's default engine: it reads a vLLM server; point's is {DEFAULTS['engine']})"

#: Exit status of ``advise --exit-status`` for a verdict other than keep: this plus the verdict's
#: place in :data:`specmodel.vllm.advise.ADVICE` (keep, the first, exits 0).
VERDICT_STATUS_BASE = 10

#: The level of the interval ``point`` prints around its speedup (``advise``'s default too).
INTERVAL_LEVEL = 0.8

#: Readouts the table leaves out: ``speedup`` is ``throughput_speedup``, printed under that name.
TABLE_OMITS = frozenset({"speedup"})


def format_table(values: dict[str, Any]) -> str:
    """The point readouts as an aligned two-column table; the speedup under both its names
    (decode alone, and output throughput with prefill), not a third time as ``speedup``."""
    rows = [(r.label, r.format(values[r.key])) for r in READOUTS if r.key not in TABLE_OMITS]
    rows.append(("Per-position acceptance", ", ".join(f"{x:.3f}" for x in values["per_position"])))
    if values["ngram_match_rate"] < 1:
        rows.append(("Iterations with an n-gram match", f"{values['ngram_match_rate']:.0%}"))
    if "speedup_interval" in values:
        low, high = values["speedup_interval"]
        rows.append((f"Throughput speedup, {values['interval_level']:.0%} interval", f"{low:.2f}x to {high:.2f}x"))
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
    """One scenario's readouts as a table (or ``--json``), with a line saying where the scenario
    lies outside the engine profile's data; an ``mtp`` drafter for a target that ships no MTP
    layers is refused (:func:`specmodel.model.drafters.check_declared_head`)."""
    resolve_model_options(args)
    fields = scenario_fields(args)
    grid = scenario_grid(settings=settings, **fields)
    check_declared_head(str(grid.drafter.reshape(-1)[0]), grid.target)
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
    values.update(_speedup_interval(grid, settings, values))
    notes = _outside_notes(grid, settings)
    if args.json:
        return strict_json({**values, "domain": domain_readout(notes)})
    head = (
        f"{args.concurrency} sequence(s), context {args.context}, {values['generated_tokens']} generated tokens, "
        f"gamma {values['gamma']}{_tree_text(values)}, drafter {args.drafter}, {_acceptance_text(fields, values)}, "
        f"{args.target} on {_gpus_text(args.hardware, values)}, engine {values['engine']} "
        f"({values['batching']} batching{POINT_ENGINE_NOTE if args.engine is None else ''})"
    )
    line = domain_line(notes)
    return head + "\n" + format_table(values) + (f"\n{line}" if line else "")


def _speedup_interval(grid: ScenarioGrid, settings: Settings, values: dict[str, Any]) -> dict[str, Any]:
    """The 80% interval of the one scenario's speedup (:func:`specmodel.uncertainty.speedup_interval`:
    the engine profile's held-out errors), as ``speedup_interval`` [low, high] and ``interval_level``."""
    from specmodel.uncertainty import speedup_interval

    low, high = speedup_interval(settings, values["engine"], str(grid.drafter.reshape(-1)[0]),
                                 int(grid.concurrency.reshape(-1)[0]), float(values["speedup"]))  # fmt: skip
    return {"speedup_interval": [float(low), float(high)], "interval_level": INTERVAL_LEVEL}


def _outside_notes(grid: ScenarioGrid, settings: Settings) -> tuple[str, ...]:
    """Where the one scenario of ``grid`` lies outside the data its engine profile was fitted on
    (:func:`specmodel.model.domain.outside_domain`)."""
    names = ("engine", "drafter", "concurrency", "tensor_parallel")
    first = {name: getattr(grid, name).reshape(-1)[0] for name in names}
    return outside_domain(
        settings.engine(str(first["engine"])), target=grid.target, hardware=grid.hardware,
        drafter=str(first["drafter"]), concurrency=int(first["concurrency"]),
        tensor_parallel=int(first["tensor_parallel"]),
    )  # fmt: skip


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
    """Advice from a vLLM server's counters (``--log``, ``--metrics`` or a live ``--url``) for
    the deployment its files state, each field settled against the options
    (:mod:`specmodel.cli.deployment`). A layout option given as 0 is passed on and refused as
    ``point`` refuses it (never read as "not given")."""
    if args.report is not None:
        check_report_path(args)
    from specmodel.cli.deployment import check_given_options, resolve
    from specmodel.vllm import advice_text, advise
    from specmodel.vllm.counters import counters_summary, per_position_rate
    from specmodel.vllm.load import deployed_config, given_load, load_advice, load_dict, load_text, server_load

    load = given_load(args)
    if args.bench is not None:
        return _advise_bench(args, settings)
    if args.mean_acceptance_length is not None:
        raise SpecModelError("--mean-acceptance-length goes with --bench (a log or a scrape carries its acceptance)")
    if args.window is not None and args.url is None:
        raise SpecModelError("--window is the time between the two scrapes of --url; give --url too")
    check_given_options(args)
    counters, stated = _server_files(args)
    deployment = resolve(args, settings, stated)
    engine = args.engine or "vllm"
    advice = advise.advise(
        per_position_rate(counters), deployment.concurrency, deployment.context, deployment.served,
        deployment.hardware, deployment.target, deployment.settings, engine=engine,
        tensor_parallel=deployment.tensor_parallel, observed=deployment.observed, measured=_counters_source(args),
    )  # fmt: skip
    outside = _advice_outside(advice, deployment.settings, deployment.engine_version)
    if outside:
        reason = f"{advice.reason} (priced by the {engine} profile outside the data it was fitted on: see above)"
        advice = dataclasses.replace(advice, reason=reason)
    measured = counters_summary(counters)
    args.verdict = advice.verdict
    notes = counters.notes
    text = advice_text.format_advice(advice, measured, notes)
    text = _deployment_lines(deployment, outside, args.engine is None) + "\n" + text
    by_load = load_advice(advice, deployment.settings, load or server_load(stated, advice.concurrency),
                          deployed_config(args, stated))  # fmt: skip
    text += "\n" + load_text(by_load)
    if args.report is not None:
        _write_report(args, advice, text, deployment.settings)
    if args.json:
        extra = {**_deployment_dict(deployment, outside), **load_dict(by_load)}
        return strict_json({**advice_text.advice_dict(advice, measured, notes), **extra, **_report_key(args)})
    return text + _report_line(args)


def _counters_source(args: argparse.Namespace) -> str:
    """The option and file (or server) the counters were read from, as messages name it."""
    if args.log is not None:
        return f"--log {path_text(args.log)}"
    return f"--metrics {path_text(args.metrics)}" if args.metrics is not None else f"--url {args.url}"


def _advice_outside(advice: Any, settings: Settings, engine_version: str | None = None) -> tuple[str, ...]:
    """Where the advised deployment lies outside the data its engine profile was fitted on."""
    return outside_domain(
        settings.engine(advice.engine), target=advice.target, hardware=advice.hardware,
        drafter=advice.served.drafter, concurrency=advice.concurrency, tensor_parallel=advice.tensor_parallel,
        engine_version=engine_version,
    )  # fmt: skip


def _deployment_lines(deployment: Any, outside: tuple[str, ...], default_engine: bool = False) -> str:
    """Where each field of the deployment came from (the engine too, when it is advise's default,
    not point's), the load the server ran, and where the profile is used outside its data."""
    lines = ["Read from the server's files and the options:"]
    lines += [f"  {name:<17} {where}" for name, where in deployment.provenance]
    if default_engine:
        lines.append(f"  {'engine':<17} {ADVISE_ENGINE_NOTE}")
    if deployment.running is not None:
        r = deployment.running
        lines.append(
            f"  {'running requests':<17} {r['samples']} busy samples: min {r['min']:g}, median {r['median']:g}, "
            f"mean {r['mean']:.1f}, 90th percentile {r['p90']:g}, max {r['max']:g}"
        )
    line = domain_line(outside)
    return "\n".join(lines + ([line] if line else []))


def _deployment_dict(deployment: Any, outside: tuple[str, ...]) -> dict[str, Any]:
    """The JSON keys of what was read: each field's source, the running distribution, the domain."""
    return {
        "sources": dict(deployment.provenance),
        "running_requests": deployment.running,
        "domain": domain_readout(outside),
        "generated_tokens": deployment.settings.constants.GENERATED_TOKENS,
    }


def _server_files(args: argparse.Namespace) -> tuple[SpecDecodeCounters, Any]:
    """The counters and what the files state of the deployment: ``--log``, ``--metrics`` (of
    ``--model-name``'s model) or a live ``--url`` (two scrapes ``--window`` seconds apart and
    ``/v1/models``)."""
    from specmodel.vllm.deployment import load_exposition_deployment
    from specmodel.vllm.engine_args import load_log_deployment
    from specmodel.vllm.logs import load_log
    from specmodel.vllm.prometheus import load_exposition, parse_exposition

    if args.log is not None:
        if args.model_name is not None:
            raise SpecModelError("--model-name chooses a model in a --metrics scrape; a --log names no model")
        return load_log(args.log, "--log"), load_log_deployment(args.log, "--log")
    if args.metrics is not None:
        counters = load_exposition(args.metrics, "--metrics", args.model_name)
        return counters, load_exposition_deployment(args.metrics, "--metrics", args.model_name)
    from specmodel.vllm.live import live_deployment, live_exposition, scrape_server

    server = scrape_server(args.url, DEFAULT_WINDOW_S if args.window is None else args.window)
    counters = parse_exposition(live_exposition(server), f"--url {server.url}", args.model_name)
    return counters, live_deployment(server, args.model_name)


def _advise_bench(args: argparse.Namespace, settings: Settings) -> str:
    """``advise --bench``: the advice from benchmark runs (:mod:`specmodel.cli.bench_advice`),
    for the card and GPUs the options or the files' metadata state (refused when neither does)."""
    from specmodel.cli import bench_advice
    from specmodel.cli.deployment import bench_deployment, check_given_options
    from specmodel.vllm import advice_text
    from specmodel.vllm.report import MeasuredPoint

    check_given_options(args)
    served = bench_deployment(args)
    result = bench_advice.bench_advice(args, settings, served)
    args.verdict = result.advice.verdict
    notes = (result.acceptance_note,) if result.acceptance_note else ()
    lines = [*bench_advice.measured_lines(result), bench_advice.ladder_line(result), ""]
    text = "\n".join(lines) + advice_text.format_advice(result.advice, None, notes)
    if args.report is not None:
        points = [MeasuredPoint(r.batch, r.num_speculative_tokens, r.measured_speedup) for r in result.rows]
        _write_report(args, result.advice, text, result.settings, points)
    if args.json:
        extra = {"bench": bench_advice.measured_dicts(result), "calibration": result.calibration}
        return strict_json({**advice_text.advice_dict(result.advice, None, notes), **extra, **_report_key(args)})
    return text + _report_line(args)


def _report_key(args: argparse.Namespace) -> dict[str, str]:
    """``{"report": PATH}`` for ``--json`` when ``--report`` was given."""
    return {"report": str(args.report)} if args.report is not None else {}


def _report_line(args: argparse.Namespace) -> str:
    """The line saying where the report went, when ``--report`` was given."""
    return f"\nReport written to {args.report}" if args.report is not None else ""


#: What ``advise --report`` takes, as its refusals say it.
REPORT_TAKES = "a file name ending in .html"


def check_report_path(args: argparse.Namespace) -> None:
    """``--report FILE.html``: an .html file that :func:`specmodel.output_path.check_output`
    accepts, none of the command's input files (checked before any work)."""
    path = args.report
    if path.suffix.lower() not in (".html", ".htm"):
        raise SpecModelError(f"--report {path_text(path)}: the report is an HTML page; name a .html file")
    check_output(path, "--report", REPORT_TAKES, inputs=command_inputs(args))


def _write_report(args: argparse.Namespace, advice: Any, text: str, settings: Settings, measured: Any = ()) -> None:
    """Write the advice as a self-contained HTML page to ``--report``, atomically, with how it
    was made (:func:`report_provenance`)."""
    from specmodel.cli.sweep import write_atomically
    from specmodel.vllm.report import report_html

    path = args.report
    try:
        page = report_html(advice, text, settings, measured, report_provenance(args))
        write_atomically(page, path, "--report", REPORT_TAKES)
    except OSError as exc:
        raise SpecModelError(f"--report {path_text(path)}: cannot write it: {exc.strerror or exc}") from None


def report_provenance(args: argparse.Namespace) -> Any:
    """How a report was made: specmodel's version, the command line, each input file with its
    SHA-256 (a ``--url`` without), and the date (:func:`specmodel.vllm.report.report_date`)."""
    import shlex

    from specmodel import __version__
    from specmodel.safe_input import input_name, sha256_of
    from specmodel.vllm.report import Provenance, report_date

    inputs: list[tuple[str, str, str | None]] = []
    for option in ("log", "metrics", "bench", "engine_profile", "hardware_file"):
        value = getattr(args, option, None)
        for path in value if isinstance(value, list) else [] if value is None else [value]:
            flag = "--" + option.replace("_", "-")
            inputs.append((flag, input_name(path), sha256_of(path, f"{flag} {path_text(path)}")))
    if getattr(args, "url", None) is not None:
        inputs.append(("--url", args.url, None))
    command = shlex.join(getattr(args, "command_line", ("specmodel", args.command)))
    return Provenance(version=__version__, command=command, date=report_date(), inputs=tuple(inputs))


def verdict_status(args: argparse.Namespace) -> int:
    """The exit status of a command that succeeded: 0, or under ``advise --exit-status`` the
    verdict's (:func:`verdict_statuses`)."""
    if not getattr(args, "exit_status", False) or getattr(args, "verdict", None) is None:
        return 0
    return verdict_statuses()[args.verdict]


def verdict_statuses() -> dict[str, int]:
    """Each verdict's exit status under ``advise --exit-status``: 0 for keep, else
    :data:`VERDICT_STATUS_BASE` plus its place in :data:`specmodel.vllm.advise.ADVICE`.

    >>> verdict_statuses()["keep"], verdict_statuses()["lower-gamma"]
    (0, 11)
    """
    from specmodel.vllm.advise import ADVICE

    return {v: 0 if v == "keep" else VERDICT_STATUS_BASE + i for i, v in enumerate(ADVICE)}


def strict_json(data: Any) -> str:
    """``data`` as strict JSON (no NaN or infinity, which JSON has not): a number that is not
    finite becomes null, and a note in ``data["notes"]`` (added if need be) names where.

    >>> strict_json({"a": [1.0, float("nan")], "notes": []})
    '{"a": [1.0, null], "notes": ["undefined (not a finite number), written as null: a[1]"]}'
    """
    replaced: list[str] = []
    clean = _finite_or_null(data, "", replaced)
    if replaced and isinstance(clean, dict) and isinstance(clean.setdefault("notes", []), list):
        clean["notes"].append(f"undefined (not a finite number), written as null: {', '.join(replaced[:5])}")
    return json.dumps(clean, allow_nan=False)


def _finite_or_null(value: Any, where: str, replaced: list[str]) -> Any:
    """``value`` with every float that is not finite replaced by None, its place added to ``replaced``."""
    if isinstance(value, dict):
        return {k: _finite_or_null(v, f"{where}.{k}" if where else str(k), replaced) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite_or_null(v, f"{where}[{i}]", replaced) for i, v in enumerate(value)]
    if isinstance(value, float) and not math.isfinite(value):
        replaced.append(where)
        return None
    return value
