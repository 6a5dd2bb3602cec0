"""The fields of one benchmark result object, by producer (vLLM ``--save-result``, SGLang
``--output-file``), as :class:`specmodel.server_runs.runs.BenchRun` takes them.

Each field read is checked (:class:`VllmResult`, :class:`SglangResult`): counts are JSON
integers, 0 or more; times and rates finite numbers within physical bounds (below); the
``--metadata`` values strings, as ``vllm bench serve`` merges them in. A field of the wrong
kind is one line naming the file, the field and what is allowed. Fields not read (the
per-request lists of ``--save-detailed``, percentiles, ``burstiness``...) are not looked at.

NaN and Infinity: Python's ``json.dump`` writes ``float('nan')`` and ``float('inf')`` as
``NaN`` and ``Infinity``. vLLM's ``vllm/benchmarks/serve.py`` writes neither for a metric
without samples (``np.mean(x or 0)``: 0, which for ``mean_tpot_ms`` reads here as "not
measured"); it writes ``Infinity`` for a setting (``--burstiness inf``), and SGLang for an
unlimited ``request_rate``, fields not read here. So a NaN or an infinity (or a number past a
float's range, read as one) in a field read is refused by name, never taken as missing.
Optional keys are never assumed.
"""

from __future__ import annotations

import math
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from specmodel.errors import SpecModelError
from specmodel.model.validation import MAX_GAMMA
from specmodel.safe_input import excerpt
from specmodel.structured_input import load_json_text

#: SGLang's ``speculative_algorithm`` as vLLM names the method (None: no catalogue drafter).
SGLANG_METHODS = {"EAGLE": "eagle", "EAGLE3": "eagle3", "NGRAM": "ngram", "NEXTN": "mtp"}

# Physical bounds of what one run measures: outside them a file is damaged or edited, not measured.
#: Fewest milliseconds per output token: a microsecond, faster than any accelerator decodes a token.
MIN_TPOT_MS = 1e-3
#: Most milliseconds per output token: an hour, slower than any server that still answers.
MAX_TPOT_MS = 3.6e6
#: Most requests or tokens one run counts: 10^15, a million times the largest benchmark run.
MAX_COUNT = 10**15
#: Most tokens per request (prompt or output, a run's mean): 10^7, beyond the longest context of any model.
MAX_TOKENS_PER_REQUEST = 10**7
#: Most output tokens per second over a run: 10^9, a thousand times a rack of accelerators.
MAX_THROUGHPUT = 1e9
#: Most concurrent requests a run may cap (``--max-concurrency``): 10^6, beyond any server's batch.
MAX_CONCURRENCY = 10**6
#: Longest ``speculative_config`` metadata read (characters): vLLM's whole config is under 2,000.
MAX_CONFIG_CHARS = 64 * 2**10
#: Longest name read (a model id, a method): Hugging Face ids are at most 96 characters.
MAX_NAME_CHARS = 1000

COUNT = "a whole number from 0 to 10^15 (a JSON integer)"
TPOT = (
    f"milliseconds per output token from {MIN_TPOT_MS:g} (a microsecond) to {MAX_TPOT_MS:,.0f} (an hour), "
    "finite; 0 or absent: not measured"
)
K = f"a whole number from 1 to {MAX_GAMMA}, or 0 (none): a JSON integer or, as --metadata writes it, a string of digits"
ACCEPTANCE = f"the mean tokens per step (1 + accepted per draft), finite, from 0 to {MAX_GAMMA + 1}"
NAME = f"a name (a string of 1 to {MAX_NAME_CHARS} characters)"


def _metadata_k(value: Any) -> Any:
    """A string of decimal digits (``--metadata num_spec_tokens=3`` writes ``"3"``) as its int;
    0 (a plain run's metadata) as None."""
    if isinstance(value, str) and value.strip().isdecimal() and len(value) < 10:
        value = int(value.strip())
    return None if type(value) is int and value == 0 else value


def _unmeasured(value: Any) -> Any:
    """vLLM's 0 for a metric without samples (``np.mean([] or 0)``) as None: not measured."""
    return None if type(value) in (int, float) and value == 0 else value


MetadataK = Annotated[Annotated[int, Field(ge=1, le=MAX_GAMMA)] | None, BeforeValidator(_metadata_k)]
Name = Annotated[str, Field(min_length=1, max_length=MAX_NAME_CHARS)]
Rate = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
_STRICT = ConfigDict(strict=True, extra="ignore", frozen=True)


