"""Benchmark runs paired into measured speedups: each speculative run with the plain run at
the same concurrency (``--max-concurrency``) of the same model, speedup = plain TPOT /
speculative TPOT ("vanilla TPOT / speculative TPOT": decode alone, the prompts' prefill is in
neither time, which the model predicts without knowing how the benchmark queued its prompts;
the output throughput ratio would also count prefill and the run's ramp-up and drain).

Also the plain runs' absolute time per output token (:func:`plain_timings`), which a speedup
alone cannot give: it sets the fixed time per pass on its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from specmodel.errors import SpecModelError
from specmodel.measurements import Measurement
from specmodel.model.config_json import catalogue_model
from specmodel.safe_input import excerpt, validated
from specmodel.server_runs.runs import BenchRun

#: Two plain runs at one concurrency that differ by more than this (relative TPOT) contradict.
PLAIN_TOLERANCE = 0.05
TPOT_DEFINITION = "vanilla TPOT / speculative TPOT"


@dataclass(frozen=True)
class Deployment:
    """What the files do not say: the accelerator and GPUs; the target (None: from the runs'
    model name, by the catalogue), the drafter and k (None: from the runs, where they say);
    the mean acceptance length of speculative runs whose file does not report one (vLLM's
    bench serve before its ``spec_decode_*`` fields: read it from the server's log or
    metrics), None to require it from the files."""

    hardware: str
    target: str | None = None
    drafter: str | None = None
    tensor_parallel: int = 1
    num_speculative_tokens: int | None = None
    mean_acceptance_length: float | None = None


@dataclass(frozen=True)
class PlainTiming:
    """A plain run's mean time per output token (seconds) at a concurrency, with its workload."""

    source: str
    target: str
    hardware: str
    tensor_parallel: int
    batch: int
    prompt_tokens: int
    output_tokens: int
    tpot_s: float


def _name(run: BenchRun) -> str:
    return f"{Path(run.file).name} line {run.line}"


def _target(runs: list[BenchRun], deployment: Deployment) -> str:
    """The catalogue target: ``deployment.target``, checked against the runs' model names,
    else the one catalogue model they name; different models in one fit are refused."""
    keys: dict[str, BenchRun] = {}
    for run in runs:
        key = catalogue_model(run.model_name) if run.model_name else None
        if key is not None:
            other = keys.setdefault(key, run)
            if other.model_name != run.model_name and key != catalogue_model(other.model_name or ""):
                break
    if len(keys) > 1:
        (a, ra), (b, rb) = list(keys.items())[:2]
        raise SpecModelError(
            f"{ra.where}: model {excerpt(ra.model_name)} ({a}) and {rb.where}: model {excerpt(rb.model_name)} ({b}) "
            "in one fit; give the runs of one model"
        )
    named = next(iter(keys), None)
    if deployment.target is not None:
        if named is not None and named != deployment.target:
            raise SpecModelError(
                f"the runs' model is {named}, but --target is {deployment.target}; give --target {named}"
            )
        return deployment.target
    if named is None:
        raise SpecModelError("no run names a catalogue model (model_id / served_model_name); give --target")
    return named


def _concurrency(run: BenchRun) -> int:
    if run.max_concurrency is None:
        raise SpecModelError(
            f"{run.where}: max_concurrency is null (the default, unlimited: the concurrency the server ran is "
            "unknown); rerun the benchmark with --max-concurrency N"
        )
    return run.max_concurrency


def _tpot(run: BenchRun) -> float:
    if run.mean_tpot_s is None:
        raise SpecModelError(
            f"{run.where}: no mean_tpot_ms (absent: run without --skip-tokenizer-init; 0: no request gave more than "
            "one output token)"
        )
    return run.mean_tpot_s


def _plain_by_concurrency(runs: list[BenchRun]) -> dict[int, list[BenchRun]]:
    """The plain runs by concurrency; two that differ by more than :data:`PLAIN_TOLERANCE`
    in TPOT are refused, naming both."""
    plain: dict[int, list[BenchRun]] = {}
    for run in runs:
        if not run.speculative and run.engine != "csv":
            plain.setdefault(_concurrency(run), []).append(run)
    for batch, group in plain.items():
        low, high = min(group, key=_tpot), max(group, key=_tpot)
        if _tpot(high) > _tpot(low) * (1 + PLAIN_TOLERANCE):
            raise SpecModelError(
                f"{high.where}: plain mean_tpot_ms {_tpot(high) * 1e3:.4g} and {low.where}: {_tpot(low) * 1e3:.4g} at "
                f"max_concurrency {batch} differ by more than {PLAIN_TOLERANCE:.0%}; give runs of one deployment"
            )
    return plain


