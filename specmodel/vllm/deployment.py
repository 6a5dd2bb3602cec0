"""What a vLLM server's own files state about its deployment, each value with where it was read.

A :class:`ServerDeployment` holds the settings a server ran with (model, tensor parallelism,
speculative config, lengths, dtypes...) and the load it had (running requests, mean prompt
and generated lengths), each a :class:`Stated` value naming its file, line and the kind of
line or series it came from. Values are kept as the server states them (the dtype as
torch names it, without ``torch.``); naming them as the catalogue does is done elsewhere.
Records from several files combine with :func:`merged`, which refuses a setting two files
state differently. Readers: a log (:mod:`specmodel.vllm.engine_args`), a Prometheus scrape
(:func:`deployment_from_exposition`), ``vllm bench serve`` results
(:func:`deployment_from_bench`), ``/v1/models`` (:func:`deployment_from_models`), a live
server (:mod:`specmodel.vllm.live`). Errors are one line each.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any, Generic, TypeVar

import numpy as np
import numpy.typing as npt

from specmodel.errors import SpecModelError
from specmodel.model.types import FloatArray
from specmodel.safe_input import excerpt, path_text, read_limited_text
from specmodel.server_runs.records import vllm_deployment_fields
from specmodel.server_runs.runs import MAX_RESULT_BYTES, is_measurement_csv, json_records, producer, result_files
from specmodel.structured_input import load_json_text
from specmodel.vllm.prometheus import MAX_SCRAPE_BYTES, MODEL_LABEL, exposition_samples, one_model

T = TypeVar("T")

#: Largest ``/v1/models`` answer read (bytes).
MAX_JSON_BYTES = 64 * 2**20
#: Measured mean lengths from two files agree within this relative difference (different
#: windows of one server run sample different requests); settings must be equal.
LENGTH_TOLERANCE = 0.10
#: vLLM's dtype aliases (``vllm/config/model.py`` ``_STR_DTYPE_TO_TORCH_DTYPE``): the torch name each means.
DTYPE_ALIASES = {"half": "float16", "float": "float32"}


@dataclass(frozen=True)
class Stated(Generic[T]):
    """A value a server's file states, and where: ``"--log 'x.log' line 12 (non-default args)"``."""

    value: T
    where: str


@dataclass(frozen=True)
class ServerDeployment:
    """What a server's files state about the deployment (None: not stated).

    ``model``: the HF id or path loaded (``--model`` / ``vllm serve MODEL``);
    ``served_model_name``: the name requests use (the metrics' ``model_name`` label, the
    ``/v1/models`` id; vLLM serves a list under its first name); ``speculative_config``: a
    dict with vLLM's ``SpeculativeConfig`` field names (``method``, ``model``,
    ``num_speculative_tokens``, ...); ``dtype``: torch's name (``bfloat16``); ``running``:
    samples of running requests (one per log stats interval, per scrape summed over engines,
    a bench run's ``max_concurrency``); the mean prompt and generated lengths are tokens per
    request; ``engine_args_where``: the line of a log's ``non-default args`` (vLLM logs only
    the arguments that differ from their defaults, so a setting it omits is vLLM's default).
    """

    model: Stated[str] | None = None
    served_model_name: Stated[str] | None = None
    tensor_parallel_size: Stated[int] | None = None
    speculative_config: Stated[dict[str, Any]] | None = None
    max_model_len: Stated[int] | None = None
    gpu_memory_utilization: Stated[float] | None = None
    dtype: Stated[str] | None = None
    quantization: Stated[str] | None = None
    kv_cache_dtype: Stated[str] | None = None
    max_num_seqs: Stated[int] | None = None
    max_num_batched_tokens: Stated[int] | None = None
    block_size: Stated[int] | None = None
    num_gpu_blocks: Stated[int] | None = None
    hardware: Stated[str] | None = None
    engine_version: Stated[str] | None = None
    running: Stated[tuple[float, ...]] | None = None
    mean_prompt_tokens: Stated[float] | None = None
    mean_generated_tokens: Stated[float] | None = None
    engine_args_where: str | None = None


#: The fields :func:`merged` compares (all but ``running``, whose samples add up, and ``engine_args_where``).
SETTINGS = tuple(f.name for f in fields(ServerDeployment) if f.name not in ("running", "engine_args_where"))


