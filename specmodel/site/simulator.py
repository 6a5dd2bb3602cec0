"""The simulator at the top of the article: its data file and its HTML.

The browser script (docs/javascripts/simulator.js) looks values up in the data written
here and formats them; it computes nothing about speculative decoding. Each quantity is
stored only over the axes it depends on, as integers in units of its displayed precision
(so the page prints exactly what Python prints). The integers are laid end to end in one
little-endian binary file (``simulator.bin``), which the page maps into typed arrays with
no parsing; ``simulator.json`` describes where each quantity lies in it.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

import numpy as np

from specmodel import drafters
from specmodel import vllm_metrics as vllm
from specmodel.acceptance import tokens_per_iteration_pmf
from specmodel.model import PROFILES, defaults, evaluate
from specmodel.readouts import BY_KEY, readout_arrays
from specmodel.settings import constants
from specmodel.site import theme
from specmodel.site.figures_data import site_drafters

ALL = ("concurrency", "context", "gamma", "drafter", "acceptance", "alpha")


def axes() -> dict[str, tuple]:
    """The simulator's settings: every value of each control (drafters: the site's)."""
    return {
        "concurrency": tuple(2**i for i in range(11)),
        "context": (512, 1024, 2048, 4096, 8192, 16384),
        "gamma": tuple(range(1, 11)),
        "drafter": site_drafters(),
        "acceptance": PROFILES,
        "alpha": tuple(round(0.50 + 0.05 * i, 2) for i in range(10)),
    }


#: The readouts the simulator shows, and the axes each depends on.
READOUT_AXES: dict[str, tuple[str, ...]] = {
    "speedup": ALL,
    "spec_tokens_per_s": ALL,
    "base_tokens_per_s": ("concurrency", "context"),
    "mean_acceptance_length": ("gamma", "acceptance", "alpha"),
    "draft_share": ALL,
    "arithmetic_ratio": ("context", "gamma", "drafter", "acceptance", "alpha"),
    "verify_idle": ("concurrency", "context", "gamma"),
    "verify_gib": ("concurrency", "context"),
    "verify_tflop": ("concurrency", "context", "gamma"),
    "verify_memory_ms": ("concurrency", "context"),
    "verify_compute_ms": ("concurrency", "context", "gamma"),
    "hbm_required_gib": ("concurrency", "context", "drafter"),
    "max_concurrency": ("context", "drafter"),
    "max_concurrency_without_draft": ("context",),
}

#: Whether the scenario fits on one card: the axes it depends on.
FITS_AXES = ("concurrency", "context", "drafter")

#: Fields of vLLM's log line, in LOG_FORMAT's order, with the axes each depends on.
LOG_FIELDS: dict[str, tuple[str, ...]] = {
    "mean_acceptance_length": ("gamma", "acceptance", "alpha"),
    "accepted_throughput": ALL,
    "drafted_throughput": ALL,
    "accepted": ("concurrency", "gamma", "acceptance", "alpha"),
    "drafted": ("concurrency", "gamma", "acceptance", "alpha"),
    "per_position": ("gamma", "acceptance", "alpha"),
    "draft_acceptance_percent": ("gamma", "acceptance", "alpha"),
}
SPEC = re.compile(r"%(?:\.(\d+))?([dfs%])")

#: Words for the token row (the simulator samples how many guesses survive, not text).
TOKEN_WORDS = ("the", "draft", "model", "guesses", "several", "tokens", "ahead", "and", "the", "target", "checks", "them")


@dataclass(frozen=True)
class Grid:
    """The simulator's scenarios evaluated on the full axis grid."""

    evaluation: object
    counters: dict[str, np.ndarray]


def evaluate_grid() -> Grid:
    mesh = np.meshgrid(*(np.array(v) for v in axes().values()), indexing="ij")
    ev = evaluate(*mesh)
    return Grid(ev, expected_counters(ev, mesh[0], mesh[2]))


