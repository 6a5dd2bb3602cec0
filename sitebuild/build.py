"""File output of the site build: figures, tables, numbers and simulator data into
docs/generated/, written to a temporary folder and swapped in only when all succeeded.

Run as ``python build_figures.py`` (see that file); prints what it wrote and how long it took.
"""

from __future__ import annotations

import argparse
import gzip
import html
import json
import math
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import plotly.graph_objects as go

from sitebuild import figures as draw
from sitebuild import figures_data as data
from sitebuild import simulator, simulator_markup, tables
from sitebuild.numbers import article_numbers
from specmodel.errors import SpecModelError
from specmodel.model.evaluate import evaluate
from specmodel.model.scenario import Scenario
from specmodel.model.settings import Settings, load_settings, using
from specmodel.vllm.engine import engine_log

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class FigureSpec:
    """A figure of the site: its id (``{{ figure:<id> }}`` in the Markdown), an accessible
    title, the one-line caption saying what to look at, and how to make it."""

    id: str
    title: str
    caption: str
    make: Callable[[Settings], go.Figure]


def _alpha_figure(settings: Settings) -> go.Figure:
    frame, breakeven = data.alpha_sweep(settings)
    draft, big = data.model_drafters(settings)
    marks = {
        f"{draft} at alpha 0.75": (0.75, float(evaluate(drafter=draft, settings=settings).speedup)),
        f"{big} at alpha 0.95": (0.95, float(evaluate(drafter=big, alpha=0.95, settings=settings).speedup)),
    }
    return draw.alpha_sweep(frame, breakeven, marks, settings.deployment)


FIGURES: tuple[FigureSpec, ...] = (
    FigureSpec(
        "ladder",
        "Speedup against concurrency for each drafter",
        "The ladder: follow each drafter's speedup as concurrent sequences rise; magenta points are "
        "slower than plain decoding, open markers do not fit on one card. Drag the slider to change the "
        "context.",
        lambda s: draw.ladder(data.ladder(s), s.deployment),
    ),
    FigureSpec(
        "roofline",
        "Verify-pass memory time, arithmetic time and idle share",
        "Memory time barely moves until the caches dominate, arithmetic time grows with every sequence: "
        "the gap between them is the idle arithmetic speculation borrows.",
        lambda s: draw.roofline(data.roofline(s)),
    ),
    FigureSpec(
        "arithmetic",
        "Arithmetic per output token against gamma",
        "The bill: dots are the model's own FLOP counts, dotted lines Theorem 3.11; only the n-gram drafter "
        "with i.i.d. acceptance sits on the paper's c = 0 line.",
        lambda s: draw.arithmetic_bill(data.arithmetic_bill(s), s.deployment),
    ),
    FigureSpec(
        "alpha",
        "Speedup against acceptance rate for the two draft models",
        "Look at the diamonds: the larger draft at a fantasy alpha of 0.95 still falls short of the smaller "
        "draft at 0.75. Dotted lines mark each draft's break-even alpha.",
        _alpha_figure,
    ),
    FigureSpec(
        "memory",
        "Weights and KV cache per token of the three models",
        "The drafts' weights are small; their caches are not: each draft token re-reads most of a target's "
        "worth of cache.",
        lambda s: draw.memory_footprint(data.memory_footprint(s)),
    ),
    FigureSpec(
        "context",
        "Speedup and draft share against context at 64 sequences",
        "At 64 sequences, longer prompts hand the wall clock to the drafter; the n-gram drafter has no cache "
        "to read and keeps its lead.",
        lambda s: draw.context_sweep(data.context_sweep(s, 64), 64, s.deployment),
    ),
    FigureSpec(
        "gamma",
        "Speedup against gamma at 1 and 32 sequences",
        "One sequence peaks at three or four draft tokens; 32 sequences peak earlier and fall below 1x. "
        "The slider adds a third concurrency.",
        lambda s: draw.gamma_sweep(data.gamma_sweep(s)),
    ),
    FigureSpec(
        "tokens",
        "Expected tokens per iteration against gamma",
        "Each curve flattens onto its dashed ceiling 1/(1 - alpha): past a few draft tokens, more guesses "
        "buy almost nothing.",
        lambda s: draw.tokens_per_iteration(data.tokens_per_iteration()),
    ),
    FigureSpec(
        "per-position",
        "Per-position acceptance, falling against same",
        "Under the falling profile the fourth guess reaches the output in about one iteration in eight; "
        "the i.i.d. assumption flatters every position after the first.",
        lambda s: draw.per_position(data.per_position(s)),
    ),
    FigureSpec(
        "sampling",
        "Algorithm 1 run on a toy vocabulary",
        "Teal bars (the sampler's output) sit on the grey ones (the target), not on the orange ones (the "
        "draft): 'dog', which the draft never proposes, still comes out, and 'banana', which only the draft "
        "likes, never does.",
        lambda s: draw.sampling(data.sampling(), data.SAMPLING_TRIALS),
    ),
    FigureSpec(
        "breakeven",
        "Break-even map over concurrency and context",
        "Teal cells win, magenta cells lose; the line is the 1.0x contour and each cell shows the best "
        "gamma (off: no gamma wins); boxed cells do not fit on one card. Switch drafters with the buttons.",
        lambda s: draw.breakeven_map(data.breakeven_map(s), s.deployment),
    ),
    FigureSpec(
        "heads",
        "Weights one draft step reads, LM head against the rest",
        "Orange is the output head: a head that scores the target's whole vocabulary reads more per step "
        "than a small draft model; a 32k draft vocabulary removes most of it.",
        lambda s: draw.head_costs(data.head_costs(s)),
    ),
    FigureSpec(
        "hardware",
        "The ladder on H100, H200 and B200 side by side",
        "Same model pair, three cards: faster memory lifts plain decoding and speculation alike, more memory "
        "moves the open markers (does not fit) to the right. One slider sets the context of all three.",
        lambda s: draw.hardware_ladders(data.hardware_ladders(s), s.deployment),
    ),
)


