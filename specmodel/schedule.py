"""The best gamma at every load, and that choice as vLLM's schedule of draft tokens per batch size.

vLLM schedules gamma by the size of the running batch when ``--speculative-config`` holds
``num_speculative_tokens_per_batch_size`` ("Dynamic SD", vLLM pull request #32374,
https://github.com/vllm-project/vllm/pull/32374): the field vLLM's configuration declares
(``vllm/config/speculative.py``: ``list[tuple[int, int, int]]``) and documents
(``docs/features/speculative_decoding/dynamic_speculative_decoding.md``) is a list of
``[start, end, gamma]`` entries, inclusive (:func:`vllm_speculative_config`, checked by
:func:`check_vllm_schedule` against ``validate_and_normalize_dynamic_sd_schedule`` of
``vllm/v1/spec_decode/dynamic/utils.py``; an early version of the pull request keyed it by
``"low-high"`` strings instead, which vLLM does not accept). 0 turns speculation off, a batch
size in a gap between two ranges (or past the last) takes the earlier range's value, and every
value is clamped to ``num_speculative_tokens``, which sizes the buffers at start-up and so must
be at least the largest value.

The rule (:func:`choose_gamma`), for one scenario at each batch size B, every other field fixed:

1. the speedup (:attr:`specmodel.Evaluation.speedup`, plain decoding's time over speculation's
   for the same work) at every candidate gamma (:data:`specmodel.model.scenario.GAMMAS`,
   1 to 10), from :func:`specmodel.evaluate`;
2. the best gamma is the candidate with the largest speedup (the first listed of equal ones);
3. it is scheduled where speculation fits in memory at B and the best speedup is a gain by the
   model's own verdict (:func:`specmodel.formatting.verdict`: above 1 + ``EVEN_MARGIN``, 3%,
   as printed with two decimals); anywhere else the schedule holds 0, speculation off.

The batch sizes are every B from 1 to the most sequences plain decoding holds in memory (a
larger load cannot run at all), or a list given in ascending order. Consecutive batch sizes
with the same value merge into one inclusive range (:func:`gamma_ranges`); for a list, a range
runs from the first to the last listed size of its run, and the sizes between two ranges, not
evaluated, take the earlier range's value, as vLLM reads a gap.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from specmodel.errors import SpecModelError
from specmodel.formatting import verdict
from specmodel.model.evaluate import evaluate
from specmodel.model.scenario import GAMMAS
from specmodel.model.settings import Settings
from specmodel.model.types import BoolArray, FloatArray, IntArray
from specmodel.model.validation import MAX_CONCURRENCY

#: The value of a batch size where speculation is off (vLLM schedules no draft there).
OFF = 0
#: The keys of vLLM's ``--speculative-config`` that the schedule sets.
MAX_KEY, SCHEDULE_KEY = "num_speculative_tokens", "num_speculative_tokens_per_batch_size"
#: Fields the schedule chooses itself, or that tie the acceptance to one gamma.
_NOT_FIELDS = ("concurrency", "gamma", "per_position", "mean_acceptance_length")
#: Scenarios evaluated at once by :func:`best_gamma_grid` (bounds the memory of a large grid).
_CHUNK_SCENARIOS = 100_000


@dataclass(frozen=True)
class BestGamma:
    """The gamma chosen at each batch size (first axis) of a grid of scenarios (the other axes)."""

    batch_sizes: IntArray  #: B, ascending
    gamma: IntArray  #: the gamma to run at B: the best candidate, or OFF
    best_gamma: IntArray  #: the candidate with the largest speedup, even where it is not run
    speedup: FloatArray  #: the speedup at ``best_gamma``
    fits: BoolArray  #: speculation fits in memory at B


@dataclass(frozen=True)
class GammaRange:
    """Batch sizes ``low`` to ``high`` (inclusive) run ``gamma`` draft tokens (OFF: none)."""

    low: int
    high: int
    gamma: int

    @property
    def key(self) -> str:
        """The range as vLLM's schedule writes it: ``"1-16"``."""
        return f"{self.low}-{self.high}"


@dataclass(frozen=True)
class GammaSchedule(BestGamma):
    """:class:`BestGamma` of one scenario (arrays over the batch sizes alone) and its ranges."""

    ranges: tuple[GammaRange, ...]


