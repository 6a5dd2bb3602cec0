"""Fit the ``vllm`` engine profile to public measurements and write it to
``specmodel/data/engines.toml`` with its provenance, residuals, standard errors and held-out
errors, what a step time of EAGLE-3's own would trade to
``sitebuild/data/eagle3-tradeoff.json``, the profile refitted at other memory efficiencies to
``sitebuild/data/memory-sensitivity.json``, and the fits on a subset of the rows that the
validation page quotes to ``sitebuild/data/subset-fits.json``, and every public series
calibrated from its small batches as ``specmodel fit-engine`` would calibrate it, under the
profile just fitted, to ``sitebuild/data/server-calibration.json``, and the held-out
residuals the speedup intervals are made of, by drafter kind and batch range, with their
out-of-sample coverage, to ``specmodel/data/intervals.toml`` (:mod:`specmodel.uncertainty`)
(``make fit``). The site
reads these records and never fits.

    python tools/fit_engine.py                     # fit, write, print the residuals
    python tools/fit_engine.py --check             # fit and compare with the file; write nothing

The fit and the held-out splits are :mod:`sitebuild.public_fit`'s: least squares on the log
of predicted over measured speedup for every row of ``specmodel/data/measurements.csv`` (a
copy of the public measurements), plus the 7.07 ms plain decode step of vLLM issue #20780. One profile for
all rows; no per-row or per-source term. The writer replaces only the keys it fits (and the
ones it retires); any other key of ``[vllm]`` (e.g. ``moe_kernel``) is kept as it is.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
import tomllib
from dataclasses import asdict
from datetime import date
from pathlib import Path
from typing import Any

from sitebuild.engine_tradeoff import band, tradeoffs
from sitebuild.fit_records import (
    calibration_text,
    readme_block,
    same_record,
    same_values,
    sensitivity_text,
    subset_fits_text,
    tradeoff_text,
)
from sitebuild.memory_sensitivity import refits
from sitebuild.paths import EAGLE3_TRADEOFF, MEMORY_SENSITIVITY, SERVER_CALIBRATION, SUBSET_FITS
from sitebuild.public_fit import (
    ANCHOR_SOURCE,
    FITTED,
    FIXED,
    NOT_FITTED,
    Fit,
    eagle3_step_by_source,
    fit,
    held_out,
    held_out_residuals,
    identifiability,
    profile,
    public_domain,
    small_batch,
)
from sitebuild.server_calibration import CALIBRATED_FILES, all_series
from specmodel.measurements import error_summary, load_measurements
from specmodel.model.engines import EngineProfile, FitProvenance, ProfileDomain
from specmodel.model.profile_file import toml_value
from specmodel.model.settings import Settings
from specmodel.records import validate
from specmodel.uncertainty import INTERVALS_FILE, intervals_record, intervals_text

ROOT = Path(__file__).resolve().parents[1]
MEASUREMENTS = ROOT / "specmodel" / "data" / "measurements.csv"
ENGINES = ROOT / "specmodel" / "data" / "engines.toml"
README = ROOT / "README.md"
INTERVALS = ROOT / "specmodel" / "data" / INTERVALS_FILE
#: What the intervals are made of, as the record states it.
INTERVALS_SOURCE = (
    "specmodel/data/measurements.csv: leave one source out (every row) and batch <= 16 predicting batch > 16; "
    "coverage folds: source and workload"
)
#: Keys of [vllm] this writer owns: the header, every constant it may fit, the ones it retired,
#: and the domain of the rows it fits.
OWNED = {"name", "description", "batching", "fused_head_pass_s", "compute_efficiency", "domain", *FIXED, *FITTED}


#: How the fit is made, as engines.toml records it.
METHOD = "scipy.optimize.least_squares (trf) on log(predicted/measured), ties broken toward the ideal roofline"
#: Decimals of the error summaries recorded (shares): enough that a page printing them to a tenth
#: of a percent rounds the fit's own value, not a value already rounded once.
ERROR_DIGITS = 6


def provenance(result: Fit, rows: list, splits: dict[str, dict[str, float]]) -> FitProvenance:
    """The fit's provenance: the file and its checksum, the residuals, the fitted constants'
    relative standard errors and largest correlation, and the held-out summaries."""
    summary = error_summary(result.errors)
    ident = identifiability(result)
    first, second, corr = ident.largest or ("", "", 0.0)  # the profile fits four constants
    return FitProvenance(
        measurements="specmodel/data/measurements.csv",
        measurements_sha256=hashlib.sha256(MEASUREMENTS.read_bytes()).hexdigest(), rows=len(rows),
        fitted_on=date.today().isoformat(), method=METHOD,
        median_abs_error=round(summary["median"], ERROR_DIGITS), p90_abs_error=round(summary["p90"], ERROR_DIGITS),
        max_abs_error=round(summary["max"], ERROR_DIGITS), anchor=ANCHOR_SOURCE,
        residuals=tuple(round(float(e), 4) for e in result.errors), fitted=tuple(result.values),
        not_fitted=NOT_FITTED,
        relative_standard_errors=tuple(round(v, 3) for v in ident.relative_se.values()),
        largest_correlation=round(corr, 3), largest_correlation_pair=(first, second),
        held_out={k: (round(v["median"], ERROR_DIGITS), round(v["p90"], ERROR_DIGITS), round(v["max"], ERROR_DIGITS))
                  for k, v in splits.items()},
    )  # fmt: skip


#: Significant digits of the numbers written to engines.toml.
SIGNIFICANT = 6


def section(result: Fit, fit_: FitProvenance, kept: dict[str, Any], domain: ProfileDomain) -> str:
    """The [vllm] table of engines.toml: header, fitted constants, the keys it does not own
    (``kept``), then [vllm.fit], [vllm.fit.held_out] and [vllm.domain], what the rows cover."""
    p = profile(list(result.values.values()), list(result.values))
    lines = ["[vllm]", f'name = "{p.name}"', f'description = "{p.description}"', f'batching = "{p.batching}"']
    lines += [f"{k} = {toml_value(float(v), SIGNIFICANT)}" for k, v in result.values.items()]
    lines += [f"{k} = {toml_value(v, SIGNIFICANT)}" for k, v in FIXED.items() if k not in result.values]
    lines += [f"{k} = {toml_value(v, SIGNIFICANT)}" for k, v in kept.items()]
    lines += ["", "[vllm.fit]"]
    dumped = asdict(fit_)
    held = dumped.pop("held_out")
    for key, value in dumped.items():
        if value is not None and value not in ("", [], {}, ()):  # a user's fit's fields, empty here
            lines.append(f"{key} = {toml_value(value, SIGNIFICANT)}")
    lines += ["", "[vllm.fit.held_out]", "# split = [median, p90, worst] of |predicted / measured - 1|"]
    lines += [f"{k} = {toml_value(list(v), SIGNIFICANT)}" for k, v in held.items()]
    lines += [
        "",
        "[vllm.domain]",
        "# what the rows cover: outside it the profile extrapolates (specmodel.model.domain)",
    ]
    lines += [f"{k} = {toml_value(v)}" for k, v in asdict(domain).items()]
    return "\n".join(lines) + "\n"


def render(text: str, result: Fit, fit_: FitProvenance, domain: ProfileDomain) -> str:
    """engines.toml with its [vllm] table replaced, keeping what precedes it and the [vllm]
    keys this writer does not own; ``domain``: what the fitted rows cover."""
    current = tomllib.loads(text).get("vllm", {})
    kept = {k: v for k, v in current.items() if k not in OWNED and k != "fit" and k not in result.values}
    head = text.split("\n[vllm]\n")[0].rstrip() + "\n\n"
    return head + section(result, fit_, kept, domain)


def readme(text: str, fit_: FitProvenance) -> str:
    """README.md with the block between ``<!-- held-out:start -->`` and ``<!-- held-out:end -->``
    replaced by the fit's held-out table (:func:`sitebuild.fit_records.readme_block`)."""
    block = readme_block(fit_.held_out, fit_.relative_standard_errors, fit_.largest_correlation or 0.0)
    pattern = re.compile(r"(<!-- held-out:start -->)\n.*?(<!-- held-out:end -->)", re.S)
    return pattern.sub(lambda m: f"{m.group(1)}\n{block}\n{m.group(2)}", text)


