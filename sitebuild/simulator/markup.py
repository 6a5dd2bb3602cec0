"""The simulator's HTML, from its one template (``templates/simulator.html``), showing the
default scenario so that the page is complete without JavaScript: every readout, the ladder's
values, the sampled iteration and the log line come from the same tables the data files carry
(:mod:`sitebuild.simulator.data`). The page's description of the data and the simulator's script
(docs/javascripts/simulator.js) are embedded in it, and so is the default setting's slice of
data, so that the first answer waits for nothing: no request, no other script. The ladder's
bars and the time split's stacked bars are drawn by the script alone (their scale depends on
the bars in view); without it each row shows its value, and the table under the time bars
holds every part's share as text."""

from __future__ import annotations

import base64
import json
import math
from pathlib import Path
from typing import Any

import jinja2
import numpy as np

from sitebuild.config import SiteSettings
from sitebuild.figures.schedule import LARGEST_LOAD
from sitebuild.figures.timing import PARTS
from sitebuild.paths import ROOT
from sitebuild.simulator.data import (
    FITS_TEXT,
    PART_LABELS,
    READOUT_AXES,
    REASONS,
    UNFIT_HEADLINE,
    SimulatorData,
    axes,
    default_text,
    engine_only,
    slice_file,
)
from specmodel import formatting
from specmodel.model import drafters
from specmodel.model.engines import EngineProfile
from specmodel.model.evaluate import evaluate
from specmodel.model.scenario import default_scenario
from specmodel.model.timing import TIME_PARTS
from specmodel.readouts import BY_KEY

#: The simulator's script, embedded in the page (the one copy of it).
SCRIPT = ROOT / "docs" / "javascripts" / "simulator.js"

