"""The simulator at the top of the article: its data, cut into slices so that the first answer
needs only one small file (the HTML is in :mod:`sitebuild.simulator.markup`).

The browser script (docs/javascripts/simulator.js, embedded in the page by the build) looks
values up in the data written here and formats them; it computes nothing about speculative
decoding. The simulator's scenarios are cut into slices, one per engine, drafter, acceptance
profile and alpha (:data:`SLICE_AXES`): a slice holds every quantity over the remaining axes,
concurrency, context and gamma (:data:`INNER`), each stored only over the axes it
depends on, as integers in units of its displayed precision (so the page prints exactly what
Python prints). A slice is one little-endian binary file, its arrays stored byte plane by byte
plane and gzipped (the browser inflates it with its own DecompressionStream). Every quantity
has the same type and offset in every slice, so one description (:class:`SimulatorData`'s
``meta``, embedded in the page as JSON) serves them all.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sitebuild.config import SiteSettings
from sitebuild.figures.common import site_drafters
from sitebuild.figures.schedule import loads
from sitebuild.simulator.log import as_counters, expected_counters, grid_counters, log_template
from specmodel import formatting
from specmodel.model.acceptance import tokens_per_iteration_pmf
from specmodel.model.evaluate import evaluate
from specmodel.model.evaluation import Evaluation
from specmodel.model.scenario import AXES, GRID_AXIS_VALUES, default_scenario
from specmodel.model.timing import TIME_PARTS
from specmodel.readouts import BY_KEY, readout_arrays
from specmodel.schedule import (
    MAX_KEY,
    OFF,
    SCHEDULE_KEY,
    GammaRange,
    best_gamma_grid,
    gamma_ranges,
    gamma_schedule,
    vllm_schedule_json,
    vllm_speculative_config,
)
from specmodel.vllm import counters as vllm
from specmodel.vllm.log_line import format_log_message

#: The simulator's controls: the grid's axes but tensor parallelism (the article's one card).
SIMULATOR_AXES = tuple(axis for axis in AXES if axis != "tensor_parallel")
#: Their values: the grid's, with alpha reaching down to the draft models' break-even
#: acceptance (about 0.27 for the article's 0.6B draft).
SIMULATOR_AXIS_VALUES: dict[str, tuple[Any, ...]] = {
    **{axis: values for axis, values in GRID_AXIS_VALUES.items() if axis in SIMULATOR_AXES},
    "alpha": tuple(round(0.25 + 0.05 * i, 2) for i in range(15)),
}
#: The axes that pick a slice (one file each), and the axes inside a slice.
SLICE_AXES = ("engine", "drafter", "acceptance", "alpha")
INNER = ("concurrency", "context", "gamma")


def axes(settings: SiteSettings) -> dict[str, tuple[Any, ...]]:
    """Every value of each control, in :data:`SIMULATOR_AXES` order (drafters: the site's)."""
    values = {**SIMULATOR_AXIS_VALUES, "drafter": site_drafters(settings)}
    return {name: tuple(values[name]) for name in SIMULATOR_AXES}


#: The readouts the simulator shows, and the axes inside a slice that each depends on.
READOUT_AXES: dict[str, tuple[str, ...]] = {
    "speedup": INNER,
    "mean_acceptance_length": ("gamma",),
    "draft_share": INNER,
    "verify_idle": INNER,
    "spec_tokens_per_s": INNER,
    "base_tokens_per_s": ("concurrency", "context"),
    "arithmetic_ratio": ("context", "gamma"),
    "verify_gib": INNER,
    "verify_tflop": INNER,
    "verify_memory_ms": INNER,
    "verify_compute_ms": INNER,
    "draft_weight_fraction": (),
    "draft_kv_fraction": (),
    "hbm_required_gib": ("concurrency", "context"),
    "max_concurrency": ("context",),
    "max_concurrency_without_draft": ("context",),
}
#: The readouts that give the answer's three reasons: what a verify pass yields, what drafting
#: costs, and whether the verify pass's extra positions are free.
REASONS = ("mean_acceptance_length", "draft_share", "verify_idle")
#: The parts of the time per token the simulator lists, as shares of a plain step's: every
#: part of :data:`specmodel.model.timing.TIME_PARTS`, speculating (over every inner axis)
#: and plain (over concurrency and context).
PART_DECIMALS = 0

#: Whether the scenario fits in memory: the axes it depends on.
FITS_AXES = ("concurrency", "context")

#: Fields of vLLM's log line, in LOG_FORMAT's order, with the axes each depends on inside a
#: slice (an n-gram lookup under a real engine drafts only on a match, and vLLM counts
#: matched drafts only; the slice fixes drafter and engine).
LOG_FIELDS: dict[str, tuple[str, ...]] = {
    "mean_acceptance_length": ("gamma",),
    "accepted_throughput": INNER,
    "drafted_throughput": INNER,
    "accepted": ("concurrency", "gamma"),
    "drafted": ("concurrency", "gamma"),
    "per_position": ("gamma",),
    "draft_acceptance_percent": ("gamma",),
}

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
#: The token row's cumulative distribution of accepted guesses, in these units.
CDF_SCALE = 1_000_000


@dataclass(frozen=True)
class Grid:
    """The simulator's scenarios evaluated on the full axis grid."""

    settings: SiteSettings
    evaluation: Evaluation
    counters: dict[str, np.ndarray]


def evaluate_grid(settings: SiteSettings) -> Grid:
    mesh = np.meshgrid(*(np.array(v) for v in axes(settings).values()), indexing="ij")
    ev = evaluate(**dict(zip(SIMULATOR_AXES, mesh, strict=True)), settings=settings)
    return Grid(settings, ev, expected_counters(ev, mesh[0], mesh[2]))


def _sliced(values: np.ndarray, kept: tuple[str, ...]) -> np.ndarray:
    """``values`` over the full grid (trailing axes such as positions allowed) as
    ``(slice, *kept, *trailing)``: the slice axes flattened first, then the inner axes in
    ``kept``, after checking that it really does not vary along the inner axes left out."""
    lead = len(SIMULATOR_AXES)
    index = tuple(slice(None) if (name in kept or name in SLICE_AXES) else 0 for name in SIMULATOR_AXES)
    reduced = values[index]
    dropped = tuple(i for i, n in enumerate(SIMULATOR_AXES) if n not in kept and n not in SLICE_AXES)
    expanded = np.broadcast_to(np.expand_dims(reduced, dropped), values.shape)
    if not np.allclose(expanded, values, rtol=1e-9, atol=1e-12, equal_nan=True):
        raise ValueError(f"quantity varies along inner axes outside {kept}")
    present = [n for n in SIMULATOR_AXES if n in kept or n in SLICE_AXES]
    order = [present.index(n) for n in (*SLICE_AXES, *kept)]
    trailing = list(range(len(present), reduced.ndim))
    out = np.transpose(reduced, order + trailing)
    n_slices = int(np.prod(out.shape[: len(SLICE_AXES)]))
    del lead
    return out.reshape((n_slices, *out.shape[len(SLICE_AXES) :]))


def _units(text_values: list[str]) -> np.ndarray:
    """Formatted numbers ('1,234.56', '26') as integers in units of their last digit."""
    return np.array([int(t.replace(",", "").replace(".", "")) for t in text_values], dtype=np.int64)


def _formatted_units(values: np.ndarray, style: formatting.Style, decimals: int) -> np.ndarray:
    texts = [formatting.number(float(v), style, decimals).rstrip("x%") for v in values.ravel()]
    return _units(texts).reshape(values.shape)


TYPES = {"uint8": "<u1", "uint16": "<u2", "uint32": "<u4"}


class SliceWriter:
    """Integer arrays laid out in the same place in every slice: each quantity is added for all
    slices at once, as the smallest unsigned type that holds it in any slice, stored byte plane
    by byte plane (first every element's lowest byte, then every element's next byte: the
    "shuffle" of HDF5 and Blosc; neighbouring values share their high bytes and gzip better)."""

    def __init__(self, slices: int) -> None:
        self.blobs = [bytearray() for _ in range(slices)]

    def add(self, units: np.ndarray) -> dict:
        """``units`` as ``(slice, ...)``; returns where each slice holds its part."""
        if units.min(initial=0) < 0:
            raise ValueError("negative value in simulator data")
        top = int(units.max(initial=0))
        name = next(n for n, d in TYPES.items() if top <= np.iinfo(np.dtype(d)).max)
        offset = len(self.blobs[0])
        per_slice = units.reshape(units.shape[0], -1)
        for blob, part in zip(self.blobs, per_slice, strict=True):
            values = np.ascontiguousarray(part, dtype=TYPES[name])
            blob += values.view(np.uint8).reshape(-1, values.itemsize).T.tobytes()
        return {"dtype": name, "offset": offset, "length": int(per_slice.shape[1])}

    @staticmethod
    def view(blob: bytes, field: dict) -> np.ndarray:
        """The integers of ``field`` (as returned by :meth:`add`) in one slice's ``blob``."""
        dtype = np.dtype(TYPES[field["dtype"]])
        planes = np.frombuffer(blob, dtype=np.uint8, count=field["length"] * dtype.itemsize, offset=field["offset"])
        return planes.reshape(dtype.itemsize, -1).T.copy().view(dtype).ravel()


@dataclass(frozen=True)
class SimulatorData:
    """The description (JSON, embedded in the page) and one binary per slice."""

    meta: dict
    blobs: dict[str, bytes]  #: file name -> contents

    def read(self, field: dict, setting: dict[str, Any]) -> np.ndarray:
        """The integers of ``field`` in the slice of ``setting``."""
        return SliceWriter.view(self.blobs[slice_file(self.meta, setting)], field)


def slice_file(meta: dict, setting: dict[str, Any]) -> str:
    """The file of the slice that holds ``setting``: the indices of its slice axes' values."""
    return "-".join(str(meta["axes"][a].index(setting[a])) for a in SLICE_AXES) + ".bin.gz"


def _quantity(writer: SliceWriter, values: np.ndarray, kept: tuple[str, ...], **meta: Any) -> dict:
    field = writer.add(_sliced(values, kept))
    return {"axes": list(kept), **meta, **field}


def _readouts(grid: Grid, writer: SliceWriter) -> dict[str, dict]:
    arrays = readout_arrays(grid.evaluation)
    out = {}
    for key, kept in READOUT_AXES.items():
        r = BY_KEY[key]
        units = _formatted_units(arrays[key], r.style, r.decimals)
        out[key] = _quantity(writer, units, kept, label=r.label, style=r.style, decimals=r.decimals, unit=r.unit)
    return out


#: How the simulator names each part of the time per token.
PART_LABELS = {
    "target_weights": "Target: weights",
    "target_kv": "Target: cache",
    "target_arithmetic": "Target: arithmetic not hidden by memory",
    "draft_weights": "Drafter: weights",
    "draft_kv": "Drafter: cache",
    "draft_arithmetic": "Drafter: arithmetic not hidden by memory",
    "communication": "All-reduces between GPUs",
    "engine_fixed": "Engine fixed costs",
}


def _time_parts(grid: Grid, writer: SliceWriter) -> tuple[dict[str, dict], dict]:
    """Each part of the time per token as a share of the plain step's, speculating and plain;
    and the speculative step's whole time per token, as the same share."""
    ev = grid.evaluation
    plain_total = ev.base_time_parts.sum(axis=-1)
    out = {}
    for i, part in enumerate(TIME_PARTS):
        spec = _formatted_units(ev.spec_time_parts[..., i] / plain_total, "percent", PART_DECIMALS)
        base = _formatted_units(ev.base_time_parts[..., i] / plain_total, "percent", PART_DECIMALS)
        out[part] = {
            "label": PART_LABELS[part],
            "decimals": PART_DECIMALS,
            "spec": _quantity(writer, spec, INNER),
            "plain": _quantity(writer, base, ("concurrency", "context")),
        }
    total = _formatted_units(ev.spec_time_parts.sum(axis=-1) / plain_total, "percent", PART_DECIMALS)
    return out, _quantity(writer, total, INNER, decimals=PART_DECIMALS)


#: The drafter's sizes beside their ratios to the target's, by the ratio's readout: the drafter's
#: and the target's :class:`~specmodel.model.evaluation.Evaluation` field (bytes), bytes per
#: display unit, the unit and its decimals.
SIZES: dict[str, tuple[str, str, float, str, int]] = {
    "draft_weight_fraction": ("draft_weight_bytes", "target_weight_bytes", formatting.GIB, "GiB", 2),
    "draft_kv_fraction": ("draft_kv_bytes_per_token", "target_kv_bytes_per_token", formatting.KIB, "KiB", 0),
}
#: How the two sizes read beside their ratio.
SIZE_TEXT = "{draft} of the target's {target}"


def size_text(byte_count: float, per_unit: float, unit: str, decimals: int) -> str:
    """Bytes in a display unit, ``byte_count / per_unit`` with its unit (``1.11 GiB``, ``112 KiB``)."""
    return formatting.plain(byte_count / per_unit, decimals, unit)


def sizes_text(ev: Evaluation, key: str) -> str:
    """The drafter's and the target's sizes beside the ratio ``key`` of one scenario, as the page shows them."""
    draft, target, per_unit, unit, decimals = SIZES[key]
    texts = {who: size_text(float(np.squeeze(getattr(ev, name))), per_unit, unit, decimals)
             for who, name in (("draft", draft), ("target", target))}  # fmt: skip
    return SIZE_TEXT.format(**texts)


def _sizes(grid: Grid, writer: SliceWriter) -> dict[str, Any]:
    """The drafter's and the target's sizes (weights in GiB, cache per token in KiB) in units of
    their last printed digit, stored once per slice (they depend on the drafter alone)."""
    ev = grid.evaluation
    fields: dict[str, dict[str, dict]] = {}
    for key, (draft, target, per_unit, unit, decimals) in SIZES.items():
        fields[key] = {}
        for who, name in (("draft", draft), ("target", target)):
            values = np.broadcast_to(np.asarray(getattr(ev, name), dtype=float), ev.speedup.shape) / per_unit
            units = _formatted_units(values, "number", decimals)
            fields[key][who] = _quantity(writer, units, (), style="number", decimals=decimals, unit=unit)
    return {"text": SIZE_TEXT, "fields": fields}


#: Readouts that only an engine whose passes take the roofline's max(memory, arithmetic)
#: defines (overlap p = inf, the ideal engine): the verify pass's idle tensor cores. Where memory
#: and arithmetic overlap imperfectly, part of the arithmetic shows in the time split, and an
#: idle share beside it would contradict it.
MAX_ROOFLINE_ONLY = ("verify_idle",)


def engine_only(settings: SiteSettings) -> dict[str, list[str]]:
    """Each readout that only some of the simulator's engines define, with those engines."""
    engines = [e for e in axes(settings)["engine"] if math.isinf(settings.engines[e].overlap)]
    return dict.fromkeys(MAX_ROOFLINE_ONLY, engines)


def _log_fields(grid: Grid, writer: SliceWriter) -> dict[str, dict]:
    """The fields of vLLM's log line by vLLM's own definitions (:mod:`specmodel.vllm.counters`), as
    printf would print them, over the axes each depends on."""
    counters, elapsed = grid_counters(grid.counters)
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
        spec = slots[key]
        values = np.asarray(log_values[key])
        texts = [_printf(v, spec["decimals"], spec["kind"]) for v in values.ravel()]
        log[key] = _quantity(writer, _units(texts).reshape(values.shape), kept, decimals=spec["decimals"])
    rates = vllm.per_position_rate(counters)
    units = _units([f"{v:.3f}" for v in rates.ravel()]).reshape(rates.shape)
    log["per_position"] = _quantity(writer, units, LOG_FIELDS["per_position"], decimals=3, positions=rates.shape[-1])
    return log


def _printf(value: float, decimals: int, kind: str) -> str:
    return f"{int(value)}" if kind == "d" else f"{value:.{decimals}f}"


# --- the best gamma at every load, and vLLM's schedule of it ------------------------------------

#: The readout of the best gamma at the current load (its speedup is the speedup readout at that
#: gamma), and what it says where the schedule turns speculation off, and why.
BEST_TEXT = "{gamma} ({speedup})"
OFF_TEXT = {
    "gain": f"off: no γ gains more than {formatting.percent(formatting.EVEN_MARGIN)}",
    "memory": "off: speculation does not fit in memory at this load",
}
#: vLLM's schedule line (:func:`specmodel.schedule.vllm_schedule_json`) as the text around its
#: numbers: ``start``, num_speculative_tokens, ``ranges``, each range as ``range[0]`` low
#: ``range[1]`` high ``range[2]`` gamma joined by ``separator``, then ``end``; ``empty`` where
#: not one sequence fits. The build checks it against the JSON of every schedule it stores.
SCHEDULE_TEMPLATE: dict[str, Any] = {
    "start": "{" + json.dumps(MAX_KEY) + ": ",
    "ranges": ", " + json.dumps(SCHEDULE_KEY) + ": [[",
    "range": ["", ", ", ", "],
    "separator": "], [",
    "end": "]]}",
    "empty": "{}",
}


def schedule_numbers(ranges: tuple[GammaRange, ...], width: int) -> list[int]:
    """A schedule as a slice stores it: its number of ranges, num_speculative_tokens, then each
    range's low, high and gamma, padded with zeros to ``width`` ranges."""
    config = vllm_speculative_config(ranges)
    flat = [x for r in ranges for x in (r.low, r.high, r.gamma)]
    return [len(ranges), int(config.get(MAX_KEY, 0)), *flat] + [0] * 3 * (width - len(ranges))


def schedule_line(numbers: Sequence[int]) -> str:
    """The schedule line as simulator.js writes it from a slice's :func:`schedule_numbers`."""
    t, count = SCHEDULE_TEMPLATE, int(numbers[0])
    if not count:
        return str(t["empty"])
    low, high, gamma = t["range"]
    entries = [f"{low}{numbers[2 + 3 * k]}{high}{numbers[3 + 3 * k]}{gamma}{numbers[4 + 3 * k]}" for k in range(count)]
    return f"{t['start']}{numbers[1]}{t['ranges']}{str(t['separator']).join(entries)}{t['end']}"


def best_gamma_text(gamma: int, speedup_text: str, fits: bool) -> str:
    """The best-gamma readout: the gamma and its speedup as printed, or why speculation is off."""
    if gamma != OFF:
        return BEST_TEXT.format(gamma=gamma, speedup=speedup_text)
    return OFF_TEXT["gain" if fits else "memory"]


@dataclass(frozen=True)
class Schedules:
    """The schedule of every slice and context: the gamma it runs at each rung of the ladder,
    ``(slice axes..., concurrency, context)``, and its ranges, by ``(slice axes..., context)`` index."""

    best: np.ndarray
    ranges: dict[tuple[int, ...], tuple[GammaRange, ...]]


def slice_schedules(settings: SiteSettings) -> Schedules:
    """The rule of :mod:`specmodel.schedule` in every slice, at every context, over every load up
    to the most plain decoding holds in memory (:func:`sitebuild.figures.schedule.loads`, the
    page's loads), evaluated one engine and context at a time for every drafter, profile and
    alpha at once. A rung of the ladder beyond those loads holds not even plain decoding, so
    speculation is off there."""
    ax = axes(settings)
    lead = tuple(len(ax[a]) for a in SLICE_AXES)
    rungs, contexts = np.array(ax["concurrency"]), ax["context"]
    best = np.full((*lead, len(rungs), len(contexts)), OFF, dtype=np.int64)
    ranges: dict[tuple[int, ...], tuple[GammaRange, ...]] = {}
    inner = {"drafter": np.array(ax["drafter"])[:, None, None], "acceptance": np.array(ax["acceptance"])[:, None],
             "alpha": np.array(ax["alpha"])}  # fmt: skip
    for e, engine in enumerate(ax["engine"]):
        for c, context in enumerate(contexts):
            batch = loads(settings, context=context, engine=engine)
            if not batch.size:
                ranges.update({(e, *i, c): () for i in np.ndindex(*lead[1:])})
                continue
            found = best_gamma_grid(batch, settings=settings, context=context, engine=engine, **inner)
            held = rungs <= batch[-1]
            mine = best[e]  # a view: (drafter, acceptance, alpha, concurrency, context)
            mine[..., held, c] = np.moveaxis(found.gamma[np.searchsorted(batch, rungs[held])], 0, -1)
            ranges.update(
                {(e, *i, c): gamma_ranges(batch, found.gamma[(slice(None), *i)]) for i in np.ndindex(*lead[1:])}
            )
    return Schedules(best, ranges)


def _schedule_fields(settings: SiteSettings, writer: SliceWriter) -> tuple[dict, dict]:
    """The best gamma at each rung (over concurrency and context) and each context's schedule as
    :func:`schedule_numbers`, in every slice; each stored line is checked to be vLLM's JSON."""
    found = slice_schedules(settings)
    lead, contexts = found.best.shape[: len(SLICE_AXES)], range(found.best.shape[-1])
    width = max(len(r) for r in found.ranges.values())
    numbers = np.array([[schedule_numbers(found.ranges[(*i, c)], width) for c in contexts] for i in np.ndindex(*lead)])
    for (*index, c), ranges in found.ranges.items():
        stored = schedule_line(numbers[np.ravel_multi_index(tuple(index), lead), c])
        if stored != vllm_schedule_json(ranges):
            raise ValueError(f"the simulator's schedule {stored!r} is not vLLM's {vllm_schedule_json(ranges)!r}")
    best = found.best.reshape(-1, *found.best.shape[len(SLICE_AXES) :])
    best_field = {"axes": ["concurrency", "context"], "text": BEST_TEXT, "off": OFF_TEXT, **writer.add(best)}
    schedule_field = {"axes": ["context"], "positions": int(numbers.shape[-1]), "template": SCHEDULE_TEMPLATE,
                      **writer.add(numbers)}  # fmt: skip
    return best_field, schedule_field


def verdict_thresholds(decimals: int, largest: float) -> dict[str, int]:
    """The verdict of every printable speedup (in units of its last digit, up to ``largest``)
    as two thresholds: ``faster_from`` (the smallest printed speedup called faster) and
    ``slower_to`` (the largest called slower), read off :func:`specmodel.formatting.verdict`
    and checked to describe it exactly."""
    scale = 10**decimals
    units = np.arange(int(np.ceil(largest * scale)) + 2)
    verdicts = [formatting.verdict(u / scale, decimals) for u in units]
    faster = [u for u, v in zip(units, verdicts) if v == "faster"]
    slower = [u for u, v in zip(units, verdicts) if v == "slower"]
    out = {"faster_from": int(min(faster)), "slower_to": int(max(slower))}
    rebuilt = ["faster" if u >= out["faster_from"] else "slower" if u <= out["slower_to"] else "even" for u in units]
    if rebuilt != verdicts:
        raise ValueError("the verdicts of printed speedups are not two thresholds")
    return out


def simulator_data(grid: Grid) -> SimulatorData:
    """Everything simulator.js needs: a JSON-ready description and one binary per slice."""
    ev, settings = grid.evaluation, grid.settings
    ax = axes(settings)
    n_slices = int(np.prod([len(ax[a]) for a in SLICE_AXES]))
    writer = SliceWriter(n_slices)
    readouts = _readouts(grid, writer)
    parts, parts_total = _time_parts(grid, writer)
    fits = _quantity(writer, ev.fits.astype(np.int64), FITS_AXES)
    per_position = _formatted_units(ev.per_position, "number", 3)
    acceptance = _quantity(writer, per_position, ("gamma",), decimals=3, positions=per_position.shape[-1])
    cdf = np.cumsum(tokens_per_iteration_pmf(ev.per_position), axis=-1)
    tokens = _quantity(writer, np.rint(np.clip(cdf, 0, 1) * CDF_SCALE).astype(np.int64), ("gamma",),
                       positions=cdf.shape[-1], scale=CDF_SCALE)  # fmt: skip
    log = _log_fields(grid, writer)
    sizes = _sizes(grid, writer)
    best_gamma, schedule = _schedule_fields(settings, writer)
    default = default_scenario(settings)
    blobs = {}
    files = [dict(zip(SLICE_AXES, combo, strict=True)) for combo in np.ndindex(*(len(ax[a]) for a in SLICE_AXES))]
    meta = {
        "axis_order": list(SIMULATOR_AXES),
        "axes": {k: list(v) for k, v in ax.items()},
        "defaults": {k: getattr(default, k) for k in SIMULATOR_AXES},
        "slices": {"axes": list(SLICE_AXES), "inner": list(INNER)},
        "readouts": readouts,
        "reasons": list(REASONS),
        "parts": parts,
        "parts_total": parts_total,
        "fits": {**fits, "text": {"1": FITS_TEXT[True], "0": FITS_TEXT[False]}},
        "acceptance": acceptance,
        "log": {"template": log_template(), "fields": log},
        "tokens": {**tokens, "words": list(TOKEN_WORDS)},
        "best_gamma": best_gamma,
        "schedule": schedule,
        "sizes": sizes,
        "engine_only": engine_only(settings),
        "verdicts": {
            "keys": list(VERDICT_KEYS),
            "text": dict(formatting.VERDICTS),
            **verdict_thresholds(BY_KEY["speedup"].decimals, float(np.max(ev.speedup))),
        },
        "rungs": {"title": RUNG_TITLE, "unfit": RUNG_UNFIT, "unfit_headline": UNFIT_HEADLINE,
                  "sequences": {str(b): formatting.plural(b, "sequence") for b in ax["concurrency"]}},
        "values": {"concurrency": {str(b): formatting.plural(b, "sequence") for b in ax["concurrency"]},
                   "context": {str(t): formatting.plural(t, "token") for t in ax["context"]}},
        "pending": PENDING,
    }  # fmt: skip
    for index, setting in enumerate(files):
        name = "-".join(str(setting[a]) for a in SLICE_AXES) + ".bin.gz"
        blobs[name] = bytes(writer.blobs[index])
    return SimulatorData(meta, blobs)


#: The verdicts, in the order of their codes.
VERDICT_KEYS = ("slower", "even", "faster")
#: What the page says of a scenario that fits in memory, and of one that does not.
FITS_TEXT = {True: "yes", False: "no: needs more memory than the GPUs have"}
#: What the headline adds for a scenario that does not fit in memory.
UNFIT_HEADLINE = "but it does not fit in memory: this scenario needs more GPUs"
#: A ladder rung's tooltip, which simulator.js fills in.
RUNG_TITLE = "{sequences}: {speedup}, {verdict}{fit}"
RUNG_UNFIT = "; does not fit in memory"
#: What a readout shows while the numbers for the current setting are on their way.
PENDING = "…"


def default_text(settings: SiteSettings) -> dict[str, Any]:
    """The default scenario's readouts, parts, acceptance, verdict, whether it fits, and its
    log line as text, for the page without JavaScript."""
    default = default_scenario(settings)
    ev = evaluate(default, settings=settings)
    arrays = readout_arrays(ev)
    out: dict[str, Any] = {key: BY_KEY[key].format(float(arrays[key])) for key in READOUT_AXES}
    plain_total = float(ev.base_time_parts.sum())
    out["parts"] = {
        part: {
            "spec": formatting.percent(float(ev.spec_time_parts[i]) / plain_total, PART_DECIMALS),
            "plain": formatting.percent(float(ev.base_time_parts[i]) / plain_total, PART_DECIMALS),
        }
        for i, part in enumerate(TIME_PARTS)
    }
    out["parts_total"] = formatting.percent(float(ev.spec_time_parts.sum()) / plain_total, PART_DECIMALS)
    out["acceptance"] = ", ".join(formatting.plain(float(u), 3) for u in np.ravel(ev.per_position)[: default.gamma])
    out["fits"] = FITS_TEXT[bool(ev.fits)]
    out["sizes"] = {key: sizes_text(ev, key) for key in SIZES}
    out["verdict"] = formatting.verdict(float(ev.speedup), BY_KEY["speedup"].decimals)
    counters, elapsed = as_counters(expected_counters(ev, default.concurrency, default.gamma))
    out["log"] = format_log_message(counters, elapsed)
    fields = {k: getattr(default, k) for k in ("context", "drafter", "acceptance", "alpha", "engine")}
    batch = loads(settings, **fields)
    schedule = gamma_schedule(batch_sizes=batch, settings=settings, **fields)
    out["schedule"] = vllm_schedule_json(schedule.ranges)
    held = default.concurrency <= (batch[-1] if batch.size else 0)
    i = int(np.searchsorted(batch, default.concurrency))
    gamma = int(schedule.gamma[i]) if held else OFF
    speedup = BY_KEY["speedup"].format(float(schedule.speedup[i])) if held else ""
    out["best_gamma"] = best_gamma_text(gamma, speedup, bool(ev.fits))
    return out