def expected_counters(ev, concurrency, gamma) -> dict[str, np.ndarray]:
    """vLLM's counters over one cohort run, at their expected values: one draft per
    sequence per iteration, gamma draft tokens each, E[X] - 1 accepted, u_j of them at
    position j; elapsed time is the cohort's, B G / speculative tokens/s."""
    drafts = np.asarray(concurrency, dtype=float) * ev.expected_iterations
    return {
        "num_drafts": drafts,
        "num_draft_tokens": drafts * gamma,
        "num_accepted_tokens": drafts * (ev.mean_acceptance_length - 1.0),
        "accepted_per_position": ev.per_position * drafts[..., None],
        "elapsed": np.asarray(concurrency, dtype=float) * constants().GENERATED_TOKENS / ev.spec_tokens_per_s,
    }


def as_counters(expected: dict[str, np.ndarray]) -> tuple[vllm.SpecDecodeCounters, object]:
    """:func:`expected_counters` as vLLM's counter record and the elapsed seconds: plain
    numbers for one scenario, arrays over a grid."""
    if np.ndim(expected["num_drafts"]) == 0:
        counters = vllm.SpecDecodeCounters(
            float(expected["num_drafts"]), float(expected["num_draft_tokens"]), float(expected["num_accepted_tokens"]),
            tuple(float(x) for x in np.ravel(expected["accepted_per_position"])))
        return counters, float(expected["elapsed"])
    counters = vllm.SpecDecodeCounters(expected["num_drafts"], expected["num_draft_tokens"],
                                       expected["num_accepted_tokens"], expected["accepted_per_position"])
    return counters, expected["elapsed"]


def log_template() -> list[dict]:
    """LOG_FORMAT split into literal text and numbered slots with their precision."""
    parts, pos, fields = [], 0, iter(LOG_FIELDS)
    for m in SPEC.finditer(vllm.LOG_FORMAT):
        parts.append({"text": vllm.LOG_FORMAT[pos:m.start()]})
        if m.group(2) == "%":
            parts.append({"text": "%"})
        else:
            parts.append({"slot": next(fields), "decimals": int(m.group(1) or 0), "kind": m.group(2)})
        pos = m.end()
    parts.append({"text": vllm.LOG_FORMAT[pos:]})
    return [p for p in parts if p.get("text") != ""]


def _reduce(values: np.ndarray, kept: tuple[str, ...]) -> np.ndarray:
    """``values`` over the full grid, restricted to the axes ``kept`` (index 0 on the others),
    after checking that it really does not vary along them."""
    index = tuple(slice(None) if name in kept else 0 for name in ALL)
    reduced = values[index]
    expanded = np.broadcast_to(np.expand_dims(reduced, tuple(i for i, n in enumerate(ALL) if n not in kept)), values.shape)
    if not np.allclose(expanded, values, rtol=1e-9, atol=1e-12, equal_nan=True):
        raise ValueError(f"quantity varies along axes outside {kept}")
    return reduced


def _units(text_values: list[str]) -> np.ndarray:
    """Formatted numbers ('1,234.56', '26') as integers in units of their last digit."""
    return np.array([int(t.replace(",", "").replace(".", "")) for t in text_values], dtype=np.int64)


class Packer:
    """Integer arrays laid end to end in one little-endian blob, each as the smallest
    unsigned type that holds it and aligned to 4 bytes (so the browser can view it in place)."""

    TYPES = {"uint8": "<u1", "uint16": "<u2", "uint32": "<u4"}

    def __init__(self) -> None:
        self.blob = bytearray()

    def add(self, units: np.ndarray) -> dict:
        if units.min(initial=0) < 0:
            raise ValueError("negative value in simulator data")
        top = int(units.max(initial=0))
        name = next(n for n, d in self.TYPES.items() if top <= np.iinfo(np.dtype(d)).max)
        self.blob += b"\0" * (-len(self.blob) % 4)
        offset = len(self.blob)
        self.blob += np.ascontiguousarray(units.ravel(), dtype=self.TYPES[name]).tobytes()
        return {"dtype": name, "offset": offset, "length": int(units.size)}

    @classmethod
    def view(cls, blob: bytes, field: dict) -> np.ndarray:
        """The integers of ``field`` (as returned by :meth:`add`) in ``blob``."""
        return np.frombuffer(blob, dtype=cls.TYPES[field["dtype"]], count=field["length"], offset=field["offset"])


@dataclass(frozen=True)
class SimulatorData:
    """The description (JSON) and the integers (binary) the page loads."""

    meta: dict
    blob: bytes

    def read(self, field: dict) -> np.ndarray:
        return Packer.view(self.blob, field)