class RunFields(BaseModel):
    """What every result states of one run, checked (the bounds are this module's constants)."""

    model_config = _STRICT
    completed: int | None = Field(None, ge=0, le=MAX_COUNT, description=COUNT)
    total_input_tokens: int | None = Field(None, ge=0, le=MAX_COUNT, description=COUNT)
    total_output_tokens: int | None = Field(None, ge=0, le=MAX_COUNT, description=COUNT)
    mean_tpot_ms: Annotated[float | None, BeforeValidator(_unmeasured)] = Field(
        None, ge=MIN_TPOT_MS, le=MAX_TPOT_MS, allow_inf_nan=False, description=TPOT
    )
    output_throughput: float | None = Field(
        None, ge=0, le=MAX_THROUGHPUT, allow_inf_nan=False,
        description=f"output tokens per second, finite, from 0 to {MAX_THROUGHPUT:.0e}",
    )  # fmt: skip
    max_concurrency: int | None = Field(
        None, ge=1, le=MAX_CONCURRENCY,
        description=f"a whole number of requests from 1 to {MAX_CONCURRENCY:,}, or null (unlimited)",
    )  # fmt: skip


class SpeculativeConfig(BaseModel):
    """The keys read of the ``speculative_config`` a vLLM result's ``--metadata`` holds."""

    model_config = _STRICT
    method: Name | None = Field(None, description=NAME)
    model: Name | None = Field(None, description=NAME)
    num_speculative_tokens: MetadataK = Field(None, description=K)


class VllmResult(RunFields):
    """A ``vllm bench serve`` result's fields read (``vllm/benchmarks/serve.py``)."""

    model_id: Name | None = Field(None, description=NAME)
    spec_decode_acceptance_length: float | None = Field(
        None, ge=0, le=MAX_GAMMA + 1, allow_inf_nan=False, description=ACCEPTANCE
    )
    spec_decode_num_drafts: int | None = Field(None, ge=0, le=MAX_COUNT, description=COUNT)
    spec_decode_draft_tokens: int | None = Field(None, ge=0, le=MAX_COUNT, description=COUNT)
    spec_decode_per_position_acceptance_rates: list[Rate] | None = Field(
        None, max_length=MAX_GAMMA,
        description=f"a list of at most {MAX_GAMMA} acceptance rates, each finite, from 0 to 1",
    )  # fmt: skip
    speculative_config: Any = None  #: JSON text (or an object), checked by :func:`_speculative_config`
    spec_method: Name | None = Field(None, description=NAME)
    num_spec_tokens: MetadataK = Field(None, description=K)
    num_speculative_tokens: MetadataK = Field(None, description=K)


class ServerInfo(BaseModel):
    """The keys read of an SGLang result's ``server_info`` (0.5)."""

    model_config = _STRICT
    served_model_name: Name | None = Field(None, description=NAME)
    model_path: Name | None = Field(None, description=NAME)
    speculative_algorithm: Name | None = Field(None, description=NAME)
    speculative_num_steps: int | None = Field(
        None, ge=0, le=MAX_GAMMA, description=f"a whole number from 0 to {MAX_GAMMA} (a JSON integer), or null"
    )


class SglangResult(RunFields):
    """An SGLang ``bench_serving`` result line's fields read."""

    accept_length: float | None = Field(None, ge=0, le=MAX_GAMMA + 1, allow_inf_nan=False, description=ACCEPTANCE)
    server_info: ServerInfo | None = Field(None, description="an object (SGLang's server_info)")


def _shown(value: Any) -> str:
    """A value as a message shows it: a non-finite float as JSON writes it (``NaN``, ``Infinity``)."""
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    if isinstance(value, float) and math.isinf(value):
        return f"{'-' if value < 0 else ''}Infinity (or a number beyond a float's range)"
    return excerpt(value)


def _allowed(model: type[BaseModel], loc: tuple[int | str, ...]) -> str:
    """The description of the field at ``loc``, through nested models."""
    described = "a value of another kind"
    for part in loc:
        field = model.model_fields.get(str(part))
        if field is None:
            break
        described = field.description or described
        nested: Any = next(
            (a for a in getattr(field.annotation, "__args__", (field.annotation,)) if _is_model(a)), None
        )
        if nested is None:
            break
        model = nested
    return described


def _is_model(kind: Any) -> bool:
    """Whether an annotation's member is a pydantic model (a nested object's fields)."""
    return isinstance(kind, type) and issubclass(kind, BaseModel)


