"""Public measurements of real servers, and the model's prediction of each under an engine.

A measurement file (:data:`MEASUREMENTS_FILE`) has one row per
measured speedup: where it comes from, the deployment (hardware, target, vLLM's method and
``num_speculative_tokens``), the workload (concurrency, prompt and output tokens), the
acceptance measured in the run (per position, or only the mean acceptance length) and the
speedup, with the definition of speedup the source used (:data:`SPEEDUP_DEFINITIONS`).
:func:`predict` evaluates every row with that acceptance given to the model and reads the
speedup of the row's own definition.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator

from specmodel.errors import SpecModelError
from specmodel.model.evaluate import evaluate
from specmodel.model.scenario import ScenarioGrid
from specmodel.model.settings import Settings
from specmodel.model.types import FloatArray
from specmodel.safe_input import excerpt, read_limited_text, validated_records

#: The public measurements of vLLM on one H100 the ``vllm`` engine is fitted to and checked against.
MEASUREMENTS_FILE = Path(__file__).resolve().parent / "data" / "measurements.csv"
#: Public measurements of vLLM serving Llama-3-70B on four H100s (tensor parallel 4), acceptance
#: not published (:mod:`specmodel.acceptance_fit` fits it at batch 1).
MULTIGPU_MEASUREMENTS_FILE = Path(__file__).resolve().parent / "data" / "measurements-multigpu.csv"


#: The definitions of speedup a measurement file may give in its ``speedup_definition``
#: column, each with the :class:`specmodel.model.evaluation.Evaluation` readout that predicts it:
#: a ratio of time per output token (TPOT, decode alone: the prompt's prefill is in neither
#: time) or a ratio of output throughputs at the same concurrency over a whole serving
#: benchmark (the prompts' prefill counted in both, as ``vllm bench serve`` measures it).
SPEEDUP_DEFINITIONS: dict[str, str] = {
    "vanilla TPOT / speculative TPOT": "decode_speedup",
    "output throughput with / without speculation at the same max concurrency": "throughput_speedup",
}


def speedup_readout(definition: str) -> str:
    """The :class:`~specmodel.model.evaluation.Evaluation` field that predicts a speedup of
    ``definition`` (:data:`SPEEDUP_DEFINITIONS`); any other definition is refused, naming the
    allowed ones.

    >>> speedup_readout("vanilla TPOT / speculative TPOT")
    'decode_speedup'
    """
    try:
        return SPEEDUP_DEFINITIONS[definition]
    except KeyError:
        allowed = "; ".join(f'"{d}"' for d in SPEEDUP_DEFINITIONS)
        raise SpecModelError(f"unknown speedup_definition {excerpt(definition, 100)}: give one of {allowed}") from None


class Measurement(BaseModel):
    """One measured speedup of a real server, with its source."""

    model_config = ConfigDict(frozen=True, extra="ignore")
    source: str = Field(min_length=1)
    engine: str
    hardware: str
    target: str
    method: str
    batch: int = Field(ge=1)
    prompt_tokens: int = Field(ge=0)
    output_tokens: int = Field(ge=1)
    num_speculative_tokens: int = Field(ge=1)
    tensor_parallel: int = Field(1, ge=1)
    mean_acceptance_length: float | None = Field(None, gt=1)  #: None: not published
    per_position_acceptance: tuple[float, ...] | None = None
    measured_speedup: float = Field(gt=0)
    speedup_definition: str  #: one of SPEEDUP_DEFINITIONS' keys
    notes: str = ""

    @field_validator("mean_acceptance_length", mode="before")
    @classmethod
    def _blank(cls, value: Any) -> Any:
        """An empty cell: not published."""
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("speedup_definition")
    @classmethod
    def _known(cls, value: str) -> str:
        """One of :data:`SPEEDUP_DEFINITIONS`, so that a bad file fails when it is read."""
        speedup_readout(value)
        return value

    @field_validator("per_position_acceptance", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        """``0.675;0.437;0.279`` as a tuple; an empty cell as None."""
        if isinstance(value, str):
            return tuple(float(x) for x in value.split(";")) if value.strip() else None
        return value

    @field_validator("target", mode="before")
    @classmethod
    def _key(cls, value: Any) -> Any:
        """``llama-3-70b (Meta-Llama-3-70B-Instruct)``: the catalogue key before the note."""
        return value.split(" (")[0].strip() if isinstance(value, str) else value

    @property
    def source_name(self) -> str:
        """Who published the row: the source up to its first comma or parenthesis (the unit the
        fit leaves out in turn), e.g. ``SpecDecode-Bench`` or ``vllm-project/vllm issue #20780``."""
        return self.source.split(" (")[0].split(",")[0]

    @property
    def citation(self) -> str:
        """The source without its parenthesised detail, e.g. ``SpecDecode-Bench, arXiv:2601.11580, Fig. 1``."""
        return self.source.split(" (")[0]

    @property
    def workload(self) -> str:
        """The source and the workload's prompt and output lengths, e.g. ``SpecDecode-Bench 94/256``."""
        return f"{self.source_name} {self.prompt_tokens}/{self.output_tokens}"

    @property
    def dataset(self) -> str:
        """The dataset the notes name (``dataset GSM8K; ...``), else the prompt length."""
        first = self.notes.split(";")[0].strip()
        return first.removeprefix("dataset ") if first.startswith("dataset ") else f"{self.prompt_tokens}-token prompts"

    @property
    def series(self) -> tuple[object, ...]:
        """What the rows of one series share: everything but the batch and what was measured
        at it (source, deployment, drafter, gamma and the workload's lengths)."""
        return (self.source, self.target, self.hardware, self.tensor_parallel, self.method,
                self.num_speculative_tokens, self.prompt_tokens, self.output_tokens)  # fmt: skip

    @property
    def source_url(self) -> str | None:
        """A link to the source: the GitHub issue or pull request, or the arXiv paper it names.

        >>> row = dict(engine="vLLM", hardware="h100-sxm", target="llama-3.1-8b", method="eagle", batch=1,
        ...            prompt_tokens=1, output_tokens=1, num_speculative_tokens=1, measured_speedup=1.0,
        ...            speedup_definition="vanilla TPOT / speculative TPOT")
        >>> Measurement(source="vllm-project/vllm PR #16035 (a comment)", **row).source_url
        'https://github.com/vllm-project/vllm/pull/16035'
        """
        issue = re.search(r"([\w.-]+/[\w.-]+) (issue|PR) #(\d+)", self.source)
        if issue:
            kind = "issues" if issue.group(2) == "issue" else "pull"
            return f"https://github.com/{issue.group(1)}/{kind}/{issue.group(3)}"
        paper = re.search(r"arXiv:(\d{4}\.\d{4,5})", self.source)
        return f"https://arxiv.org/abs/{paper.group(1)}" if paper else None

    def scenario(self, mean_acceptance_length: float | None = None) -> dict[str, Any]:
        """The scenario this row measured, as :func:`specmodel.evaluate` takes it, with the
        measured acceptance (per position where published, else the mean acceptance length,
        else the ``mean_acceptance_length`` given here, e.g. fitted)."""
        fields: dict[str, Any] = {
            "concurrency": self.batch, "context": self.prompt_tokens, "generated_tokens": self.output_tokens,
            "drafter": self.method, "hardware": self.hardware, "target": self.target,
            "tensor_parallel": self.tensor_parallel,
        }  # fmt: skip
        if self.per_position_acceptance is not None and mean_acceptance_length is None:
            fields["per_position"] = self.per_position_acceptance
            return fields
        length = mean_acceptance_length if mean_acceptance_length is not None else self.mean_acceptance_length
        if length is None:
            raise SpecModelError(f"{self.source}: no acceptance published for this row; fit it (acceptance_fit)")
        fields["mean_acceptance_length"] = length
        fields["gamma"] = self.num_speculative_tokens
        return fields


