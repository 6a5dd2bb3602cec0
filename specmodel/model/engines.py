"""Serving engines: what a real engine adds to the roofline of a pass, as profiles in
``data/engines.toml``.

``ideal`` is the article's model: a pass takes ``max(t_mem, t_flop)`` and nothing else. A
real engine (``vllm``) adds, with few constants each with a physical meaning:

* a fixed time per forward pass (kernel launches, CPU scheduling, sampling), by kind of
  pass: the target's (plus a share per sequence in it), a draft model's, a draft head's
  step (and its own for a head that fuses features of several target layers, EAGLE-3,
  whose step runs more kernels than its bytes say); the CPU time of an n-gram lookup per
  sequence; and a fixed time per speculative iteration (which of the drafter's constants
  applies is the drafter's business: :meth:`specmodel.model.drafters.Drafter.engine_terms`);
* a smooth rule for memory and arithmetic in one pass, ``(t_mem^p + t_flop^p)^(1/p)``
  (:func:`specmodel.model.roofline.combined_time`): the two overlap imperfectly, so a pass slows down as its
  arithmetic grows long before it is compute-bound (``p = inf`` is the roofline's max);
* its own achievable share of peak FLOP/s;
* the kernel that runs a mixture-of-experts layer, whose measured efficiency at the tokens
  each expert receives prices the routed expert FLOPs (:mod:`specmodel.model.kernels`);
* the scheduler's token budget per pass, which decides how the prefill of the prompts that
  refill a steady batch lands on its passes: a whole prompt now and then, not a thin slice
  in every pass (:mod:`specmodel.model.prefill`);
* the n-gram lookup's match rate: vLLM drafts only when the lookup finds a match, and a pass
  with nothing to verify is a plain step (:func:`ngram_match_rate`);
* how a pass reads an untied input embedding: the rows its tokens index, as an engine's
  embedding lookup does (``"gather"``), or the whole table (``"table"``, the ``ideal``
  engine: the article reads every weight once per pass, and its quoted bytes need it)
  (:mod:`specmodel.model.passes`).

The constants of ``vllm`` are fitted by least squares to public measurements
(``tools/fit_engine.py``); the profile records the fit's provenance and its domain, the
cards, models, drafters, GPUs and batches its rows cover (:class:`ProfileDomain`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cache
from typing import Annotated, Any, ClassVar, Literal

import numpy as np
from annotated_types import Ge, Gt, Le, MinLen

from specmodel.model.specs import load_catalog
from specmodel.model.types import Numeric
from specmodel.records import Record, StrictFloat, StrictInt, StrictStr, as_mapping, field_rules, validate

#: How B sequences run: a cohort that starts together and drains, or a steady batch.
BATCHINGS = ("cohort", "steady")


@dataclass(frozen=True)
class Bounds:
    """The range a real engine's constant can take: ``low`` to ``high`` inclusive (in
    ``unit``), and also exactly 0 where ``zero`` (no such cost at all, as in the ``ideal``
    engine) or +inf where ``infinite`` (a limit the model defines). NaN and every other
    infinity are outside. ``reason``: why no real engine leaves it. As a field's rule
    (``Annotated[float, PASS_SECONDS]``) pydantic runs it after the type's check, through
    pydantic's ``__get_pydantic_core_schema__`` hook; it passes None through: an omitted
    constant."""

    low: float
    high: float
    unit: str
    reason: str
    zero: bool = False
    infinite: bool = False

    def allows(self, value: float) -> bool:
        """Whether ``value`` lies in the range (NaN never does)."""
        return (self.zero and value == 0) or (self.infinite and value == math.inf) or self.low <= value <= self.high

    def text(self) -> str:
        """The range in words, e.g. ``0 or 1e-06 to 1 s``.

        >>> PASS_SECONDS.text()
        '0 or 1e-06 to 1 s'
        """
        span = f"{_number(self.low)} to {_number(self.high)}{' ' + self.unit if self.unit else ''}"
        return f"{'0 or ' if self.zero else ''}{span}{', or inf' if self.infinite else ''}"

    def __call__(self, value: float | None) -> float | None:
        """``value`` if it is None or :meth:`allows`; a validation error stating the range otherwise."""
        if value is None or self.allows(value):
            return value
        from pydantic_core import PydanticCustomError

        raise PydanticCustomError(
            "engine_range", "must be {allowed} ({reason})", {"allowed": self.text(), "reason": self.reason}
        )

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
        """pydantic's schema of the field, with this range checked after its type."""
        from pydantic_core import core_schema

        return core_schema.no_info_after_validator_function(self, handler(source))