def stated(source: str, **values: Any) -> ServerDeployment:
    """A record stating ``values`` (None ones left unstated), all read from ``source``.

    >>> stated("--x", tensor_parallel_size=4, dtype=None).tensor_parallel_size
    Stated(value=4, where='--x')
    """
    return ServerDeployment(**{k: Stated(v, source) for k, v in values.items() if v is not None})  # type: ignore[arg-type]


def torch_dtype_name(text: str) -> str:
    """The torch dtype a vLLM dtype names, without ``torch.``: ``torch.bfloat16`` and
    ``bfloat16`` are ``bfloat16``, ``half`` is ``float16`` (vLLM's aliases, :data:`DTYPE_ALIASES`).

    >>> torch_dtype_name("torch.bfloat16"), torch_dtype_name("half")
    ('bfloat16', 'float16')
    """
    name = text.strip().removeprefix("torch.")
    return DTYPE_ALIASES.get(name, name)


# --- combining ------------------------------------------------------------------------------


def _agree(field: str, a: Any, b: Any) -> bool:
    """Whether two stated values of ``field`` say the same: equal; mean lengths within
    :data:`LENGTH_TOLERANCE`; a quantization and the kernel vLLM picks for it
    (``awq`` / ``awq_marlin``: ``vllm/model_executor/layers/quantization``); speculative
    configs equal on every key both give."""
    if field in ("mean_prompt_tokens", "mean_generated_tokens"):
        return bool(abs(a - b) <= LENGTH_TOLERANCE * max(abs(a), abs(b)))
    if field == "quantization":
        return bool(a == b or str(a).startswith(f"{b}_") or str(b).startswith(f"{a}_"))
    if field == "speculative_config":
        return all(a[key] == b[key] for key in a.keys() & b.keys())
    if isinstance(a, float) or isinstance(b, float):
        return math.isclose(float(a), float(b), rel_tol=1e-9)
    return bool(a == b)


def _combined(field: str, a: Stated[Any], b: Stated[Any]) -> Stated[Any]:
    """One stated value of two that agree: the first, or for speculative configs the keys
    of both, or for a quantization the kernel's longer name."""
    if field == "speculative_config" and not b.value.keys() <= a.value.keys():
        if a.value.keys() <= b.value.keys():
            return b
        return Stated({**a.value, **b.value}, f"{a.where} and {b.where}")
    if field == "quantization" and len(str(b.value)) > len(str(a.value)):
        return b
    return a


def merged(a: ServerDeployment, b: ServerDeployment) -> ServerDeployment:
    """The deployment two records state together: each setting from whichever states it
    (both: they must agree, :func:`_agree`), the running samples of both. A setting they
    state differently is one line naming both sources and both values.

    >>> a, b = stated("--log x", tensor_parallel_size=4), stated("--bench y", tensor_parallel_size=2)
    >>> merged(a, b)
    Traceback (most recent call last):
    ...
    specmodel.errors.SpecModelError: --log x states tensor_parallel_size 4, but --bench y states 2; give files of \
one server run
    """
    values: dict[str, Any] = {
        "running": _joined_running(a.running, b.running),
        "engine_args_where": a.engine_args_where or b.engine_args_where,
    }
    for field in SETTINGS:
        x, y = getattr(a, field), getattr(b, field)
        if x is not None and y is not None and not _agree(field, x.value, y.value):
            raise SpecModelError(
                f"{x.where} states {field} {excerpt(x.value, 80)}, but {y.where} states {excerpt(y.value, 80)}; "
                "give files of one server run"
            )
        values[field] = y if x is None else x if y is None else _combined(field, x, y)
    return ServerDeployment(**values)


def _joined_running(
    a: Stated[tuple[float, ...]] | None, b: Stated[tuple[float, ...]] | None
) -> Stated[tuple[float, ...]] | None:
    """The running samples of both records, in order, with both sources."""
    if a is None or b is None:
        return a or b
    return Stated(a.value + b.value, f"{a.where}; {b.where}")


