"""The load a server saw, the gamma schedule by batch size for it, and its output tokens per second.

The load is a distribution of running batch sizes B with the share of time at each: the
running-request samples the server's files carry (a log's ``Running:`` lines, a scrape's
``vllm:num_requests_running``), a Prometheus range export of ``vllm:num_requests_running``
(``--load``: the JSON answer of the HTTP API's ``/api/v1/query_range``, a ``matrix`` of
``[time, "value"]`` pairs, https://prometheus.io/docs/prometheus/latest/querying/api/#range-queries)
or ``--concurrency 8:0.5,32:0.3,128:0.2`` (batch sizes with weights). Only busy samples (at
least one request running) count, each for an equal share of time (the samples are evenly
spaced, as log intervals and range steps are); several series of one export are summed at
each time, as a scrape sums the engines.

Every number comes from the model (:func:`specmodel.vllm.advise.predictions`, the function the
advice prices gamma with, :func:`specmodel.evaluate` underneath), with the measured per-position
acceptance, so the candidates are gamma 1..m (m the measured positions):

* the schedule: the best gamma at each batch size 1..N, off where no gamma gains more than the
  model's tolerance (:func:`specmodel.schedule.schedule_from_speedups`), N the most sequences
  plain decoding holds in memory or the largest batch of the load, whichever is larger (a batch
  the server was seen running, or the load states, is taken to be held);
* the load's output tokens per second under four settings (:func:`load_tokens_per_s`): no
  speculation, the deployed gamma, the best fixed gamma for the load, the schedule.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from specmodel.errors import SpecModelError
from specmodel.model.types import BoolArray, FloatArray, IntArray
from specmodel.safe_input import excerpt, path_text, read_limited_text
from specmodel.schedule import GammaSchedule, most_sequences, schedule_from_speedups, vllm_speculative_config
from specmodel.vllm.deployment import MAX_JSON_BYTES, busy_samples

#: The level of the intervals around each predicted throughput.
LEVEL = 0.8
#: The four settings the load is priced under, in the order shown.
SETTINGS = ("off", "deployed", "best_fixed", "schedule")
#: What the output says of a per-batch-size schedule in SGLang.
SGLANG_NOTE = (
    "SGLang has no per-batch-size setting of the draft length: its server arguments "
    "(python/sglang/srt/server_args.py, main branch checked, the one with --speculative-adaptive) set "
    "--speculative-num-steps and --speculative-num-draft-tokens once for every batch, and --speculative-adaptive "
    "moves the steps by the measured acceptance, not by batch size"
)
#: What the output says of the cost of enabling speculation at all.
ENABLED_COST_NOTE = (
    "no source the engine profile was fitted on measures the time per token of a server with speculation "
    "enabled but drafting 0 tokens (vLLM users report that it rises): the profile has no term for it, so a "
    "range at 0 is priced as plain decoding, which may flatter the schedule there"
)


@dataclass(frozen=True)
class Load:
    """Running batch sizes and the share of time the server spent at each."""

    concurrency: IntArray  #: distinct batch sizes B, ascending
    share: FloatArray  #: share of time at each (sums to 1)
    source: str  #: where the load was read
    samples: int  #: busy samples behind it (the number of weights for a given list)


@dataclass(frozen=True)
class Throughput:
    """A setting's predicted output tokens per second over the load, with its interval."""

    gamma: int | None  #: the gamma it runs (None: by batch size)
    value: float
    low: float
    high: float


@dataclass(frozen=True)
class LoadAdvice:
    """The schedule by batch size, the load and its throughput under each setting."""

    schedule: GammaSchedule
    config: dict[str, Any]  #: the speculative configuration with the schedule merged in
    load: Load
    tokens_per_s: dict[str, Throughput]  #: keyed by :data:`SETTINGS`
    notes: tuple[str, ...]


# --- the load -------------------------------------------------------------------------------


def load_of_samples(samples: npt.ArrayLike, source: str) -> Load:
    """The load of running-request samples: the busy ones (at least 1) rounded to whole
    requests, each an equal share of time.

    >>> load = load_of_samples([0, 8, 8, 32, 0.4], "a log")
    >>> load.concurrency.tolist(), load.share.tolist()
    ([8, 32], [0.6666666666666666, 0.3333333333333333])
    """
    busy = np.rint(busy_samples(samples)).astype(np.int64)
    if busy.size == 0:
        raise SpecModelError(f"{source} holds no sample with a request running: no load to price")
    concurrency, counts = np.unique(busy, return_counts=True)
    return Load(concurrency, counts / busy.size, source, int(busy.size))


