"""What defines a scenario, once: its fields, their defaults, their validation, and the axis
values the grid and the simulator sweep.

:class:`Scenario` is one scenario as a typed, validated record. :class:`ScenarioGrid` is its
broadcasting form: the same fields as numpy arrays that broadcast together, validated
elementwise, with the deployment's names filled in. :func:`specmodel.evaluate` takes either.

Fields (in the notation of the model page, :mod:`specmodel.notation`): B ``concurrency``
sequences, each with T ``context`` prompt tokens, generating G ``generated_tokens``; gamma
draft tokens per iteration from a ``drafter``; acceptance either as a profile (``acceptance``
``falling`` or ``same``) with its first-position rate ``alpha``, or measured, as the
unconditional ``per_position`` acceptance u_1..u_gamma; on N_g ``tensor_parallel`` cards of
``hardware`` serving ``target`` (the drafter on ``draft_tensor_parallel`` of them, 1 or N_g);
a chain of guesses, or a tree with w ``tree_topk`` candidates per step of which the target
verifies Q_v ``verify_tokens`` positions, drafted in passes of ``tree_draft_positions``
positions per sequence after the first (SGLang's construction by default, vLLM's from its
``speculative_token_tree``; :mod:`specmodel.model.trees`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import numpy as np
from annotated_types import Ge, Gt, Le, Lt

from specmodel.errors import SpecModelError
from specmodel.formatting import shown
from specmodel.model.acceptance import PROFILES, Profile, alpha_for_mean_acceptance_length
from specmodel.model.drafters import check_drafter
from specmodel.model.engines import BATCHINGS, engine_catalog
from specmodel.model.layout import MAX_TREE_TOPK, check_parallelism, check_tree
from specmodel.model.settings import Settings
from specmodel.model.specs import get_architecture, get_hardware
from specmodel.model.trees import check_tokens_per_pass, max_verify_tokens
from specmodel.model.types import FloatArray, IntArray, StrArray
from specmodel.model.validation import (
    MAX_CONCURRENCY,
    MAX_GAMMA,
    MAX_GENERATED_TOKENS,
    MAX_TENSOR_PARALLEL,
    _as_numbers,
    check_choice,
    check_integer,
    check_open_unit,
    check_per_position,
    compact,
    map_names,
)
from specmodel.records import Record, StrictFloat, StrictInt, StrictStr, field_rules

#: Most positions a verify pass scores: SGLang's bound at the widest tree and the most steps.
MAX_VERIFY_TOKENS = int(max_verify_tokens(MAX_TREE_TOPK, MAX_GAMMA))

#: The scenario axes a grid sweeps, in the order of a sweep's columns.
AXES = ("concurrency", "context", "gamma", "drafter", "acceptance", "alpha", "engine", "tensor_parallel")
#: The engines a grid compares: every profile of ``data/engines.toml``, in its order.
ENGINES = tuple(engine_catalog())

#: Values of each axis. ``drafter`` is not listed: it depends on the target (every drafter
#: that can serve it for the grid, the site's drafters for the simulator).
CONCURRENCY_LADDER = tuple(2**i for i in range(11))
GRID_CONTEXTS = tuple(2**i for i in range(8, 16))
GAMMAS = tuple(range(1, 11))
ALPHAS = tuple(round(0.50 + 0.05 * i, 2) for i in range(10))
#: Tensor-parallel degrees the grid compares (an 8-GPU board's divisors; each grid keeps
#: those its card and target allow, :func:`specmodel.model.layout.allowed_tensor_parallel`).
TENSOR_PARALLEL = (1, 2, 4, 8)
#: The default grid (``specmodel sweep``): 11 x 8 x 10 x drafters x 2 x 10 x 2 x 4 scenarios.
GRID_AXIS_VALUES: dict[str, tuple[Any, ...]] = {
    "concurrency": CONCURRENCY_LADDER,
    "context": GRID_CONTEXTS,
    "gamma": GAMMAS,
    "acceptance": PROFILES,
    "alpha": ALPHAS,
    "engine": ENGINES,
    "tensor_parallel": TENSOR_PARALLEL,
}


@dataclass(frozen=True, kw_only=True)
class Scenario(Record):
    """One scenario. ``None`` fields take the settings' values when evaluated:
    ``generated_tokens`` from ``GENERATED_TOKENS``, ``drafter`` (the deployment's draft
    model), ``hardware``, ``target`` and ``tensor_parallel`` (1 unless it says) from the
    deployment; ``batching`` from the engine's
    profile (``ideal``: ``cohort``; a real engine: ``steady``).

    The acceptance is given one of three ways: a profile (``acceptance``) and its ``alpha``;
    the measured unconditional ``per_position`` acceptance u_1..u_m (gamma is m unless
    ``gamma`` asks for fewer positions); or a measured ``mean_acceptance_length`` M, turned
    into the ``same`` profile's alpha that gives M at this gamma.

    Each field's hint states what it allows; :func:`specmodel.evaluate` checks every scenario
    against it (with the catalogues, the drafter and the tree) before computing anything, and
    :func:`specmodel.records.validate` checks a scenario read from data.

    >>> Scenario().concurrency, Scenario(concurrency=64).gamma
    (1, 4)
    """

    concurrency: Annotated[StrictInt, Ge(1), Le(MAX_CONCURRENCY)] = 1
    context: Annotated[StrictInt, Ge(0)] = 2048
    generated_tokens: Annotated[StrictInt, Ge(1), Le(MAX_GENERATED_TOKENS)] | None = None
    gamma: Annotated[StrictInt, Ge(1), Le(MAX_GAMMA)] = 4
    drafter: StrictStr | None = None
    acceptance: Profile = "falling"
    alpha: Annotated[StrictFloat, Gt(0), Lt(1)] = 0.75
    per_position: tuple[StrictFloat, ...] | None = None
    mean_acceptance_length: Annotated[StrictFloat, Gt(1)] | None = None
    engine: StrictStr = "ideal"
    batching: Literal["cohort", "steady"] | None = None
    hardware: StrictStr | None = None
    target: StrictStr | None = None
    tensor_parallel: Annotated[StrictInt, Ge(1), Le(MAX_TENSOR_PARALLEL)] | None = None
    draft_tensor_parallel: Annotated[StrictInt, Ge(1), Le(MAX_TENSOR_PARALLEL)] | None = None
    tree_topk: Annotated[StrictInt, Ge(1), Le(MAX_TREE_TOPK)] = 1
    verify_tokens: Annotated[StrictInt, Ge(2), Le(MAX_VERIFY_TOKENS)] | None = None
    tree_draft_positions: Annotated[StrictInt, Ge(0), Le((MAX_GAMMA - 1) * (MAX_VERIFY_TOKENS - 1))] | None = None

    def resolved(self, settings: Settings) -> Scenario:
        """This scenario with every ``None`` name filled in from ``settings``."""
        dep = settings.deployment
        return dataclasses.replace(
            self,
            generated_tokens=self.generated_tokens or settings.constants.GENERATED_TOKENS,
            drafter=self.drafter or dep.draft,
            hardware=self.hardware or dep.hardware,
            target=self.target or dep.target,
            tensor_parallel=self.tensor_parallel or dep.tensor_parallel or 1,
        )


#: Each field's default, read from the record (the one place defaults are written).
DEFAULTS: dict[str, Any] = {field.name: field.default for field in dataclasses.fields(Scenario)}


def field_bounds(name: str) -> tuple[int, int | None]:
    """The least and greatest value :class:`Scenario` allows for the integer field ``name``
    (its ``ge`` and ``le``; None: no upper bound), so that the grid checks the record's rule.

    >>> field_bounds("concurrency"), field_bounds("context")
    ((1, 65536), (0, None))
    """
    low, high = 0, None
    for rule in field_rules(Scenario, name):
        low = getattr(rule, "ge", low)
        high = getattr(rule, "le", high)
    return int(low), high


def _check_field(name: str, value: object) -> np.ndarray:
    """``value`` checked elementwise as an integer within :class:`Scenario`'s bounds for ``name``."""
    return check_integer(name, value, *field_bounds(name))