def choose_gamma(
    speedup: npt.ArrayLike, fits: npt.ArrayLike, gammas: npt.ArrayLike = GAMMAS
) -> tuple[IntArray, IntArray, FloatArray]:
    """``(gamma, best_gamma, best_speedup)``: the rule of this module on speedups that hold the
    candidate ``gammas`` on their last axis, ``fits`` (whether speculation fits in memory)
    broadcasting against the other axes. ``best_gamma`` has the largest speedup (the first of
    equal ones); ``gamma`` is it where it fits and the verdict on its speedup
    (:func:`specmodel.formatting.verdict`, two decimals) is ``faster``, else :data:`OFF`.

    >>> choose_gamma([[1.5, 1.9, 1.7], [1.02, 1.01, 0.9], [1.5, 1.2, 1.1]], [True, True, False], [1, 2, 3])[0].tolist()
    [2, 0, 0]
    """
    s, g = np.asarray(speedup, dtype=float), np.asarray(gammas, dtype=np.int64)
    if s.ndim < 1 or s.shape[-1] != g.size:
        raise ValueError(f"speedups of shape {s.shape} do not hold {g.size} candidate gammas on their last axis")
    index = np.argmax(s, axis=-1)
    best = np.take_along_axis(s, index[..., None], axis=-1)[..., 0]
    gains = np.reshape([verdict(float(x)) == "faster" for x in best.ravel()], best.shape).astype(bool)
    run = gains & np.broadcast_to(np.asarray(fits, dtype=bool), best.shape)
    return np.where(run, g[index], OFF), g[index], best


def most_sequences(settings: Settings | None = None, **fields: Any) -> int:
    """The most sequences plain decoding holds in memory in the scenario of ``fields`` (any
    field but the concurrency; :attr:`specmodel.Evaluation.max_concurrency_without_draft`),
    at most the largest concurrency a scenario may have (MAX_CONCURRENCY); 0 if not one fits."""
    ev = evaluate(settings=settings, **{**fields, "concurrency": 1})
    return int(min(float(np.max(ev.max_concurrency_without_draft)), MAX_CONCURRENCY))


def _check_fields(fields: dict[str, Any]) -> None:
    """Refuse the fields a schedule sweeps itself, and an acceptance tied to one gamma."""
    given = sorted(set(fields) & set(_NOT_FIELDS))
    if given:
        raise SpecModelError(f"the schedule chooses gamma at each batch size itself; leave out {', '.join(given)}")


