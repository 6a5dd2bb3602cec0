"""Serving-benchmark result files read as runs: ``vllm bench serve --save-result`` JSON (every
version: the old ``benchmarks/benchmark_serving.py``, the first ``vllm bench serve``, and the
newer ones with ``spec_decode_*`` acceptance; with ``--save-detailed``'s per-request lists too),
SGLang ``bench_serving --output-file`` JSON lines (0.4 and 0.5), and measurement CSVs with the
columns of ``specmodel/data/measurements.csv``. A folder stands for the result files in it
(:func:`result_files`).

A producer is recognised by its keys, never by a version: vLLM by ``model_id``,
``tokenizer_id`` and ``burstiness``; SGLang by ``dataset_name`` and
``total_output_tokens_retokenized``. The JSON is read within a result's bounds
(:data:`specmodel.structured_input.RESULT`: no count of values, :data:`MAX_RESULT_BYTES`
bounds them; NaN and Infinity read as floats, refused by name where a field is used,
:mod:`specmodel.server_runs.records`). Times are in seconds (the files' milliseconds
converted), throughputs in output tokens per second.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from specmodel.errors import SpecModelError
from specmodel.measurements import Measurement
from specmodel.safe_input import path_text, read_limited_text, validated_records
from specmodel.server_runs.records import sglang_run, vllm_run
from specmodel.structured_input import RESULT, load_json_text

#: Largest result file read (bytes): ``--save-detailed`` keeps every generated text.
MAX_RESULT_BYTES = 64 * 2**20
#: The columns a measurement CSV starts with.
CSV_COLUMNS = ("source", "engine", "hardware", "target", "method", "batch")
#: The names of the result files a folder stands for (each also gzip-compressed, ``.gz``).
RESULT_SUFFIXES = (".json", ".jsonl", ".csv")
#: What ``vllm bench serve`` writes beside a result when ``SAVE_TO_PYTORCH_BENCHMARK_FORMAT`` is
#: set (``save_to_pytorch_benchmark_format``): one record per metric, not a result.
PYTORCH_SUFFIX = ".pytorch.json"
#: The keys that name a result's producer.
VLLM_KEYS = frozenset({"model_id", "tokenizer_id", "burstiness"})
SGLANG_KEYS = frozenset({"dataset_name", "total_output_tokens_retokenized"})


@dataclass(frozen=True)
class BenchRun:
    """One benchmark run (a vLLM result, an SGLang line) or one measured row of a CSV.

    ``mean_tpot_s``: mean over requests of (latency - TTFT) / (output tokens - 1), seconds;
    ``output_throughput``: output tokens per second over the run; prompt and output tokens
    are means per completed request (total / completed). A CSV row carries its
    :class:`Measurement` as it is, and no timings.
    """

    file: str
    line: int
    engine: Literal["vllm", "sglang", "csv"]
    model_name: str | None
    max_concurrency: int | None
    speculative: bool
    num_speculative_tokens: int | None
    mean_acceptance_length: float | None
    per_position_acceptance: tuple[float, ...] | None
    mean_tpot_s: float | None
    output_throughput: float | None
    mean_prompt_tokens: float | None
    mean_output_tokens: float | None
    method: str | None = None  #: the drafter as vLLM names it, where the file says it
    measurement: Measurement | None = None  #: a CSV row

    @property
    def where(self) -> str:
        """``FILE line N``, for messages."""
        return f"{path_text(self.file)} line {self.line}"


def result_files(paths: list[Path] | list[str]) -> list[Path]:
    """``paths`` with each folder replaced by the result files directly in it, by name:
    :data:`RESULT_SUFFIXES` (or the same ``.gz``), not ``*.pytorch.json``; a folder holding
    none is one line naming it."""
    files: list[Path] = []
    for path in map(Path, paths):
        if not path.is_dir():
            files.append(path)
            continue
        found = sorted(p for p in path.iterdir() if _is_result_name(p.name) and p.is_file())
        if not found:
            raise SpecModelError(
                f"bench folder {path_text(path)} holds no result file ({', '.join(RESULT_SUFFIXES)}, or .gz)"
            )
        files += found
    return files


def _is_result_name(name: str) -> bool:
    """Whether a file of a folder is a result by its name (:func:`result_files`).

    >>> [_is_result_name(n) for n in ("a.json", "a.jsonl.gz", "a.pytorch.json", "a.timeline.html")]
    [True, True, False, False]
    """
    name = name.removesuffix(".gz")
    return name.endswith(RESULT_SUFFIXES) and not name.endswith(PYTORCH_SUFFIX)


def load_runs(paths: list[Path] | list[str]) -> list[BenchRun]:
    """Every run in ``paths`` (a folder: its :func:`result_files`), in order: one per vLLM
    JSON object, per SGLang line, per CSV row. A file that is none of these is one line naming it."""
    runs: list[BenchRun] = []
    for path in result_files(paths):
        runs.extend(_file_runs(path))
    return runs


def is_measurement_csv(text: str) -> bool:
    """Whether a file's text is a measurement CSV: its first line names :data:`CSV_COLUMNS`."""
    return text.lstrip().startswith(",".join(CSV_COLUMNS))