LABELS = {
    "concurrency": "Concurrent sequences",
    "context": "Context (prompt tokens)",
    "gamma": "Draft tokens per iteration, γ (vLLM's num_speculative_tokens)",
    "drafter": "Drafts come from",
    "acceptance": "Acceptance across draft positions",
    "alpha": "Acceptance rate, α",
    "engine": "Engine",
}
ACCEPTANCE_LABELS = {"falling": "falls with position", "same": "same at every position"}
ENGINE_LABELS = {"ideal": "ideal roofline (the article)", "vllm": "vLLM, fitted to measurements"}
#: What an engine's profile changes, in words: its fixed costs (none, or some), how a pass
#: combines memory and arithmetic (the roofline's max, or an imperfect overlap), and its batching
#: (``cohort`` or ``steady``) with the speedup the simulator shows under it.
FIXED_WORDS = ("no fixed costs", "fixed costs per pass, fitted to measurements")
OVERLAP_WORDS = ("arithmetic hidden under memory traffic", "arithmetic only partly hidden under memory traffic")
BATCHING_WORDS = {
    "cohort": "one batch that starts together and drains; speedup: ratio of the times per output token",
    "steady": ("the batch kept full, new prompts prefilled alongside; speedup: ratio of output throughputs, prefill "
               "included"),
}  # fmt: skip
#: Said of the readouts an engine does not define, in their place.
ENGINE_ONLY_NOTE = "not defined for this engine: its passes hide only part of their arithmetic"
#: The first thing to try, naming the controls it moves, with the first losing load at the
#: article's setting (``loss``), or without it where there is none.
TRY_TEXT = {
    "loss": "Try this: move “{concurrency}” to the right and watch the speedup and the ladder: by {rung}, "
            "speculation is a loss. Then change “{drafter}”.",
    "none": "Try this: move “{concurrency}” to the right and watch the speedup and the ladder. "
            "Then change “{drafter}”.",
}  # fmt: skip
RESET_TEXT = "Reset"
RESET_LABEL = "Reset every control to the article's setting"
#: Controls over a list of stops (the ladder's concurrencies, the grid's contexts) are sliders
#: over their positions; the page shows and keeps the value.
STOPS = ("concurrency", "context")
RANGES = ("concurrency", "context", "gamma", "alpha")
#: The readouts after the answer and its reasons, in groups.
READOUT_GROUPS = (
    ("Throughput", ("spec_tokens_per_s", "base_tokens_per_s", "arithmetic_ratio")),
    ("The verify pass", ("verify_gib", "verify_tflop", "verify_memory_ms", "verify_compute_ms")),
    ("The drafter", ("draft_weight_fraction", "draft_kv_fraction")),
    ("Memory per GPU", ("hbm_required_gib", "max_concurrency", "max_concurrency_without_draft")),
)
#: The answer's three reasons, labelled by what each says about the trade.
REASON_LABELS = {
    "mean_acceptance_length": "What a verify pass yields",
    "draft_share": "What drafting costs, share of the wall clock",
    "verify_idle": "Whether checking is free: tensor cores idle in the verify pass",
}
#: Rows that are not readouts of :mod:`specmodel.readouts`: the unconditional acceptance of each
#: draft position (as vLLM's per-position counters report it), and whether the scenario fits.
EXTRA_LABELS = {"acceptance": "Share of iterations each guess reaches the output", "fits": "Fits in memory"}
#: The best gamma at the current load, and what the schedule under the log line is.
BEST_GAMMA_LABEL = "Best γ at this load (its speedup)"
SCHEDULE_CAPTION = (
    "The best γ at every load for these settings, from one sequence to the most that plain decoding holds in "
    f"memory (at most {LARGEST_LOAD:,}), as vLLM's schedule to merge into --speculative-config (0: speculation off "
    "there; {} where not even one sequence fits). Section 5 explains it."
)
#: The token chips' states and what each means (their tooltips).
CHIP_TITLES = {
    "accepted": "accepted guess",
    "rejected": "first rejected guess",
    "skipped": "thrown away",
    "emitted": "token the target emits",
}
#: The token row's legend: what each state means, shown on screen under the row.
CHIP_LEGEND = {
    "accepted": "accepted guess",
    "rejected": "first rejected guess",
    "skipped": "thrown away: every guess after the first rejected one",
    "emitted": "the token the target emits: its correction, or a bonus token when every guess is accepted",
}
#: What the ladder shows, and its legend: the verdict each bar's colour gives, and the hatching.
LADDER_CAPTION = (
    "The ladder: speedup at every concurrency, on a log scale around the dashed 1x line. Select a row to set the "
    "concurrency."
)
LADDER_LEGEND = {
    "faster": "faster",
    "even": f"within {formatting.percent(formatting.EVEN_MARGIN)} of even",
    "slower": "a loss",
    "unfit": "does not fit in memory",
}
#: The time per output token as two stacked bars (plain, speculative) and a table of the parts.
TIME_TITLE = "Where the time goes: the time per output token, split into its parts, as a share of a plain step's"
TIME_ROWS = {"plain": "Plain step", "spec": "Speculative"}