def _readout_units(key: str, values: np.ndarray) -> tuple[np.ndarray, dict]:
    r = BY_KEY[key]
    texts = [r.format(v).removesuffix(f" {r.unit}").rstrip("x%") for v in values.ravel()]
    return _units(texts), {"label": r.label, "style": r.style, "decimals": r.decimals, "unit": r.unit}


def _printf(value: float, decimals: int, kind: str) -> str:
    return f"{int(value)}" if kind == "d" else f"{value:.{decimals}f}"


def simulator_data(grid: Grid | None = None, binary_name: str = "simulator.bin") -> SimulatorData:
    """Everything simulator.js needs: a JSON-ready description and the binary it points into."""
    grid = grid or evaluate_grid()
    packer = Packer()
    ev = grid.evaluation
    counters, elapsed = as_counters(grid.counters)
    arrays = readout_arrays(ev)
    readouts = {}
    for key, kept in READOUT_AXES.items():
        reduced = _reduce(arrays[key], kept)
        units, meta = _readout_units(key, reduced)
        readouts[key] = {**meta, "axes": list(kept), **packer.add(units)}
    fits = {"axes": list(FITS_AXES), **packer.add(_reduce(ev.fits.astype(np.int64), FITS_AXES))}

    # The fields of the log line by vLLM's own definitions (specmodel.vllm_metrics).
    log_values = {
        "mean_acceptance_length": vllm.mean_acceptance_length(counters),
        "accepted_throughput": vllm.throughput(counters.num_accepted_tokens, elapsed),
        "drafted_throughput": vllm.throughput(counters.num_draft_tokens, elapsed),
        "accepted": counters.num_accepted_tokens,
        "drafted": counters.num_draft_tokens,
        "draft_acceptance_percent": 100.0 * vllm.draft_acceptance_rate(counters),
    }
    template = log_template()
    slots = {p["slot"]: p for p in template if "slot" in p}
    log = {}
    for key, kept in LOG_FIELDS.items():
        if key == "per_position":
            continue
        reduced = _reduce(log_values[key], kept)
        spec = slots[key]
        units = _units([_printf(v, spec["decimals"], spec["kind"]) for v in reduced.ravel()])
        log[key] = {"axes": list(kept), "decimals": spec["decimals"], **packer.add(units)}
    rates = _reduce_positions(vllm.per_position_rate(counters))
    log["per_position"] = {"axes": list(LOG_FIELDS["per_position"]), "positions": rates.shape[-1], "decimals": 3,
                           **packer.add(_units([f"{v:.3f}" for v in rates.ravel()]))}

    cdf = _reduce_positions(np.cumsum(tokens_per_iteration_pmf(ev.per_position), axis=-1))
    meta = {
        "binary": binary_name,
        "axes": {k: list(v) for k, v in axes().items()},
        "defaults": {k: defaults()[k] for k in ALL},
        "fits": {**fits, "text": {"1": FITS_TEXT[True], "0": FITS_TEXT[False]}},
        "readouts": readouts,
        "log": {"template": template, "fields": log},
        "tokens": {"axes": ["gamma", "acceptance", "alpha"], "positions": cdf.shape[-1],
                   "cdf": [round(float(x), 6) for x in cdf.ravel()], "words": list(TOKEN_WORDS)},
        "colors": {"drafters": {d: theme.drafter_color(d) for d in site_drafters()}, "loss": theme.LOSS},
        "ladder": ladder_scale(readouts["speedup"], ev.speedup, packer),
    }
    return SimulatorData(meta, bytes(packer.blob))


def ladder_scale(speedup_field: dict, speedup: np.ndarray, packer: Packer) -> dict:
    """The ladder's pinned log scale as a lookup table: for every displayable speedup (in
    units of its last digit) the height, in tenths of a percent of the ladder, at which its
    bar ends; bars rise from the 1x baseline for wins and hang below it for losses. The
    range spans every speedup in the data, so changing a control never rescales it."""
    scale = 10 ** speedup_field["decimals"]
    low, high = np.log(max(speedup.min(), 1 / scale)), np.log(speedup.max())
    units = np.arange(int(np.ceil(speedup.max() * scale)) + 1)
    levels = (np.log(np.maximum(units, 1) / scale) - low) / (high - low)
    levels = np.clip(np.round(1000 * levels), 0, 1000).astype(np.int64)
    baseline = int(round(1000 * (0 - low) / (high - low)))
    return {"baseline": baseline, **packer.add(levels)}


