"""Serving-benchmark result files read as runs: ``vllm bench serve --save-result`` JSON (every
version: the old ``benchmarks/benchmark_serving.py``, the first ``vllm bench serve``, and the
newer ones with ``spec_decode_*`` acceptance), SGLang ``bench_serving --output-file`` JSON
lines (0.4 and 0.5), and measurement CSVs with the columns of ``specmodel/data/measurements.csv``.

A producer is recognised by its keys, never by a version: vLLM by ``model_id``,
``tokenizer_id`` and ``burstiness``; SGLang by ``dataset_name`` and
``total_output_tokens_retokenized``. Times are in seconds (the files' milliseconds converted),
throughputs in output tokens per second.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from specmodel.errors import SpecModelError
from specmodel.measurements import Measurement
from specmodel.safe_input import path_text, read_limited_text, validated_records
from specmodel.server_runs.records import sglang_run, vllm_run
from specmodel.structured_input import load_json_text

#: Largest result file read (bytes): ``--save-detailed`` keeps every generated text.
MAX_RESULT_BYTES = 64 * 2**20
#: The columns a measurement CSV starts with.
CSV_COLUMNS = ("source", "engine", "hardware", "target", "method", "batch")
_INFINITY = re.compile(r"([:\[,]\s*)(-?)(Infinity|NaN)\b")


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


def load_runs(paths: list[Path] | list[str]) -> list[BenchRun]:
    """Every run in ``paths``, in order: one per vLLM JSON object, per SGLang line, per CSV
    row. A file that is none of these is one line naming it."""
    runs: list[BenchRun] = []
    for path in paths:
        runs.extend(_file_runs(Path(path)))
    return runs


def _file_runs(path: Path) -> list[BenchRun]:
    """The runs of one file: a CSV if its first line names the measurement columns, else one
    JSON object, else one JSON object per non-empty line."""
    where = f"bench file {path_text(path)}"
    text = read_limited_text(path, where, MAX_RESULT_BYTES)
    first = text.lstrip().split("\n", 1)[0]
    if first.startswith(",".join(CSV_COLUMNS)):
        return _csv_runs(path, text, where)
    if not first.startswith("{"):
        raise SpecModelError(f"{where} is neither a vLLM or SGLang benchmark result (JSON) nor a measurement CSV")
    text = _INFINITY.sub(lambda m: f'{m.group(1)}"{m.group(2)}{m.group(3).lower()}"', text)
    try:
        return [_record_run(path, 1, load_json_text(text, where, MAX_RESULT_BYTES))]
    except SpecModelError as exc:
        if "not valid JSON" not in str(exc):
            raise
    runs = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            record = load_json_text(line, f"{where} line {number}", MAX_RESULT_BYTES)
            runs.append(_record_run(path, number, record))
    return runs


def _record_run(path: Path, line: int, record: Any) -> BenchRun:
    """A run from one JSON object, by its producer's keys."""
    where = f"bench file {path_text(path)} line {line}"
    if not isinstance(record, dict):
        raise SpecModelError(f"{where}: a benchmark result is a JSON object, not {type(record).__name__}")
    if {"model_id", "tokenizer_id", "burstiness"} <= record.keys():
        fields = vllm_run(record, where)
    elif {"dataset_name", "total_output_tokens_retokenized"} <= record.keys():
        fields = sglang_run(record, where)
    else:
        raise SpecModelError(
            f"{where} is no vLLM result (model_id, tokenizer_id, burstiness) nor SGLang result "
            "(dataset_name, total_output_tokens_retokenized)"
        )
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
