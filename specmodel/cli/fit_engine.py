"""``specmodel fit-engine FILE... --out PROFILE.toml``: an engine profile fitted to a user's own
serving benchmarks (:mod:`specmodel.server_runs`, :mod:`specmodel.engine_fit`),
written atomically as one TOML table (:func:`specmodel.model.profile_file.profile_text`) that
``--engine-profile`` reads. What the runs cannot determine is said on stderr and in the file.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import re
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

from specmodel.cli.options import (
    GAMMA,
    TENSOR_PARALLEL,
    deployment_options,
    drafter_option,
    name_text,
    runs_acceptance_option,
    token_budget_option,
)
from specmodel.engine_fit import PRIOR_WIDTHS, SIGMA, RunsFit, fit_runs, timings_of
from specmodel.errors import SpecModelError
from specmodel.measurements import Measurement
from specmodel.model.domain import profile_domain
from specmodel.model.engines import EngineProfile, FitProvenance, ProfileDomain
from specmodel.model.profile_file import check_profile_key, profile_text
from specmodel.model.settings import Settings
from specmodel.output_path import check_output, command_inputs, replace_file
from specmodel.safe_input import excerpt, read_limited_text
from specmodel.server_runs import BenchRun, Deployment, PlainTiming, load_runs, paired_measurements, plain_timings
from specmodel.server_runs.runs import MAX_RESULT_BYTES, result_files

METHOD = (
    f"regularised least squares on log(predicted / measured), sigma {SIGMA:g} per row, plus (log value - log "
    "public) / width per fitted constant; scipy trust-region reflective least squares (specmodel.engine_fit); "
    "se from cov = s^2 (J^T J)^-1, s^2 >= 1"
)


def add_parser(sub: argparse._SubParsersAction, settings: Settings) -> None:
    """The ``fit-engine`` subcommand and its options."""
    fit = sub.add_parser(
        "fit-engine", help="fit an engine profile to your own vLLM / SGLang benchmark results",
        description="Fit the fixed costs of an engine profile to vllm bench serve --save-result JSON, SGLang "
        "bench_serving JSON lines or measurement CSVs: plain and speculative runs at the same --max-concurrency, "
        "starting from the public profile and keeping what the runs cannot determine.",
    )  # fmt: skip
    fit.add_argument("files", nargs="+", type=Path, metavar="FILE", help="benchmark result files, or folders of them")
    fit.add_argument("--out", required=True, type=Path, help="profile file to write (TOML)")
    fit.add_argument(
        "--engine", metavar="NAME", default="vllm", help="public profile to start from (default: %(default)s)"
    )
    fit.add_argument(
        "--name", type=name_text, metavar="KEY", default="my-server", help="the profile's key (default: %(default)s)"
    )
    drafter_option(fit)
    deployment_options(fit, settings)
    fit.set_defaults(target=None)
    fit.add_argument(*TENSOR_PARALLEL, type=int, metavar="N", default=1, help="GPUs of the target (default: 1)")
    token_budget_option(fit)
    fit.add_argument(*reversed(GAMMA), dest="num_speculative_tokens", type=int, metavar="K", default=None,
                     help="k of the speculative runs, where the files do not say it")  # fmt: skip
    runs_acceptance_option(fit)


def run_fit_engine(args: argparse.Namespace, settings: Settings) -> str:
    """Read, pair, fit, write; returns the summary printed on stdout."""
    check_profile_key(args.name, "--name")
    if args.engine not in settings.engines:
        raise SpecModelError(f"--engine {excerpt(args.engine)}: one of {', '.join(settings.engines)}")
    check_output(args.out, "--out", PROFILE_TAKES, inputs=command_inputs(args))
    args.files = result_files(args.files)  # a folder: the result files in it
    runs = load_runs(args.files)
    deployment = Deployment(
        hardware=args.hardware, target=args.target, drafter=args.drafter,
        tensor_parallel=args.tensor_parallel, num_speculative_tokens=args.num_speculative_tokens,
        mean_acceptance_length=args.mean_acceptance_length,
    )  # fmt: skip
    rows = paired_measurements(runs, deployment)
    drafter = args.drafter or next((r.method for r in rows), None) or "eagle"
    plain = plain_timings(runs, deployment)
    timings = timings_of(plain, drafter)
    if not rows and not timings:
        raise SpecModelError("no run to fit: give plain and speculative runs at the same --max-concurrency")
    public = settings.engines[args.engine]
    result = fit_runs(replace(public, key=args.name), rows, timings)
    profile = _with_provenance(result, public, args.files, len(rows) + len(timings))
    profile = replace(profile, domain=fitted_domain(runs, rows, plain))
    for name, reason in result.kept.items():
        print(f"specmodel: note: {name} kept at the public value {getattr(public, name):g}: {reason}", file=sys.stderr)
    write_profile(args.out, profile_text(profile, comment=_comment(result, public)))
    return _summary(result, public, args.out)


#: What ``fit-engine --out`` takes, as its refusals say it.
PROFILE_TAKES = "a file name for the profile, such as my-server.toml"


def write_profile(out: Path, text: str) -> None:
    """Write the profile ``text`` to ``out`` atomically, keeping the mode and owner of a file it
    replaces (:func:`specmodel.output_path.replace_file`)."""
    try:
        replace_file(out, lambda tmp: tmp.write_text(text, encoding="utf-8"), "--out", PROFILE_TAKES)
    except OSError as exc:
        raise SpecModelError(f"--out {excerpt(str(out))}: cannot write it: {exc.strerror or exc}") from None


def fitted_domain(runs: list[BenchRun], rows: list[Measurement], timings: list[PlainTiming]) -> ProfileDomain:
    """What the fitted runs cover: the paired rows' and the plain runs' targets, cards, GPUs and
    batches, the speculative rows' drafters, and the engine versions the files state
    (:func:`engine_versions`)."""
    cases: list[Measurement | PlainTiming] = [*rows, *timings]
    return profile_domain(
        targets=(c.target for c in cases), hardware=(c.hardware for c in cases),
        drafters=(r.method for r in rows), tensor_parallel=(c.tensor_parallel for c in cases),
        concurrency=(c.batch for c in cases), engine_versions=engine_versions(runs),
    )  # fmt: skip


#: A version a benchmark file states: SGLang's ``server_info.version``, or a ``version`` /
#: ``vllm_version`` / ``sglang_version`` key a run's ``--metadata`` added.
VERSION_KEY = re.compile(r'"(?:vllm_|sglang_)?version"\s*:\s*"([0-9A-Za-z.+_-]{1,40})"')


def engine_versions(runs: list[BenchRun]) -> tuple[str, ...]:
    """The engine of each run with the version its file states (``sglang 0.5.6``), or
    ``vllm (version unstated)``; a measurement CSV row's ``engine`` column as it is."""
    found: dict[str, tuple[str, ...]] = {}
    out = []
    for run in runs:
        if run.measurement is not None:
            out.append(run.measurement.engine)
            continue
        if run.file not in found:
            text = read_limited_text(Path(run.file), f"bench file {run.file}", MAX_RESULT_BYTES)
            found[run.file] = tuple(dict.fromkeys(VERSION_KEY.findall(text)))
        out += [f"{run.engine} {v}" for v in found[run.file]] or [f"{run.engine} (version unstated)"]
    return tuple(dict.fromkeys(out))


