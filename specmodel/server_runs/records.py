"""The fields of one benchmark result object, by producer (vLLM ``--save-result``, SGLang
``--output-file``), as :class:`specmodel.server_runs.runs.BenchRun` takes them. Optional keys
are never assumed; a field of the wrong type is one line naming it.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

from specmodel.errors import SpecModelError
from specmodel.safe_input import excerpt

#: SGLang's ``speculative_algorithm`` as vLLM names the method (None: no catalogue drafter).
SGLANG_METHODS = {"EAGLE": "eagle", "EAGLE3": "eagle3", "NGRAM": "ngram", "NEXTN": "mtp"}


def _number(record: dict[str, Any], key: str, where: str, positive: bool = False) -> float | None:
    """``record[key]`` as a float (None if absent or null); a non-number is refused."""
    value = record.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise SpecModelError(f"{where}: {key} is {excerpt(value)}, not a number")
    if positive and not value > 0:
        raise SpecModelError(f"{where}: {key} is {value}; it must be above 0")
    return float(value)


def _concurrency(record: dict[str, Any], where: str) -> int | None:
    """``max_concurrency``: a positive whole number, or None (unlimited)."""
    value = record.get("max_concurrency")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise SpecModelError(f"{where}: max_concurrency is {excerpt(value)}, not a positive whole number")
    return value


def _per_request(record: dict[str, Any], where: str) -> dict[str, Any]:
    """Mean prompt and output tokens per completed request, TPOT (s) and output tokens/s."""
    completed = _number(record, "completed", where)
    if not completed:
        raise SpecModelError(f"{where}: completed is {record.get('completed')!r}; a run without completed requests")
    if record.get("total_output_tokens") is None:
        raise SpecModelError(f"{where}: no total_output_tokens (a pooling/embedding run?); give a generation run")
    tpot = _number(record, "mean_tpot_ms", where, positive=True)
    return {
        "mean_prompt_tokens": (_number(record, "total_input_tokens", where) or 0.0) / completed,
        "mean_output_tokens": (_number(record, "total_output_tokens", where) or 0.0) / completed,
        "mean_tpot_s": None if tpot is None else tpot / 1000.0,
        "output_throughput": _number(record, "output_throughput", where),
        "max_concurrency": _concurrency(record, where),
    }


def _metadata_config(record: dict[str, Any]) -> dict[str, Any]:
    """The ``speculative_config='{...}'`` JSON a vLLM result's ``--metadata`` holds, else {}."""
    config: Any = {}
    with contextlib.suppress(TypeError, ValueError):
        config = json.loads(record.get("speculative_config") or "{}")
    return config if isinstance(config, dict) else {}


def _metadata_spec(record: dict[str, Any]) -> tuple[str | None, int | None]:
    """The method and k a vLLM result's ``--metadata`` names (``speculative_config='{...}'``,
    or ``spec_method`` and ``num_spec_tokens``/``num_speculative_tokens``), else None."""
    config = _metadata_config(record)
    method = config.get("method") or record.get("spec_method")
    k: Any = config.get("num_speculative_tokens") or record.get("num_spec_tokens")
    k = k or record.get("num_speculative_tokens")
    with contextlib.suppress(TypeError, ValueError):
        k = int(k) if k is not None else None
    return (str(method) if method else None), (k if isinstance(k, int) and k >= 1 else None)


def vllm_run(record: dict[str, Any], where: str) -> dict[str, Any]:
    """A vLLM result's run fields. Speculative if it has ``spec_decode_acceptance_length``
    (k = the per-position list's length, else draft tokens / drafts) or its metadata names a
    speculative config (old versions write no acceptance)."""
    method, k = _metadata_spec(record)
    length = _number(record, "spec_decode_acceptance_length", where)
    positions = record.get("spec_decode_per_position_acceptance_rates")
    per_position = None
    if isinstance(positions, list) and positions:
        if not all(isinstance(x, int | float) and not isinstance(x, bool) for x in positions):
            raise SpecModelError(f"{where}: spec_decode_per_position_acceptance_rates holds a non-number")
        per_position = tuple(float(x) for x in positions)
        k = len(per_position)
    elif length is not None and record.get("spec_decode_num_drafts"):
        k = round((_number(record, "spec_decode_draft_tokens", where) or 0) / record["spec_decode_num_drafts"]) or k
    model = record.get("model_id")
    return {
        "engine": "vllm", "model_name": model if isinstance(model, str) else None,
        "speculative": length is not None or method is not None or k is not None, "num_speculative_tokens": k,
        "mean_acceptance_length": length if length and length > 1 else None, "per_position_acceptance": per_position,
        "method": method, **_per_request(record, where),
    }  # fmt: skip


def sglang_run(record: dict[str, Any], where: str) -> dict[str, Any]:
    """An SGLang result line's run fields: speculative if ``accept_length`` is set or the
    ``server_info`` (0.5) names a speculative algorithm; k = ``speculative_num_steps``."""
    info = record.get("server_info")
    info = info if isinstance(info, dict) else {}
    length = _number(record, "accept_length", where)
    algorithm = info.get("speculative_algorithm")
    steps = info.get("speculative_num_steps")
    model = info.get("served_model_name") or info.get("model_path")
    return {
        "engine": "sglang", "model_name": model if isinstance(model, str) else None,
        "speculative": length is not None or bool(algorithm),
        "num_speculative_tokens": steps if isinstance(steps, int) and steps >= 1 else None,
        "mean_acceptance_length": length if length and length > 1 else None, "per_position_acceptance": None,
        "method": SGLANG_METHODS.get(str(algorithm).upper()) if algorithm else None, **_per_request(record, where),
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
    """``record[key]`` as ``kind`` (metadata values are strings; a number may be one already)."""
    value = record[key]
    text = str(value).strip()
    try:
        if kind is str:
            if not isinstance(value, str) or not text:
                raise ValueError
            return text
        if isinstance(value, bool):
            raise ValueError
        number = kind(text)
        if not number > 0:
            raise ValueError
        return number
    except ValueError:
        shape = {int: "a positive whole number", float: "a positive number", str: "a name"}[kind]
        raise SpecModelError(f"{where}: metadata {key}={excerpt(value)} is not {shape}") from None


def vllm_deployment_fields(record: dict[str, Any], where: str) -> dict[str, Any]:
    """What a vLLM result states of the server it measured: ``served_model_name`` (its
    ``model_id``, the name requests were sent to), ``max_concurrency``, the token totals and
    ``completed`` (for the mean lengths), the ``--metadata`` of :data:`METADATA_FIELDS` and a
    ``speculative_config`` dict (method, model, num_speculative_tokens) its metadata names.
    Values absent from the file are absent from the result."""
    fields: dict[str, Any] = {}
    if isinstance(model := record.get("model_id"), str) and model:
        fields["served_model_name"] = model
    if (concurrency := _concurrency(record, where)) is not None:
        fields["max_concurrency"] = concurrency
    for key in ("completed", "total_input_tokens", "total_output_tokens"):
        if (number := _number(record, key, where)) is not None:
            fields[key] = number
    for key, (field, kind) in METADATA_FIELDS.items():
        if record.get(key) is not None:
            fields[field] = _metadata_value(record, key, kind, where)
    method, k = _metadata_spec(record)
    spec = {"method": method, "model": _metadata_config(record).get("model"), "num_speculative_tokens": k}
    if spec := {key: value for key, value in spec.items() if value is not None}:
        fields["speculative_config"] = spec
    return fields