def merged_all(records: Iterable[ServerDeployment]) -> ServerDeployment:
    """All ``records`` merged in order (:func:`merged`); none: an empty record."""
    result = ServerDeployment()
    for record in records:
        result = merged(result, record)
    return result


# --- the load -------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunningSummary:
    """The distribution of running requests over samples: min, median, mean, 90th
    percentile (linear interpolation, numpy's default), max; requests."""

    samples: int
    min: float
    median: float
    mean: float
    p90: float
    max: float


def busy_samples(samples: npt.ArrayLike) -> FloatArray:
    """The running-request samples taken while the server was busy: finite and at least one
    request (an idle interval says nothing of the load speculation meets).

    >>> busy_samples([0, 4, 0.5, 12]).tolist()
    [4.0, 12.0]
    """
    values = np.asarray(samples, dtype=float).reshape(-1)
    return values[np.isfinite(values) & (values >= 1)]


def running_summary(samples: Sequence[float]) -> RunningSummary:
    """The summary the advice shows of the running requests a server had.

    >>> running_summary([2, 4, 4, 10])
    RunningSummary(samples=4, min=2.0, median=4.0, mean=5.0, p90=8.2, max=10.0)
    """
    if not samples:
        raise SpecModelError("no samples of running requests: the files state no load")
    x = np.asarray(samples, dtype=float)
    return RunningSummary(
        samples=len(x), min=float(x.min()), median=float(np.median(x)), mean=float(x.mean()),
        p90=round(float(np.percentile(x, 90)), 9), max=float(x.max()),
    )  # fmt: skip


# --- a Prometheus scrape --------------------------------------------------------------------

RUNNING = "vllm:num_requests_running"
CACHE_INFO = "vllm:cache_config_info"
PROMPT_TOKENS = "vllm:request_prompt_tokens"
GENERATION_TOKENS = "vllm:request_generation_tokens"
#: ``vllm:cache_config_info`` labels (``CacheConfig.metrics_info()``: every field as ``str``)
#: read, and the deployment field and type of each.
CACHE_LABELS = {
    "cache_dtype": ("kv_cache_dtype", str), "gpu_memory_utilization": ("gpu_memory_utilization", float),
    "block_size": ("block_size", int), "num_gpu_blocks": ("num_gpu_blocks", int),
}  # fmt: skip

_Key = tuple[str, tuple[tuple[str, str], ...]]


def _vllm_series(text: str, source: str) -> dict[_Key, list[tuple[int, float]]]:
    """Per ``vllm:`` series (name, sorted labels): its ``(line, value)`` samples in order,
    one per scrape appended to the text."""
    series: dict[_Key, list[tuple[int, float]]] = {}
    for number, name, labels, value in exposition_samples(text, source):
        if name.startswith("vllm:"):
            series.setdefault((name, tuple(sorted(labels.items()))), []).append((number, float(value)))
    if not series:
        raise SpecModelError(f"{source} holds no vllm: series; is it a scrape of a vLLM server's /metrics?")
    return series


def _running(series: dict[_Key, list[tuple[int, float]]], source: str) -> Stated[tuple[float, ...]] | None:
    """The running requests of each engine in each scrape: one sample per engine per scrape
    (under data parallelism every engine is a replica with its own GPUs and its own batch)."""
    engines = [samples for (name, _), samples in series.items() if name == RUNNING]
    if not engines:
        return None
    if len({len(s) for s in engines}) > 1:
        counts = sorted({len(s) for s in engines})
        raise SpecModelError(f"{source}: {RUNNING} appears {counts} times; give whole scrapes")
    for line, value in (x for s in engines for x in s):
        if not (math.isfinite(value) and 0 <= value <= 1e9):
            raise SpecModelError(f"{source} line {line}: {RUNNING} is {value:g}; a count of requests is 0 or more")
    totals = tuple(float(s[i][1]) for i in range(len(engines[0])) for s in engines)
    lines = sorted(line for s in engines for line, _ in s)
    at = f"line {lines[0]}" if lines[0] == lines[-1] else f"lines {lines[0]}-{lines[-1]}"
    scrapes = len(engines[0])
    return Stated(totals, f"{source} {at} ({RUNNING}, {scrapes} scrape{'s' if scrapes > 1 else ''})")