def _number(value: float) -> str:
    """``value`` in its short form, whole numbers of a million and more in full.

    >>> _number(1e-06), _number(1000.0), _number(2**24)
    ('1e-06', '1000', '16777216')
    """
    return str(int(value)) if value == int(value) and abs(value) >= 1e6 else f"{value:g}"


#: A fixed time per forward pass or per speculative iteration (s).
PASS_SECONDS = Bounds(
    1e-6, 1.0, "s", "a fixed cost per pass is at least one kernel launch, and far below a second", zero=True
)
#: CPU time per sequence in a pass, or per sequence of an n-gram lookup (s).
SEQUENCE_SECONDS = Bounds(
    1e-9,
    0.1,
    "s",
    "per-sequence CPU work takes more than a few clock cycles, and 100 ms of it would stall any batch",
    zero=True,
)
#: p of the rule ``(t_mem^p + t_flop^p)^(1/p)`` (dimensionless).
OVERLAP = Bounds(
    1.0, 1000.0, "", "p = 1 is no overlap at all; past 1000 the rule is the max to 0.07%: write inf", infinite=True
)
#: A share of the datasheet's peak FLOP/s or bandwidth.
EFFICIENCY = Bounds(
    0.01, 1.0, "", "a share of a peak: all of it at most, and at least 1%, as the settings' efficiencies"
)
#: Tokens one pass may schedule (integer).
TOKEN_BUDGET = Bounds(
    1, 2**24, "tokens", "no engine schedules 16 M tokens in one pass: their activations alone would fill any GPU"
)

PassSeconds = Annotated[StrictFloat, PASS_SECONDS]
SequenceSeconds = Annotated[StrictFloat, SEQUENCE_SECONDS]


