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
import sys
import time
from dataclasses import asdict
from pathlib import Path
from urllib.parse import urlencode

import plotly.graph_objects as go

from sitebuild import deployment, tables
from sitebuild.claims import article_claims
from sitebuild.config import ENGINE_PROFILE_KEY, SiteSettings, load_site_settings
from sitebuild.figures import acceptance, beyond, cards, costs, engines, ladders, pictures, schedule, timing, validation
from sitebuild.figures.spec import FigureSpec
from sitebuild.fit_records import read_sensitivity, read_tradeoff
from sitebuild.notation import notation_table
from sitebuild.numbers import Number, article_numbers
from sitebuild.output import check_destination, claimed, leftover_note, named, run_build, write_tree
from sitebuild.pass_timings import read_pass_timings
from sitebuild.paths import EAGLE3_TRADEOFF, ELSEWHERE, MEASUREMENTS, MEMORY_SENSITIVITY, PASS_TIMINGS, ROOT
from sitebuild.simulator import data as simulator
from sitebuild.simulator import log as simulator_log
from sitebuild.simulator import markup as simulator_markup
from specmodel.cli import write_stdout
from specmodel.measurements import load_measurements
from specmodel.model.scenario import Scenario
from specmodel.output_path import check_not_input
from specmodel.progress import progress
from specmodel.safe_input import excerpt, load_config_file

#: Where each figure's JSON and its data table (CSV) are published, relative to the site's
#: root: ``<FIGDATA><id>.json`` and ``<FIGDATA><id>.csv``. hooks/numbers.py makes these paths
#: relative to the page that shows the figure.
FIGDATA = "generated/figdata/"

#: Every figure of the site, each module's in its order (:mod:`sitebuild.figures`).
FIGURES: tuple[FigureSpec, ...] = (
    *pictures.FIGURES,
    *ladders.FIGURES,
    *timing.FIGURES,
    *costs.FIGURES,
    *acceptance.FIGURES,
    *schedule.FIGURES,
    *engines.FIGURES,
    *cards.FIGURES,
    *beyond.FIGURES,
    *validation.FIGURES,
)


def reserved_style(fig: go.Figure) -> str:
    """The figure's size known before it is drawn, as CSS custom properties (extra.css reserves
    the space, so that the page does not move when the figure draws): its height, its narrow
    variant's height, and how many controls (sliders and menus) figures.js puts above it."""
    height = fig.layout.height
    narrow = ((fig.layout.meta or {}).get("narrow") or {}).get("layout", {}).get("height")
    controls = len(fig.layout.sliders or ()) + len(fig.layout.updatemenus or ())
    parts = [
        f"--specfig-height:{height}px" if height else "",
        f"--specfig-narrow-height:{narrow}px" if narrow else "",
        f"--specfig-controls:{controls}" if controls else "",
    ]
    return ";".join(p for p in parts if p)


def figure_fragment(
    figure_id: str,
    title: str,
    caption: str,
    fig: go.Figure,
    link: dict[str, object] | None = None,
    *,
    source: str | None = None,
    table: str | None = None,
) -> str:
    """The HTML a page embeds: a div that figures.js draws the figure in, the caption and a
    link to the data behind the figure.

    No plotly.js inside; docs/javascripts/figures.js draws every ``.specfig`` with the
    site's single copy. ``source``: the URL of the figure's JSON (``data-src``), fetched when
    the figure nears the viewport; without it the JSON is written into the page, in a
    ``data-figure`` attribute (the notebook's figures). ``table``: the URL of the figure's data
    as CSV, or the HTML of a table of it (starting with ``<``), linked (the link left out of
    the search index) or shown under the caption. The space the figure takes is reserved in an
    inline style. Ids are fixed, so the output is byte-stable.
    """
    if source is not None:
        where = f'data-src="{html.escape(source, quote=True)}"'
    else:
        where = f'data-figure="{html.escape(fig.to_json(pretty=False, engine="json"), quote=True)}"'
    style = reserved_style(fig)
    style_attr = f' style="{style}"' if style else ""
    setting = f' data-simulator-setting="{html.escape(urlencode(link))}"' if link is not None else ""
    behind = ""
    if table is not None and table.startswith("<"):
        behind = f'\n<details class="specfig-data"><summary>The data behind this figure</summary>\n{table}\n</details>'
    elif table is not None:
        name = html.escape(f"The data behind this figure (CSV): {title}", quote=True)
        behind = (
            f' <a class="specfig-data" href="{html.escape(table, quote=True)}" type="text/csv" '
            f'aria-label="{name}" data-search-exclude>The data behind this figure (CSV)</a>'
        )
    return (
        f'<figure class="specfig-figure" id="figure-{figure_id}"{setting}>\n'
        f'<div class="specfig" id="fig-{figure_id}" role="img" aria-label="{html.escape(title)}" '
        f"{where}{style_attr}></div>\n"
        f"<figcaption>{html.escape(caption)}{behind}</figcaption>\n"
        "</figure>\n"
    )