def _sha256(path: Path) -> str:
    """The sha256 of a file's bytes (read bounded, as the readers read it: UTF-8 text)."""
    return hashlib.sha256(read_limited_text(path, f"bench file {path}", MAX_RESULT_BYTES).encode()).hexdigest()


def _with_provenance(result: RunsFit, public: EngineProfile, files: list[Path], rows: int) -> EngineProfile:
    """The fitted profile with its name, description and ``fit`` provenance."""
    inputs = tuple((p.name, _sha256(p)) for p in files)
    errors = np.abs(result.errors)
    not_fitted = "; ".join(f"{k} = {getattr(public, k):g} (public): {v}" for k, v in result.kept.items())
    provenance = FitProvenance(
        measurements=", ".join(name for name, _ in inputs),
        measurements_sha256=hashlib.sha256("".join(d for _, d in inputs).encode()).hexdigest(),
        rows=rows, fitted_on=datetime.date.today().isoformat(), method=METHOD,
        median_abs_error=float(np.median(errors)), p90_abs_error=float(np.quantile(errors, 0.9)),
        max_abs_error=float(errors.max()), anchor="the plain runs' mean TPOT, where given",
        residuals=tuple(float(e) for e in result.errors), fitted=tuple(result.fitted),
        not_fitted=not_fitted, relative_standard_errors=tuple(result.relative_se.values()),
        largest_correlation=result.largest_correlation, largest_correlation_pair=result.largest_pair,
        inputs=inputs, prior=f"the public profile {public.key!r}; widths in log units",
        prior_widths={k: PRIOR_WIDTHS[k] for k in result.fitted},
    )  # fmt: skip
    return replace(
        result.profile, name=f"{public.name}, fitted to {provenance.measurements}"[:200],
        description=f"{public.key} refitted by specmodel fit-engine to the user's benchmark runs", fit=provenance,
    )  # fmt: skip


def _comment(result: RunsFit, public: EngineProfile) -> str:
    """The file's leading comment: what was fitted and what was kept, and why."""
    lines = [f"Written by specmodel fit-engine from the public profile {public.key}."]
    lines += [f"fitted {k} = {v:.4g} (relative se {result.relative_se[k]:.0%})" for k, v in result.fitted.items()]
    lines += [f"kept {k} at the public value: {v}" for k, v in result.kept.items()]
    return "\n".join(lines)


def _summary(result: RunsFit, public: EngineProfile, out: Path) -> str:
    """The stdout text: each constant public -> fitted with its uncertainty, and the errors."""
    lines = [f"wrote {out} (profile {result.profile.key!r}, from {public.key!r}; use --engine-profile {out})"]
    for k, v in result.fitted.items():
        lines.append(f"  {k}: {getattr(public, k):.4g} -> {v:.4g} (relative se {result.relative_se[k]:.0%})")
    errors = ", ".join(f"{e:+.1%}" for e in result.errors)
    lines.append(f"  rows: {len(result.errors)}; predicted / measured - 1: {errors}")
    return "\n".join(lines)
