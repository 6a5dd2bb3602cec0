"""How far a predicted speedup may be from what a server measures: an interval around each
prediction, at a two-sided ``level`` (80 % by default).

Every interval is multiplicative, ``[s exp(lo), s exp(hi)]``, because the profiles are fitted
and judged on ``r = log(predicted / measured)``: a measured speedup is ``s exp(-r)``.

* **The public ``vllm`` profile** (:func:`public_log_bounds`): a split-conformal interval from
  the residuals of the public rows *held out of the fit*, as the validation page measures them:
  every row predicted by the profile fitted without its source (leave one source out), and
  every row at batch 64 and 128 predicted by the profile fitted on batch 1 and 16 alone.
  ``lo = -q``, ``hi = q`` with ``q`` the :func:`conformal_level` quantile of the magnitudes
  ``|r|`` (linearly interpolated): symmetric, since the two public sources err in opposite
  directions and only the size of one's error carries over to the other. The residuals are grouped by drafter kind
  (:class:`specmodel.model.drafters.DrafterKind`) and batch range (:data:`BATCH_RANGES`,
  1-8, 9-32 and 33 up: the memory-bound, the crossing and the compute-bound batches), and
  a group with fewer than :data:`MIN_GROUP` residuals is pooled (:func:`pooled`): first with
  every kind in its batch range (the batch sets how a pass is bound, the larger part of the
  error), then with every residual. On the public rows this pools batch 9-32 across kinds
  (4 rows of each kind at batch 16), the n-gram lookup at batch 1-8 (4 rows) and every
  range of a draft model (no public row runs one). ``make fit`` computes the groups and
  writes them to ``specmodel/data/intervals.toml``; this module reads them and never fits.
  Assumes a new deployment errs as a held-out public row of its group did (exchangeability):
  the public rows are one target on one card, so for another the interval is a lower bound
  on the uncertainty, and the output says the profile is used outside its data.
* **A profile fitted to the user's own runs** (``specmodel fit-engine``;
  :func:`fitted_log_halfwidth`): a normal interval on ``log s``, ``+-z sqrt(v_c + v_r)`` with
  ``z`` the standard normal quantile at ``(1 + level) / 2``; ``v_c = sum_c (d log s / d log
  c)^2 rse_c^2`` propagates the fitted constants' relative standard errors (the profile's
  ``fit.relative_standard_errors``, se / value = the se of log value) by finite differences
  of :data:`STEP` in log value, the constants taken as uncorrelated (the file records only the
  largest correlation); ``v_r = max(SIGMA^2, mean r_i^2)`` the scatter of the fit's own
  residuals ``r_i = log(1 + e_i)``, never below the noise the fit assumed of one run.
* **The ``ideal`` engine, a catalogue engine without a fit, or a hand-written profile**: the
  roofline has no measured error against a server (it reproduces the article's own figures
  within 3 %, :mod:`specmodel.calibration`, which says nothing of a real engine), so these
  get the public profile's interval, which is what the fitted profile, closer to a server
  than the roofline, errs by. A floor, again.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources
from typing import Any

import numpy as np
import numpy.typing as npt

from specmodel.errors import SpecModelError
from specmodel.model.drafters import DrafterKind, drafter_kind
from specmodel.model.engines import EngineProfile
from specmodel.model.evaluate import evaluate
from specmodel.model.settings import Settings
from specmodel.model.types import FloatArray

#: The two-sided level of an interval unless another is asked for.
DEFAULT_LEVEL = 0.8
#: The levels whose coverage ``make fit`` records (the validation page's table).
LEVELS = (0.5, 0.8)
#: Batch ranges (smallest, largest sequences; None: no largest) the residuals are grouped by.
BATCH_RANGES: tuple[tuple[int, int | None], ...] = ((1, 8), (9, 32), (33, None))
#: Fewest residuals a group's quantiles are taken from before it is pooled.
MIN_GROUP = 8
#: The record ``make fit`` writes (package data).
INTERVALS_FILE = "intervals.toml"
#: Finite-difference step in log value of a fitted constant (a 1 % change).
STEP = 0.01


@dataclass(frozen=True)
class Residual:
    """One held-out ``log(predicted / measured)`` of a public row: its drafter kind, batch and
    fold (the rows held out together; an interval for it may use no residual of its fold)."""

    kind: str
    batch: int
    fold: str
    value: float


def batch_range(concurrency: int) -> str:
    """The label of the :data:`BATCH_RANGES` entry that holds ``concurrency``.

    >>> batch_range(1), batch_range(16), batch_range(128)
    ('1-8', '9-32', '33+')
    """
    for low, high in BATCH_RANGES:
        if high is None or concurrency <= high:
            return f"{low}-{high}" if high is not None else f"{low}+"
    raise AssertionError("the last batch range is open")  # pragma: no cover


def group_name(kind: str, concurrency: int) -> str:
    """A group's key: ``"head 1-8"``."""
    return f"{kind} {batch_range(concurrency)}"


