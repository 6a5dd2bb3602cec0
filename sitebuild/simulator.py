"""The simulator at the top of the article: its data file (the HTML is in :mod:`sitebuild.simulator_markup`).

The browser script (docs/javascripts/simulator.js) looks values up in the data written
here and formats them; it computes nothing about speculative decoding. Each quantity is
stored only over the axes it depends on, as integers in units of its displayed precision
(so the page prints exactly what Python prints). The integers are laid end to end in one
little-endian binary file (``simulator.bin``, shipped gzipped and inflated by the browser's
own DecompressionStream), which the page maps into typed arrays with no parsing;
``simulator.json`` describes where each quantity lies in it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from sitebuild import theme
from sitebuild.figures_data import site_drafters
from sitebuild.simulator_log import as_counters, expected_counters, log_template
from specmodel import formatting
from specmodel.model.acceptance import tokens_per_iteration_pmf
from specmodel.model.evaluate import evaluate
from specmodel.model.evaluation import Evaluation
from specmodel.model.scenario import SIMULATOR_AXES, SIMULATOR_AXIS_VALUES, default_scenario
from specmodel.model.settings import Settings
from specmodel.readouts import BY_KEY, readout_arrays
from specmodel.vllm import metrics as vllm

ALL = SIMULATOR_AXES


def axes(settings: Settings) -> dict[str, tuple[Any, ...]]:
    """The simulator's settings: every value of each control, in :data:`SIMULATOR_AXES` order
    (values from :data:`specmodel.model.scenario.SIMULATOR_AXIS_VALUES`; drafters: the site's)."""
    values = {**SIMULATOR_AXIS_VALUES, "drafter": site_drafters(settings)}
    return {name: tuple(values[name]) for name in ALL}


def _engine_first(axes: tuple[str, ...]) -> tuple[str, ...]:
    """The same axes with ``engine`` first: each engine's values lie in one block, which the
    gzip of the binary file compresses far better than interleaved engines."""
    return (*[a for a in axes if a == "engine"], *[a for a in axes if a != "engine"])


#: The readouts the simulator shows, and the axes each depends on.
_READOUT_AXES: dict[str, tuple[str, ...]] = {
    "speedup": ALL,
    "spec_tokens_per_s": ALL,
    "base_tokens_per_s": ("concurrency", "context", "engine"),
    "mean_acceptance_length": ("gamma", "acceptance", "alpha"),
    "draft_share": ALL,
    "arithmetic_ratio": ("context", "gamma", "drafter", "acceptance", "alpha", "engine"),
    "verify_idle": ("concurrency", "context", "gamma", "engine"),
    "verify_gib": ("concurrency", "context", "gamma"),  # gamma: a mixture of experts reads more experts
    "verify_tflop": ("concurrency", "context", "gamma"),
    "verify_memory_ms": ("concurrency", "context", "gamma"),
    "verify_compute_ms": ("concurrency", "context", "gamma", "engine"),
    "hbm_required_gib": ("concurrency", "context", "drafter"),
    "max_concurrency": ("context", "drafter"),
    "max_concurrency_without_draft": ("context",),
}

READOUT_AXES = {key: _engine_first(axes) for key, axes in _READOUT_AXES.items()}

#: Whether the scenario fits in memory: the axes it depends on.
FITS_AXES = ("concurrency", "context", "drafter")

#: Axes of vLLM's acceptance figures in the log: an n-gram lookup under a real engine drafts
#: only on a match, and vLLM counts matched drafts only.
_COUNTED = ("gamma", "drafter", "acceptance", "alpha", "engine")
#: Fields of vLLM's log line, in LOG_FORMAT's order, with the axes each depends on.
_LOG_FIELDS: dict[str, tuple[str, ...]] = {
    "mean_acceptance_length": _COUNTED,
    "accepted_throughput": ALL,
    "drafted_throughput": ALL,
    "accepted": ("concurrency", "gamma", "acceptance", "alpha", "engine"),
    "drafted": ("concurrency", *_COUNTED),
    "per_position": _COUNTED,
    "draft_acceptance_percent": _COUNTED,
}
LOG_FIELDS = {key: _engine_first(axes) for key, axes in _LOG_FIELDS.items()}

#: Words for the token row (the simulator samples how many guesses survive, not text).
TOKEN_WORDS = (
    "the",
    "draft",
    "model",
    "guesses",
    "several",
    "tokens",
    "ahead",
    "and",
    "the",
    "target",
    "checks",
    "them",
)


@dataclass(frozen=True)
class Grid:
    """The simulator's scenarios evaluated on the full axis grid."""

    settings: Settings
    evaluation: Evaluation
    counters: dict[str, np.ndarray]


def evaluate_grid(settings: Settings) -> Grid:
    mesh = np.meshgrid(*(np.array(v) for v in axes(settings).values()), indexing="ij")
    ev = evaluate(**dict(zip(ALL, mesh, strict=True)), settings=settings)
    return Grid(settings, ev, expected_counters(ev, mesh[0], mesh[2]))


def _reduce(values: np.ndarray, kept: tuple[str, ...]) -> np.ndarray:
    """``values`` over the full grid, restricted to the axes ``kept`` (index 0 on the others),
    after checking that it really does not vary along them, with its axes in the order of
    ``kept`` (trailing axes, such as positions, stay last)."""
    index = tuple(slice(None) if name in kept else 0 for name in ALL)
    reduced = values[index]
    expanded = np.broadcast_to(
        np.expand_dims(reduced, tuple(i for i, n in enumerate(ALL) if n not in kept)), values.shape
    )
    if not np.allclose(expanded, values, rtol=1e-9, atol=1e-12, equal_nan=True):
        raise ValueError(f"quantity varies along axes outside {kept}")
    present = [name for name in ALL if name in kept]
    order = [present.index(name) for name in kept]
    return np.transpose(reduced, order + list(range(len(order), reduced.ndim)))


def _units(text_values: list[str]) -> np.ndarray:
    """Formatted numbers ('1,234.56', '26') as integers in units of their last digit."""
    return np.array([int(t.replace(",", "").replace(".", "")) for t in text_values], dtype=np.int64)


class Packer:
    """Integer arrays laid end to end in one blob, each as the smallest unsigned type that
    holds it, stored byte plane by byte plane: first every element's lowest byte, then every
    element's next byte, and so on (the "shuffle" of HDF5 and Blosc). Neighbouring values
    share their high bytes, so the planes gzip to about two thirds of the plain layout; the
    browser puts each element's bytes back together when it loads the file."""

    TYPES = {"uint8": "<u1", "uint16": "<u2", "uint32": "<u4"}

    def __init__(self) -> None:
        self.blob = bytearray()

    def add(self, units: np.ndarray) -> dict:
        if units.min(initial=0) < 0:
            raise ValueError("negative value in simulator data")
        top = int(units.max(initial=0))
        name = next(n for n, d in self.TYPES.items() if top <= np.iinfo(np.dtype(d)).max)
        offset = len(self.blob)
        values = np.ascontiguousarray(units.ravel(), dtype=self.TYPES[name])
        self.blob += values.view(np.uint8).reshape(-1, values.itemsize).T.tobytes()
        return {"dtype": name, "offset": offset, "length": int(units.size)}

    @classmethod
    def view(cls, blob: bytes, field: dict) -> np.ndarray:
        """The integers of ``field`` (as returned by :meth:`add`) in ``blob``."""
        dtype = np.dtype(cls.TYPES[field["dtype"]])
        planes = np.frombuffer(blob, dtype=np.uint8, count=field["length"] * dtype.itemsize, offset=field["offset"])
        return planes.reshape(dtype.itemsize, -1).T.copy().view(dtype).ravel()


class Store:
    """One :class:`Packer` per engine. A quantity that depends on the engine (its first axis)
    is split: each engine's part goes to that engine's file, so the page loads only the files
    of the engines a reader looks at. Everything else goes to the default engine's file."""

    def __init__(self, engines: tuple[str, ...]):
        self.packers = {engine: Packer() for engine in engines}
        self.default = engines[0]

    def add(self, units: np.ndarray, axes: tuple[str, ...]) -> dict:
        flat = np.asarray(units).ravel()
        if axes and axes[0] == "engine":
            parts = np.split(flat, len(self.packers))
            return {"axes": list(axes[1:]),
                    "by_engine": {e: {"file": e, **self.packers[e].add(part)}
                                  for e, part in zip(self.packers, parts, strict=True)}}  # fmt: skip
        return {"axes": list(axes), "file": self.default, **self.packers[self.default].add(flat)}


@dataclass(frozen=True)
class SimulatorData:
    """The description (JSON) and the integers (one binary per engine) the page loads."""

    meta: dict
    blobs: dict[str, bytes]

    def read(self, field: dict) -> np.ndarray:
        return Packer.view(self.blobs[field["file"]], field)


def _readout_units(key: str, values: np.ndarray) -> tuple[np.ndarray, dict]:
    r = BY_KEY[key]
    texts = [r.format(v).removesuffix(f" {r.unit}").rstrip("x%") for v in values.ravel()]
    return _units(texts), {"label": r.label, "style": r.style, "decimals": r.decimals, "unit": r.unit}


def _printf(value: float, decimals: int, kind: str) -> str:
    return f"{int(value)}" if kind == "d" else f"{value:.{decimals}f}"


def binary_names(settings: Settings) -> dict[str, str]:
    """The binary file of each engine, by engine."""
    return {engine: f"simulator-{engine}.bin.gz" for engine in axes(settings)["engine"]}


def simulator_data(grid: Grid) -> SimulatorData:
    """Everything simulator.js needs: a JSON-ready description and the binaries it points into."""
    ev, settings = grid.evaluation, grid.settings
    store = Store(tuple(axes(settings)["engine"]))
    arrays = readout_arrays(ev)
    readouts = {}
    for key, kept in READOUT_AXES.items():
        reduced = _reduce(arrays[key], kept)
        units, meta = _readout_units(key, reduced)
        readouts[key] = {**meta, **store.add(units, kept)}
    fits = store.add(_reduce(ev.fits.astype(np.int64), FITS_AXES), FITS_AXES)
    cdf = _reduce_positions(np.cumsum(tokens_per_iteration_pmf(ev.per_position), axis=-1))
    default = default_scenario(settings)
    meta = {
        "binaries": binary_names(settings),
        "axis_order": list(ALL),
        "axes": {k: list(v) for k, v in axes(settings).items()},
        "defaults": {k: getattr(default, k) for k in ALL},
        "fits": {**fits, "text": {"1": FITS_TEXT[True], "0": FITS_TEXT[False]}},
        "readouts": readouts,
        "log": {"template": log_template(), "fields": _log_fields(grid, store)},
        "tokens": {
            "axes": ["gamma", "acceptance", "alpha"],
            "positions": cdf.shape[-1],
            "cdf": [round(float(x), 6) for x in cdf.ravel()],
            "words": list(TOKEN_WORDS),
        },
        "colors": {
            "drafters": {d: theme.drafter_color(d, settings.deployment) for d in site_drafters(settings)},
            "loss": theme.LOSS,
            "even": theme.NEUTRAL,
        },
        "ladder": ladder_scale(readouts["speedup"], ev.speedup, store),
        "verdicts": {"keys": list(VERDICT_KEYS), "text": dict(formatting.VERDICTS)},
        "rungs": {"title": RUNG_TITLE, "unfit": RUNG_UNFIT, "unfit_headline": UNFIT_HEADLINE,
                  "sequences": {str(b): formatting.plural(b, "sequence") for b in axes(settings)["concurrency"]}},
    }  # fmt: skip
    return SimulatorData(meta, {engine: bytes(p.blob) for engine, p in store.packers.items()})


def _log_fields(grid: Grid, store: Store) -> dict[str, dict]:
    """The fields of vLLM's log line by vLLM's own definitions (specmodel.vllm.metrics), as
    printf would print them, over the axes each depends on."""
    counters, elapsed = as_counters(grid.counters)
    log_values = {
        "mean_acceptance_length": vllm.mean_acceptance_length(counters),
        "accepted_throughput": vllm.throughput(counters.num_accepted_tokens, elapsed),
        "drafted_throughput": vllm.throughput(counters.num_draft_tokens, elapsed),
        "accepted": counters.num_accepted_tokens,
        "drafted": counters.num_draft_tokens,
        "draft_acceptance_percent": 100.0 * vllm.draft_acceptance_rate(counters),
    }
    slots = {p["slot"]: p for p in log_template() if "slot" in p}
    log = {}
    for key, kept in LOG_FIELDS.items():
        if key == "per_position":
            continue
        reduced = _reduce(log_values[key], kept)
        spec = slots[key]
        units = _units([_printf(v, spec["decimals"], spec["kind"]) for v in reduced.ravel()])
        log[key] = {"decimals": spec["decimals"], **store.add(units, kept)}
    rates = _reduce(vllm.per_position_rate(counters), LOG_FIELDS["per_position"])
    log["per_position"] = {
        "positions": rates.shape[-1],
        "decimals": 3,
        **store.add(_units([f"{v:.3f}" for v in rates.ravel()]), LOG_FIELDS["per_position"]),
    }
    return log


#: The verdicts in the order of their codes in the ladder's table.
VERDICT_KEYS = ("slower", "even", "faster")


def ladder_levels(speedup: np.ndarray, decimals: int) -> tuple[np.ndarray, int]:
    """The ladder's pinned log scale: for every displayable speedup (in units of its last
    digit, 0 up to the largest in the data) the height, in tenths of a percent of the ladder,
    at which its bar ends, and the height of the 1x baseline. The range spans every speedup
    in the data, so changing a control never rescales it."""
    scale = 10**decimals
    low, high = np.log(max(speedup.min(), 1 / scale)), np.log(speedup.max())
    units = np.arange(int(np.ceil(speedup.max() * scale)) + 1)
    levels = (np.log(np.maximum(units, 1) / scale) - low) / (high - low)
    levels = np.clip(np.round(1000 * levels), 0, 1000).astype(np.int64)
    baseline = int(round(1000 * (0 - low) / (high - low)))
    return levels, baseline


def ladder_scale(speedup_field: dict, speedup: np.ndarray, store: Store) -> dict:
    """The ladder as lookup tables over every displayable speedup (units of its last digit):
    where its bar starts (``bottom``) and ends (``top``) and its ``height``, in tenths of a
    percent of the ladder (bars rise from the 1x baseline for wins and hang below it for
    losses; the value sits on top), and its ``verdict`` (an index into VERDICT_KEYS, read off
    the speedup as printed by :func:`specmodel.formatting.verdict`)."""
    decimals = speedup_field["decimals"]
    levels, baseline = ladder_levels(speedup, decimals)
    bottom, top = np.minimum(levels, baseline), np.maximum(levels, baseline)
    scale = 10**decimals
    verdicts = np.array([VERDICT_KEYS.index(formatting.verdict(u / scale, decimals)) for u in range(len(levels))])
    return {
        "baseline": baseline,
        "bottom": store.add(bottom, ()),
        "top": store.add(top, ()),
        "height": store.add(top - bottom, ()),
        "verdict": store.add(verdicts, ()),
    }


def _reduce_positions(values: np.ndarray) -> np.ndarray:
    """Per-position quantities over (gamma, acceptance, alpha, position)."""
    index = tuple(0 if name not in ("gamma", "acceptance", "alpha") else slice(None) for name in ALL)
    return values[index]


#: What the page says of a scenario that fits in memory, and of one that does not.
FITS_TEXT = {True: "yes", False: "no: needs more memory than the GPUs have"}
#: What the headline adds for a scenario that does not fit in memory.
UNFIT_HEADLINE = "but it does not fit in memory: this scenario needs more GPUs"
#: A ladder rung's tooltip and accessible name; simulator.js fills in the same fields.
RUNG_TITLE = "{sequences}: {speedup}, {verdict}{fit}"
RUNG_UNFIT = "; does not fit in memory"


def rung_title(concurrency: int, speedup_text: str, verdict: str, fits: bool) -> str:
    """``64 sequences: 0.89x, slower than plain decoding: a loss``."""
    return RUNG_TITLE.format(sequences=formatting.plural(concurrency, "sequence"), speedup=speedup_text,
                             verdict=formatting.VERDICTS[verdict], fit="" if fits else RUNG_UNFIT)  # fmt: skip


def default_text(settings: Settings) -> dict[str, str]:
    """The default scenario's readouts, verdict, whether it fits, and its log line as text,
    for the page without JavaScript."""
    default = default_scenario(settings)
    ev = evaluate(default, settings=settings)
    arrays = readout_arrays(ev)
    out = {key: BY_KEY[key].format(float(arrays[key])) for key in READOUT_AXES}
    out["fits"] = FITS_TEXT[bool(ev.fits)]
    out["verdict"] = formatting.verdict(float(ev.speedup), BY_KEY["speedup"].decimals)
    counters, elapsed = as_counters(expected_counters(ev, default.concurrency, default.gamma))
    out["log"] = vllm.format_log_message(counters, elapsed)
    return out
