"""The simulator's HTML, from its one template (``templates/simulator.html``), showing the
default scenario so that the page is complete without JavaScript. The bars, the verdict and
every readout come from the same tables the data file carries (:mod:`sitebuild.simulator`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jinja2
import numpy as np

from sitebuild import theme
from sitebuild.simulator import (
    FITS_TEXT,
    UNFIT_HEADLINE,
    VERDICT_KEYS,
    SimulatorData,
    axes,
    default_text,
    rung_title,
)
from specmodel import formatting
from specmodel.model import drafters
from specmodel.model.evaluate import evaluate
from specmodel.model.scenario import default_scenario
from specmodel.model.settings import Settings
from specmodel.readouts import BY_KEY

LABELS = {
    "concurrency": "Concurrent sequences",
    "context": "Context (prompt tokens)",
    "gamma": "Draft tokens per iteration, γ",
    "drafter": "Drafts come from",
    "acceptance": "Acceptance across draft positions",
    "alpha": "Acceptance rate, α",
    "engine": "Engine",
}
ACCEPTANCE_LABELS = {"falling": "falls with position", "same": "same at every position"}
ENGINE_LABELS = {"ideal": "ideal roofline (the article)", "vllm": "vLLM, fitted to measurements"}
CONTROL_KINDS = {
    "concurrency": "select",
    "context": "select",
    "gamma": "range",
    "drafter": "radio",
    "acceptance": "radio",
    "alpha": "range",
    "engine": "radio",
}
MEMORY_GROUP = "Memory per GPU"
READOUT_GROUPS = (
    (
        "Throughput",
        ("spec_tokens_per_s", "base_tokens_per_s", "mean_acceptance_length", "draft_share", "arithmetic_ratio"),
    ),
    ("The verify pass", ("verify_idle", "verify_gib", "verify_tflop", "verify_memory_ms", "verify_compute_ms")),
    (MEMORY_GROUP, ("hbm_required_gib", "max_concurrency", "max_concurrency_without_draft")),
)
#: The token chips' states and what each means (their tooltips).
CHIP_TITLES = {
    "accepted": "accepted guess",
    "rejected": "first rejected guess",
    "skipped": "thrown away",
    "emitted": "token the target emits",
}

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


def help_texts(settings: Settings) -> dict[str, str]:
    """What each control means, shown under it."""
    ratio = settings.constants.FALLING_RATIO
    return {
        "alpha": "The chance that the first guess is accepted.",
        "acceptance": (f"Falls with position: each guess is accepted {ratio:g} times as often as the one before, "
                       "given that one was; the same: every guess as often as the first."),
        "drafter": "The drafter sets what a guess costs; how often guesses are accepted is set by α, not by the "
                   "drafter.",
        "engine": "Ideal: the article's roofline, a batch that starts together and drains. vLLM: fixed costs of a "
                  "real server, fitted to measurements, with the batch kept full.",
    }  # fmt: skip


def _control(name: str, values: tuple[Any, ...], default: Any, help_text: str | None) -> dict[str, Any]:
    kind = CONTROL_KINDS[name]
    control: dict[str, Any] = {"name": name, "label": LABELS[name], "kind": kind, "help": help_text}
    if kind == "range":
        step = round(values[1] - values[0], 10)
        control.update(min=f"{values[0]:g}", max=f"{values[-1]:g}", step=f"{step:g}", value=f"{default:g}")
    else:
        text = (lambda v: f"{v:,}") if kind == "select" else (lambda v: choice_label(name, v))
        control["options"] = [{"value": v, "text": text(v), "selected": v == default} for v in values]
    return control


def _rungs(settings: Settings, sim: SimulatorData, drafter: str, current: int) -> list[dict[str, Any]]:
    """The ladder's rungs at the default scenario, with the data file's geometry and verdicts."""
    ladder = sim.meta["ladder"]
    bottom, top, height = (sim.read(ladder[k]) for k in ("bottom", "top", "height"))
    verdicts = sim.read(ladder["verdict"])
    concurrency = np.array(axes(settings)["concurrency"])
    ev = evaluate(concurrency=concurrency, settings=settings)
    color = theme.drafter_color(drafter, settings.deployment)
    rungs = []
    for b, s, fit in zip(concurrency, ev.speedup, ev.fits, strict=True):
        text = BY_KEY["speedup"].format(s)
        units = int(text.rstrip("x").replace(".", ""))
        loss = VERDICT_KEYS[verdicts[units]] == "slower"
        classes = (
            "specsim__rung"
            + (" is-loss" if loss else "")
            + (" is-current" if b == current else "")
            + ("" if fit else " is-unfit")
        )
        rungs.append(
            {
                "classes": classes,
                "concurrency": int(b),
                "title": rung_title(int(b), text, VERDICT_KEYS[verdicts[units]], bool(fit)),
                "bottom": f"{bottom[units] / 10:.1f}",
                "height": f"{height[units] / 10:.1f}",
                "top": f"{top[units] / 10:.1f}",
                "color": theme.LOSS if loss else theme.NEUTRAL if VERDICT_KEYS[verdicts[units]] == "even" else color,
                "text": text,
                "label": f"{int(b):,}",
            }
        )
    return rungs


def _groups(text: dict[str, str]) -> list[dict[str, Any]]:
    groups = []
    for title, keys in READOUT_GROUPS:
        rows = [{"label": BY_KEY[k].label, "key": k, "text": text[k]} for k in keys]
        if title == MEMORY_GROUP:
            rows.append({"label": "Fits in memory", "key": None, "text": text["fits"]})
        groups.append({"title": title, "rows": rows})
    return groups


def simulator_html(settings: Settings, sim: SimulatorData, src: str = "generated/data/simulator.json") -> str:
    """The simulator's markup, showing the default scenario (complete without JavaScript)."""
    default = default_scenario(settings)
    text = default_text(settings)
    words = sim.meta["tokens"]["words"]
    chips = [("accepted", words[0]), ("accepted", words[1]), ("rejected", words[2])]
    chips += [("skipped", words[j]) for j in range(3, default.gamma)] + [("emitted", "correction")]
    helps = help_texts(settings)
    context = {
        "src": src,
        "controls": [
            _control(name, values, getattr(default, name), helps.get(name)) for name, values in axes(settings).items()
        ],
        "text": text,
        "verdict": text["verdict"],
        "verdict_text": formatting.VERDICTS[text["verdict"]],
        "fits": text["fits"] == FITS_TEXT[True],
        "unfit_text": UNFIT_HEADLINE,
        "groups": _groups(text),
        "one": f"{sim.meta['ladder']['baseline'] / 10:.1f}",
        "rungs": _rungs(settings, sim, str(default.drafter), default.concurrency),
        "chips": chips,
        "chip_titles": CHIP_TITLES,
    }
    return _ENVIRONMENT.get_template("simulator.html").render(context)