def _reduce_positions(values: np.ndarray) -> np.ndarray:
    """Per-position quantities over (gamma, acceptance, alpha, position)."""
    index = tuple(0 if name not in ("gamma", "acceptance", "alpha") else slice(None) for name in ALL)
    return values[index]


def default_text() -> dict[str, str]:
    """The default scenario's readouts, whether it fits, and its log line as text, for the page
    without JavaScript."""
    ev = evaluate()
    arrays = readout_arrays(ev)
    out = {key: BY_KEY[key].format(float(arrays[key])) for key in READOUT_AXES}
    out["fits"] = FITS_TEXT[bool(ev.fits)]
    counters, elapsed = as_counters(expected_counters(ev, defaults()["concurrency"], defaults()["gamma"]))
    out["log"] = vllm.format_log_message(counters, elapsed)
    return out


# --- HTML -----------------------------------------------------------------------------------

LABELS = {
    "concurrency": "Concurrent sequences",
    "context": "Context (prompt tokens)",
    "gamma": "Draft tokens per iteration, γ",
    "drafter": "Drafts come from",
    "acceptance": "Acceptance across draft positions",
    "alpha": "Acceptance rate, α",
}
ACCEPTANCE_LABELS = {"falling": "falls with position", "same": "same at every position"}


def choice_label(name: str, value: str) -> str:
    """The text of a radio button: the drafter's name or the profile's description."""
    return drafters.drafter_label(value) if name == "drafter" else ACCEPTANCE_LABELS[value]
MEMORY_GROUP = "Memory on one card"
READOUT_GROUPS = (
    ("Throughput", ("spec_tokens_per_s", "base_tokens_per_s", "mean_acceptance_length", "draft_share",
                    "arithmetic_ratio")),
    ("The verify pass", ("verify_idle", "verify_gib", "verify_tflop", "verify_memory_ms", "verify_compute_ms")),
    (MEMORY_GROUP, ("hbm_required_gib", "max_concurrency", "max_concurrency_without_draft")),
)

#: What the page says of a scenario that fits on one card, and of one that does not.
FITS_TEXT = {True: "yes", False: "no: needs more than one card"}


def _e(text) -> str:
    return html.escape(str(text), quote=True)


def _select(name: str, values, default) -> str:
    options = "".join(f'<option value="{_e(v)}"{" selected" if v == default else ""}>{v:,}</option>' for v in values)
    return (f'<label class="specsim__control"><span>{LABELS[name]}</span>'
            f'<select name="{name}">{options}</select></label>')


def _range(name: str, values, default) -> str:
    step = round(values[1] - values[0], 10)
    return (f'<label class="specsim__control"><span>{LABELS[name]} <output data-output="{name}">{default:g}</output></span>'
            f'<input type="range" name="{name}" min="{values[0]:g}" max="{values[-1]:g}" step="{step:g}" '
            f'value="{default:g}"></label>')


def _radios(name: str, values, default) -> str:
    items = "".join(
        f'<label><input type="radio" name="{name}" value="{_e(v)}"{" checked" if v == default else ""}> '
        f"{_e(choice_label(name, v))}</label>" for v in values)
    return f'<fieldset class="specsim__control"><legend>{LABELS[name]}</legend>{items}</fieldset>'


def bar_geometry(units: int, ladder: dict, levels: list[int]) -> tuple[float, float]:
    """Bottom and height (percent of the ladder) of the bar for a speedup of ``units``."""
    level, base = levels[units], ladder["baseline"]
    return min(level, base) / 10, abs(level - base) / 10