def checked(model: type[RunFields] | type[SpeculativeConfig], data: Any, where: str) -> Any:
    """``data`` validated as ``model``; the first bad field is one line: the file, the field,
    the value and what is allowed."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = err["loc"]
        field = ".".join(str(x) for x in loc if isinstance(x, str))
        index = "".join(f"[{x}]" for x in loc if isinstance(x, int))
        got = "absent" if err["type"] == "missing" else _shown(err.get("input"))
        raise SpecModelError(f"{where}: {field}{index} is {got}; allowed: {_allowed(model, loc)}") from None


def _totals(run: RunFields, where: str) -> None:
    """Refuse token totals of more than :data:`MAX_TOKENS_PER_REQUEST` per completed request."""
    for key in ("total_input_tokens", "total_output_tokens"):
        total = getattr(run, key)
        if run.completed and total is not None and total / run.completed > MAX_TOKENS_PER_REQUEST:
            raise SpecModelError(
                f"{where}: {key} {total:,} over completed {run.completed:,} is {total / run.completed:,.0f} tokens per "
                f"request; allowed: at most {MAX_TOKENS_PER_REQUEST:,} (beyond any model's context)"
            )


def _per_request(run: RunFields, where: str) -> dict[str, Any]:
    """Mean prompt and output tokens per completed request, TPOT (s) and output tokens/s."""
    if not run.completed:
        said = "absent" if run.completed is None else run.completed
        raise SpecModelError(f"{where}: completed is {said}; a run without completed requests")
    if run.total_output_tokens is None:
        raise SpecModelError(f"{where}: no total_output_tokens (a pooling/embedding run?); give a generation run")
    _totals(run, where)
    return {
        "mean_prompt_tokens": (run.total_input_tokens or 0) / run.completed,
        "mean_output_tokens": run.total_output_tokens / run.completed,
        "mean_tpot_s": None if run.mean_tpot_ms is None else run.mean_tpot_ms / 1000.0,
        "output_throughput": run.output_throughput,
        "max_concurrency": run.max_concurrency,
    }


def _speculative_config(result: VllmResult, where: str) -> SpeculativeConfig:
    """The ``speculative_config='{...}'`` a vLLM result's ``--metadata`` holds (JSON text, within a
    configuration's bounds), checked; none: an empty one."""
    config: Any = result.speculative_config or {}
    if isinstance(config, str):
        config = load_json_text(config, f"{where}: speculative_config", MAX_CONFIG_CHARS)
    if not isinstance(config, dict):
        raise SpecModelError(
            f"{where}: speculative_config is {_shown(config)}; allowed: a JSON object, or its JSON text of at most "
            f"{MAX_CONFIG_CHARS:,} characters (--metadata speculative_config='{{...}}')"
        )
    return checked(SpeculativeConfig, config, where + ": speculative_config")


def _metadata_spec(result: VllmResult, where: str) -> tuple[str | None, str | None, int | None]:
    """The method, drafter model and k a vLLM result's ``--metadata`` names
    (``speculative_config='{...}'``, or ``spec_method`` and
    ``num_spec_tokens``/``num_speculative_tokens``), each None where it names none."""
    config = _speculative_config(result, where)
    k = config.num_speculative_tokens or result.num_spec_tokens or result.num_speculative_tokens
    return config.method or result.spec_method, config.model, k


def _drafted_k(result: VllmResult, where: str) -> int | None:
    """k as the draft tokens per draft (None without both counts); more than MAX_GAMMA is refused."""
    drafts, tokens = result.spec_decode_num_drafts, result.spec_decode_draft_tokens
    if not drafts or tokens is None:
        return None
    k = round(tokens / drafts)
    if k > MAX_GAMMA:
        raise SpecModelError(
            f"{where}: spec_decode_draft_tokens {tokens:,} over spec_decode_num_drafts {drafts:,} is {k:,} tokens "
            f"per draft; allowed: 1 to {MAX_GAMMA}"
        )
    return k or None


def vllm_run(record: dict[str, Any], where: str) -> dict[str, Any]:
    """A vLLM result's run fields. Speculative if it has ``spec_decode_acceptance_length``
    (k = the per-position list's length, else draft tokens / drafts) or its metadata names a
    speculative config (old versions write no acceptance)."""
    result: VllmResult = checked(VllmResult, record, where)
    method, _, k = _metadata_spec(result, where)
    length = result.spec_decode_acceptance_length
    per_position = tuple(result.spec_decode_per_position_acceptance_rates or ()) or None
    if per_position is not None:
        k = len(per_position)
    elif length is not None:
        k = _drafted_k(result, where) or k
    return {
        "engine": "vllm", "model_name": result.model_id,
        "speculative": length is not None or method is not None or k is not None, "num_speculative_tokens": k,
        "mean_acceptance_length": length if length and length > 1 else None, "per_position_acceptance": per_position,
        "method": method, **_per_request(result, where),
    }  # fmt: skip