def best_gamma_grid(
    batch_sizes: npt.ArrayLike, *, gammas: npt.ArrayLike = GAMMAS, settings: Settings | None = None, **fields: Any
) -> BestGamma:
    """:func:`choose_gamma` at each of ``batch_sizes`` for the scenarios of ``fields`` (scalars or
    arrays that broadcast together, to shape S; not the concurrency or gamma, nor an acceptance
    tied to one gamma): arrays of shape ``(len(batch_sizes), *S)``. Every candidate is evaluated
    (:func:`specmodel.evaluate`), a few batch sizes at a time so that a large grid's memory stays
    bounded; the results do not depend on how the grid is cut."""
    _check_fields(fields)
    batch = np.asarray(batch_sizes, dtype=np.int64).reshape(-1)
    g = np.asarray(gammas, dtype=np.int64).reshape(-1)
    if batch.size == 0 or g.size == 0 or np.any(np.diff(batch) <= 0):
        raise SpecModelError("give at least one gamma and batch sizes in ascending order, each once")
    arrays = {k: np.asarray(v) for k, v in fields.items() if np.ndim(v) > 0}
    shape = np.broadcast_shapes(*(v.shape for v in arrays.values())) if arrays else ()
    axes = {k: arrays[k][None, ..., None] if k in arrays else v for k, v in fields.items()}
    tail = (1,) * len(shape)
    step = max(1, _CHUNK_SCENARIOS // max(1, int(np.prod(shape)) * g.size))
    parts = []
    for lo in range(0, batch.size, step):
        b = batch[lo : lo + step]
        ev = evaluate(settings=settings, concurrency=b.reshape(-1, *tail, 1), gamma=g.reshape(1, *tail, -1), **axes)
        fits = np.all(ev.fits, axis=-1)  # memory does not depend on gamma (specmodel.model.memory): one value
        parts.append((*choose_gamma(ev.speedup, fits, g), fits))
    gamma, best, speedup, fits = (np.concatenate([p[i] for p in parts]) for i in range(4))
    full = (batch.size, *shape)
    return BestGamma(batch, *(np.broadcast_to(x, full).copy() for x in (gamma, best, speedup, fits)))


def gamma_ranges(batch_sizes: npt.ArrayLike, gamma: npt.ArrayLike) -> tuple[GammaRange, ...]:
    """Consecutive batch sizes with the same ``gamma`` merged into inclusive ranges, from the
    first to the last size of each run (``batch_sizes`` ascending).

    >>> [r.key + f": {r.gamma}" for r in gamma_ranges([1, 2, 3, 4, 8], [3, 3, 2, 2, 0])]
    ['1-2: 3', '3-4: 2', '8-8: 0']
    """
    b, g = np.asarray(batch_sizes, dtype=np.int64).ravel(), np.asarray(gamma, dtype=np.int64).ravel()
    if b.size != g.size:
        raise ValueError(f"{b.size} batch sizes against {g.size} values of gamma")
    starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
    ends = np.r_[starts[1:], b.size] - 1
    return tuple(GammaRange(int(b[s]), int(b[e]), int(g[s])) for s, e in zip(starts, ends))


def gamma_schedule(
    *,
    gammas: npt.ArrayLike = GAMMAS,
    batch_sizes: npt.ArrayLike | None = None,
    settings: Settings | None = None,
    **fields: Any,
) -> GammaSchedule:
    """The gamma to run at every load of one scenario, and its ranges for vLLM.

    ``fields``: the scenario as :func:`specmodel.evaluate` takes it, as single values (target,
    drafter, hardware, tensor_parallel, context, generated_tokens, acceptance and alpha,
    engine, ...), without the concurrency and gamma, which the schedule sweeps. ``gammas``:
    the candidates (1 to 10 by default). ``batch_sizes``: every batch size from 1 to the most
    plain decoding holds in memory (:func:`most_sequences`) unless a list is given; none when
    not even one sequence fits. The rule is the module's (:func:`choose_gamma`).

    >>> s = gamma_schedule()
    >>> [(r.key, r.gamma) for r in s.ranges][:2]
    [('1-4', 3), ('5-33', 2)]
    """
    _check_fields(fields)
    arrays = sorted(k for k, v in fields.items() if np.ndim(v) > 0)
    if arrays:
        raise SpecModelError(f"a schedule is of one scenario: give {', '.join(arrays)} as one value each")
    if batch_sizes is None:
        batch_sizes = np.arange(1, most_sequences(settings, **fields) + 1)
    batch = np.asarray(batch_sizes, dtype=np.int64).reshape(-1)
    if batch.size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return GammaSchedule(empty, empty, empty, np.zeros(0), np.zeros(0, dtype=bool), ())
    best = best_gamma_grid(batch, gammas=gammas, settings=settings, **fields)
    return GammaSchedule(
        best.batch_sizes, best.gamma, best.best_gamma, best.speedup, best.fits, gamma_ranges(batch, best.gamma)
    )


def vllm_schedule_json(ranges: tuple[GammaRange, ...]) -> str:
    """:func:`vllm_speculative_config` as one line of JSON, to merge into ``--speculative-config``.

    >>> vllm_schedule_json((GammaRange(1, 4, 3), GammaRange(5, 157, 0)))
    '{"num_speculative_tokens": 3, "num_speculative_tokens_per_batch_size": [[1, 4, 3], [5, 157, 0]]}'
    >>> vllm_schedule_json(())
    '{}'
    """
    return json.dumps(vllm_speculative_config(ranges))


def schedule_from_speedups(batch_sizes: npt.ArrayLike, speedup: npt.ArrayLike, fits: npt.ArrayLike,
                           gammas: npt.ArrayLike) -> GammaSchedule:  # fmt: skip
    """The module's rule (:func:`choose_gamma`) on speedups already predicted, ``speedup[i, k]``
    at ``batch_sizes[i]`` (ascending, each once) and ``gammas[k]``, ``fits[i]`` whether
    speculation fits at ``batch_sizes[i]``; with its ranges (:func:`gamma_ranges`). For
    acceptance measured position by position, where the candidates are the measured positions.

    >>> s = schedule_from_speedups([1, 2, 3], [[1.5, 1.6], [1.3, 1.2], [1.0, 0.9]], True, [1, 2])
    >>> [(r.key, r.gamma) for r in s.ranges]
    [('1-1', 2), ('2-2', 1), ('3-3', 0)]
    """
    b = np.asarray(batch_sizes, dtype=np.int64).reshape(-1)
    if b.size == 0 or np.any(np.diff(b) <= 0):
        raise SpecModelError("give batch sizes in ascending order, each once")
    gamma, best, top = choose_gamma(speedup, fits, gammas)
    held = np.broadcast_to(np.asarray(fits, dtype=bool), b.shape).copy()
    return GammaSchedule(b, gamma, best, top, held, gamma_ranges(b, gamma))


def vllm_schedule_entries(ranges: tuple[GammaRange, ...]) -> list[list[int]]:
    """``ranges`` as vLLM's configuration declares ``num_speculative_tokens_per_batch_size``: a
    list of ``[start, end, gamma]``, inclusive, ascending.

    >>> vllm_schedule_entries((GammaRange(1, 4, 3), GammaRange(5, 157, 0)))
    [[1, 4, 3], [5, 157, 0]]
    """
    return [[r.low, r.high, r.gamma] for r in ranges]


def vllm_speculative_config(ranges: tuple[GammaRange, ...]) -> dict[str, Any]:
    """The part of vLLM's ``--speculative-config`` that schedules ``ranges`` in the list form
    vLLM declares: ``num_speculative_tokens`` (the largest value, at least 1: vLLM requires it
    above 0) and ``num_speculative_tokens_per_batch_size`` (:func:`vllm_schedule_entries`);
    ``{}`` for no ranges. Checked by :func:`check_vllm_schedule`.

    >>> vllm_speculative_config((GammaRange(1, 4, 3), GammaRange(5, 157, 0)))
    {'num_speculative_tokens': 3, 'num_speculative_tokens_per_batch_size': [[1, 4, 3], [5, 157, 0]]}
    """
    if not ranges:
        return {}
    config = {MAX_KEY: max(1, *(r.gamma for r in ranges)), SCHEDULE_KEY: vllm_schedule_entries(ranges)}
    check_vllm_schedule(config)
    return config


def _whole(value: Any) -> bool:
    """Whether ``value`` is a whole number as JSON gives one (not a boolean)."""
    return isinstance(value, int) and not isinstance(value, bool)


def _check_entry(entry: Any, most: int) -> tuple[int, int]:
    """One ``[start, end, gamma]`` entry by vLLM's rules; its range."""
    if not isinstance(entry, list | tuple) or len(entry) != 3 or not all(_whole(x) for x in entry):
        raise SpecModelError(f"a schedule entry must be [start, end, gamma], three whole numbers; got {entry!r}")
    low, high, gamma = entry
    if low <= 0 or high < low:
        raise SpecModelError(f"the batch sizes {low}-{high} are not a range of positive sizes, start <= end")
    if not 0 <= gamma <= most:
        raise SpecModelError(f"gamma {gamma} at batch sizes {low}-{high} is outside 0 to num_speculative_tokens {most}")
    return low, high


def check_vllm_schedule(config: dict[str, Any]) -> None:
    """Refuse a speculative configuration whose schedule vLLM would refuse or clamp, by the
    rules of ``validate_and_normalize_dynamic_sd_schedule`` (``vllm/v1/spec_decode/dynamic/
    utils.py``) and of its documentation: ``num_speculative_tokens`` a whole number above 0;
    a non-empty list of ``[start, end, gamma]`` entries of whole numbers; each range positive
    with start <= end; gamma from 0 to ``num_speculative_tokens`` (vLLM clamps a larger one);
    the ranges ascending and non-overlapping, the first starting at 1 (so every batch size has
    a value). The one-line reason is the first rule broken.

    >>> check_vllm_schedule({"num_speculative_tokens": 2, "num_speculative_tokens_per_batch_size": [[2, 8, 1]]})
    Traceback (most recent call last):
    ...
    specmodel.errors.SpecModelError: the first range must start at batch size 1; it starts at 2
    """
    most, entries = config.get(MAX_KEY), config.get(SCHEDULE_KEY)
    if not isinstance(most, int) or isinstance(most, bool) or most <= 0:
        raise SpecModelError(f"num_speculative_tokens must be a whole number above 0; got {most!r}")
    if not isinstance(entries, list) or not entries:
        raise SpecModelError("num_speculative_tokens_per_batch_size must be a non-empty list of [start, end, gamma]")
    end = 0
    for entry in entries:
        low, high = _check_entry(entry, most)
        if end == 0 and low != 1:
            raise SpecModelError(f"the first range must start at batch size 1; it starts at {low}")
        if low <= end:
            raise SpecModelError(f"the range {low}-{high} overlaps or precedes the one ending at {end}")
        end = high