def figure_fragment(spec: FigureSpec, fig: go.Figure) -> str:
    """The HTML the page embeds: a div carrying the figure as JSON, and the caption.

    No plotly.js inside; docs/javascripts/figures.js draws every ``.specfig`` with the
    site's single copy. The JSON sits in a ``data-figure`` attribute rather than a
    ``<script>`` element because Material's instant navigation re-executes every script
    in the content it swaps in. Ids are fixed, so the output is byte-stable.
    """
    payload = html.escape(fig.to_json(pretty=False, engine="json"), quote=True)
    return (
        f'<figure class="specfig-figure" id="figure-{spec.id}">\n'
        f'<div class="specfig" id="fig-{spec.id}" role="img" aria-label="{html.escape(spec.title)}" '
        f'data-figure="{payload}"></div>\n'
        f"<figcaption>{html.escape(spec.caption)}</figcaption>\n"
        "</figure>\n"
    )


#: Command outputs the CLI page shows: name -> argv.
CLI_EXAMPLES = {
    "point": ["point"],
    "point-json": ["point", "--concurrency", "64", "--json"],
    "point-eagle-b64": ["point", "--concurrency", "64", "--drafter", "eagle-32k"],
    "point-llama-b200": [
        "point",
        "--hardware",
        "b200",
        "--target",
        "llama-3.1-8b",
        "--drafter",
        "llama-3.2-1b",
        "--concurrency",
        "256",
        "--context",
        "8192",
    ],
    "point-wrong-vocab": ["point", "--drafter", "llama-3.2-1b"],
    "point-help": ["point", "--help"],
    "point-bad": ["point", "--gamma", "0"],
    "sweep-help": ["sweep", "--help"],
    "calibrate-help": ["calibrate", "--help"],
    "advise-help": ["advise", "--help"],
    "advise-b8": [
        "advise",
        "--log",
        str(ROOT / "tests" / "data" / "vllm" / "draft-model-b8.log"),
        "--concurrency",
        "8",
        "--speculative-config",
        '{"model": "Qwen/Qwen3-0.6B", "num_speculative_tokens": 4}',
    ],
    "advise-b64": [
        "advise",
        "--log",
        str(ROOT / "tests" / "data" / "vllm" / "draft-model-b8.log"),
        "--concurrency",
        "64",
        "--speculative-config",
        '{"model": "Qwen/Qwen3-0.6B", "num_speculative_tokens": 4}',
    ],
}


def command_output(argv: list[str]) -> str:
    """What ``specmodel <argv>`` prints (stdout and stderr), run in-process."""
    import contextlib
    import io
    import os

    from specmodel.cli import main as cli_main

    buffer = io.StringIO()
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "88"  # argparse wraps help to the terminal width: pin it
    try:
        with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer), contextlib.suppress(SystemExit):
            cli_main(argv)
    finally:
        if old is None:
            os.environ.pop("COLUMNS")
        else:
            os.environ["COLUMNS"] = old
    return buffer.getvalue().rstrip() + "\n"


def numbers_json(settings: Settings) -> str:
    numbers = article_numbers(settings)
    values = {k: {"value": None if math.isnan(v.value) else v.value, "text": v.text} for k, v in numbers.items()}
    return json.dumps(values, indent=1, sort_keys=True, allow_nan=False)