def parse_weighted_concurrency(text: str) -> Load:
    """``--concurrency 8:0.5,32:0.3,128:0.2``: batch sizes with their weights (shares of time,
    scaled to sum to 1); a size without a weight weighs 1; a size given twice adds up.

    >>> load = parse_weighted_concurrency("8:0.5, 32:0.3,128:0.2")
    >>> load.concurrency.tolist(), [round(float(s), 2) for s in load.share]
    ([8, 32, 128], [0.5, 0.3, 0.2])
    >>> parse_weighted_concurrency("8:x")
    Traceback (most recent call last):
    ...
    specmodel.errors.SpecModelError: --concurrency '8:x': give N or N:WEIGHT,N:WEIGHT,... (e.g. 8:0.5,32:0.3,128:0.2)
    """
    sizes, weights = [], []
    for part in text.split(","):
        size, _, weight = part.strip().partition(":")
        try:
            sizes.append(int(size))
            weights.append(float(weight) if weight else 1.0)
        except ValueError:
            raise SpecModelError(
                f"--concurrency {excerpt(text)}: give N or N:WEIGHT,N:WEIGHT,... (e.g. 8:0.5,32:0.3,128:0.2)"
            ) from None
    if min(sizes) < 1 or not all(math.isfinite(w) and w > 0 for w in weights):
        raise SpecModelError(f"--concurrency {excerpt(text)}: each size must be at least 1 and each weight above 0")
    concurrency, index = np.unique(np.array(sizes, dtype=np.int64), return_inverse=True)
    share = np.bincount(index, weights=np.array(weights)) / float(np.sum(weights))
    return Load(concurrency, share, "--concurrency", len(sizes))


def range_export_samples(data: Any, source: str) -> FloatArray:
    """The running requests at each time of a Prometheus ``query_range`` answer (``status``
    ``success``, ``data.resultType`` ``matrix``, ``data.result`` a list of series, each with
    ``values`` of ``[unix time, "value"]``): the series summed at each time, values that are
    not numbers (``NaN``) left out."""
    bad = f"{source} is not a Prometheus range query answer"
    if not isinstance(data, dict) or data.get("status") != "success" or not isinstance(data.get("data"), dict):
        raise SpecModelError(f"{bad} with status success (the JSON of /api/v1/query_range)")
    body = data["data"]
    if body.get("resultType") != "matrix" or not isinstance(body.get("result"), list) or not body["result"]:
        raise SpecModelError(f"{bad}: it holds no matrix of vllm:num_requests_running series")
    totals: dict[float, float] = {}
    try:
        for series in body["result"]:
            for time, value in series["values"]:
                number = float(value)
                if math.isfinite(number):
                    totals[float(time)] = totals.get(float(time), 0.0) + number
    except (KeyError, TypeError, ValueError):
        raise SpecModelError(f'{bad}: each series needs values of [time, "number"]') from None
    return np.array([totals[t] for t in sorted(totals)], dtype=float)


def read_range_export(path: Path) -> Load:
    """``--load FILE``: the load of a Prometheus range export of ``vllm:num_requests_running``
    (:func:`range_export_samples`)."""
    source = f"--load {path_text(path)}"
    text = read_limited_text(path, source, MAX_JSON_BYTES)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SpecModelError(
            f"{source} is not JSON (line {exc.lineno}): give the answer of /api/v1/query_range"
        ) from None
    return load_of_samples(range_export_samples(data, source), source)


def median_concurrency(load: Load) -> int:
    """The batch size below and at which the server spent at least half its time.

    >>> median_concurrency(parse_weighted_concurrency("8:0.5,32:0.3,128:0.2"))
    8
    """
    return int(load.concurrency[int(np.searchsorted(np.cumsum(load.share), 0.5 - 1e-12))])


def load_throughput(tokens_per_s: npt.ArrayLike, share: npt.ArrayLike) -> float:
    """Output tokens per second of a load: sum over batch sizes B of the share of time at B
    times the output tokens per second at B (tokens/s; the load's running batches are a
    mixture in time, each producing at its own rate).

    >>> load_throughput([100.0, 1000.0], [0.5, 0.5])
    550.0
    """
    return float(np.sum(np.asarray(tokens_per_s, dtype=float) * np.asarray(share, dtype=float)))


def given_load(args: Any) -> Load | None:
    """The load the command line gives: ``--load FILE`` or a weighted ``--concurrency`` (not
    both; neither with ``--bench``), None for neither. A weighted list sets the concurrency the
    verdict is priced at to its median (:func:`median_concurrency`)."""
    weighted, path = isinstance(args.concurrency, str), getattr(args, "load", None)
    if (weighted or path is not None) and args.bench is not None:
        raise SpecModelError("--load and a weighted --concurrency go with --log, --metrics or --url, not --bench")
    if weighted and path is not None:
        raise SpecModelError("--load and a weighted --concurrency both give the load; give one")
    if path is not None:
        return read_range_export(path)
    if not weighted:
        return None
    load = parse_weighted_concurrency(args.concurrency)
    args.concurrency = median_concurrency(load)
    return load