@dataclass(frozen=True, kw_only=True)
class FitProvenance(Record):
    """Where a profile's fitted constants come from (finite values, as a fit writes them)."""

    measurements: str  #: the file the constants were fitted to
    measurements_sha256: str
    rows: Annotated[int, Ge(1)]
    fitted_on: str  #: date of the fit, YYYY-MM-DD
    method: str
    median_abs_error: Annotated[float, Ge(0)]
    p90_abs_error: Annotated[float, Ge(0)]
    max_abs_error: Annotated[float, Ge(0)]
    anchor: str  #: an absolute time the fit also matches, with its source
    #: predicted / measured - 1, row by row, in file order: above -1, a ratio of two positive speeds
    residuals: tuple[Annotated[float, Gt(-1)], ...]
    fitted: tuple[str, ...] = ()  #: the constants the fit set, in order
    not_fitted: str = ""  #: what was taken out of the fit, and from where
    #: of ``fitted``: se / value, cov = s^2 (J^T J)^-1
    relative_standard_errors: tuple[Annotated[float, Ge(0)], ...] = ()
    largest_correlation: float | None = None  #: the largest |correlation| between two fitted constants
    largest_correlation_pair: tuple[str, ...] = ()
    #: held-out errors by split (leave one workload out, leave one source out, small to large,
    #: in sample): median, 90th percentile and worst |predicted / measured - 1|
    held_out: dict[str, tuple[float, float, float]] = field(default_factory=dict)
    #: each input file of a user's fit (``specmodel fit-engine``): its name and sha256
    inputs: tuple[tuple[str, str], ...] = ()
    prior: str = ""  #: the prior the fit was regularised towards, in words
    #: width of each fitted constant's prior, in log units: (log value - log public) / width
    prior_widths: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class ProfileDomain(Record):
    """What the runs a profile was fitted on cover: a fixed time per pass, an overlap exponent
    or a lookup's match rate measured on one card, model and batch range is an extrapolation
    anywhere else (:func:`specmodel.model.domain.outside_domain` says where).

    Targets and cards are catalogue keys (or Hugging Face ids, as a user's runs name them),
    drafters by name and by kind (``model``, ``head``, ``fused_head``, ``ngram``; an empty
    tuple: plain runs alone), tensor-parallel sizes in GPUs, ``concurrency`` the smallest and
    largest batch (sequences), and the engine and its version as each source states it
    (``"vllm (version unstated)"`` where it states none).
    """

    targets: Annotated[tuple[str, ...], MinLen(1)]
    hardware: Annotated[tuple[str, ...], MinLen(1)]
    drafters: tuple[str, ...] = ()
    drafter_kinds: tuple[str, ...] = ()
    tensor_parallel: Annotated[tuple[int, ...], MinLen(1)]
    concurrency: tuple[int, int]  #: the smallest and the largest batch fitted on
    engine_versions: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        """The batch range runs from the smallest to the largest, both at least 1."""
        low, high = self.concurrency
        if not 1 <= low <= high:
            raise ValueError(f"concurrency {list(self.concurrency)} is not [smallest, largest] batch, both >= 1")


@dataclass(frozen=True, kw_only=True)
class EngineProfile(Record):
    """One engine's profile (``data/engines.toml``; SI units, seconds).

    Every constant is finite (bar an ``overlap`` of inf, the roofline's max) and within the
    physical range of its :class:`Bounds`, strictly typed (``true`` or ``"0.001"`` is no
    time): a profile no real engine could have is refused when it is read, one line naming
    the constant, its value and the range (:func:`specmodel.model.profile_file.load_profile`),
    before the model prices anything with it."""

    #: an ``overlap`` may be inf (the roofline's max); NaN is refused by every constant's range
    __pydantic_config__: ClassVar[dict[str, Any]] = {"extra": "forbid"}
    key: StrictStr
    name: StrictStr
    description: StrictStr
    batching: Literal["cohort", "steady"]
    target_pass_s: PassSeconds
    sequence_pass_s: SequenceSeconds = 0.0  #: per sequence per target pass (CPU input preparation, sampling)
    draft_model_pass_s: Annotated[StrictFloat | None, PASS_SECONDS] = None  #: None: equal to target_pass_s
    head_pass_s: PassSeconds
    fused_head_pass_s: Annotated[StrictFloat | None, PASS_SECONDS] = None  #: None: equal to head_pass_s
    ngram_lookup_s: SequenceSeconds = 0.0
    iteration_s: PassSeconds
    overlap: Annotated[StrictFloat, OVERLAP]
    compute_efficiency: Annotated[StrictFloat | None, EFFICIENCY] = None
    #: achievable share of the datasheet's memory bandwidth (None: the settings' MEMORY_EFFICIENCY)
    memory_efficiency: Annotated[StrictFloat | None, EFFICIENCY] = None
    ngram_matched_acceptance: Annotated[StrictFloat, Gt(0), Le(1)] | None = None  #: a chance: (0, 1]
    #: tokens one pass may schedule, decode and prefill (vLLM's ``max_num_batched_tokens``); a
    #: waiting prompt is prefilled whole up to what it leaves (None: prefill spread evenly)
    token_budget: Annotated[StrictInt | None, TOKEN_BUDGET] = None
    #: grouped-GEMM kernel family of data/kernels.toml pricing routed expert FLOPs (None: at compute_efficiency)
    moe_kernel: StrictStr | None = None
    #: how a pass reads an untied input embedding: the B Q rows its tokens index ("gather") or
    #: the whole V x D table ("table", the article's every weight once per pass)
    embedding_read: Literal["gather", "table"] = "gather"
    fit: FitProvenance | None = None
    #: the targets, cards, drafters, GPUs and batches the fit's runs cover (None: not recorded,
    #: as for the ``ideal`` engine, the roofline, which holds wherever the roofline does)
    domain: ProfileDomain | None = None

    @property
    def gathers_embedding(self) -> bool:
        """Whether the engine's passes gather an untied input embedding's rows rather than read
        the table (``embedding_read``)."""
        return self.embedding_read == "gather"

    @property
    def draft_model_pass(self) -> float:
        """Fixed time per draft-model pass (the target's when the profile gives none)."""
        return self.target_pass_s if self.draft_model_pass_s is None else self.draft_model_pass_s

    @property
    def fused_head_pass(self) -> float:
        """Fixed time per step of a head that fuses several target layers' features (EAGLE-3);
        a head's when the profile gives none."""
        return self.head_pass_s if self.fused_head_pass_s is None else self.fused_head_pass_s

    def compute_efficiency_or(self, default: float) -> float:
        """The engine's achievable share of peak FLOP/s, or ``default`` (the settings') if it has none."""
        return default if self.compute_efficiency is None else self.compute_efficiency

    def memory_efficiency_or(self, default: float) -> float:
        """The engine's achievable share of the datasheet's memory bandwidth, or ``default``
        (the settings') if it has none: the fixed times of a fitted profile were fitted with it."""
        return default if self.memory_efficiency is None else self.memory_efficiency


