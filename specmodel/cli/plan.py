"""``specmodel plan``: the benchmark commands that measure what the model cannot settle for a
deployment: the target served without speculation and with each gamma to compare (the
deployed one and the candidates), at the concurrencies the server runs. Nothing is executed;
the commands are printed as shell lines, or as a JSON list of runs (``--json``).

The flags are ``vllm bench serve``'s own (``vllm/benchmarks/serve.py``, ``add_cli_args``, at
vllm-project/vllm commit 009e6d4a1cd6ba3fb2a9fc00f4ec06f5297232a1): ``--model``,
``--max-concurrency``, ``--save-result``, ``--result-dir``, ``--result-filename`` (used as
given when set, joined to ``--result-dir``, ``compute_result_filename``), ``--metadata
KEY=VALUE ...`` (``nargs="*"``: pairs saved at the top level of the result JSON, each value
the text after the first ``=``, stripped) and ``--ignore-eos``; the workload is the random
dataset's ``--dataset-name random --random-input-len --random-output-len --num-prompts``. The
metadata keys are those :data:`specmodel.server_runs.records.METADATA_FIELDS` reads
(``model``, ``tensor_parallel_size``, ``hardware``) and the speculative ones
:func:`specmodel.server_runs.records.vllm_run` reads (``speculative_config``,
``num_speculative_tokens``), so ``specmodel fit-engine DIR/*.json`` and ``specmodel advise
--bench DIR/*.json`` read the results as they are written.

``vllm bench sweep serve`` (``vllm/benchmarks/sweep/serve.py``) is not offered: it merges its
``--serve-params`` overrides into each result as JSON values (a ``speculative_config`` dict,
not the string ``--metadata`` gives) and writes ``SERVE-.../run=N.json`` files below an
experiment folder, which the readers here do not take as they are.
"""

from __future__ import annotations

import argparse
import json
import shlex
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from specmodel.cli.options import drafter_option, name_text, whole_number
from specmodel.errors import SpecModelError
from specmodel.model.scenario import DEFAULTS
from specmodel.model.settings import Settings
from specmodel.model.validation import MAX_GAMMA, MAX_TENSOR_PARALLEL
from specmodel.safe_input import excerpt

#: Requests each benchmark sends per concurrent request (at least :data:`MIN_PROMPTS`): enough
#: for the batch to stay full between the ramp-up and the drain.
PROMPTS_PER_REQUEST = 10
MIN_PROMPTS = 100
#: Most concurrencies one plan measures.
MAX_CONCURRENCIES = 16
#: Drafters ``--drafter`` can name without a draft model's weights (others need the JSON).
WEIGHTLESS_METHODS = ("ngram", "mtp")


@dataclass(frozen=True)
class PlannedRun:
    """One benchmark: the server it runs against and the file its result is saved to."""

    server: str  #: ``plain`` or ``gamma-K``
    num_speculative_tokens: int | None
    max_concurrency: int
    serve_command: str
    bench_command: str
    result_file: str


def number_list(text: str) -> tuple[int, ...]:
    """``8,32,128``: distinct whole numbers of at least 1, in increasing order.

    >>> number_list("32, 8,128")
    (8, 32, 128)
    """
    items = [item.strip() for item in text.split(",")]
    if len(items) > MAX_CONCURRENCIES or not all(items):
        raise argparse.ArgumentTypeError(
            f"{excerpt(text)} is not a list of 1 to {MAX_CONCURRENCIES} comma-separated whole numbers"
        )
    values = [whole_number(item) for item in items]
    if min(values) < 1 or len(set(values)) != len(values):
        raise argparse.ArgumentTypeError(f"{excerpt(text)}: give distinct whole numbers of at least 1")
    return tuple(sorted(values))