def _mean_tpot(group: list[BenchRun]) -> float:
    return sum(_tpot(r) for r in group) / len(group)


def paired_measurements(runs: list[BenchRun], deployment: Deployment) -> list[Measurement]:
    """One :class:`Measurement` per speculative run (plain TPOT / speculative TPOT at its
    concurrency; the plain runs there averaged) and every CSV row as it is."""
    bench = [r for r in runs if r.engine != "csv"]
    target = _target(bench, deployment) if bench else ""
    plain = _plain_by_concurrency(bench)
    out = [r.measurement for r in runs if r.measurement is not None]
    for run in (r for r in bench if r.speculative):
        batch = _concurrency(run)
        if run.mean_acceptance_length is None and deployment.mean_acceptance_length is None:
            raise SpecModelError(
                f"{run.where}: a speculative run without acceptance (spec_decode_acceptance_length / accept_length); "
                "give --mean-acceptance-length M from the server's log ('Mean acceptance length') or metrics, "
                "or use a vLLM bench serve that reports it, or SGLang"
            )
        if batch not in plain:
            raise SpecModelError(f"{run.where}: no plain run at max_concurrency {batch} to pair it with")
        out.append(_measurement(run, batch, target, _mean_tpot(plain[batch]) / _tpot(run), deployment))
    return out


def _measurement(run: BenchRun, batch: int, target: str, speedup: float, deployment: Deployment) -> Measurement:
    """The measured speedup of one speculative run, as a measurement row."""
    method = deployment.drafter or run.method
    k = deployment.num_speculative_tokens or run.num_speculative_tokens
    if method is None:
        raise SpecModelError(f"{run.where}: the file does not say the drafter; give --drafter")
    if k is None:
        raise SpecModelError(
            f"{run.where}: the file does not say num_speculative_tokens; give --num-speculative-tokens"
        )
    length = run.mean_acceptance_length or deployment.mean_acceptance_length
    if length is not None and not 1 < length <= k + 1:
        field = {"vllm": "spec_decode_acceptance_length", "sglang": "accept_length"}.get(run.engine, "")
        named = f"the file's {field}" if run.mean_acceptance_length else "--mean-acceptance-length"
        raise SpecModelError(
            f"{run.where}: {named} {length:g} is not a mean acceptance length for "
            f"num_speculative_tokens {k}: more than 1 and at most {k + 1}"
        )
    row = {
        "source": _name(run), "engine": run.engine, "hardware": deployment.hardware, "target": target,
        "method": method, "batch": batch, "prompt_tokens": round(run.mean_prompt_tokens or 0),
        "output_tokens": max(1, round(run.mean_output_tokens or 1)), "num_speculative_tokens": k,
        "tensor_parallel": deployment.tensor_parallel, "mean_acceptance_length": length,
        "per_position_acceptance": run.per_position_acceptance, "measured_speedup": speedup,
        "speedup_definition": TPOT_DEFINITION,
    }  # fmt: skip
    return validated(Measurement, row, run.where)


def plain_timings(runs: list[BenchRun], deployment: Deployment) -> list[PlainTiming]:
    """The plain runs' mean TPOT per concurrency (averaged where several), in order."""
    bench = [r for r in runs if r.engine != "csv"]
    if not bench:
        return []
    target = _target(bench, deployment)
    return [
        PlainTiming(
            source=_name(group[0]),
            target=target,
            hardware=deployment.hardware,
            tensor_parallel=deployment.tensor_parallel,
            batch=batch,
            prompt_tokens=round(group[0].mean_prompt_tokens or 0),
            output_tokens=max(1, round(group[0].mean_output_tokens or 1)),
            tpot_s=_mean_tpot(group),
        )  # fmt: skip
        for batch, group in sorted(_plain_by_concurrency(bench).items())
    ]