def _ladder(speedups: np.ndarray, fits: np.ndarray, drafter: str, current: int, ladder: dict, levels: list[int]) -> str:
    rungs = []
    color = theme.drafter_color(drafter)
    for (b, s), fit in zip(zip(axes()["concurrency"], speedups), fits):
        text = BY_KEY["speedup"].format(s)
        units = int(text.rstrip("x").replace(".", ""))
        loss = units < 10 ** BY_KEY["speedup"].decimals
        bottom, height = bar_geometry(units, ladder, levels)
        classes = ("specsim__rung" + (" is-loss" if loss else "") + (" is-current" if b == current else "")
                   + ("" if fit else " is-unfit"))
        rungs.append(
            f'<div class="{classes}" data-concurrency="{b}" title="{FITS_TEXT[bool(fit)]}">'
            f'<span class="specsim__bar" style="bottom:{bottom:.1f}%;height:{height:.1f}%;'
            f'background:{theme.LOSS if loss else color}"></span>'
            f'<span class="specsim__value" style="bottom:{bottom + height:.1f}%">{text}</span>'
            f'<span class="specsim__label">{b:,}</span></div>')
    one = f'<div class="specsim__one" style="bottom:{ladder["baseline"] / 10:.1f}%"><span>1x</span></div>'
    return f'<div class="specsim__ladder" data-ladder role="img" aria-label="Speedup at every concurrency">{one}{"".join(rungs)}</div>'


def simulator_html(sim: SimulatorData, src: str = "generated/data/simulator.json") -> str:
    """The simulator's markup, showing the default scenario (complete without JavaScript)."""
    binary = src.rsplit("/", 1)[0] + "/" + sim.meta["binary"]
    data = sim.meta
    d = data["defaults"]
    text = default_text()
    controls = (
        _select("concurrency", axes()["concurrency"], d["concurrency"])
        + _select("context", axes()["context"], d["context"])
        + _range("gamma", axes()["gamma"], d["gamma"])
        + _radios("drafter", axes()["drafter"], d["drafter"])
        + _radios("acceptance", axes()["acceptance"], d["acceptance"])
        + _range("alpha", axes()["alpha"], d["alpha"])
    )
    speedup = float(evaluate().speedup)
    verdict = "faster than plain decoding" if speedup >= 1 else "slower than plain decoding: a loss"
    groups = []
    for title, keys in READOUT_GROUPS:
        rows = "".join(f"<div><dt>{_e(BY_KEY[k].label)}</dt><dd data-readout=\"{k}\">{_e(text[k])}</dd></div>" for k in keys)
        if title == MEMORY_GROUP:
            rows += f'<div><dt>Fits on one card</dt><dd data-fits>{_e(text["fits"])}</dd></div>'
        groups.append(f'<dl class="specsim__readouts" aria-label="{_e(title)}">{rows}</dl>')
    ladder_ev = evaluate(concurrency=np.array(axes()["concurrency"]))
    levels = [int(x) for x in sim.read(data["ladder"])]
    ladder = _ladder(ladder_ev.speedup, ladder_ev.fits, d["drafter"], d["concurrency"], data["ladder"], levels)
    words = data["tokens"]["words"]
    chips = "".join(f'<span class="specsim__token is-accepted">{_e(words[j])}</span>' for j in range(2))
    chips += f'<span class="specsim__token is-rejected">{_e(words[2])}</span>'
    chips += "".join(f'<span class="specsim__token is-skipped">{_e(words[j])}</span>' for j in range(3, d["gamma"]))
    chips += '<span class="specsim__token is-emitted">target</span>'
    return f"""<div class="specsim{'' if speedup >= 1 else ' is-loss'}" data-simulator data-src="{_e(src)}" data-binary="{_e(binary)}">
<form class="specsim__form" aria-label="Scenario" onsubmit="return false">{controls}</form>
<div class="specsim__headline"><span class="specsim__speedup" data-readout="speedup">{_e(text['speedup'])}</span>
<span class="specsim__verdict" data-verdict>{verdict}</span></div>
<div class="specsim__grid">{''.join(groups)}</div>
<p class="specsim__caption">Speedup at every concurrency for these settings (the current one outlined; magenta: slower than plain decoding; hatched: does not fit on one card)</p>
{ladder}
<p class="specsim__caption">One sampled iteration: accepted guesses, the first rejected guess, guesses thrown away after it, and the token the target emits</p>
<div class="specsim__tokens"><div class="specsim__row" data-tokens aria-live="polite">{chips}</div>
<button type="button" class="md-button" data-resample>Draw another iteration</button></div>
<p class="specsim__caption">What vLLM's engine would log for this scenario over one run (expected counters)</p>
<pre class="specsim__log"><code data-log>{_e(text['log'])}</code></pre>
</div>
"""