def server_load(stated: Any, concurrency: int) -> Load:
    """The load the server's files carry (their running-request samples), else all the time at
    the ``concurrency`` the advice is priced at."""
    if stated.running is not None and np.any(np.asarray(stated.running.value, dtype=float) >= 1):
        return load_of_samples(stated.running.value, stated.running.where)
    return Load(np.array([concurrency]), np.array([1.0]), "the concurrency the advice is priced at", 1)


def deployed_config(args: Any, stated: Any) -> dict[str, Any] | None:
    """The deployed speculative configuration the schedule is merged into:
    ``--speculative-config``, else the files', else None (``--drafter`` names no configuration)."""
    if args.speculative_config is not None:
        config = json.loads(args.speculative_config)
        return config if isinstance(config, dict) else None
    return None if stated.speculative_config is None else dict(stated.speculative_config.value)


# --- the prices -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Priced:
    """The model's output tokens per second at batch sizes 1..N and gamma 1..m."""

    batch_sizes: IntArray  #: 1..N
    base: FloatArray  #: plain decoding's, per batch size
    spec: FloatArray  #: speculation's, [batch size, gamma - 1]
    fits: BoolArray  #: speculation fits in memory (or the batch was seen or stated held)
    plain_holds: int  #: the most sequences plain decoding holds in memory, by the model


def price(advice: Any, settings: Any, held: int) -> Priced:
    """The advice's deployment priced at every batch size 1..N (N: the most sequences plain
    decoding holds, or ``held``, the largest batch seen or stated, if larger) and every measured
    gamma, by :func:`specmodel.vllm.advise.predictions`."""
    from specmodel.vllm.advise import predictions

    layout = {"tensor_parallel": advice.tensor_parallel, **advice.served.layout()}
    fields = {"context": advice.context, "drafter": advice.served.drafter, "hardware": advice.hardware,
              "target": advice.target, "engine": advice.engine, "tensor_parallel": advice.tensor_parallel}  # fmt: skip
    plain = most_sequences(settings, **fields)
    batch: Any = np.arange(1, max(plain, held, 1) + 1)  # the predictions take a batch size or an array of them
    evs = predictions(advice.per_position, batch, advice.context, advice.served.drafter, advice.hardware,
                      advice.target, settings, advice.engine, layout, advice.served.tree_widths)  # fmt: skip
    spec = np.stack([np.broadcast_to(e.spec_tokens_per_s, batch.shape) for e in evs], axis=-1)
    fits = np.all(np.stack([np.broadcast_to(e.fits, batch.shape) for e in evs], axis=-1), axis=-1) | (batch <= held)
    return Priced(batch, np.broadcast_to(evs[0].base_tokens_per_s, batch.shape).astype(float), spec, fits, plain)


def speedup_bounds(settings: Any, advice: Any, concurrency: IntArray, speedup: FloatArray) -> tuple[Any, Any]:
    """The interval of each speedup at :data:`LEVEL` (:func:`specmodel.uncertainty.speedup_interval`)."""
    from specmodel.uncertainty import speedup_interval

    low, high = speedup_interval(settings, advice.engine, advice.served.drafter, concurrency, speedup, level=LEVEL)
    return np.asarray(low, dtype=float), np.asarray(high, dtype=float)


def setting_throughput(settings: Any, advice: Any, priced: Priced, load: Load, gamma: IntArray) -> Throughput:
    """The load's tokens per second when batch size B runs ``gamma[B]`` (0: plain decoding),
    with the interval of the speedups at the batches that speculate (plain decoding's own
    throughput carries none here)."""
    rows = load.concurrency - 1
    base = priced.base[rows]
    tokens = np.where(gamma > 0, priced.spec[rows, np.maximum(gamma, 1) - 1], base)
    value = load_throughput(tokens, load.share)
    runs = gamma > 0
    low_t, high_t = base.copy(), base.copy()
    if runs.any():
        low_s, high_s = speedup_bounds(settings, advice, load.concurrency[runs], tokens[runs] / base[runs])
        low_t[runs], high_t[runs] = base[runs] * low_s, base[runs] * high_s
    low, high = load_throughput(low_t, load.share), load_throughput(high_t, load.share)
    fixed = np.unique(gamma)
    return Throughput(int(fixed[0]) if fixed.size == 1 else None, value, low, high)