#: How far a recorded residual (four decimals) may be from a fresh fit's: a last digit the
#: machine rounds the other way.
RESIDUAL_TOLERANCE = 1.5e-4


def same_profile(text: str, new: str) -> bool:
    """Whether engines.toml (``text``) holds the profile a fresh fit writes (``new``): the same
    lines before ``[vllm]``, the same keys and strings, every number within a relative 1e-4
    (:func:`sitebuild.fit_records.same_values`) and every residual within
    :data:`RESIDUAL_TOLERANCE`, the date of the fit aside."""
    if text.split("\n[vllm]\n")[0] != new.split("\n[vllm]\n")[0]:
        return False
    a, b = (tomllib.loads(t)["vllm"] for t in (text, new))
    residuals = [t["fit"].pop("residuals", []) for t in (a, b)]
    for t in (a, b):
        t["fit"].pop("fitted_on", None)
    before, after = residuals
    return same_values(a, b) and same_values(before, after, tolerance=0.0, absolute=RESIDUAL_TOLERANCE)


def recorded_provenance(text: str) -> FitProvenance:
    """The ``[vllm.fit]`` table of engines.toml, as the README's held-out block is written from."""
    return validate(FitProvenance, tomllib.loads(text)["vllm"]["fit"])


def profile_is_current(rows: list, result: Fit, splits: dict[str, dict[str, float]]) -> bool:
    """Whether engines.toml holds the profile that ``result`` (a fresh fit of ``rows``, with its
    held-out ``splits``) writes (:func:`same_profile`), and the README the held-out block of
    the profile it holds."""
    text = ENGINES.read_text(encoding="utf-8")
    written = README.read_text(encoding="utf-8")
    new = render(text, result, provenance(result, rows, splits), public_domain(rows))
    return same_profile(text, new) and readme(written, recorded_provenance(text)) == written


