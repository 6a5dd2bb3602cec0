"""The settings the model runs with: its constants, and the deployment the site describes.

:mod:`specmodel.model.constants` declares each constant with its default and the reason for
it. :class:`Settings` holds a validated set of them plus the deployment (hardware, target
and the two draft models the article discusses). Settings are resolved once, at an entry
point (:func:`specmodel.evaluate`, the CLI, the site build), and passed down explicitly: no
formula reads them from anywhere else.

:func:`using` sets the settings an entry point falls back to when it is given none, for a
block (``with using(MEMORY_EFFICIENCY=0.7): evaluate()``); :func:`current` is what an entry
point reads. An author overrides any of them for a build with ``build_figures.py --config
FILE`` (:func:`load_settings`).
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from specmodel.errors import SpecModelError
from specmodel.model import constants as declared
from specmodel.model.drafters import check_drafter
from specmodel.model.engines import EngineProfile, engine_catalog
from specmodel.model.specs import get_architecture, get_hardware
from specmodel.safe_input import load_yaml_text, read_limited_text

_STRICT = ConfigDict(frozen=True, extra="forbid", strict=True)


class Constants(BaseModel):
    """The modelling constants (see :mod:`specmodel.model.constants` for what each means and why).

    Values are strictly typed and finite: ``GENERATED_TOKENS = "256"`` or
    ``GPU_MEMORY_UTILIZATION = true`` are errors, not 256 and 1.0.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, allow_inf_nan=False)
    MEMORY_EFFICIENCY: float = Field(declared.MEMORY_EFFICIENCY, ge=0.01, le=1)
    COMPUTE_EFFICIENCY: float = Field(declared.COMPUTE_EFFICIENCY, ge=0.01, le=1)
    GENERATED_TOKENS: int = Field(declared.GENERATED_TOKENS, ge=1, le=65536)
    KV_READ_FRACTION: float = Field(declared.KV_READ_FRACTION, ge=0, le=1)
    FLOPS_PER_PARAMETER: float = Field(declared.FLOPS_PER_PARAMETER, gt=0, le=16)
    FALLING_RATIO: float = Field(declared.FALLING_RATIO, gt=0, le=1)
    GPU_MEMORY_UTILIZATION: float = Field(declared.GPU_MEMORY_UTILIZATION, ge=0.01, le=1)
    WORKSPACE_BYTES: float = Field(declared.WORKSPACE_BYTES, ge=0, le=2.0**50)


class Deployment(BaseModel):
    """The hardware, target and draft models the site's article is about, by catalogue key."""

    model_config = _STRICT
    hardware: str = "h100-sxm"
    target: str = "qwen3-8b"
    draft: str = "qwen3-0.6b"  #: the article's draft model
    big_draft: str = "qwen3-1.7b"  #: the larger draft of "a better draft can be a worse deal"
    #: GPUs the target is split over (tensor parallelism) in every scenario that does not say;
    #: None: one, unless the site builder picks the fewest that hold the article's scenario.
    tensor_parallel: int | None = Field(None, ge=1, le=64)

    @model_validator(mode="after")
    def _known(self) -> Deployment:
        get_hardware(self.hardware)
        get_architecture(self.target)
        for name in (self.draft, self.big_draft):
            check_drafter(name, self.target, kinds=("model",))
        return self


class Settings(BaseModel):
    """Constants, deployment and engine profiles together (a ``--config`` file may set the
    first two; the engine profiles are ``data/engines.toml``'s unless a fit replaces one)."""

    model_config = _STRICT
    constants: Constants = Field(default_factory=Constants)
    deployment: Deployment = Field(default_factory=Deployment)
    engines: dict[str, EngineProfile] = Field(default_factory=lambda: dict(engine_catalog()))

    def engine(self, name: str) -> EngineProfile:
        """The engine profile called ``name``; an unknown name lists the known ones."""
        if not isinstance(name, str) or name not in self.engines:
            raise SpecModelError(f"unknown engine {name!r}; allowed: {', '.join(self.engines)}")
        return self.engines[name]

    def with_engine(self, profile: EngineProfile) -> Settings:
        """These settings with ``profile`` in place of the engine of the same key."""
        return self.model_copy(update={"engines": {**self.engines, profile.key: profile}})


#: Settings are frozen (immutable), so one default instance can be shared.
_active: ContextVar[Settings] = ContextVar("specmodel_settings", default=Settings())  # noqa: B039


def current() -> Settings:
    """The settings an entry point uses when it is given none (the defaults, or those of
    the enclosing :func:`using` block)."""
    return _active.get()


@contextmanager
def using(settings: Settings | None = None, /, **constant_values: Any) -> Iterator[Settings]:
    """Run a block with ``settings`` (default: those in force) and the given constants
    overridden, e.g. ``with using(MEMORY_EFFICIENCY=0.7): ...``."""
    base = settings or current()
    if constant_values:
        merged = {**base.constants.model_dump(), **constant_values}
        base = base.model_copy(update={"constants": _validated(Constants, merged, "constants")})
    token = _active.set(base)
    try:
        yield base
    finally:
        _active.reset(token)


def with_constants(settings: Settings, **constant_values: Any) -> Settings:
    """``settings`` with some constants replaced (validated)."""
    merged = {**settings.constants.model_dump(), **constant_values}
    return settings.model_copy(update={"constants": _validated(Constants, merged, "constants")})


def _excerpt(value: object, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _validated(model: type[BaseModel], data: dict[str, Any], where: str) -> Any:
    """``model`` validated from ``data``; every problem in one line, each value as a short excerpt."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            loc = ".".join(str(x) for x in err["loc"]) or where
            if err["type"] == "extra_forbidden":
                problems.append(f"unknown setting {loc!r}; allowed: {_allowed_at(model, loc)}")
            else:
                problems.append(f"{loc}: {err['msg']} (got {_excerpt(err.get('input'))})")
        raise SpecModelError(f"{where}: " + "; ".join(problems)) from None
    except SpecModelError as exc:
        raise SpecModelError(f"{where}: {exc}") from None


def _allowed_at(model: type[BaseModel], loc: str) -> str:
    parts = loc.split(".")
    if len(parts) == 1:
        return ", ".join(model.model_fields)
    annotation = model.model_fields[parts[0]].annotation
    fields = getattr(annotation, "model_fields", {})
    return ", ".join(fields)


def load_settings(path: Path) -> Settings:
    """Settings from a TOML (``.toml``) or YAML (``.yaml``/``.yml``) file with optional
    sections ``constants`` (names as in :mod:`specmodel.model.constants`) and ``deployment``
    (``hardware``, ``target``, ``draft``, ``big_draft``); anything left out keeps its default."""
    where = f"config {_excerpt(str(path), 200)}"
    if not path.is_file():
        raise SpecModelError(f"{where} is not a file")
    suffix = path.suffix.lower()
    if suffix not in (".toml", ".yaml", ".yml"):
        raise SpecModelError(f"{where}: unknown format {suffix or '(none)'!r}; allowed: .toml, .yaml, .yml")
    text = read_limited_text(path, where)
    try:
        data = tomllib.loads(text) if suffix == ".toml" else load_yaml_text(text, where)
    except tomllib.TOMLDecodeError as exc:
        raise SpecModelError(f"{where} is not valid TOML: {_excerpt(str(exc).splitlines()[0], 120)}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise SpecModelError(f"{where} must be a table of settings, got {type(data).__name__}")
    settings: Settings = _validated(Settings, data, where)
    return settings