def default_scenario(settings: Settings) -> Scenario:
    """The article's scenario for the deployment of ``settings``: its draft model, hardware
    and target, and ``GENERATED_TOKENS``.

    >>> s = default_scenario(Settings())
    >>> s.drafter, s.hardware, s.target, s.generated_tokens
    ('qwen3-0.6b', 'h100-sxm', 'qwen3-8b', 256)
    """
    return Scenario().resolved(settings)


@dataclass(frozen=True)
class ScenarioGrid:
    """Scenarios as arrays that broadcast to one shape (``shape``); the deployment's names and
    ``generated_tokens`` are one value for the whole grid. ``per_position`` holds the
    unconditional acceptance with positions on a trailing axis (zero past each scenario's
    gamma), from the profile or as measured. Build it with :meth:`build`."""

    concurrency: IntArray
    context: IntArray
    gamma: IntArray
    drafter: StrArray
    acceptance: StrArray  #: the profile, or "measured" where per_position was given
    alpha: FloatArray  #: the profile's alpha (from M where a mean acceptance length was given); NaN if measured
    measured_per_position: FloatArray | None  #: u_1..u_gamma as given, positions on the last axis
    generated_tokens: int
    hardware: str
    target: str
    engine: StrArray  #: engine profile names (:mod:`specmodel.model.engines`)
    batching: StrArray  #: ``cohort`` or ``steady``
    tensor_parallel: IntArray  #: N_g, GPUs the target is split over
    draft_tensor_parallel: IntArray  #: GPUs the drafter is split over: 1 or N_g
    tree_topk: IntArray  #: w, candidates per depth (1: a chain)
    verify_tokens: IntArray  #: Q_v, positions the verify pass scores (gamma + 1 for a chain)
    tree_draft_positions: IntArray  #: positions per sequence of the gamma - 1 draft passes after the first
    profile_acceptance: bool  #: acceptance from a profile (a tree reshapes it), not measured

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.concurrency.shape)

    def split_by_batching(self) -> tuple[int, list[ScenarioGrid]] | None:
        """A grid whose batching (cohort or steady) varies along one axis, as one sub-grid per
        index of that axis (each then evaluated without masking), and the axis; None otherwise."""
        small = compact(self.batching)
        varying = [axis for axis, size in enumerate(small.shape) if size > 1]
        if len(varying) != 1:
            return None
        axis = varying[0]
        arrays = [f.name for f in dataclasses.fields(self) if isinstance(getattr(self, f.name), np.ndarray)]

        def part(i: int) -> ScenarioGrid:
            index = (slice(None),) * axis + (slice(i, i + 1),)
            return dataclasses.replace(self, **{name: getattr(self, name)[index] for name in arrays})

        return axis, [part(i) for i in range(self.shape[axis])]

    @classmethod
    def build(cls, settings: Settings, **fields: Any) -> ScenarioGrid:
        """Validate ``fields`` (any of :class:`Scenario`'s, as scalars or arrays; the rest
        take their defaults) elementwise, fill in the deployment from ``settings`` and
        broadcast. Raises :class:`~specmodel.errors.SpecModelError` naming the first bad
        value and what is allowed."""
        unknown = set(fields) - set(DEFAULTS)
        if unknown:
            raise SpecModelError(
                f"unknown scenario field(s) {', '.join(sorted(unknown))}; fields are {', '.join(DEFAULTS)}"
            )
        given = {k: v for k, v in fields.items() if v is not None or k in _DEPLOYMENT}
        value = {**DEFAULTS, **given}
        batch = _check_field("concurrency", value["concurrency"])
        t = _check_field("context", value["context"])
        hardware, target, generated = _deployment(settings, value)
        _check_context(t, generated, target)
        g, p, a, u = _acceptance(value, given)
        d = _drafters(value["drafter"], settings, target)
        e = check_choice("engine", value["engine"], tuple(settings.engines))
        batching = value["batching"]
        if batching is None:
            batching = map_names(e, lambda name: settings.engines[name].batching, object)
        n = check_choice("batching", batching, BATCHINGS)
        tensor_parallel = value["tensor_parallel"]
        if tensor_parallel is None:
            tensor_parallel = settings.deployment.tensor_parallel or 1
        tp, dtp = check_parallelism(tensor_parallel, value["draft_tensor_parallel"], hardware, target, d)
        k, v, later = check_tree(value["tree_topk"], value["verify_tokens"], g, d, value["tree_draft_positions"])
        _check_measured_length(given, u, g, v)
        lead = np.empty(u.shape[:-1]) if u is not None else np.empty(())
        batch, t, g, a, d, p, e, n, tp, dtp, k, v, later, _ = np.broadcast_arrays(
            batch, t, g, a, d, p, e, n, tp, dtp, k, v, later, lead
        )
        if u is not None:
            u = np.broadcast_to(u, batch.shape + u.shape[-1:])
        profile = not ({"per_position", "mean_acceptance_length"} & set(given))
        return cls(batch, t, g, d, p, a, u, generated, hardware, target, e, n, tp, dtp, k, v, later, profile)