def calibration(engines_text: str) -> str:
    """The record of every public series calibrated from its small batches, under the ``vllm``
    profile of ``engines_text`` (the one just fitted)."""
    settings = Settings().with_engine(EngineProfile(key="vllm", **tomllib.loads(engines_text)["vllm"]))
    results = {f.name: all_series([f], "vllm", settings) for f in CALIBRATED_FILES}
    return calibration_text(results, CALIBRATED_FILES)


def same_text(path: Path, fresh: str) -> bool:
    """Whether the record at ``path`` agrees with ``fresh`` (:func:`same_record`; a TOML record
    parsed as TOML)."""
    if not path.exists():
        return False
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".toml":
        return same_values(tomllib.loads(text), tomllib.loads(fresh))
    return same_record(text, fresh)


def main(argv: list[str] | None = None) -> int:
    """Fit, print the constants, their relative standard errors and the held-out errors, and
    write (or, with ``--check``, compare) the profile."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fit and compare with the file; write nothing")
    args = parser.parse_args(argv)
    rows = load_measurements(MEASUREMENTS)
    result = fit(rows)
    splits = held_out(rows)
    fit_ = provenance(result, rows, splits)
    for name, value, se in zip(fit_.fitted, result.values.values(), fit_.relative_standard_errors, strict=True):
        print(f"{name:<26} {value:.6g}  (relative SE {se:.0%})")
    print(f"largest correlation {fit_.largest_correlation:+.2f} ({' / '.join(fit_.largest_correlation_pair)})")
    for split, (median, p90, worst) in fit_.held_out.items():
        print(f"{split:<24} median {median:.1%}, p90 {p90:.1%}, worst {worst:.1%}")
    text = ENGINES.read_text(encoding="utf-8")
    new = render(text, result, fit_, public_domain(rows))
    records = {
        EAGLE3_TRADEOFF: tradeoff_text(tradeoffs(tuple(rows)), band(tuple(rows)), MEASUREMENTS),
        MEMORY_SENSITIVITY: sensitivity_text(refits(tuple(rows)), MEASUREMENTS),
        SUBSET_FITS: subset_fits_text(small_batch(rows), eagle3_step_by_source(rows), MEASUREMENTS),
        SERVER_CALIBRATION: calibration(new),
        INTERVALS: intervals_text(intervals_record(held_out_residuals(rows), INTERVALS_SOURCE)),
    }
    if args.check:
        same = profile_is_current(rows, result, splits)
        print("engines.toml is " + ("current" if same else "NOT current: run python tools/fit_engine.py"))
        for path, fresh in records.items():
            recorded = same_text(path, fresh)
            print(f"{path.name} is " + ("current" if recorded else "NOT current: run python tools/fit_engine.py"))
            same = same and recorded
        return 0 if same else 1
    ENGINES.write_text(new, encoding="utf-8")
    README.write_text(readme(README.read_text(encoding="utf-8"), fit_), encoding="utf-8")
    for path, fresh in records.items():
        path.write_text(fresh, encoding="utf-8")
    written = ", ".join(str(p.relative_to(ROOT)) for p in (ENGINES, *records))
    print(f"wrote {written} and the held-out table of {README.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