def figure_files(spec: FigureSpec, settings: SiteSettings) -> dict[str, str]:
    """A figure's fragment (``figures/<id>.html``, linking the simulator at the figure's setting),
    its JSON and its data table as CSV (``figdata/<id>.json``, ``figdata/<id>.csv``), from one
    computation of its data."""
    computed = spec.data(settings)
    link = spec.setting(settings) if spec.setting is not None else None
    fig = spec.draw(computed, settings)
    json_path, csv_path = f"{FIGDATA}{spec.id}.json", f"{FIGDATA}{spec.id}.csv"
    fragment = figure_fragment(spec.id, spec.title, spec.caption, fig, link, source=json_path, table=csv_path)
    csv = spec.table(computed).to_csv(index=False, lineterminator="\n", float_format="%.6g")
    folder = FIGDATA.removeprefix("generated/")
    return {
        f"figures/{spec.id}.html": fragment,
        f"{folder}{spec.id}.json": fig.to_json(pretty=False, engine="json") + "\n",
        f"{folder}{spec.id}.csv": csv,
    }


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
    "point-70b-tp4": [
        "point",
        "--engine",
        "vllm",
        "--target",
        "llama-3-70b",
        "--tensor-parallel",
        "4",
        "--drafter",
        "eagle",
        "--gamma",
        "3",
    ],
    "point-tree": [
        "point",
        "--engine",
        "vllm",
        "--target",
        "llama-3.1-8b",
        "--drafter",
        "eagle",
        "--gamma",
        "5",
        "--tree-topk",
        "4",
        "--verify-tokens",
        "8",
    ],
    "point-bad-tp": ["point", "--tensor-parallel", "3"],
    "point-vllm-eagle3": [
        "point",
        "--engine",
        "vllm",
        "--target",
        "llama-3.1-8b",
        "--drafter",
        "eagle3",
        "--gamma",
        "3",
        "--mean-acceptance-length",
        "2.79",
        "--context",
        "76",
        "--generated-tokens",
        "210",
    ],
    "point-vllm-measured": [
        "point",
        "--engine",
        "vllm",
        "--concurrency",
        "16",
        "--per-position",
        "0.75,0.48,0.26,0.12",
    ],
    "point-help": ["point", "--help"],
    "point-bad": ["point", "--gamma", "0"],
    "sweep-help": ["sweep", "--help"],
    "calibrate-help": ["calibrate", "--help"],
    "advise-help": ["advise", "--help"],
    "advise-70b": [
        "advise",
        "--log",
        "tests/data/vllm-deployments/llama-3-70b-eagle-tp4.log",
        "--hardware",
        "h100-sxm",
    ],
    "advise-70b-contradiction": [
        "advise",
        "--log",
        "tests/data/vllm-deployments/llama-3-70b-eagle-tp4.log",
        "--hardware",
        "h100-sxm",
        "--tensor-parallel",
        "2",
    ],
    "advise-b8": [
        "advise",
        "--log",
        "tests/data/vllm/draft-model-b8.log",
        "--concurrency",
        "8",
        "--speculative-config",
        '{"model": "Qwen/Qwen3-0.6B", "num_speculative_tokens": 4}',
        "--target",
        "qwen3-8b",
        "--hardware",
        "h100-sxm",
        "--tensor-parallel",
        "1",
    ],
    "advise-b64": [
        "advise",
        "--log",
        "tests/data/vllm/draft-model-b8.log",
        "--concurrency",
        "64",
        "--override",
        "--speculative-config",
        '{"model": "Qwen/Qwen3-0.6B", "num_speculative_tokens": 4}',
        "--target",
        "qwen3-8b",
        "--hardware",
        "h100-sxm",
        "--tensor-parallel",
        "1",
    ],
}


