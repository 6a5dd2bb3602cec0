"""The deployment a vLLM log states: its engine-args lines, version lines and stats lines.

Lines are found by their marker anywhere in them (after vLLM's logger prefix ``INFO 05-12
10:00:00 [file.py:123] ``, ``(APIServer pid=123) INFO ...`` or a container prefix), as
vllm-project/vllm prints them:

* ``non-default args: {...}``: the arguments the server was started with that differ from
  the defaults, a Python dict literal (``vllm/entrypoints/utils.py`` ``log_non_default_args``,
  ``logger.info("non-default args: %s", non_default_args)``, vLLM 0.10 on), read with
  :func:`ast.literal_eval` value by value (a value that is no literal, such as a config
  object's repr, is skipped);
* the engine config: ``Initializing a V1 LLM engine (v0.10.1) with config: model='...',
  speculative_config=SpeculativeConfig(method='eagle', model='...', num_spec_tokens=5),
  tokenizer='...', ..., dtype=torch.bfloat16, max_seq_len=8192, ...,
  tensor_parallel_size=4, ..., quantization=None, ..., kv_cache_dtype=auto, ...,
  served_model_name=..., ...`` (``vllm/v1/engine/core.py`` ``EngineCore.__init__`` with
  ``VllmConfig.__str__``, ``vllm/config/vllm.py``; ``SpeculativeConfig.__repr__``,
  ``vllm/config/speculative.py``); the V0 engine's ``Initializing a V0 LLM engine`` and the
  older ``Initializing an LLM engine (v0.6.3) with config: ...`` (``vllm/engine/llm_engine.py``,
  whose ``SpeculativeConfig`` printed ``draft_model=`` for ``model=``);
* ``vLLM API server version 0.10.1`` (``vllm/entrypoints/openai/api_server.py``) and
  ``vLLM server version 0.11.0, serving model M`` (``vllm/entrypoints/utils.py``
  ``log_version_and_model`` without its logo);
* the periodic stats line: ``Engine 000: Avg prompt throughput: 1311.0 tokens/s, Avg
  generation throughput: 412.3 tokens/s, Running: 4 reqs, Waiting: 0 reqs, GPU KV cache
  usage: 1.2%, Prefix cache hit rate: 12.5%`` (``vllm/v1/metrics/loggers.py``
  ``LoggingStatLogger.log``; the first V1 versions had no ``Engine NNN:``); V0's ``Avg prompt
  throughput: ... Running: 4 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage:
  ...`` (``vllm/engine/metrics.py``). Each engine's line of each logging interval is one
  sample of running requests: under data parallelism every engine is a replica of its own,
  with its own GPUs and its own batch.

Two lines that state a setting differently are refused, naming both lines. Errors are one line each.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from specmodel.errors import SpecModelError
from specmodel.safe_input import MAX_LINE_BYTES, excerpt, marker_lines, path_text
from specmodel.structured_input import check_shape, load_json_text
from specmodel.vllm.deployment import ServerDeployment, Stated, merged, stated, torch_dtype_name

NON_DEFAULT = "non-default args: "
STATS = "Avg prompt throughput:"
_ENGINE = re.compile(r"Initializing an? (?:V[01] )?LLM engine \(v([^()\s]{1,80})\) with config: ")
_API_VERSION = re.compile(r"vLLM API server version (\S{1,80})")
_SERVER_VERSION = re.compile(r"vLLM server version (\S{1,80}), serving model (\S.{0,1000})")
_RUNNING = re.compile(r"(?:^|, )Running: (\d{1,9}) reqs", re.ASCII)
_ENGINE_INDEX = re.compile(r"Engine (\d{1,4}): $", re.ASCII)
_MARKERS = (NON_DEFAULT.encode(), b"LLM engine (v", b"server version ", STATS.encode())
_INTEGER = re.compile(r"[0-9]{1,12}")

#: ``non-default args`` keys read: key -> (deployment field, type).
ARG_FIELDS: dict[str, tuple[str, type]] = {
    "model": ("model", str), "model_tag": ("model", str), "tensor_parallel_size": ("tensor_parallel_size", int),
    "max_model_len": ("max_model_len", int), "gpu_memory_utilization": ("gpu_memory_utilization", float),
    "dtype": ("dtype", str), "quantization": ("quantization", str), "kv_cache_dtype": ("kv_cache_dtype", str),
    "max_num_seqs": ("max_num_seqs", int), "max_num_batched_tokens": ("max_num_batched_tokens", int),
}  # fmt: skip
#: ``SpeculativeConfig.__repr__`` names -> its field names (those of ``--speculative-config``).
SPEC_REPR_NAMES = {"num_spec_tokens": "num_speculative_tokens", "draft_model": "model"}


def _malformed(where: str, kind: str, detail: str) -> SpecModelError:
    return SpecModelError(f"{where}: malformed {kind} line: {detail}")


# --- non-default args ---------------------------------------------------------------------


def _literal_dict(text: str, where: str, kind: str) -> dict[str, Any]:
    """A Python dict literal's string keys and literal values (others skipped), within the
    safe-input bounds (:func:`~specmodel.structured_input.check_shape`)."""
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        reason = exc.msg if isinstance(exc, SyntaxError) else type(exc).__name__
        raise _malformed(where, kind, f"not a Python dict literal ({reason}): {excerpt(text, 60)}") from None
    if not isinstance(tree, ast.Dict):
        raise _malformed(where, kind, f"expected a dict {{...}}, found {excerpt(text, 60)}")
    values: dict[str, Any] = {}
    for key, node in zip(tree.keys, tree.values):
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            raise _malformed(where, kind, "a key that is not a quoted name")
        try:
            values[key.value] = ast.literal_eval(node)
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
            continue  # a config object's repr: no setting read here
    check_shape(values, where)
    return values


def _typed(value: Any, kind: type, name: str, where: str, what: str) -> Any:
    """``value`` if it is of ``kind`` (an int is a float too; no bool), else one line."""
    ok = isinstance(value, kind) or (kind is float and isinstance(value, int))
    if not ok or isinstance(value, bool) or (kind is not str and not value > 0) or (kind is str and not value):
        shape = {int: "a positive whole number", float: "a positive number", str: "a name"}[kind]
        raise _malformed(where, what, f"{name}={excerpt(value)} is not {shape}")
    return value


def _spec_from_args(args: dict[str, Any], where: str) -> dict[str, Any] | None:
    """The speculative config the args give: ``speculative_config`` (a dict, or JSON text),
    else the older ``speculative_model`` and ``num_speculative_tokens`` (vLLM before 0.8)."""
    config = args.get("speculative_config")
    if isinstance(config, str):
        config = load_json_text(config, f"{where} speculative_config", MAX_LINE_BYTES)
    if config is not None and not isinstance(config, dict):
        raise _malformed(where, "non-default args", f"speculative_config={excerpt(config)} is not a dict")
    if config is None and (args.get("speculative_model") or args.get("num_speculative_tokens")):
        config = {"model": args.get("speculative_model"), "num_speculative_tokens": args.get("num_speculative_tokens")}
    return ({k: v for k, v in config.items() if v is not None} or None) if config else None


def args_deployment(args: dict[str, Any], where: str) -> ServerDeployment:
    """The settings a ``non-default args`` dict states (keys of :data:`ARG_FIELDS`,
    ``served_model_name``, the speculative config), read from ``where``."""
    values: dict[str, Any] = {}
    for key, (field, kind) in ARG_FIELDS.items():
        if args.get(key) is None:
            continue
        value = _typed(args[key], kind, key, where, "non-default args")
        if field in values and values[field] != value:
            raise _malformed(where, "non-default args", f"model_tag {values[field]!r} and model {value!r} differ")
        values[field] = value
    if values.get("dtype") == "auto":
        del values["dtype"]  # the model's own dtype: stated by the engine config line
    elif "dtype" in values:
        values["dtype"] = torch_dtype_name(values["dtype"])
    served = args.get("served_model_name")
    if isinstance(served, list | tuple) and served:
        served = served[0]  # vLLM serves under its first name (``get_served_model_name``)
    if served is not None:
        values["served_model_name"] = _typed(served, str, "served_model_name", where, "non-default args")
    values["speculative_config"] = _spec_from_args(args, where)
    return stated(f"{where} (non-default args)", **values)


# --- the engine config line ---------------------------------------------------------------


def _top_level_fields(body: str) -> dict[str, str]:
    """``name=value`` pairs of a config line split at the ``, `` outside brackets and quotes
    (a value without a name runs on the previous one).

    >>> _top_level_fields("model='a, b', spec=S(x=1, y='2'), dtype=torch.bfloat16")
    {'model': "'a, b'", 'spec': "S(x=1, y='2')", 'dtype': 'torch.bfloat16'}
    """
    parts, depth, quote, start, i = [], 0, "", 0, 0
    while i < len(body):
        c = body[i]
        if quote:
            i += 2 if c == "\\" else 1
            quote = "" if c == quote else quote
            continue
        if c in "'\"":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth = max(depth - 1, 0)
        elif depth == 0 and body.startswith(", ", i):
            parts.append(body[start:i])
            start = i + 2
        i += 1
    parts.append(body[start:])
    fields: dict[str, str] = {}
    last = None
    for part in parts:
        name, sep, value = part.partition("=")
        if sep and name.isidentifier() and name not in fields:
            fields[name], last = value, name
        elif last is not None:
            fields[last] += ", " + part
    return fields


def _speculative_repr(text: str, where: str) -> dict[str, Any] | None:
    """``SpeculativeConfig(method='eagle', model='m', num_spec_tokens=5)`` as a dict of
    SpeculativeConfig's field names (:data:`SPEC_REPR_NAMES`), None values left out; ``None``: None."""
    try:
        tree = ast.parse(text.strip(), mode="eval").body
        if isinstance(tree, ast.Constant) and tree.value is None:
            return None
        if not (isinstance(tree, ast.Call) and isinstance(tree.func, ast.Name) and not tree.args):
            raise ValueError
        config = {SPEC_REPR_NAMES.get(k.arg or "", k.arg): ast.literal_eval(k.value) for k in tree.keywords}
    except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError):
        raise _malformed(where, "engine config", f"speculative_config={excerpt(text, 80)} is not "
                         "SpeculativeConfig(name=value, ...)") from None  # fmt: skip
    return {str(k): v for k, v in config.items() if v is not None} or None