def add_parser(sub: argparse._SubParsersAction, settings: Settings) -> None:
    """The ``plan`` subcommand and its options."""
    plan = sub.add_parser(
        "plan", help="print the vllm serve / vllm bench serve commands that measure the gammas to compare",
        description="Print, without running anything, the vllm serve commands (no speculation, and each gamma to "
        "compare) and the vllm bench serve --save-result commands at each concurrency, with the --metadata that "
        "specmodel fit-engine and advise --bench read.",
    )  # fmt: skip
    plan.add_argument(
        "--target",
        type=name_text,
        metavar="NAME|ID",
        default=None,
        help="the model: a Hugging Face id or path as vllm serve loads it (default: the --log's)",
    )
    plan.add_argument(
        "--model",
        type=name_text,
        metavar="ID",
        default=None,
        help="what vllm serve loads, where --target is a catalogue name (default: --target)",
    )
    plan.add_argument("--hardware", type=name_text, metavar="NAME", required=True, help="the accelerator's key")
    plan.add_argument(
        "--tensor-parallel",
        type=int,
        metavar="N",
        default=None,
        help="GPUs the target is split over (default: the --log's, else 1)",
    )
    drafter = plan.add_mutually_exclusive_group()
    drafter_option(drafter)
    drafter.add_argument("--speculative-config", metavar="JSON", help="vLLM's --speculative-config as deployed")
    plan.add_argument(
        "--gammas",
        type=number_list,
        metavar="K1,K2",
        default=None,
        help="num_speculative_tokens to compare (default: 1 to the deployed one)",
    )
    _load_options(plan, settings)


def _load_options(plan: Any, settings: Settings) -> None:
    """Where the concurrencies come from, the workload and the output."""
    load = plan.add_mutually_exclusive_group(required=True)
    load.add_argument("--concurrency", type=number_list, metavar="C1,C2", help="the concurrencies to measure")
    load.add_argument("--log", type=Path, metavar="FILE", help="vLLM log: its running requests give them")
    load.add_argument("--metrics", type=Path, metavar="FILE", help="Prometheus scrape: its running requests give them")
    plan.add_argument(
        "--context",
        type=int,
        metavar="N",
        default=DEFAULTS["context"],
        help="prompt tokens per request (default: %(default)s)",
    )
    plan.add_argument(
        "--generated-tokens",
        type=int,
        metavar="G",
        default=settings.constants.GENERATED_TOKENS,
        help="generated tokens per request (default: %(default)s)",
    )
    plan.add_argument(
        "--result-dir",
        metavar="DIR",
        default="specmodel-runs",
        help="folder the results are saved in (default: %(default)s)",
    )
    plan.add_argument("--json", action="store_true", help="print a JSON list of runs instead of shell lines")


def server_concurrencies(samples: tuple[float, ...]) -> tuple[int, ...]:
    """The concurrencies to measure from a server's running-request samples: the least, the
    median, the 90th percentile and the most of the busy ones (at least one request), rounded.

    >>> server_concurrencies((0, 4, 8, 8, 12, 30))
    (4, 8, 23, 30)
    """
    from specmodel.vllm.deployment import busy_samples, running_summary

    busy = busy_samples(samples).tolist()
    if not busy:
        raise SpecModelError("the server's files show no busy sample of running requests: give --concurrency C1,C2")
    summary = running_summary(busy)
    points = (summary.min, summary.median, summary.p90, summary.max)
    return tuple(sorted({max(1, round(p)) for p in points}))


def speculative_config(args: argparse.Namespace, stated: dict[str, Any] | None) -> dict[str, Any]:
    """The deployed ``--speculative-config`` as a dict: the option's JSON, else ``--drafter``
    (a drafter without weights), else the server's files' one; refused where none says it."""
    from specmodel.vllm.speculative_config import served_drafter_from_config

    if args.speculative_config is not None:
        served_drafter_from_config(args.speculative_config)
        config = json.loads(args.speculative_config)
    elif args.drafter is not None:
        if args.drafter not in WEIGHTLESS_METHODS:
            raise SpecModelError(
                f"--drafter {excerpt(args.drafter)} does not say the draft weights vllm serve loads: give "
                "--speculative-config JSON (method, model, num_speculative_tokens)"
            )
        config = {"method": args.drafter}
    elif stated is not None:
        config = dict(stated)
    else:
        raise SpecModelError("no speculative configuration: give --speculative-config JSON or --drafter ngram|mtp")
    if "speculative_token_tree" in config:
        raise SpecModelError("--speculative-config has a speculative_token_tree: plan compares chains of gammas")
    return config