def command_output(argv: list[str]) -> str:
    """What ``specmodel <argv>`` prints (stdout and stderr), run in-process from the
    repository's root, so that the files it names read as the page writes them."""
    import contextlib
    import io
    import os

    from specmodel.cli import main as cli_main

    buffer = io.StringIO()
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "88"  # argparse wraps help to the terminal width: pin it
    try:
        with (
            contextlib.chdir(ROOT),  # the examples name the repository's files as the page shows them
            contextlib.redirect_stdout(buffer),
            contextlib.redirect_stderr(buffer),
            contextlib.suppress(SystemExit),
        ):
            cli_main(argv)
    finally:
        if old is None:
            os.environ.pop("COLUMNS")
        else:
            os.environ["COLUMNS"] = old
    return buffer.getvalue().rstrip() + "\n"


def number_entry(number: Number) -> dict[str, object]:
    """A number as numbers.json and claims.json hold it: value (None for a name), text, and
    where present its simulator link, the readout that shows it there, and its quoted source."""
    extra = {"link": number.link, "readout": number.readout, "quoted": number.quoted}
    value = None if math.isnan(number.value) else number.value
    return {"value": value, "text": number.text, **{k: v for k, v in extra.items() if v is not None}}


def numbers_json(settings: SiteSettings) -> str:
    values = {k: number_entry(v) for k, v in article_numbers(settings).items()}
    return json.dumps(values, indent=1, sort_keys=True, allow_nan=False)


def claims_json(settings: SiteSettings) -> str:
    """Every claim of the prose: the outcome the model gives each of its facets, and its values
    (:mod:`sitebuild.claims`); the pages word each outcome (:mod:`sitebuild.claims.prose`)."""
    said = {
        name: {"outcomes": dict(c.outcomes), "values": {k: number_entry(v) for k, v in c.values.items()}}
        for name, c in article_claims(settings).items()
    }
    return json.dumps(said, indent=1, sort_keys=True, allow_nan=False, ensure_ascii=False)


def outputs(settings: SiteSettings, calibration_table: Path | None = None) -> dict[str, str | bytes]:
    """Relative path -> content (text, or bytes for binary data) of every generated file,
    for the deployment and constants of ``settings``."""
    settings = deployment.resolved(settings)
    files: dict[str, str | bytes] = {}
    for spec in progress(FIGURES, "figures", total=len(FIGURES), unit="figure"):
        files.update(figure_files(spec, settings))
    # The calibration table is the article's deployment and constants against the article.
    files["tables/calibration.md"] = tables.calibration(calibration_table) + "\n"
    files["tables/constants.md"] = tables.constants(settings) + "\n"
    files["tables/hardware.md"] = tables.hardware() + "\n"
    files["tables/models.md"] = tables.models() + "\n"
    files["tables/notation.md"] = notation_table() + "\n"
    files["tables/footprint.md"] = costs.footprint_table(settings) + "\n"
    files["tables/heads.md"] = costs.heads_table(costs.head_costs(settings)) + "\n"
    files["tables/capacity.md"] = costs.capacity_table(settings) + "\n"
    files["tables/hardware-capacity.md"] = cards.hardware_capacity_table(settings, cards.COMPARED_HARDWARE) + "\n"
    files["tables/engines.md"] = engines.engines_table(settings) + "\n"
    files["tables/validation.md"] = (
        engines.validation_table(engines.validation(settings, load_measurements(MEASUREMENTS))) + "\n"
    )
    files["tables/validation-elsewhere.md"] = (
        engines.validation_table(engines.validation(settings, load_measurements(ELSEWHERE))) + "\n"
    )
    files["tables/eagle3-tradeoff.md"] = (
        engines.eagle3_tradeoff_table(read_tradeoff(EAGLE3_TRADEOFF, MEASUREMENTS)[0]) + "\n"
    )
    own_efficiency = settings.engines["vllm"].memory_efficiency_or(settings.constants.MEMORY_EFFICIENCY)
    sensitivity = read_sensitivity(MEMORY_SENSITIVITY, MEASUREMENTS)
    files["tables/memory-sensitivity.md"] = engines.memory_sensitivity_table(sensitivity, own_efficiency) + "\n"
    multigpu = beyond.multigpu_validation(settings)
    files["tables/multigpu-series.md"] = beyond.multigpu_series_table(multigpu) + "\n"
    files["tables/multigpu-validation.md"] = beyond.multigpu_validation_table(multigpu) + "\n"
    draft_model = validation.draft_model_validation(settings)
    files["tables/draft-model-validation.md"] = validation.draft_model_table(draft_model) + "\n"
    timed = read_pass_timings(PASS_TIMINGS)  # None until a GPU has timed the passes
    if timed is not None:
        files["tables/pass-timings.md"] = (
            validation.pass_timings_table(validation.pass_timings_frame(timed, settings)) + "\n"
        )
    what = {"constants": asdict(settings.constants), "deployment": asdict(settings.deployment)}  # what --config sets
    files["settings.json"] = json.dumps(what, indent=1, sort_keys=True, allow_nan=False) + "\n"
    files["numbers.json"] = numbers_json(settings) + "\n"
    files["claims.json"] = claims_json(settings) + "\n"
    files["outputs/engine-log-b64.txt"] = simulator_log.log_line(settings, Scenario(concurrency=64)) + "\n"
    for engine, name in (("ideal", "gamma-schedule"), ("vllm", "gamma-schedule-vllm")):  # vLLM's JSON to paste
        files[f"outputs/{name}.txt"] = schedule.schedules(settings)[("article", engine)].json + "\n"
    sim = simulator.simulator_data(simulator.evaluate_grid(settings))
    for name, blob in sim.blobs.items():  # one slice per file; gzip without a timestamp: reproducible
        files[f"data/sim/{name}"] = gzip.compress(blob, compresslevel=9, mtime=0)
    files["html/simulator.html"] = simulator_markup.simulator_html(settings, sim)
    for name, argv in CLI_EXAMPLES.items():
        text = command_output(argv)  # the command line's own defaults, whatever the site's config
        if name == "point-json":
            text = json.dumps(json.loads(text), indent=2) + "\n"
        files[f"outputs/{name}.txt"] = text
    return files


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
        'big_draft), and engine_profile = "my-server.toml" (a profile of specmodel fit-engine, in place '
        "of the public vllm one; its own key may not be a built-in engine's); the whole site is computed for it",
    )
    args = parser.parse_args(argv)
    return run_build("build_figures.py", args.out, lambda: build(args), write_stdout)