def _config_value(fields: dict[str, str], name: str, where: str) -> Any:
    """The config line's ``name`` value: an int for sizes, a string otherwise (quotes of a
    repr removed); None if absent or ``None``."""
    text = fields.get(name, "None").strip()
    if text == "None":
        return None
    if name in ("max_seq_len", "tensor_parallel_size"):
        if not _INTEGER.fullmatch(text) or int(text) < 1:
            raise _malformed(where, "engine config", f"expected {name}=<integer>, found {excerpt(text, 40)}")
        return int(text)
    if text[:1] in "'\"":
        try:
            value = ast.literal_eval(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            raise _malformed(where, "engine config", f"{name}={excerpt(text, 60)} is not a quoted name") from None
        return value if isinstance(value, str) and value else None
    return text or None


def config_deployment(version: str, body: str, where: str) -> ServerDeployment:
    """The settings an engine config line states (``VllmConfig.__str__``), read from ``where``."""
    fields = _top_level_fields(body)
    if "model" not in fields:
        raise _malformed(where, "engine config", f"no model=... field in {excerpt(body, 60)}")
    dtype = _config_value(fields, "dtype", where)
    return stated(
        f"{where} (engine config)",
        model=_config_value(fields, "model", where),
        speculative_config=_speculative_repr(fields.get("speculative_config", "None"), where),
        dtype=torch_dtype_name(dtype) if dtype else None,
        max_model_len=_config_value(fields, "max_seq_len", where),
        tensor_parallel_size=_config_value(fields, "tensor_parallel_size", where),
        quantization=_config_value(fields, "quantization", where),
        kv_cache_dtype=_config_value(fields, "kv_cache_dtype", where),
        served_model_name=_config_value(fields, "served_model_name", where),
        engine_version=version,
    )


# --- a whole log --------------------------------------------------------------------------


class _LogDeployment:
    """A log's deployment so far: the settings merged line by line, and the running requests
    of each engine in each stats interval (an interval ends when an engine logs again)."""

    def __init__(self, source: str):
        self.source, self.record = source, ServerDeployment()
        self.samples: list[float] = []
        self.interval: dict[int, int] = {}
        self.lines: list[int] = []

    def add(self, line: str, number: int) -> None:
        where = f"{self.source} line {number}"
        if len(line.encode()) > MAX_LINE_BYTES:
            raise SpecModelError(f"{where} is longer than {MAX_LINE_BYTES:,} bytes; vLLM's lines are far shorter")
        if (at := line.find(NON_DEFAULT)) >= 0:
            args = _literal_dict(line[at + len(NON_DEFAULT) :], where, "non-default args")
            self.record = merged(self.record, replace(args_deployment(args, where), engine_args_where=where))
        elif match := _ENGINE.search(line):
            self.record = merged(self.record, config_deployment(match.group(1), line[match.end() :], where))
        elif match := _API_VERSION.search(line):
            self.record = merged(self.record, stated(f"{where} (API server version)", engine_version=match.group(1)))
        elif match := _SERVER_VERSION.search(line):
            version, model = match.group(1), match.group(2).strip()
            self.record = merged(self.record, stated(f"{where} (server version)", engine_version=version, model=model))
        elif (at := line.find(STATS)) >= 0:
            self._stats(line, at, where, number)

    def _stats(self, line: str, at: int, where: str, number: int) -> None:
        running = _RUNNING.search(line, at)
        if running is None:
            raise _malformed(where, "stats", f"no 'Running: <integer> reqs' field in {excerpt(line[at:], 80)}")
        engine = _ENGINE_INDEX.search(line[max(at - 20, 0) : at])
        index = int(engine.group(1)) if engine else 0
        if index in self.interval:
            self._flush()
        self.interval[index] = int(running.group(1))
        self.lines.append(number)

    def _flush(self) -> None:
        if self.interval:
            self.samples.extend(float(self.interval[engine]) for engine in sorted(self.interval))
            self.interval = {}

    def stated(self) -> ServerDeployment:
        self._flush()
        if not self.samples:
            return self.record
        where = f"{self.source} lines {self.lines[0]}-{self.lines[-1]} ({len(self.lines)} stats lines, Running:)"
        return merged(self.record, replace(ServerDeployment(), running=Stated(tuple(self.samples), where)))


def _read(lines: Iterable[tuple[int, str]], source: str) -> ServerDeployment:
    reader = _LogDeployment(source)
    for number, line in lines:
        reader.add(line, number)
    return reader.stated()


def deployment_from_log(text: str, source: str) -> ServerDeployment:
    """What a vLLM log's text states about its deployment (the lines of the module
    docstring); lines of one log stating a setting differently are refused naming both."""
    return _read(((n, line.removesuffix("\r")) for n, line in enumerate(text.split("\n"), 1)), source)


def load_log_deployment(path: str | Path, option: str = "--log") -> ServerDeployment:
    """:func:`deployment_from_log` of a log file, streamed (only lines holding a marker are
    read: :func:`~specmodel.safe_input.marker_lines`)."""
    source = f"{option} {path_text(path)}"

    def lines() -> Iterable[tuple[int, str]]:
        for number, raw in marker_lines(path, source, _MARKERS):
            try:
                yield number, raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise SpecModelError(f"{source} line {number}: not UTF-8 text (byte {exc.start} of the line)") from None

    return _read(lines(), source)