def _increase(series: dict[_Key, list[tuple[int, float]]], name: str, source: str) -> tuple[float, int]:
    """A counter summed over engines: its increase from the first scrape to the last when
    there are several, else its value; and the number of scrapes."""
    total, scrapes = 0.0, 0
    for (metric, _), samples in series.items():
        if metric != name:
            continue
        values = [v for _, v in samples]
        for (line, value), before in zip(samples[1:], values):
            if value < before:
                raise SpecModelError(
                    f"{source} line {line}: counter {name} decreases from {before:g} to {value:g} (was the server "
                    "restarted between scrapes?)"
                )
        total += values[-1] - values[0] if len(values) > 1 else values[-1]
        scrapes = max(scrapes, len(values))
    return total, scrapes


def _mean_length(series: dict[_Key, list[tuple[int, float]]], histogram: str, source: str) -> Stated[float] | None:
    """Mean tokens per finished request from a length histogram: ``_sum`` / ``_count``
    (their increases when several scrapes); None without requests."""
    tokens, scrapes = _increase(series, f"{histogram}_sum", source)
    requests, _ = _increase(series, f"{histogram}_count", source)
    if requests <= 0 or not math.isfinite(tokens) or tokens < 0:
        return None
    window = f", increase over {scrapes} scrapes" if scrapes > 1 else ""
    return Stated(tokens / requests, f"{source} ({histogram}_sum/_count{window})")


def _cache_info(series: dict[_Key, list[tuple[int, float]]], source: str) -> ServerDeployment:
    """The settings ``vllm:cache_config_info``'s labels state (the first engine's)."""
    found = sorted((samples[0][0], dict(labels)) for (name, labels), samples in series.items() if name == CACHE_INFO)
    if not found:
        return ServerDeployment()
    line, labels = found[0]
    values: dict[str, Any] = {}
    for label, (field, kind) in CACHE_LABELS.items():
        text = labels.get(label)
        if text is None or text == "None":
            continue
        try:
            values[field] = kind(text)
        except ValueError:
            what = f"{CACHE_INFO} label {label}={excerpt(text)}"
            raise SpecModelError(f"{source} line {line}: {what} is no {kind.__name__}") from None
    return stated(f"{source} line {line} ({CACHE_INFO})", **values)


def deployment_from_exposition(text: str, source: str, model_name: str | None = None) -> ServerDeployment:
    """What a Prometheus scrape of vLLM's ``/metrics`` (one, or several appended) states: the
    served model (the ``model_name`` label on every series, ``vllm/v1/metrics/loggers.py``),
    the running requests of each scrape (``vllm:num_requests_running`` summed over engines),
    ``vllm:cache_config_info``'s labels, and the mean prompt and generated lengths of the
    requests finished (``vllm:request_prompt_tokens``/``vllm:request_generation_tokens``
    histograms, since the server started, or between the first and last scrape). A scrape
    of several models is refused unless ``model_name`` chooses one."""
    everything = _vllm_series(text, source)
    labelled = {key: value for key, value in everything.items() if MODEL_LABEL in dict(key[1])}
    chosen, model = one_model(labelled, source, model_name, what="vllm: series")
    series = {**{k: v for k, v in everything.items() if k not in labelled}, **chosen}
    first = min((s[0][0] for s in chosen.values()), default=0)
    named = stated(f"{source} line {first} (model_name label)", served_model_name=model)
    record = merged(named, _cache_info(series, source))
    return replace(
        record,
        running=_running(series, source),
        mean_prompt_tokens=_mean_length(series, PROMPT_TOKENS, source),
        mean_generated_tokens=_mean_length(series, GENERATION_TOKENS, source),
    )


def load_exposition_deployment(
    path: str | Path, option: str = "--metrics", model_name: str | None = None
) -> ServerDeployment:
    """:func:`deployment_from_exposition` of a file (read whole, at most MAX_SCRAPE_BYTES)."""
    where = f"{option} {path_text(path)}"
    return deployment_from_exposition(read_limited_text(Path(path), where, MAX_SCRAPE_BYTES), where, model_name)


# --- vllm bench serve results ---------------------------------------------------------------

