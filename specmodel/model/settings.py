"""The settings the model runs with: its constants, the deployment, and the engine profiles.

:mod:`specmodel.model.constants` declares each constant with its default and the reason for
it. :class:`Settings` holds a validated set of them plus the deployment (hardware, target,
the default draft model and the GPUs) and the engine profiles. An entry point (the CLI, the
site build, a user's script) builds the settings once and passes them down: every function
that needs them takes them as an argument, and one left without any uses the defaults,
``Settings()``. Nothing is looked up from a global.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from specmodel.errors import SpecModelError
from specmodel.model import constants as declared
from specmodel.model.drafters import DrafterKind, check_drafter
from specmodel.model.engines import EngineProfile, engine_catalog
from specmodel.model.specs import get_architecture, get_hardware
from specmodel.model.validation import MAX_GENERATED_TOKENS, MAX_TENSOR_PARALLEL
from specmodel.safe_input import excerpt, validated

_STRICT = ConfigDict(frozen=True, extra="forbid", strict=True)


class Constants(BaseModel):
    """The modelling constants (see :mod:`specmodel.model.constants` for what each means and why).

    Values are strictly typed and finite: ``GENERATED_TOKENS = "256"`` or
    ``GPU_MEMORY_UTILIZATION = true`` are errors, not 256 and 1.0.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, allow_inf_nan=False)
    MEMORY_EFFICIENCY: float = Field(declared.MEMORY_EFFICIENCY, ge=0.01, le=1)
    COMPUTE_EFFICIENCY: float = Field(declared.COMPUTE_EFFICIENCY, ge=0.01, le=1)
    GENERATED_TOKENS: int = Field(declared.GENERATED_TOKENS, ge=1, le=MAX_GENERATED_TOKENS)
    KV_READ_FRACTION: float = Field(declared.KV_READ_FRACTION, ge=0, le=1)
    FLOPS_PER_PARAMETER: float = Field(declared.FLOPS_PER_PARAMETER, gt=0, le=16)
    FALLING_RATIO: float = Field(declared.FALLING_RATIO, gt=0, le=1)
    GPU_MEMORY_UTILIZATION: float = Field(declared.GPU_MEMORY_UTILIZATION, ge=0.01, le=1)
    WORKSPACE_BYTES: float = Field(declared.WORKSPACE_BYTES, ge=0, le=2.0**50)


class Deployment(BaseModel):
    """The hardware, target and default draft model, by catalogue key, and the GPUs."""

    model_config = _STRICT
    hardware: str = "h100-sxm"
    target: str = "qwen3-8b"
    draft: str = "qwen3-0.6b"  #: the drafter of a scenario that names none
    #: GPUs the target is split over (tensor parallelism) in every scenario that does not say;
    #: None: one, unless the site builder picks the fewest that hold the article's scenario.
    tensor_parallel: int | None = Field(None, ge=1, le=MAX_TENSOR_PARALLEL)

    @model_validator(mode="after")
    def _known(self) -> Deployment:
        get_hardware(self.hardware)
        get_architecture(self.target)
        check_drafter(self.draft, self.target, kinds=(DrafterKind.MODEL,))
        return self


class Settings(BaseModel):
    """Constants, deployment and engine profiles together (the engine profiles are
    ``data/engines.toml``'s unless a fit replaces one)."""

    model_config = _STRICT
    constants: Constants = Field(default_factory=Constants)
    deployment: Deployment = Field(default_factory=Deployment)
    engines: dict[str, EngineProfile] = Field(default_factory=lambda: dict(engine_catalog()))

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
        merged = {**self.constants.model_dump(), **values}
        return self.model_copy(update={"constants": validated(Constants, merged, "constants")})

    def with_engine(self, profile: EngineProfile) -> Settings:
        """These settings with ``profile`` in place of the engine of the same key."""
        return self.model_copy(update={"engines": {**self.engines, profile.key: profile}})