def sglang_run(record: dict[str, Any], where: str) -> dict[str, Any]:
    """An SGLang result line's run fields: speculative if ``accept_length`` is set or the
    ``server_info`` (0.5) names a speculative algorithm; k = ``speculative_num_steps``."""
    result: SglangResult = checked(SglangResult, record, where)
    info = result.server_info or ServerInfo()
    length, algorithm = result.accept_length, info.speculative_algorithm
    return {
        "engine": "sglang", "model_name": info.served_model_name or info.model_path,
        "speculative": length is not None or bool(algorithm),
        "num_speculative_tokens": info.speculative_num_steps or None,
        "mean_acceptance_length": length if length and length > 1 else None, "per_position_acceptance": None,
        "method": SGLANG_METHODS.get(algorithm.upper()) if algorithm else None, **_per_request(result, where),
    }  # fmt: skip


#: ``--metadata KEY=VALUE`` keys read as the deployment they state (``vllm bench serve`` merges
#: the pairs into its result's top level as strings, ``vllm/benchmarks/serve.py``): key ->
#: (deployment field, type). ``tp`` and ``gpu`` are the short names some benchmark scripts use.
METADATA_FIELDS: dict[str, tuple[str, type]] = {
    "model": ("model", str), "tensor_parallel_size": ("tensor_parallel_size", int),
    "tp": ("tensor_parallel_size", int), "max_model_len": ("max_model_len", int),
    "max_num_seqs": ("max_num_seqs", int), "max_num_batched_tokens": ("max_num_batched_tokens", int),
    "gpu_memory_utilization": ("gpu_memory_utilization", float), "dtype": ("dtype", str),
    "quantization": ("quantization", str), "kv_cache_dtype": ("kv_cache_dtype", str),
    "hardware": ("hardware", str), "gpu": ("hardware", str),
}  # fmt: skip


def _metadata_value(record: dict[str, Any], key: str, kind: type, where: str) -> Any:
    """``record[key]`` as ``kind`` (metadata values are strings; a number may be one already):
    a name of at most MAX_NAME_CHARS characters, or a finite number above 0 (a whole one of at
    most 18 digits)."""
    value = record[key]
    text = str(value).strip() if isinstance(value, str | int | float) else ""
    try:
        if kind is str:
            if not isinstance(value, str) or not text or len(text) > MAX_NAME_CHARS:
                raise ValueError
            return text
        if isinstance(value, bool) or (kind is int and len(text) > 18):
            raise ValueError
        number = kind(text)
        if not (number > 0 and math.isfinite(number)):
            raise ValueError
        return number
    except ValueError:
        shape = {int: "a positive whole number", float: "a positive finite number", str: "a name"}[kind]
        raise SpecModelError(f"{where}: metadata {key}={_shown(value)} is not {shape}") from None


def vllm_deployment_fields(record: dict[str, Any], where: str) -> dict[str, Any]:
    """What a vLLM result states of the server it measured: ``served_model_name`` (its
    ``model_id``, the name requests were sent to), ``max_concurrency``, the token totals and
    ``completed`` (for the mean lengths), the ``--metadata`` of :data:`METADATA_FIELDS` and a
    ``speculative_config`` dict (method, model, num_speculative_tokens) its metadata names.
    Values absent from the file are absent from the result; each is checked as the runs'."""
    result: VllmResult = checked(VllmResult, record, where)
    _totals(result, where)
    fields: dict[str, Any] = {}
    if result.model_id is not None:
        fields["served_model_name"] = result.model_id
    if result.max_concurrency is not None:
        fields["max_concurrency"] = result.max_concurrency
    for key in ("completed", "total_input_tokens", "total_output_tokens"):
        if (number := getattr(result, key)) is not None:
            fields[key] = float(number)
    for key, (field, kind) in METADATA_FIELDS.items():
        if record.get(key) is not None:
            fields[field] = _metadata_value(record, key, kind, where)
    method, model, k = _metadata_spec(result, where)
    spec = {"method": method, "model": model, "num_speculative_tokens": k}
    if spec := {key: value for key, value in spec.items() if value is not None}:
        fields["speculative_config"] = spec
    return fields