_BENCH_SETTINGS = ("model", "served_model_name", "tensor_parallel_size", "speculative_config", "max_model_len",
                   "gpu_memory_utilization", "dtype", "quantization", "kv_cache_dtype", "max_num_seqs",
                   "max_num_batched_tokens", "hardware")  # fmt: skip


def deployment_from_bench(records: Sequence[dict[str, Any]], source: str) -> ServerDeployment:
    """What ``vllm bench serve --save-result`` results state (``vllm/benchmarks/serve.py``;
    the fields :func:`~specmodel.server_runs.records.vllm_deployment_fields` reads): the
    served model (``model_id``), the ``--metadata`` settings, each run's ``max_concurrency``
    as a sample of running requests, and the mean lengths over all runs (total input and
    output tokens / completed requests). Runs naming different settings are refused."""
    result, prompt, output, completed, running = ServerDeployment(), 0.0, 0.0, 0.0, []
    for number, record in enumerate(records, 1):
        where = f"{source} run {number}" if len(records) > 1 else source
        if not isinstance(record, dict) or "model_id" not in record:
            raise SpecModelError(f"{where} is not a vllm bench serve result (a JSON object with model_id)")
        found = vllm_deployment_fields(record, where)
        result = merged(result, stated(where, **{k: found.get(k) for k in _BENCH_SETTINGS}))
        if "max_concurrency" in found:
            running.append(float(found["max_concurrency"]))
        if {"completed", "total_input_tokens", "total_output_tokens"} <= found.keys():
            prompt, output = prompt + found["total_input_tokens"], output + found["total_output_tokens"]
            completed += found["completed"]
    if completed > 0:
        result = replace(
            result,
            mean_prompt_tokens=Stated(prompt / completed, f"{source} (total_input_tokens / completed)"),
            mean_generated_tokens=Stated(output / completed, f"{source} (total_output_tokens / completed)"),
        )
    if running:
        result = replace(result, running=Stated(tuple(running), f"{source} (max_concurrency)"))
    return result


def load_bench_deployment(path: str | Path, option: str = "--bench") -> ServerDeployment:
    """:func:`deployment_from_bench` of a result file (one JSON object, ``--save-result``, or
    one per line, ``--append-result``; read as :func:`~specmodel.server_runs.runs.json_records`
    reads it), or of each result file of a folder, merged. SGLang lines and measurement CSVs
    state nothing here (the runs' reader reads them)."""
    found = []
    for file in result_files([Path(path)]):
        where = f"{option} {path_text(file)}"
        text = read_limited_text(file, where, MAX_RESULT_BYTES)
        if is_measurement_csv(text):
            continue
        records = [record for _, record in json_records(text, where) if producer(record) != "sglang"]
        if records:
            found.append(deployment_from_bench(records, where))
    return merged_all(found)


# --- /v1/models -----------------------------------------------------------------------------


def deployment_from_models(json_text: str, source: str) -> ServerDeployment:
    """What vLLM's ``/v1/models`` answer states (``ModelList`` of ``ModelCard``,
    ``vllm/entrypoints/openai/protocol.py``): the served name (the first base card's ``id``),
    the model loaded (its ``root``) and ``max_model_len``. Base cards have no ``parent``
    (a LoRA adapter's card names its base there). Anything else is refused in one line."""
    data = load_json_text(json_text, source, MAX_JSON_BYTES)
    cards = data.get("data") if isinstance(data, dict) and data.get("object") == "list" else None
    if not isinstance(cards, list) or not all(isinstance(c, dict) and isinstance(c.get("id"), str) for c in cards):
        raise SpecModelError(f"{source} is not vLLM's /v1/models answer (an object 'list' with data[].id)")
    base = [c for c in cards if c.get("parent") is None]
    if not base or "root" not in base[0]:
        raise SpecModelError(f"{source} names no base model with a root (vLLM's ModelCard); is it a vLLM server?")
    card = base[0]
    length = card.get("max_model_len")
    if length is not None and (isinstance(length, bool) or not isinstance(length, int) or length < 1):
        raise SpecModelError(f"{source}: max_model_len is {excerpt(length)}, not a positive whole number")
    root = card["root"] if isinstance(card["root"], str) and card["root"] else None
    return stated(f"{source} (/v1/models data[0])", served_model_name=card["id"], model=root, max_model_len=length)