def load_measurements(path: Path) -> list[Measurement]:
    """Every row of a measurement CSV, validated; a bad file is one line naming the row."""
    where = f"measurements {excerpt(str(path), 200)}"
    reader = csv.DictReader(io.StringIO(read_limited_text(path, where)))
    rows = validated_records(reader, Measurement, where)
    if not rows:
        raise SpecModelError(f"{where} has no rows")
    return rows


#: Rows as :func:`predict` evaluates them: each group's members (row indices) and its grid.
PredictionGrids = list[tuple[list[int], ScenarioGrid]]


def prediction_grids(rows: list[Measurement], engine: str, settings: Settings) -> PredictionGrids:
    """The rows grouped into validated grids as :func:`predict` evaluates them: rows that share a
    deployment, an output length and a way of giving the acceptance make one grid. A grid holds
    the scenarios, not the engine's constants, so a fit that varies only those builds it once."""
    groups: dict[tuple[Any, ...], list[int]] = {}
    for i, row in enumerate(rows):
        fields = row.scenario()
        key = (fields["generated_tokens"], fields["target"], fields["hardware"], "per_position" in fields,
               len(fields.get("per_position", ())), fields["tensor_parallel"])  # fmt: skip
        groups.setdefault(key, []).append(i)
    out: PredictionGrids = []
    for members in groups.values():
        scenarios = [rows[i].scenario() for i in members]
        grid = {k: np.array([sc[k] for sc in scenarios]) for k in scenarios[0]}
        for scalar in ("generated_tokens", "target", "hardware"):
            grid[scalar] = scenarios[0][scalar]
        out.append((members, ScenarioGrid.build(settings, engine=engine, **grid)))
    return out


def predict(
    rows: list[Measurement], engine: str, settings: Settings | None = None, grids: PredictionGrids | None = None
) -> FloatArray:
    """The model's speedup for each row under ``engine`` (its own default batching), with the
    acceptance the row measured, in the row's own ``speedup_definition``
    (:func:`speedup_readout`: decode alone for a TPOT ratio, prefill included for an output
    throughput ratio; the same under cohort batching), evaluated on :func:`prediction_grids`
    (``grids``: those already built for these rows and engine under settings that differ from
    ``settings`` at most in the engines' constants)."""
    settings = settings or Settings()
    readouts = [speedup_readout(row.speedup_definition) for row in rows]  # refused before anything runs
    out = np.empty(len(rows))
    for members, grid in grids if grids is not None else prediction_grids(rows, engine, settings):
        ev = evaluate(grid, settings=settings)
        out[members] = [getattr(ev, readouts[i])[j] for j, i in enumerate(members)]
    return out


def relative_errors(predicted: FloatArray, rows: list[Measurement]) -> FloatArray:
    """``predicted / measured - 1`` per row."""
    measured = np.array([row.measured_speedup for row in rows])
    return np.asarray(predicted, dtype=float) / measured - 1.0


def error_summary(errors: FloatArray) -> dict[str, float]:
    """Median, 90th percentile and worst absolute relative error."""
    magnitude = np.abs(np.asarray(errors, dtype=float))
    return {"median": float(np.median(magnitude)), "p90": float(np.quantile(magnitude, 0.9)),
            "max": float(magnitude.max())}  # fmt: skip