def plan_gammas(given: tuple[int, ...] | None, deployed: int | None) -> tuple[int, ...]:
    """The gammas to measure: ``--gammas`` with the deployed one, else 1 to the deployed one.

    >>> plan_gammas(None, 3), plan_gammas((2, 4), 3)
    ((1, 2, 3), (2, 3, 4))
    """
    if given is None:
        if deployed is None:
            raise SpecModelError("the speculative configuration gives no num_speculative_tokens: give --gammas K1,K2")
        return tuple(range(1, deployed + 1))
    gammas = tuple(sorted(set(given) | ({deployed} if deployed else set())))
    if gammas[-1] > MAX_GAMMA:
        raise SpecModelError(f"--gammas {gammas[-1]} is not allowed; at most {MAX_GAMMA} draft tokens are modelled")
    return gammas


def serve_command(model: str, tensor_parallel: int, config: dict[str, Any] | None) -> str:
    """``vllm serve MODEL --tensor-parallel-size N [--speculative-config JSON]``.

    >>> print(serve_command("Qwen/Qwen3-8B", 2, {"method": "ngram"}))
    vllm serve Qwen/Qwen3-8B --tensor-parallel-size 2 --speculative-config '{"method":"ngram"}'
    """
    argv = ["vllm", "serve", model, "--tensor-parallel-size", str(tensor_parallel)]
    if config is not None:
        argv += ["--speculative-config", compact(config)]
    return shlex.join(argv)


def compact(config: dict[str, Any]) -> str:
    """A JSON object without spaces, keys in the order given."""
    return json.dumps(config, separators=(",", ":"))


def result_name(model: str, server: str, concurrency: int) -> str:
    """The result file's name: the model's last path part, the server and the concurrency.

    >>> result_name("meta-llama/Llama-3.1-8B-Instruct", "gamma-3", 16)
    'Llama-3.1-8B-Instruct-gamma-3-c16.json'
    """
    stem = "".join(c if c.isalnum() or c in "-_." else "_" for c in model.rstrip("/").rsplit("/", 1)[-1])
    return f"{stem}-{server}-c{concurrency}.json"


def bench_command(args: argparse.Namespace, model: str, concurrency: int, name: str, metadata: list[str]) -> str:
    """``vllm bench serve`` at one concurrency, saving its result with the deployment's metadata."""
    argv = [
        "vllm", "bench", "serve", "--model", model, "--dataset-name", "random",
        "--random-input-len", str(args.context), "--random-output-len", str(args.generated_tokens), "--ignore-eos",
        "--num-prompts", str(max(MIN_PROMPTS, PROMPTS_PER_REQUEST * concurrency)),
        "--max-concurrency", str(concurrency), "--save-result", "--result-dir", args.result_dir,
        "--result-filename", name, "--metadata", *metadata,
    ]  # fmt: skip
    return shlex.join(argv)


def planned_runs(
    args: argparse.Namespace, model: str, tensor_parallel: int, config: dict[str, Any], gammas: tuple[int, ...]
) -> list[PlannedRun]:
    """Every benchmark: the plain server, then each gamma's, at each concurrency."""
    base = [f"model={model}", f"tensor_parallel_size={tensor_parallel}", f"hardware={args.hardware}"]
    servers: list[tuple[str, int | None, dict[str, Any] | None]] = [("plain", None, None)]
    servers += [(f"gamma-{k}", k, {**config, "num_speculative_tokens": k}) for k in gammas]
    runs = []
    for server, k, spec in servers:
        serve = serve_command(model, tensor_parallel, spec)
        metadata = (
            base if spec is None else [*base, f"speculative_config={compact(spec)}", f"num_speculative_tokens={k}"]
        )
        for concurrency in args.concurrency:
            name = result_name(model, server, concurrency)
            bench = bench_command(args, model, concurrency, name, metadata)
            runs.append(PlannedRun(server, k, concurrency, serve, bench, str(Path(args.result_dir) / name)))
    return runs


def _stated(args: argparse.Namespace) -> Any:
    """What ``--log`` or ``--metrics`` states of the deployment (None with ``--concurrency``)."""
    if args.log is not None:
        from specmodel.vllm.engine_args import load_log_deployment

        return load_log_deployment(args.log, "--log")
    if args.metrics is not None:
        from specmodel.vllm.deployment import load_exposition_deployment

        return load_exposition_deployment(args.metrics, "--metrics")
    return None