def pooled(residuals: Sequence[Residual], kind: str, concurrency: int) -> tuple[FloatArray, str]:
    """The residuals an interval of ``kind`` at ``concurrency`` is taken from, and where they
    were pooled: the group's own when it holds :data:`MIN_GROUP` or more, else every kind's in
    the batch range, else all."""
    span = batch_range(concurrency)
    own = [r.value for r in residuals if r.kind == kind and batch_range(r.batch) == span]
    if len(own) >= MIN_GROUP:
        return np.array(own), ""
    same_range = [r.value for r in residuals if batch_range(r.batch) == span]
    if len(same_range) >= MIN_GROUP:
        return np.array(same_range), f"every drafter kind at batch {span}"
    return np.array([r.value for r in residuals]), "every residual"


def log_bounds(residuals: npt.ArrayLike, level: float) -> tuple[float, float]:
    """``(lo, hi)`` of ``log(measured / predicted)``: ``(-q, q)`` with ``q = Q_level(|r|)``, the
    ``level`` quantile of the residuals' magnitudes ``|log(predicted / measured)|``, linearly
    interpolated between the sorted magnitudes (numpy's default ``linear`` method, computed
    with ``np.interp``: ``np.quantile`` imports ``numpy.ma``, a twentieth of a command's start).

    Symmetric on purpose: the public sources err in opposite directions (one measures faster
    than the model, the other slower), so the signed quantiles of one fold say nothing of the
    sign of another's error; their magnitudes carry over (the coverage the validation page
    shows is computed fold by fold, :func:`coverage`).

    >>> log_bounds([-0.1, 0.0, 0.1, 0.2], 0.5)  # the 0.75 quantile of 0, 0.1, 0.1, 0.2
    (-0.125, 0.125)
    """
    check_level(level)
    magnitudes = np.abs(np.asarray(residuals, dtype=float))
    position = conformal_level(level, magnitudes.size) * (magnitudes.size - 1)
    q = float(np.interp(position, np.arange(magnitudes.size), np.sort(magnitudes)))
    return -q, q


def conformal_level(level: float, n: int) -> float:
    """The quantile of ``n`` held-out residual magnitudes that covers a new row with
    probability at least ``level`` when rows are exchangeable: ``min(1, ceil((n + 1) level) / n)``
    (split conformal prediction; Vovk, Gammerman and Shafer 2005; Lei et al. 2018,
    arXiv:1604.04173, Theorem 2.1).

    >>> conformal_level(0.8, 84), conformal_level(0.8, 3)
    (0.8095238095238095, 1.0)
    """
    return min(1.0, float(np.ceil((n + 1) * level)) / n)


def check_level(level: float) -> None:
    """An interval's level is a share strictly between 0 and 1."""
    if not 0.0 < float(level) < 1.0:
        raise SpecModelError(f"an interval's level must lie strictly between 0 and 1; got {level}")


def coverage(residuals: Sequence[Residual], level: float) -> float:
    """The share of held-out residuals inside the interval made of the *other* folds'
    residuals (:func:`pooled`, :func:`log_bounds`): out of sample, never a row's own residual
    nor one of the rows held out with it."""
    return float(np.mean([is_inside(r, residuals, level) for r in residuals]))


def is_inside(r: Residual, residuals: Sequence[Residual], level: float) -> bool:
    """Whether ``r`` lies in the interval made of the residuals of ``residuals`` in other folds."""
    lo, hi = log_bounds(pooled([o for o in residuals if o.fold != r.fold], r.kind, r.batch)[0], level)
    return lo <= -r.value <= hi


def intervals_record(residuals: Sequence[Residual], source: str) -> dict[str, Any]:
    """What ``make fit`` writes: each group's pooled residuals (sorted), where it was pooled,
    and the out-of-sample coverage of :data:`LEVELS`."""
    groups = {}
    for kind in DrafterKind:
        for low, _ in BATCH_RANGES:
            values, where = pooled(residuals, str(kind), low)
            groups[group_name(str(kind), low)] = {
                "pooled": where,
                "residuals": sorted(round(float(v), 6) for v in values),
            }
    shares = [round(coverage(residuals, level), 6) for level in LEVELS]
    return {"source": source, "residuals": len(residuals), "min_group": MIN_GROUP, "groups": groups,
            "coverage": {"levels": list(LEVELS), "inside": shares}}  # fmt: skip