def outputs(settings: Settings, calibration_table: Path | None = None) -> dict[str, str | bytes]:
    """Relative path -> content (text, or bytes for binary data) of every generated file,
    for the deployment and constants of ``settings``."""
    files: dict[str, str | bytes] = {
        f"figures/{spec.id}.html": figure_fragment(spec, spec.make(settings)) for spec in FIGURES
    }
    # The calibration table is the article's deployment and constants against the article.
    files["tables/calibration.md"] = tables.calibration(calibration_table) + "\n"
    files["tables/constants.md"] = tables.constants(settings) + "\n"
    files["tables/hardware.md"] = tables.hardware() + "\n"
    files["tables/models.md"] = tables.models() + "\n"
    files["tables/footprint.md"] = tables.footprint(settings) + "\n"
    files["tables/heads.md"] = tables.heads(data.head_costs(settings)) + "\n"
    files["tables/capacity.md"] = tables.capacity(settings) + "\n"
    files["tables/hardware-capacity.md"] = tables.hardware_capacity(settings, data.COMPARED_HARDWARE) + "\n"
    what = settings.model_dump(include={"constants", "deployment"})  # what a --config file can set
    files["settings.json"] = json.dumps(what, indent=1, sort_keys=True, allow_nan=False) + "\n"
    files["numbers.json"] = numbers_json(settings) + "\n"
    files["outputs/engine-log-b64.txt"] = engine_log(Scenario(concurrency=64), seed=0, settings=settings)[0] + "\n"
    sim = simulator.simulator_data(simulator.evaluate_grid(settings), binary_name="simulator.bin.gz")
    files["data/simulator.json"] = json.dumps(sim.meta, separators=(",", ":"), sort_keys=True) + "\n"
    files["data/simulator.bin.gz"] = gzip.compress(sim.blob, compresslevel=9, mtime=0)  # no timestamp: reproducible
    files["html/simulator.html"] = simulator_markup.simulator_html(settings, sim)
    for name, argv in CLI_EXAMPLES.items():
        with using(Settings()):  # the command line's own defaults, whatever the site's config
            text = command_output(argv)
        if name == "point-json":
            text = json.dumps(json.loads(text), indent=2) + "\n"
        files[f"outputs/{name}.txt"] = text
    return files


def write_tree(files: dict[str, str | bytes], destination: Path) -> None:
    """Write ``files`` into a temporary sibling of ``destination`` and swap it in."""
    destination.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{destination.name}-", dir=destination.parent))
    try:
        for rel, text in files.items():
            path = staging / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(text, bytes):
                path.write_bytes(text)
            else:
                path.write_text(text, encoding="utf-8")
        old = destination.with_name(f".{destination.name}-old")
        if old.exists():
            shutil.rmtree(old)
        if destination.exists():
            destination.rename(old)
        staging.rename(destination)
        if old.exists():
            shutil.rmtree(old)
    finally:
        if staging.exists():
            shutil.rmtree(staging)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="build_figures.py", description="Compute the site's figures, tables and numbers."
    )
    parser.add_argument(
        "--out", type=Path, default=ROOT / "docs" / "generated", help="output folder (default: %(default)s)"
    )
    parser.add_argument(
        "--calibration",
        type=Path,
        default=None,
        help="calibration table (default: the article's, shipped with specmodel)",
    )
    parser.add_argument(
        "--config",
        type=Path,
        metavar="FILE",
        help="TOML or YAML file overriding constants ([constants] NAME = value, names as in "
        "specmodel/model/constants.py) and the deployment ([deployment] hardware, target, draft, "
        "big_draft); the whole site is computed for it",
    )
    args = parser.parse_args(argv)
    start = time.perf_counter()
    try:
        settings = load_settings(args.config) if args.config is not None else Settings()
        files = outputs(settings, args.calibration)
        write_tree(files, args.out)
    except SpecModelError as exc:
        print(f"build_figures.py: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"build_figures.py: error: cannot write {args.out}: {exc}", file=sys.stderr)
        return 1
    sizes = {rel: len(content if isinstance(content, bytes) else content.encode()) for rel, content in files.items()}
    for rel, size in sorted(sizes.items()):
        print(f"  {rel:<28} {size:>9,} bytes")
    total = sum(sizes.values())
    print(f"wrote {len(files)} files ({total:,} bytes) to {args.out} in {time.perf_counter() - start:.2f} s")
    return 0


__all__ = ["FIGURES", "main", "outputs"]
