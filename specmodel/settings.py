"""The settings the model runs with: its constants, and the deployment the site describes.

:mod:`specmodel.constants` declares each constant with its default and the reason for it.
Every formula reads the constants through :func:`constants`, so an author can override any
of them for a build (``build_figures.py --config FILE``) without editing the package, and
a test can override them for one block (:func:`using`). The same settings carry the
hardware, the target and the two draft models the article discusses.
"""

from __future__ import annotations

import tomllib
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from specmodel import constants as _declared
from specmodel.errors import SpecModelError


class Constants(BaseModel):
    """The modelling constants (see :mod:`specmodel.constants` for what each means and why)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    MEMORY_EFFICIENCY: float = Field(_declared.MEMORY_EFFICIENCY, gt=0, le=1)
    COMPUTE_EFFICIENCY: float = Field(_declared.COMPUTE_EFFICIENCY, gt=0, le=1)
    GENERATED_TOKENS: int = Field(_declared.GENERATED_TOKENS, ge=1, le=65536)
    KV_READ_FRACTION: float = Field(_declared.KV_READ_FRACTION, ge=0, le=1)
    FLOPS_PER_PARAMETER: float = Field(_declared.FLOPS_PER_PARAMETER, gt=0)
    FALLING_RATIO: float = Field(_declared.FALLING_RATIO, gt=0, le=1)
    GPU_MEMORY_UTILIZATION: float = Field(_declared.GPU_MEMORY_UTILIZATION, gt=0, le=1)
    WORKSPACE_BYTES: float = Field(_declared.WORKSPACE_BYTES, ge=0)


class Deployment(BaseModel):
    """The hardware, target and draft models the site's article is about, by catalogue key."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    hardware: str = "h100-sxm"
    target: str = "qwen3-8b"
    draft: str = "qwen3-0.6b"  #: the article's draft model
    big_draft: str = "qwen3-1.7b"  #: the larger draft of "a better draft can be a worse deal"

    @model_validator(mode="after")
    def _known(self) -> Deployment:
        from specmodel.drafters import check_drafter
        from specmodel.specs import get_architecture, get_hardware

        get_hardware(self.hardware)
        get_architecture(self.target)
        for name in (self.draft, self.big_draft):
            check_drafter(name, self.target, kinds=("model",))
        return self


class Settings(BaseModel):
    """Constants and deployment together: what a ``--config`` file holds."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    constants: Constants = Field(default_factory=Constants)
    deployment: Deployment = Field(default_factory=Deployment.model_construct)


#: The defaults (the deployment's defaults are checked by the tests, not at import, which
#: would need the catalogues this module's users are still importing).
_active: ContextVar[Settings] = ContextVar("specmodel_settings", default=Settings())


def current() -> Settings:
    """The settings in force."""
    return _active.get()


def constants() -> Constants:
    """The modelling constants in force."""
    return _active.get().constants


def deployment() -> Deployment:
    """The deployment in force."""
    return _active.get().deployment


@contextmanager
def using(settings: Settings | None = None, /, **constant_values):
    """Run a block with ``settings`` (default: those in force) and the given constants
    overridden, e.g. ``with using(MEMORY_EFFICIENCY=0.7): ...``."""
    base = settings or current()
    if constant_values:
        base = base.model_copy(update={"constants": _validated(Constants, {**base.constants.model_dump(),
                                                                           **constant_values}, "constants")})
    token = _active.set(base)
    try:
        yield base
    finally:
        _active.reset(token)


def _validated(model, data: dict, where: str):
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            loc = ".".join(str(x) for x in err["loc"]) or where
            if err["type"] == "extra_forbidden":
                allowed = ", ".join(model.model_fields) if loc.count(".") == 0 else _allowed_at(model, loc)
                problems.append(f"unknown setting {loc!r}; allowed: {allowed}")
            else:
                problems.append(f"{loc}: {err['msg']} (got {err.get('input')!r})")
        raise SpecModelError(f"{where}: " + "; ".join(problems)) from None
    except SpecModelError as exc:
        raise SpecModelError(f"{where}: {exc}") from None


def _allowed_at(model, loc: str) -> str:
    field = model.model_fields[loc.split(".")[0]]
    return ", ".join(field.annotation.model_fields)


def load_settings(path: Path) -> Settings:
    """Settings from a TOML (``.toml``) or YAML (``.yaml``/``.yml``) file with optional
    sections ``constants`` (names as in :mod:`specmodel.constants`) and ``deployment``
    (``hardware``, ``target``, ``draft``, ``big_draft``); anything left out keeps its default."""
    where = str(path)
    if not path.is_file():
        raise SpecModelError(f"config {where!r} is not a file")
    suffix = path.suffix.lower()
    try:
        text = path.read_text(encoding="utf-8")
        if suffix == ".toml":
            data = tomllib.loads(text)
        elif suffix in (".yaml", ".yml"):
            data = yaml.safe_load(text) or {}
        else:
            raise SpecModelError(f"config {where!r}: unknown format {suffix or '(none)'!r}; allowed: .toml, .yaml, .yml")
    except (tomllib.TOMLDecodeError, yaml.YAMLError, UnicodeDecodeError) as exc:
        first = str(exc).splitlines()[0]
        raise SpecModelError(f"config {where!r} is not valid {suffix[1:].upper()}: {first}") from None
    if not isinstance(data, dict):
        raise SpecModelError(f"config {where!r} must be a table of settings, got {type(data).__name__}")
    return _validated(Settings, data, f"config {where!r}")