def _acceptance(value: dict[str, Any], given: dict[str, Any]) -> tuple[Any, Any, Any, Any]:
    """(gamma, profile, alpha, measured per-position or None) from whichever way the
    acceptance was given (see :class:`Scenario`)."""
    ways = [k for k in ("per_position", "mean_acceptance_length") if k in given]
    if len(ways) > 1 or (ways and ({"alpha", "acceptance"} & set(given))):
        raise SpecModelError(
            "give the acceptance one way: acceptance and alpha, per_position, or mean_acceptance_length"
        )
    if "per_position" in given:
        u = check_per_position(given["per_position"])
        g = u.shape[-1]
        if "gamma" in given:
            g = int(check_integer("gamma", given["gamma"], 1, u.shape[-1]))
            u = u[..., :g]
        return np.int64(g), np.array("measured"), np.array(np.nan), u
    g = _check_field("gamma", value["gamma"])
    if "mean_acceptance_length" in given:
        m = _as_numbers("mean_acceptance_length", given["mean_acceptance_length"])
        bad = (m <= 1) | (m >= g + 1)
        if bad.any():
            top = int(np.broadcast_to(g, bad.shape)[bad].flat[0])
            raise SpecModelError(
                f"mean_acceptance_length {shown(float(np.broadcast_to(m, bad.shape)[bad].flat[0]))} is not "
                f"allowed at gamma {top}; it must lie strictly between 1 and gamma + 1 = {top + 1}"
            )
        return g, np.array("same"), alpha_for_mean_acceptance_length(m, g), None
    a = check_open_unit("alpha", value["alpha"])
    return g, check_choice("acceptance", value["acceptance"], PROFILES), a, None