def bounds_of(name: str) -> Bounds:
    """The :class:`Bounds` of the engine constant ``name`` (a field of :class:`EngineProfile`
    that has them), so that a fit searches only where a profile may lie.

    >>> bounds_of("overlap").text()
    '1 to 1000, or inf'
    """
    bounds = [rule for rule in field_rules(EngineProfile, name) if isinstance(rule, Bounds)]
    if not bounds:
        raise KeyError(f"{name} has no physical range")
    return bounds[0]


def out_of_range(profile: EngineProfile) -> str | None:
    """The first constant of ``profile`` outside its range, as ``name = value (what is
    allowed)``, or None: for a profile built directly in Python, not read through
    :func:`specmodel.model.profile_file.load_profile`, whose every constant
    :func:`specmodel.records.validate` would otherwise have checked."""
    from pydantic import ValidationError

    try:
        validate(EngineProfile, as_mapping(profile, {"fit", "domain"}))
    except ValidationError as exc:
        err = exc.errors()[0]
        return f"{'.'.join(map(str, err['loc']))} = {err.get('input')!r}, which {err['msg']}"
    return None


@cache
def engine_catalog() -> dict[str, EngineProfile]:
    """Every engine profile in ``data/engines.toml``, by key."""
    return load_catalog("engines.toml", EngineProfile)


def ngram_match_rate(first_acceptance: Numeric, matched_acceptance: Numeric | None) -> Numeric:
    """Share of iterations in which the n-gram lookup finds a match and drafts:
    ``m = min(1, u_1 / a)``, with u_1 the per-iteration acceptance of the first guess and a
    the chance that a matched lookup's first token is accepted. With no ``a`` the lookup
    always drafts (m = 1). From vLLM's counters, where the spec-decode counters count matched
    iterations only, ``m = num_drafts / (generation tokens - accepted tokens)``.

    >>> ngram_match_rate(0.2, 0.4), ngram_match_rate(0.6, 0.4), ngram_match_rate(0.2, None)
    (0.5, 1.0, 1.0)
    """
    if matched_acceptance is None:
        return 1.0 if np.ndim(first_acceptance) == 0 else np.ones(np.shape(first_acceptance))
    rate = np.minimum(1.0, np.asarray(first_acceptance, dtype=float) / matched_acceptance)
    return float(rate) if rate.ndim == 0 else rate