def _settled(option: str, given: Any, stated: Any, label: str) -> Any:
    """An option against what the files state: the one given, refused where they differ."""
    from specmodel.cli.deployment import settle

    known = settle(label, option, given, stated, override=False)
    return None if known is None else known.value


def _model(args: argparse.Namespace, stated: Any) -> str:
    """What vllm serve loads: ``--model``, else ``--target``, else the files' model."""
    from specmodel.model.specs import architecture_catalog

    given = args.model or args.target
    model = _settled("--model" if args.model else "--target", given, getattr(stated, "model", None), "model")
    if model is None:
        raise SpecModelError("no model: give --target ID (the Hugging Face id or path vllm serve loads)")
    if model in architecture_catalog() and "/" not in model:
        raise SpecModelError(
            f"--target {model} is a catalogue name, not what vllm serve loads: give --model ID (its Hugging Face id)"
        )
    return str(model)


def _check_counts(args: argparse.Namespace) -> None:
    """Refuse a count below 1 and a card the catalogue does not know, before any file is read."""
    from specmodel.model.specs import get_hardware

    get_hardware(args.hardware)
    for option, value in (("--context", args.context), ("--generated-tokens", args.generated_tokens)):
        if value < 1:
            raise SpecModelError(f"{option} {value} is not allowed; it must be at least 1")
    if args.tensor_parallel is not None and not 1 <= args.tensor_parallel <= MAX_TENSOR_PARALLEL:
        raise SpecModelError(
            f"--tensor-parallel {args.tensor_parallel} is not allowed; give 1 to {MAX_TENSOR_PARALLEL}"
        )


def run_plan(args: argparse.Namespace, settings: Settings) -> str:
    """The plan as shell lines (or ``--json``); nothing is run."""
    _check_counts(args)
    stated = _stated(args)
    model = _model(args, stated)
    gpus = _settled("--tensor-parallel", args.tensor_parallel, getattr(stated, "tensor_parallel_size", None),
                    "tensor_parallel_size") or 1  # fmt: skip
    spec_stated = getattr(stated, "speculative_config", None)
    config = speculative_config(args, None if spec_stated is None else spec_stated.value)
    deployed = config.get("num_speculative_tokens")
    gammas = plan_gammas(args.gammas, deployed if isinstance(deployed, int) and deployed >= 1 else None)
    if stated is not None:
        running = stated.running.value if stated.running is not None else ()
        args.concurrency = server_concurrencies(tuple(running))
    runs = planned_runs(args, model, int(gpus), config, gammas)
    if args.json:
        return json.dumps([asdict(run) for run in runs], indent=2)
    return plan_text(args, runs, int(gpus))


def plan_text(args: argparse.Namespace, runs: list[PlannedRun], tensor_parallel: int) -> str:
    """The plan as shell lines: each server, then its benchmarks, then the commands that read them."""
    concurrencies = ", ".join(str(c) for c in args.concurrency)
    lines = [
        f"# Measure without speculation and at each gamma, at concurrency {concurrencies}.",
        "# Start each server, wait until it answers, run its benchmarks, stop it. The random dataset's",
        "# acceptance is not the server's own: for that, give --dataset-name/--dataset-path of its prompts.",
        shlex.join(["mkdir", "-p", args.result_dir]),
    ]
    serve = None
    for run in runs:
        if run.serve_command != serve:
            serve = run.serve_command
            lines += ["", f"# server: {run.server}", serve]
        lines.append(run.bench_command)
    results = str(Path(args.result_dir)) + "/*.json"
    card = ["--hardware", args.hardware, "--tensor-parallel", str(tensor_parallel)]
    fit = ["specmodel", "fit-engine", "--out", str(Path(args.result_dir) / "profile.toml"), *card]
    lines += [
        "", "# then read the results:",
        shlex.join(fit) + " " + results,
        shlex.join(["specmodel", "advise", *card]) + " --bench " + results,
    ]  # fmt: skip
    return "\n".join(lines)
