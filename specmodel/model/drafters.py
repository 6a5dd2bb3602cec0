"""Where draft tokens come from, and what drafting costs: each kind of drafter is a small
object that prices its own passes.

* a **draft model** (:class:`DraftModel`) from the catalogue (``qwen3-0.6b``,
  ``llama-3.2-1b``, ...): a model of its own with its own weights and KV cache; it must share
  the target's vocabulary and be smaller than the target;
* a **head** (:class:`DraftHead`) from ``data/heads.toml`` (``eagle``, ``eagle-32k``,
  ``mtp``): costed from its structure on the target's shape (:mod:`specmodel.model.heads`);
  a head that fuses the features of several target layers (:class:`FusedHead`, EAGLE-3)
  also reads its fused projection once per iteration;
* ``ngram`` prompt lookup (:class:`NgramLookup`), which has no weights, no cache and no
  FLOPs.

A drafter returns the coefficients of one draft step (:meth:`Drafter.step`), of what it
reads once per iteration (:meth:`Drafter.once_per_iteration`), and the fixed terms an
engine charges it (:meth:`Drafter.engine_terms`: time per step, CPU time per sequence, the
share of iterations it drafts in). A tree of guesses is any of these drafting w candidates
per step (the scenario's ``tree_topk``, :mod:`specmodel.model.layout`); its gamma steps run
the query positions per sequence its engine's construction runs
(:func:`specmodel.model.trees.draft_positions`), priced from the same :meth:`Drafter.step`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from functools import cache

import numpy as np

from specmodel.errors import SpecModelError
from specmodel.model import architecture as arch_
from specmodel.model import heads as heads_
from specmodel.model.engines import EngineProfile, ngram_match_rate
from specmodel.model.passes import PassCoefficients
from specmodel.model.specs import Architecture, architecture_catalog, get_architecture
from specmodel.model.types import FloatArray

NGRAM = "ngram"


class DrafterKind(StrEnum):
    """The kinds of drafter (each prices its passes and its engine terms its own way)."""

    MODEL = "model"
    HEAD = "head"
    FUSED_HEAD = "fused_head"
    NGRAM = "ngram"


@dataclass(frozen=True, kw_only=True)
class DraftTerms:
    """What an engine charges a drafter beyond its passes' roofline (SI units; arrays over the
    scenarios that share the drafter and the engine)."""

    step_s: float  #: fixed time per draft step (launches, scheduling)
    lookup_s: float  #: CPU time per sequence per iteration of a drafter that drafts by lookup
    drafting_share: FloatArray  #: share of iterations in which the drafter drafts at all


@dataclass(frozen=True)
class Drafter:
    """A drafter serving a target; subclasses price its passes and name its engine constants."""

    name: str
    kind = DrafterKind.MODEL

    def step(self, target: Architecture, flops_per_parameter: float) -> PassCoefficients[float]:
        """The coefficients of one draft step, a forward pass over Q positions per sequence
        (Q = 1 for a chain; a tree's mean over its construction, :mod:`specmodel.model.trees`)."""
        raise NotImplementedError

    def once_per_iteration(self, target: Architecture, flops_per_parameter: float) -> PassCoefficients[float]:
        """What the drafter reads once per iteration rather than per step (nothing by default)."""
        return PassCoefficients.nothing()

    def step_time(self, engine: EngineProfile) -> float:
        """The engine's fixed time per draft step of this drafter."""
        raise NotImplementedError

    def engine_terms(self, engine: EngineProfile, first_acceptance: FloatArray) -> DraftTerms:
        """The engine's fixed terms for this drafter, where the first guess is accepted with
        per-iteration probability ``first_acceptance``: its step time, no lookup, and it
        drafts in every iteration."""
        share = np.ones(np.shape(first_acceptance))
        return DraftTerms(step_s=self.step_time(engine), lookup_s=0.0, drafting_share=share)

    @property
    def label(self) -> str:
        """The drafter's display name."""
        raise NotImplementedError


@dataclass(frozen=True)
class DraftModel(Drafter):
    """A model of its own drafting for the target."""

    arch: Architecture
    kind = DrafterKind.MODEL

    def step(self, target: Architecture, flops_per_parameter: float) -> PassCoefficients[float]:
        return PassCoefficients.of_model(self.arch, flops_per_parameter)

    def step_time(self, engine: EngineProfile) -> float:
        return engine.draft_model_pass

    @property
    def label(self) -> str:
        return self.arch.name


@dataclass(frozen=True)
class DraftHead(Drafter):
    """A head on the target's hidden states: reads its own weights and the output head it scores
    with at every step."""

    head: heads_.Head
    kind = DrafterKind.HEAD

    def step_time(self, engine: EngineProfile) -> float:
        return engine.head_pass_s

    def step(self, target: Architecture, flops_per_parameter: float) -> PassCoefficients[float]:
        element_bytes = target.bytes_per_element
        return PassCoefficients(
            weight_bytes=float(heads_.head_parameters_read_per_step(self.head, target) * element_bytes),
            resident_bytes=float(heads_.head_own_parameters(self.head, target) * element_bytes),
            kv_bytes_per_token=float(heads_.head_kv_cache_bytes_per_token(self.head, target)),
            dense_flops_per_position=float(
                heads_.head_dense_flops_per_position(self.head, target, flops_per_parameter)
            ),
            attention_flops_per_token=float(heads_.head_attention_flops_per_position_per_token(self.head, target)),
            layers=float(self.head.decoder_layers),
            kv_heads=float(arch_.tensor_parallel_kv_heads(target)),
            activation_bytes=float(target.hidden_size * element_bytes),
            embedding_row_bytes=float(heads_.head_embedding_row_bytes(self.head, target)),
        )

    @property
    def label(self) -> str:
        return self.head.name


@dataclass(frozen=True)
class FusedHead(DraftHead):
    """A head that merges the hidden states of several target layers with a projection read once
    per iteration (EAGLE-3), at ``flops_per_parameter`` FLOPs per weight per sequence."""

    kind = DrafterKind.FUSED_HEAD

    def step_time(self, engine: EngineProfile) -> float:
        return engine.fused_head_pass

    def once_per_iteration(self, target: Architecture, flops_per_parameter: float) -> PassCoefficients[float]:
        fused = heads_.head_fused_projection_parameters(self.head, target)
        return PassCoefficients(
            weight_bytes=float(fused * target.bytes_per_element),
            resident_bytes=0.0,
            kv_bytes_per_token=0.0,
            dense_flops_per_position=float(flops_per_parameter * fused),
            attention_flops_per_token=0.0,
            layers=0.0,
            kv_heads=1.0,
            activation_bytes=0.0,
        )


@dataclass(frozen=True)
class NgramLookup(Drafter):
    """Prompt lookup: copies a continuation out of the prompt. No pass at all: its whole cost is
    the engine's CPU time per sequence and iteration (:meth:`engine_terms`), and it drafts only
    when the lookup finds a match."""

    kind = DrafterKind.NGRAM

    def step(self, target: Architecture, flops_per_parameter: float) -> PassCoefficients[float]:
        return PassCoefficients.nothing()

    def step_time(self, engine: EngineProfile) -> float:
        return 0.0

    def engine_terms(self, engine: EngineProfile, first_acceptance: FloatArray) -> DraftTerms:
        """No step; ``ngram_lookup_s`` of CPU per sequence per iteration; drafting in the share
        of iterations whose lookup matches (:func:`specmodel.model.engines.ngram_match_rate`)."""
        share = ngram_match_rate(first_acceptance, engine.ngram_matched_acceptance)
        return DraftTerms(step_s=0.0, lookup_s=engine.ngram_lookup_s, drafting_share=np.asarray(share, dtype=float))

    @property
    def label(self) -> str:
        return "n-gram lookup"


@cache
def drafter_of(name: str) -> Drafter:
    """The drafter called ``name`` (any target); an unknown name lists the known ones."""
    if name == NGRAM:
        return NgramLookup(name)
    head = heads_.head_catalog().get(name)
    if head is not None:
        return FusedHead(name, head) if head.fused_input_layers else DraftHead(name, head)
    if name in architecture_catalog():
        return DraftModel(name, get_architecture(name))
    raise SpecModelError(f"unknown drafter {name!r}; allowed: {', '.join(all_drafter_names())}")


def drafter_kind(name: str) -> DrafterKind:
    """The kind of drafter ``name``; unknown names raise SpecModelError."""
    return drafter_of(name).kind


def all_drafter_names() -> tuple[str, ...]:
    """Every drafter name, for any target."""
    return (*architecture_catalog(), NGRAM, *heads_.head_catalog())


def draft_models_for(target: str) -> tuple[str, ...]:
    """Catalogue models that can draft for ``target``, smallest first: same vocabulary,
    fewer parameters."""
    t = get_architecture(target)
    size = arch_.parameter_count(t)
    fit = [
        (arch_.parameter_count(a), k)
        for k, a in architecture_catalog().items()
        if a.vocab_size == t.vocab_size and arch_.parameter_count(a) < size
    ]
    return tuple(k for _, k in sorted(fit))


def drafter_names(target: str) -> tuple[str, ...]:
    """Every drafter that can serve ``target``: its draft models, ``ngram``, then the heads."""
    return (*draft_models_for(target), NGRAM, *heads_.head_catalog())


def check_drafter(name: object, target: str, kinds: tuple[DrafterKind, ...] = tuple(DrafterKind)) -> str:
    """``name`` if it is a drafter of one of ``kinds`` for ``target``; else SpecModelError
    naming what is allowed."""
    allowed = [d for d in drafter_names(target) if drafter_kind(d) in kinds]
    if not isinstance(name, str) or name not in allowed:
        why = ""
        if isinstance(name, str) and name in architecture_catalog() and DrafterKind.MODEL in kinds:
            a, t = get_architecture(name), get_architecture(target)
            why = (
                f" (a draft model must share the target's vocabulary, {t.vocab_size} tokens, and be smaller; "
                f"{name} has {a.vocab_size} tokens and {arch_.parameter_count(a) / 1e9:.2f}B parameters)"
            )
        raise SpecModelError(f"drafter {name!r} cannot draft for {target}{why}; allowed: {', '.join(allowed)}")
    return name


#: The head that needs the target's own multi-token-prediction layers (data/heads.toml).
MTP = "mtp"


def has_declared_head(drafter: str, target: str) -> bool:
    """Whether ``target`` ships ``drafter``: every drafter but ``mtp``, which needs the
    target's config.json to declare multi-token-prediction layers (``num_nextn_predict_layers``).

    >>> has_declared_head("mtp", "qwen3-8b"), has_declared_head("eagle", "qwen3-8b")
    (False, True)
    """
    return drafter != MTP or get_architecture(target).num_nextn_predict_layers > 0


def check_declared_head(drafter: str, target: str) -> None:
    """Refuse a drafter the target does not ship: an ``mtp`` head drafts with the target's own
    multi-token-prediction layers (DeepSeek-V3, arXiv:2412.19437, Sec. 2.2), so a target whose
    config.json declares none (``num_nextn_predict_layers`` 0 or absent) has no MTP drafter;
    one line naming what it can serve with instead. Every other drafter passes.

    The command line's ``point`` and ``sweep`` call this on the drafter they are given; the
    model itself (:func:`check_drafter`, :func:`specmodel.model.evaluate.scenario_grid`) does
    not, so that the article can price a hypothetical MTP head on a target that has none.

    >>> check_declared_head("eagle", "qwen3-8b")
    >>> check_declared_head("mtp", "qwen3-8b")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    specmodel.errors.SpecModelError: qwen3-8b's config.json declares no multi-token-prediction layers ...
    """
    if has_declared_head(drafter, target):
        return
    raise SpecModelError(
        f"{target}'s config.json declares no multi-token-prediction layers (num_nextn_predict_layers); "
        "give --drafter eagle, eagle3, ngram or a draft model"
    )


def drafter_coefficients(name: str, target: str, flops_per_parameter: float) -> PassCoefficients[float]:
    """Coefficients of one draft step of drafter ``name`` serving ``target`` (``flops_per_parameter``:
    ``FLOPS_PER_PARAMETER``)."""
    return drafter_of(name).step(get_architecture(target), flops_per_parameter)


def drafter_label(name: str) -> str:
    """A drafter's display name: the model's or head's name, or ``n-gram lookup``."""
    return drafter_of(name).label