def _check_measured_length(given: dict[str, Any], u: Any, gamma: Any, verify_tokens: Any) -> None:
    """A measured acceptance (``mean_acceptance_length`` M, or ``per_position``: M = 1 + the sum
    of u_j) is of the tree as deployed: M above the tokens its Q_v positions can yield is refused
    (:func:`specmodel.model.trees.check_tokens_per_pass`)."""
    measured = "mean_acceptance_length"
    if measured in given:
        mean = _as_numbers(measured, given[measured])
    elif u is not None:
        mean, measured = 1.0 + np.sum(u, axis=-1), "per_position, 1 + its sum"
    else:
        return
    check_tokens_per_pass(mean, gamma, verify_tokens, measured, "verify_tokens")


_DEPLOYMENT = ("drafter", "hardware", "target", "generated_tokens")


def _deployment(settings: Settings, value: dict[str, Any]) -> tuple[str, str, int]:
    """The grid's hardware, target and G: as given, else the settings'; names checked."""
    dep = settings.deployment
    hardware = dep.hardware if value["hardware"] is None else value["hardware"]
    target = dep.target if value["target"] is None else value["target"]
    get_hardware(hardware)
    get_architecture(target)
    generated = value["generated_tokens"]
    if generated is None:
        generated = settings.constants.GENERATED_TOKENS
    g = _check_field("generated_tokens", generated)
    if g.ndim:
        raise SpecModelError("generated_tokens must be one value for a whole grid")
    return str(hardware), str(target), int(g)


def _drafters(drafter: Any, settings: Settings, target: str) -> StrArray:
    """Drafter names (default: the deployment's draft model), each checked against ``target``."""
    names = np.asarray(compact(settings.deployment.draft if drafter is None else drafter), dtype=object)
    for name in set(names.flat):
        check_drafter(name, target)
    return names.astype(str)


def _check_context(context: IntArray, generated_tokens: int, target: str) -> None:
    """Refuse a prompt plus generation longer than the target's ``max_position_embeddings``."""
    limit = get_architecture(target).max_position_embeddings
    longest = int(context.max(initial=0)) + generated_tokens
    if generated_tokens > limit:  # no context, however short, would fit: say so, not "at most -N"
        raise SpecModelError(
            f"{generated_tokens:,} generated tokens alone are more than {target}'s max_position_embeddings "
            f"({limit:,}); generated_tokens must be at most {limit:,} for this target, less the context"
        )
    if longest > limit:
        raise SpecModelError(
            f"context {int(context.max())} plus {generated_tokens} generated tokens is {longest:,} tokens, longer than "
            f"{target}'s max_position_embeddings ({limit:,}); context must be at most {limit - generated_tokens:,}"
        )