def intervals_text(record: dict[str, Any]) -> str:
    """The TOML text of :data:`INTERVALS_FILE` for :func:`intervals_record`'s ``record``."""
    from specmodel.model.profile_file import toml_value

    head = [
        "# log(predicted / measured) of the public rows held out of the vllm profile's fit, by drafter kind and",
        "# batch range (specmodel.uncertainty); written by make fit (tools/fit_engine.py), read by every interval.",
        "[vllm]",
        *(f"{k} = {toml_value(record[k])}" for k in ("source", "residuals", "min_group")),
        "", "[vllm.coverage]", "# share of held-out residuals inside the interval made of the other folds' residuals",
        *(f"{k} = {toml_value(v)}" for k, v in record["coverage"].items()),
    ]  # fmt: skip
    for name, group in record["groups"].items():
        head += ["", f'[vllm.groups."{name}"]', *(f"{k} = {toml_value(v)}" for k, v in group.items())]
    return "\n".join(head) + "\n"


@cache
def public_record() -> dict[str, Any]:
    """The record of :data:`INTERVALS_FILE` (written by ``make fit``)."""
    text = resources.files("specmodel.data").joinpath(INTERVALS_FILE).read_text(encoding="utf-8")
    return tomllib.loads(text)["vllm"]


def public_log_bounds(drafter: str, concurrency: npt.ArrayLike, level: float) -> tuple[FloatArray, FloatArray]:
    """``(lo, hi)`` of the public profile's interval for ``drafter`` at each ``concurrency``."""
    kind = str(drafter_kind(drafter))
    b = np.asarray(concurrency)
    groups = public_record()["groups"]
    pairs = [log_bounds(groups[group_name(kind, int(c))]["residuals"], level) for c in b.ravel()]
    lo, hi = (np.array([p[i] for p in pairs]).reshape(b.shape) for i in (0, 1))
    return lo, hi


def is_users_fit(profile: EngineProfile) -> bool:
    """Whether ``profile`` was fitted by ``specmodel fit-engine`` (its fit names input files) with
    constants fitted and their standard errors."""
    fit = profile.fit
    return fit is not None and bool(fit.inputs) and len(fit.fitted) == len(fit.relative_standard_errors) > 0


def fitted_log_halfwidth(
    profile: EngineProfile, predict: Callable[[Settings], FloatArray], settings: Settings, level: float
) -> FloatArray:
    """``z sqrt(v_c + v_r)`` of a user's fit (module docstring), for each speedup ``predict``
    returns under ``settings`` with the engine ``profile``."""
    from statistics import NormalDist  # a user's fit only: not on every command's start

    from specmodel.engine_fit import SIGMA  # the fit's own noise, where the fit defines it

    fit = profile.fit
    assert fit is not None
    base = np.log(np.asarray(predict(settings.with_engine(profile)), dtype=float))
    var_c = np.zeros_like(base)
    for name, rse in zip(fit.fitted, fit.relative_standard_errors, strict=True):
        step: dict[str, Any] = {name: float(getattr(profile, name)) * math.exp(STEP)}
        moved = replace(profile, **step)
        slope = (np.log(np.asarray(predict(settings.with_engine(moved)), dtype=float)) - base) / STEP
        var_c = var_c + (slope * rse) ** 2
    scatter = float(np.mean(np.square(np.log1p(np.asarray(fit.residuals))))) if fit.residuals else 0.0
    z = NormalDist().inv_cdf((1 + level) / 2)
    return np.asarray(z * np.sqrt(var_c + max(SIGMA**2, scatter)), dtype=float)


def speedup_interval(
    settings: Settings,
    engine: str,
    drafter: str,
    concurrency: npt.ArrayLike,
    speedup: npt.ArrayLike,
    level: float = DEFAULT_LEVEL,
    *,
    predict: Callable[[Settings], FloatArray] | None = None,
) -> tuple[FloatArray, FloatArray]:
    """``(low, high)`` around each predicted ``speedup`` of ``drafter`` at ``concurrency`` under
    ``engine`` (arrays broadcast), at the two-sided ``level``: the module docstring's rule for
    the engine's profile. ``predict``: the speedups under given settings, for a user's fit's
    finite differences (default: the settings' deployment at this drafter and concurrency,
    context and acceptance at their defaults).

    >>> low, high = speedup_interval(Settings(), "vllm", "eagle", 1, 1.5)
    >>> bool(low < 1.5 < high)
    True
    """
    check_level(level)
    s = np.asarray(speedup, dtype=float)
    profile = settings.engines.get(engine)
    if profile is not None and is_users_fit(profile):
        if predict is None:

            def predict(st: Settings) -> FloatArray:  # noqa: E306 - the default scenario
                return np.asarray(
                    evaluate(concurrency=concurrency, drafter=drafter, engine=engine, settings=st).speedup
                )

        half = fitted_log_halfwidth(profile, predict, settings, level)
        return s * np.exp(-half), s * np.exp(half)
    lo, hi = public_log_bounds(drafter, concurrency, level)
    return s * np.exp(lo), s * np.exp(hi)
