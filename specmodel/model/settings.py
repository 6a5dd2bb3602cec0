"""The settings the model runs with: its constants, the deployment, and the engine profiles.

:mod:`specmodel.model.constants` declares each constant with its default and the reason for
it. :class:`Settings` holds a validated set of them plus the deployment (hardware, target,
the default draft model and the GPUs) and the engine profiles. An entry point (the CLI, the
site build, a user's script) builds the settings once and passes them down: every function
that needs them takes them as an argument, and one left without any uses the defaults,
``Settings()``. Nothing is looked up from a global.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Annotated, Any

from annotated_types import Ge, Gt, Le

from specmodel.errors import SpecModelError
from specmodel.model import constants as declared
from specmodel.model.drafters import DrafterKind, check_drafter
from specmodel.model.engines import EngineProfile, engine_catalog
from specmodel.model.specs import get_architecture, get_hardware
from specmodel.model.validation import MAX_GENERATED_TOKENS, MAX_TENSOR_PARALLEL
from specmodel.records import Record, StrictFloat, StrictInt, StrictStr, as_mapping
from specmodel.safe_input import excerpt, validated

#: A share of a peak (bandwidth, FLOP/s, memory): 1% to all of it.
Share = Annotated[StrictFloat, Ge(0.01), Le(1)]


@dataclass(frozen=True, kw_only=True)
class Constants(Record):
    """The modelling constants (see :mod:`specmodel.model.constants` for what each means and why).

    Values are strictly typed and finite: ``GENERATED_TOKENS = "256"`` or
    ``GPU_MEMORY_UTILIZATION = true`` are errors, not 256 and 1.0.
    """

    MEMORY_EFFICIENCY: Share = declared.MEMORY_EFFICIENCY
    COMPUTE_EFFICIENCY: Share = declared.COMPUTE_EFFICIENCY
    GENERATED_TOKENS: Annotated[StrictInt, Ge(1), Le(MAX_GENERATED_TOKENS)] = declared.GENERATED_TOKENS
    KV_READ_FRACTION: Annotated[StrictFloat, Ge(0), Le(1)] = declared.KV_READ_FRACTION
    FLOPS_PER_PARAMETER: Annotated[StrictFloat, Gt(0), Le(16)] = declared.FLOPS_PER_PARAMETER
    FALLING_RATIO: Annotated[StrictFloat, Gt(0), Le(1)] = declared.FALLING_RATIO
    GPU_MEMORY_UTILIZATION: Share = declared.GPU_MEMORY_UTILIZATION
    WORKSPACE_BYTES: Annotated[StrictFloat, Ge(0), Le(2.0**50)] = declared.WORKSPACE_BYTES


@dataclass(frozen=True, kw_only=True)
class Deployment(Record):
    """The hardware, target and default draft model, by catalogue key, and the GPUs."""

    hardware: StrictStr = "h100-sxm"
    target: StrictStr = "qwen3-8b"
    draft: StrictStr = "qwen3-0.6b"  #: the drafter of a scenario that names none
    #: GPUs the target is split over (tensor parallelism) in every scenario that does not say;
    #: None: one, unless the site builder picks the fewest that hold the article's scenario.
    tensor_parallel: Annotated[StrictInt, Ge(1), Le(MAX_TENSOR_PARALLEL)] | None = None

    def __post_init__(self) -> None:
        """The names are the catalogues' and the draft model can serve the target."""
        get_hardware(self.hardware)
        get_architecture(self.target)
        check_drafter(self.draft, self.target, kinds=(DrafterKind.MODEL,))


def _catalogue_engines() -> dict[str, EngineProfile]:
    """A fresh table of ``data/engines.toml``'s profiles, for one settings' own."""
    return dict(engine_catalog())


@dataclass(frozen=True, kw_only=True)
class Settings(Record):
    """Constants, deployment and engine profiles together (the engine profiles are
    ``data/engines.toml``'s unless a fit replaces one)."""

    constants: Constants = field(default_factory=Constants)
    deployment: Deployment = field(default_factory=Deployment)
    engines: dict[StrictStr, EngineProfile] = field(default_factory=_catalogue_engines)

    def engine(self, name: str) -> EngineProfile:
        """The engine profile called ``name``; an unknown name lists the known ones."""
        if not isinstance(name, str) or name not in self.engines:
            raise SpecModelError(f"unknown engine {excerpt(name)}; allowed: {', '.join(self.engines)}")
        return self.engines[name]

    def with_constants(self, **values: Any) -> Settings:
        """These settings with some constants replaced, e.g. ``with_constants(MEMORY_EFFICIENCY=0.7)``;
        an unknown name or a value out of range is one :class:`~specmodel.errors.SpecModelError`
        naming it and what is allowed.

        >>> Settings().with_constants(MEMORY_EFFICIENCY=0.7).constants.MEMORY_EFFICIENCY
        0.7
        """
        merged = {**as_mapping(self.constants), **values}
        return replace(self, constants=validated(Constants, merged, "constants"))

    def with_engine(self, profile: EngineProfile) -> Settings:
        """These settings with ``profile`` in place of the engine of the same key."""
        return replace(self, engines={**self.engines, profile.key: profile})
