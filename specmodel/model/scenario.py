"""What defines a scenario, once: its fields, their defaults, their validation, and the axis
values the grid and the simulator sweep.

:class:`Scenario` is one scenario as a typed, validated record. :class:`ScenarioGrid` is its
broadcasting form: the same fields as numpy arrays that broadcast together, validated
elementwise, with the deployment's names filled in. :func:`specmodel.evaluate` takes either.

Fields (notation of the model page): B ``concurrency`` sequences, each with T ``context``
prompt tokens, generating G ``generated_tokens``; gamma draft tokens per iteration from a
``drafter``; acceptance either as a profile (``acceptance`` ``falling`` or ``same``) with
its first-position rate ``alpha``, or measured, as the unconditional ``per_position``
acceptance u_1..u_gamma; on one card of ``hardware`` serving ``target``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from specmodel.errors import SpecModelError
from specmodel.model.drafters import check_drafter
from specmodel.model.settings import Settings
from specmodel.model.specs import get_architecture, get_hardware
from specmodel.model.types import FloatArray, IntArray, StrArray
from specmodel.model.validation import (
    MAX_CONCURRENCY,
    MAX_GAMMA,
    check_choice,
    check_integer,
    check_open_unit,
    check_per_position,
)

#: Acceptance profiles, in the order the article presents them.
PROFILES = ("falling", "same")

#: The scenario axes a grid sweeps, in the order of a sweep's columns.
AXES = ("concurrency", "context", "gamma", "drafter", "acceptance", "alpha")

#: Values of each axis. ``drafter`` is not listed: it depends on the target (every drafter
#: that can serve it for the grid, the site's drafters for the simulator).
CONCURRENCY_LADDER = tuple(2**i for i in range(11))
GRID_CONTEXTS = tuple(2**i for i in range(8, 16))
GAMMAS = tuple(range(1, 11))
ALPHAS = tuple(round(0.50 + 0.05 * i, 2) for i in range(10))
#: The default grid (``specmodel sweep``): 11 x 8 x 10 x drafters x 2 x 10 scenarios.
GRID_AXIS_VALUES: dict[str, tuple[Any, ...]] = {
    "concurrency": CONCURRENCY_LADDER,
    "context": GRID_CONTEXTS,
    "gamma": GAMMAS,
    "acceptance": PROFILES,
    "alpha": ALPHAS,
}
#: The simulator's controls: as the grid, over fewer contexts (the data stays under 1 MB).
SIMULATOR_AXIS_VALUES: dict[str, tuple[Any, ...]] = {
    **GRID_AXIS_VALUES,
    "context": (512, 1024, 2048, 4096, 8192, 16384),
}


class Scenario(BaseModel):
    """One scenario, validated. ``None`` fields take the settings' values when evaluated:
    ``generated_tokens`` from ``GENERATED_TOKENS``, ``drafter`` (the deployment's draft
    model), ``hardware`` and ``target`` from the deployment. With ``per_position`` given,
    gamma is its length and ``acceptance`` and ``alpha`` are not used.

    >>> Scenario().concurrency, Scenario(concurrency=64).gamma
    (1, 4)
    """

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, allow_inf_nan=False)
    concurrency: int = Field(1, ge=1, le=MAX_CONCURRENCY)
    context: int = Field(2048, ge=0)
    generated_tokens: int | None = Field(None, ge=1, le=65536)
    gamma: int = Field(4, ge=1, le=MAX_GAMMA)
    drafter: str | None = None
    acceptance: Literal["falling", "same"] = "falling"
    alpha: float = Field(0.75, gt=0, lt=1)
    per_position: tuple[float, ...] | None = None
    hardware: str | None = None
    target: str | None = None

    def resolved(self, settings: Settings) -> Scenario:
        """This scenario with every ``None`` name filled in from ``settings``."""
        dep = settings.deployment
        return self.model_copy(
            update={
                "generated_tokens": self.generated_tokens or settings.constants.GENERATED_TOKENS,
                "drafter": self.drafter or dep.draft,
                "hardware": self.hardware or dep.hardware,
                "target": self.target or dep.target,
            }
        )


#: Each field's default, read from the record (the one place defaults are written).
DEFAULTS: dict[str, Any] = {name: field.default for name, field in Scenario.model_fields.items()}


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
    acceptance: StrArray | None  #: the profile; None when the acceptance was measured
    alpha: FloatArray | None  #: None when the acceptance was measured
    measured_per_position: FloatArray | None  #: u_1..u_gamma as given, positions on the last axis
    generated_tokens: int
    hardware: str
    target: str

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.concurrency.shape)

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
        given = {k: DEFAULTS[k] if v is None and k not in _DEPLOYMENT else v for k, v in fields.items()}
        value = {**DEFAULTS, **given}
        b = check_integer("concurrency", value["concurrency"], 1, MAX_CONCURRENCY)
        t = check_integer("context", value["context"], 0)
        hardware, target, generated = _deployment(settings, value)
        _check_context(t, generated, target)
        measured = value["per_position"]
        if measured is not None:
            u = check_per_position(measured)
            d = _drafters(value["drafter"], settings, target)
            b, t, d, _ = np.broadcast_arrays(b, t, d, np.empty(u.shape[:-1]))
            u = np.broadcast_to(u, b.shape + u.shape[-1:])
            g = np.full(b.shape, u.shape[-1], dtype=np.int64)
            return cls(b, t, g, d, None, None, u, generated, hardware, target)
        g = check_integer("gamma", value["gamma"], 1, MAX_GAMMA)
        a = check_open_unit("alpha", value["alpha"])
        d = _drafters(value["drafter"], settings, target)
        p = check_choice("acceptance", value["acceptance"], PROFILES)
        b, t, g, a, d, p = np.broadcast_arrays(b, t, g, a, d, p)
        return cls(b, t, g, d, p, a, None, generated, hardware, target)


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
    g = check_integer("generated_tokens", generated, 1, 65536)
    if g.ndim:
        raise SpecModelError("generated_tokens must be one value for a whole grid")
    return str(hardware), str(target), int(g)


def _drafters(drafter: Any, settings: Settings, target: str) -> StrArray:
    """Drafter names (default: the deployment's draft model), each checked against ``target``."""
    names = np.asarray(settings.deployment.draft if drafter is None else drafter, dtype=object)
    for name in set(names.flat):
        check_drafter(name, target)
    return names.astype(str)


def _check_context(context: IntArray, generated_tokens: int, target: str) -> None:
    """Refuse a prompt plus generation longer than the target's ``max_position_embeddings``."""
    limit = get_architecture(target).max_position_embeddings
    longest = int(context.max(initial=0)) + generated_tokens
    if longest > limit:
        raise SpecModelError(
            f"context {int(context.max())} plus {generated_tokens} generated tokens is {longest:,} tokens, longer than "
            f"{target}'s max_position_embeddings ({limit:,}); context must be at most {limit - generated_tokens:,}"
        )
