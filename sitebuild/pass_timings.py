"""Forward passes timed on a GPU (``tools/time_passes.py``) and the model's time for the same
passes: the record's schema (:class:`PassTimings`), its reader, and the roofline time of one
pass of a catalogue model (:func:`model_pass_ms`). The tool validates what it writes with the
same schema, so the page reads what the tool wrote."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from specmodel.errors import SpecModelError
from specmodel.model.passes import PassCoefficients, price_pass
from specmodel.model.settings import Constants
from specmodel.model.specs import get_architecture, get_hardware
from specmodel.safe_input import read_limited_text


class PassTiming(BaseModel):
    """One timed configuration: a model's forward pass over ``batch`` sequences of
    ``positions`` query positions each, over a cache of the record's ``kv_tokens``."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    model: str  #: catalogue key (specmodel/data/models.toml)
    role: str  #: "target" or "draft"
    batch: int = Field(ge=1)
    positions: int = Field(ge=1)
    median_ms: float | None = Field(None, gt=0)  #: None: not timed (``error`` says why)
    min_ms: float | None = Field(None, gt=0)
    repeats: int = Field(0, ge=0)
    error: str | None = None  #: why it was not timed, e.g. "out of memory"


class PassTimings(BaseModel):
    """What ``tools/time_passes.py`` records: the card, the software, and every timing."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    card: str = Field(min_length=1)  #: the CUDA device's name
    hardware: str  #: the catalogue key the card was timed as (specmodel/data/hardware.toml)
    torch: str
    transformers: str
    cuda: str
    dtype: str
    attention: str  #: transformers' attention implementation
    kv_tokens: int = Field(ge=0)
    gamma: int = Field(ge=1)
    date: str
    timings: list[PassTiming] = Field(min_length=1)


def read_pass_timings(path: Path) -> PassTimings | None:
    """The record at ``path``, validated; None if there is none (no GPU has timed the passes)."""
    if not path.is_file():
        return None
    where = f"pass timings {path.name}"
    try:
        record = PassTimings.model_validate(json.loads(read_limited_text(path, where)))
    except ValueError as e:
        raise SpecModelError(f"{where}: {str(e).splitlines()[0]}") from None
    get_hardware(record.hardware)
    for timing in record.timings:
        get_architecture(timing.model)
    return record


def model_pass_ms(constants: Constants, model: str, hardware: str, batch: Any, positions: Any, kv: int) -> Any:
    """The model's roofline time (ms) of one forward pass of ``model`` over ``batch`` sequences
    of ``positions`` query positions each, over ``kv`` cached tokens, on one ``hardware`` card at
    the memory and compute efficiencies of ``constants``."""
    coefficients = PassCoefficients.of_model(get_architecture(model), constants.FLOPS_PER_PARAMETER)
    hw = get_hardware(hardware)
    price = price_pass(coefficients, kv, positions, hw, constants.MEMORY_EFFICIENCY, constants.COMPUTE_EFFICIENCY)
    return np.asarray(price.time(batch), dtype=float) * 1e3