def best_fixed_gamma(priced: Priced, load: Load) -> int:
    """The gamma (1..m) whose load throughput is largest (the first of equal ones)."""
    rows = load.concurrency - 1
    return int(np.argmax([load_throughput(priced.spec[rows, k], load.share) for k in range(priced.spec.shape[1])])) + 1


def load_advice(advice: Any, settings: Any, load: Load, config: dict[str, Any] | None) -> LoadAdvice:
    """The schedule for the advice's deployment and the load's throughput under the four
    :data:`SETTINGS`; ``config``: the deployed speculative configuration the schedule is merged
    into (None: only the schedule's keys)."""
    held = int(load.concurrency.max())
    priced = price(advice, settings, held)
    gammas = np.arange(1, priced.spec.shape[1] + 1)
    schedule = schedule_from_speedups(priced.batch_sizes, priced.spec / priced.base[:, None], priced.fits, gammas)
    rows = load.concurrency - 1
    ones = np.ones(load.concurrency.shape, dtype=np.int64)
    settings_gamma = {
        "off": 0 * ones,
        "deployed": advice.deployed_gamma * ones,
        "best_fixed": best_fixed_gamma(priced, load) * ones,
        "schedule": schedule.gamma[rows],
    }
    tokens = {k: setting_throughput(settings, advice, priced, load, g) for k, g in settings_gamma.items()}
    notes = [ENABLED_COST_NOTE]
    if held > priced.plain_holds:
        notes.append(
            f"the load reaches {held} running requests, more than the {priced.plain_holds} the model's memory "
            "estimate holds without speculation: priced as the server ran them"
        )
    merged = {**(config or {}), **vllm_speculative_config(schedule.ranges)}
    return LoadAdvice(schedule, merged, load, tokens, tuple(notes))


# --- the output -----------------------------------------------------------------------------

#: How each setting is named in the text.
_LABELS = {"off": "no speculation", "deployed": "deployed gamma", "best_fixed": "best fixed gamma",
           "schedule": "schedule by batch size"}  # fmt: skip


def load_text(result: LoadAdvice) -> str:
    """The schedule, the vLLM configuration, SGLang's answer and the load's throughput table."""
    s = result.schedule
    lines = ["", "Gamma by batch size (each gamma up to the positions measured, at the measured acceptance; 0: off, "
             "no gamma gains more than 3%):", "  batch sizes   gamma  best speedup"]  # fmt: skip
    for r in s.ranges:
        part = s.speedup[(s.batch_sizes >= r.low) & (s.batch_sizes <= r.high)]
        lines.append(f"  {r.key:<12}  {r.gamma:>5}  {float(part.max()):.2f}x to {float(part.min()):.2f}x")
    lines += ["vLLM --speculative-config with it (past the last range, its gamma holds):",
              "  " + json.dumps(result.config), f"SGLang: {SGLANG_NOTE}."]  # fmt: skip
    shares = ", ".join(f"{b} ({w:.0%})" for b, w in zip(result.load.concurrency.tolist(), result.load.share))
    counted = "weights" if result.load.source == "--concurrency" else "busy samples"
    lines += ["", f"Load ({result.load.source}, {result.load.samples} {counted}): {shares}",
              f"Output tokens/s of that load ({LEVEL:.0%} interval):",
              "  setting                 gamma      tokens/s   interval"]  # fmt: skip
    for key in SETTINGS:
        t = result.tokens_per_s[key]
        gamma = "by batch" if t.gamma is None else str(t.gamma)
        lines.append(f"  {_LABELS[key]:<22}  {gamma:>8}  {t.value:>10,.0f}   {t.low:,.0f} to {t.high:,.0f}")
    lines += [f"About these numbers: {n}" for n in result.notes]
    return "\n".join(lines)


def load_dict(result: LoadAdvice) -> dict[str, Any]:
    """The JSON keys of the load's advice: ``schedule``, ``sglang_schedule``, ``load``,
    ``load_tokens_per_s`` and ``load_notes``."""
    s = result.schedule
    return {
        "schedule": {
            "ranges": [{"low": r.low, "high": r.high, "gamma": r.gamma} for r in s.ranges],
            "json": json.dumps(vllm_speculative_config(s.ranges)),
            "speculative_config": json.dumps(result.config),
        },
        "sglang_schedule": {"available": False, "note": SGLANG_NOTE},
        "load": {
            "source": result.load.source,
            "samples": result.load.samples,
            "concurrency": result.load.concurrency.tolist(),
            "share": [float(x) for x in result.load.share],
        },
        "load_tokens_per_s": {
            k: {"gamma": t.gamma, "value": t.value, "low": t.low, "high": t.high}
            for k, t in result.tokens_per_s.items()
        },
        "load_notes": list(result.notes),
    }