def json_records(text: str, where: str) -> list[tuple[int, Any]]:
    """The JSON values of a result file, each with its line: one value (``--save-result``,
    line 1), else one per non-empty line (``--append-result``, SGLang's ``--output-file``),
    within :data:`~specmodel.structured_input.RESULT`'s bounds; a one-line error naming
    ``where`` otherwise."""
    if not text.lstrip().startswith("{"):
        raise SpecModelError(f"{where} is neither a vLLM or SGLang benchmark result (JSON) nor a measurement CSV")
    try:
        return [(1, load_json_text(text, where, MAX_RESULT_BYTES, RESULT))]
    except SpecModelError as exc:
        if "not valid JSON" not in str(exc):
            raise
    return [
        (number, load_json_text(line, f"{where} line {number}", MAX_RESULT_BYTES, RESULT))
        for number, line in enumerate(text.splitlines(), 1)
        if line.strip()
    ]


def producer(record: Any) -> Literal["vllm", "sglang"] | None:
    """Who wrote a result object, by its keys (:data:`VLLM_KEYS`, :data:`SGLANG_KEYS`); None: neither."""
    if isinstance(record, dict) and record.keys() >= VLLM_KEYS:
        return "vllm"
    if isinstance(record, dict) and record.keys() >= SGLANG_KEYS:
        return "sglang"
    return None


def _file_runs(path: Path) -> list[BenchRun]:
    """The runs of one file: a CSV if its first line names the measurement columns, else one
    JSON object, else one JSON object per non-empty line."""
    where = f"bench file {path_text(path)}"
    text = read_limited_text(path, where, MAX_RESULT_BYTES)
    if is_measurement_csv(text):
        return _csv_runs(path, text, where)
    return [_record_run(path, number, record) for number, record in json_records(text, where)]


def _record_run(path: Path, line: int, record: Any) -> BenchRun:
    """A run from one JSON object, by its producer's keys."""
    where = f"bench file {path_text(path)} line {line}"
    if not isinstance(record, dict):
        raise SpecModelError(f"{where}: a benchmark result is a JSON object, not {type(record).__name__}")
    made_by = producer(record)
    if made_by is None:
        raise SpecModelError(
            f"{where} is no vLLM result (model_id, tokenizer_id, burstiness) nor SGLang result "
            "(dataset_name, total_output_tokens_retokenized)"
        )
    fields = vllm_run(record, where) if made_by == "vllm" else sglang_run(record, where)
    return BenchRun(file=str(path), line=line, **fields)


def _csv_runs(path: Path, text: str, where: str) -> list[BenchRun]:
    """One run per measured row of a measurement CSV, its :class:`Measurement` as it is."""
    rows = validated_records(csv.DictReader(io.StringIO(text)), Measurement, where)
    return [
        BenchRun(
            file=str(path),
            line=i + 2,
            engine="csv",
            model_name=row.target,
            max_concurrency=row.batch,
            speculative=True,
            num_speculative_tokens=row.num_speculative_tokens,
            mean_acceptance_length=row.mean_acceptance_length,
            per_position_acceptance=row.per_position_acceptance,
            mean_tpot_s=None,
            output_throughput=None,
            mean_prompt_tokens=float(row.prompt_tokens),
            mean_output_tokens=float(row.output_tokens),
            method=row.method,
            measurement=row,
        )  # fmt: skip
        for i, row in enumerate(rows)
    ]