_ENVIRONMENT = jinja2.Environment(
    loader=jinja2.FileSystemLoader(Path(__file__).resolve().parent / "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    keep_trailing_newline=True,
)


def choice_label(name: str, value: str) -> str:
    """The text of a radio button: the drafter's name or the profile's description."""
    if name == "drafter":
        return drafters.drafter_label(value)
    return ENGINE_LABELS[value] if name == "engine" else ACCEPTANCE_LABELS[value]


def help_texts(settings: SiteSettings) -> dict[str, str]:
    """What each control means, shown under it."""
    ratio = settings.constants.FALLING_RATIO
    return {
        "alpha": "The chance that the first guess is accepted.",
        "acceptance": (f"Falls with position: each guess is accepted {ratio:g} times as often as the one before, "
                       "given that one was; the same: every guess as often as the first."),
        "drafter": "The drafter sets what a guess costs; how often guesses are accepted is set by α, not by the "
                   "drafter.",
        "engine": "The engine changes three things at once: what a pass costs, how the batch runs and what the "
                  "speedup measures. A readout an engine does not define says so.",
    }  # fmt: skip


def option_notes(settings: SiteSettings) -> dict[str, dict[str, str]]:
    """What each option of a control changes, shown beside it (the engines': :func:`engine_words`)."""
    return {"engine": {e: engine_words(settings.engines[e]) for e in axes(settings)["engine"]}}


def engine_words(profile: EngineProfile) -> str:
    """What an engine changes, in words, read off its profile (:data:`FIXED_WORDS`,
    :data:`OVERLAP_WORDS`, :data:`BATCHING_WORDS`)."""
    fixed = profile.target_pass_s > 0 or profile.iteration_s > 0 or profile.head_pass_s > 0
    partly = not math.isinf(profile.overlap)
    return "; ".join((FIXED_WORDS[fixed], OVERLAP_WORDS[partly], BATCHING_WORDS[profile.batching]))


def try_text(rungs: list[dict[str, Any]]) -> str:
    """The first thing to try, with the first rung of the ladder that loses at the article's setting."""
    names = {"concurrency": LABELS["concurrency"], "drafter": LABELS["drafter"]}
    losing = [r for r in rungs if r["verdict"] == "slower"]
    if not losing:
        return TRY_TEXT["none"].format(**names)
    return TRY_TEXT["loss"].format(**names, rung=formatting.plural(losing[0]["concurrency"], "sequence"))


def value_text(name: str, value: Any) -> str:
    """A control's value as the page shows it beside the control and tells a screen reader."""
    if name == "concurrency":
        return formatting.plural(int(value), "sequence")
    if name == "context":
        return formatting.plural(int(value), "token")
    return f"{value:g}"


def _control(
    name: str, values: tuple[Any, ...], default: Any, help_text: str | None, notes: dict[str, str] | None = None
) -> dict[str, Any]:
    control: dict[str, Any] = {"name": name, "label": LABELS[name], "help": help_text}
    if name in STOPS:
        control.update(kind="range", min="0", max=str(len(values) - 1), step="1", value=str(values.index(default)),
                       stops=",".join(str(v) for v in values))  # fmt: skip
    elif name in RANGES:
        step = round(values[1] - values[0], 10)
        control.update(kind="range", min=f"{values[0]:g}", max=f"{values[-1]:g}", step=f"{step:g}",
                       value=f"{default:g}", stops=None)  # fmt: skip
    else:
        control["kind"] = "radio"
        control["options"] = [{"value": v, "text": choice_label(name, v), "selected": v == default,
                               "note": (notes or {}).get(v)} for v in values]  # fmt: skip
    control["value_text"] = value_text(name, default) if name in RANGES else ""
    return control


def _rungs(settings: SiteSettings) -> list[dict[str, Any]]:
    """The ladder's rows: each concurrency and its speedup at the default scenario, as text (for
    a reader without JavaScript). The script draws each row (its bar, verdict, tooltip, whether
    it fits) from the data, the only place that is done."""
    concurrency = np.array(axes(settings)["concurrency"])
    ev = evaluate(concurrency=concurrency, settings=settings)
    decimals = BY_KEY["speedup"].decimals
    return [
        {"concurrency": int(batch), "text": BY_KEY["speedup"].format(s), "label": f"{int(batch):,}",
         "verdict": formatting.verdict(float(s), decimals)}
        for batch, s in zip(concurrency, ev.speedup, strict=True)
    ]  # fmt: skip


def _row(
    key: str, text: dict[str, Any], attr: str = "readout", label: str | None = None, only: dict | None = None
) -> dict[str, Any]:
    """A readout's row: its label, its value in the element ``data-<attr>="<key>"``, the drafter's
    and the target's sizes beside a ratio of theirs, and, for a readout only some engines define
    (``only``: the engines by readout, and the default setting's engine), whether it is defined."""
    label = label or (BY_KEY[key].label if attr == "readout" else EXTRA_LABELS[key])
    row = {"label": label, "key": key, "attr": attr, "text": text[key], "size": text["sizes"].get(key), "only": None}
    if only is not None and key in only["engines"]:
        row.update(only=key, defined=only["engine"] in only["engines"][key], note=ENGINE_ONLY_NOTE)
    return row


def _groups(text: dict[str, Any], only: dict) -> list[dict[str, Any]]:
    groups = []
    for title, keys in READOUT_GROUPS:
        rows = [_row(k, text, only=only) for k in keys]
        if title == "The drafter":
            rows.append(_row("acceptance", text, "acceptance"))
        if title == "Memory per GPU":
            rows.append(_row("fits", text, "fits"))
        groups.append({"title": title, "rows": rows})
    return groups


def _parts(text: dict[str, Any]) -> list[dict[str, Any]]:
    """The parts of the time per token: label, colour (the figures'), shares as text, and whether
    both are zero (the row and its segments are hidden)."""
    zero = formatting.percent(0.0, 0)
    shares = {p: (text["parts"][p]["plain"], text["parts"][p]["spec"]) for p in TIME_PARTS}
    return [
        {"key": p, "label": PART_LABELS[p], "color": PARTS[p][1], "plain": plain, "spec": spec,
         "hidden": plain == zero and spec == zero}
        for p, (plain, spec) in shares.items()
    ]  # fmt: skip


def script_source() -> str:
    """The simulator's script, checked to be embeddable in a ``<script>`` element."""
    source = SCRIPT.read_text(encoding="utf-8")
    if "</script" in source.lower():
        raise ValueError(f"{SCRIPT} contains '</script', which would end the embedded script")
    return source


def embedded_json(data: dict) -> str:
    """JSON for a ``<script type="application/json">`` element (``</`` escaped)."""
    return json.dumps(data, separators=(",", ":"), sort_keys=True, ensure_ascii=False).replace("</", "<\\/")


def simulator_html(settings: SiteSettings, sim: SimulatorData, src: str = "generated/data/sim/") -> str:
    """The simulator's markup, showing the default scenario (complete without JavaScript)."""
    default = default_scenario(settings)
    text = default_text(settings)
    words = sim.meta["tokens"]["words"]
    chips = [("accepted", words[0]), ("accepted", words[1]), ("rejected", words[2])]
    chips += [("skipped", words[j]) for j in range(3, default.gamma)] + [("emitted", "correction")]
    helps, notes = help_texts(settings), option_notes(settings)
    setting = {name: getattr(default, name) for name in axes(settings)}
    only = {"engines": engine_only(settings), "engine": default.engine}
    rungs = _rungs(settings)
    context = {
        "src": src,
        "default_file": slice_file(sim.meta, setting),
        # The default setting's slice, in the page (base64 of its plain bytes): the first answer
        # needs no request and no wait; every other slice is fetched.
        "first_slice": base64.b64encode(sim.blobs[slice_file(sim.meta, setting)]).decode("ascii"),
        "shown": "&".join(f"{k}={v}" for k, v in setting.items()),
        "meta": embedded_json(sim.meta),
        "script": script_source(),
        "controls": [
            _control(name, values, getattr(default, name), helps.get(name), notes.get(name))
            for name, values in axes(settings).items()
        ],
        "try_text": try_text(rungs),
        "reset_text": RESET_TEXT,
        "reset_label": RESET_LABEL,
        "text": text,
        "verdict": text["verdict"],
        "verdict_text": formatting.VERDICTS[text["verdict"]],
        "fits": text["fits"] == FITS_TEXT[True],
        "unfit_text": UNFIT_HEADLINE,
        "reasons": [_row(k, text, label=REASON_LABELS[k], only=only) for k in REASONS],
        "groups": _groups(text, only),
        "parts": _parts(text),
        "parts_total": text["parts_total"],
        "time_title": TIME_TITLE,
        "time_rows": TIME_ROWS,
        "rungs": rungs,
        "ladder_caption": LADDER_CAPTION,
        "ladder_legend": LADDER_LEGEND,
        "chips": chips,
        "chip_titles": CHIP_TITLES,
        "chip_legend": CHIP_LEGEND,
        "best_gamma_label": BEST_GAMMA_LABEL,
        "schedule_caption": SCHEDULE_CAPTION,
    }
    shown = {r["key"] for r in context["reasons"]} | {r["key"] for g in context["groups"] for r in g["rows"]}
    missing = set(READOUT_AXES) - shown - {"speedup"}
    if missing:
        raise ValueError(f"readouts not shown by the simulator: {sorted(missing)}")
    return _ENVIRONMENT.get_template("simulator.html").render(context)