def planned_paths() -> set[str]:
    """Files every build writes, known before computing (to refuse a user's file in the way early)."""
    ids, folder = [spec.id for spec in FIGURES], FIGDATA.removeprefix("generated/")
    figures = {f"figures/{i}.html" for i in ids} | {f"{folder}{i}.{ext}" for i in ids for ext in ("json", "csv")}
    return figures | {f"outputs/{name}.txt" for name in CLI_EXAMPLES} | {"settings.json", "numbers.json", "claims.json"}


def build(args: argparse.Namespace) -> str:
    """Check the destination (before computing anything: the path, the user's files there, the
    inputs outside it) under a lock on it, compute every file and write them, keeping the user's
    files there; returns the report to print."""
    start = time.perf_counter()
    inputs = [("--config", args.config), ("--calibration", args.calibration)]
    with claimed(args.out):
        check_destination(args.out, planned_paths(), inputs)
        note = leftover_note(args.out)
        if note is not None:
            print(f"build_figures.py: {note}", file=sys.stderr)
        settings = load_site_settings(args.config) if args.config is not None else SiteSettings()
        check_not_input(args.out, "--out", config_inputs(args.config), folder=True)
        files = outputs(settings, args.calibration)
        kept = write_tree(files, args.out)
    if kept:
        print(f"build_figures.py: {kept_note(kept, args.out)}", file=sys.stderr)  # the user's files, kept
    return summary(files, args.out, time.perf_counter() - start)


def config_inputs(config: Path | None) -> list[tuple[str, Path]]:
    """The files a ``--config`` names (its engine profile, relative to it), as (what names it, path)."""
    if config is None:
        return []
    profile = load_config_file(config, f"config {excerpt(str(config), 200)}").get(ENGINE_PROFILE_KEY)
    return [(f"--config's {ENGINE_PROFILE_KEY}", config.parent / profile)] if isinstance(profile, str) else []


def kept_note(kept: list[str], destination: Path) -> str:
    """The line naming the user's files a build kept in ``destination``."""
    return f"kept {len(kept)} file(s) in {destination} that build_figures.py did not write: {named(kept)}"


# --- running a build --------------------------------------------------------------------------


def summary(files: dict[str, str | bytes], destination: Path, seconds: float) -> str:
    """What a build prints: each file with its size, and the total."""
    sizes = {rel: len(content if isinstance(content, bytes) else content.encode()) for rel, content in files.items()}
    lines = [f"  {rel:<28} {size:>9,} bytes" for rel, size in sorted(sizes.items())]
    lines.append(f"wrote {len(files)} files ({sum(sizes.values()):,} bytes) to {destination} in {seconds:.2f} s")
    return "\n".join(lines) + "\n"


__all__ = ["FIGDATA", "FIGURES", "figure_fragment", "main", "outputs"]
