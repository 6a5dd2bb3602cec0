"""Where draft tokens come from, and what one draft pass costs.

Three kinds of drafter, all selected by name:

* a **draft model** from the catalogue (``qwen3-0.6b``, ``llama-3.2-1b``, ...): a model of
  its own with its own weights and KV cache; it must share the target's vocabulary and be
  smaller than the target;
* a **head** from ``data/heads.toml`` (``eagle``, ``eagle-32k``, ``mtp``): costed from its
  structure on the target's shape (:mod:`specmodel.model.heads`);
* ``ngram`` prompt lookup, which has no weights, no cache and no FLOPs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import numpy as np

from specmodel.errors import SpecModelError
from specmodel.model import architecture as arch_
from specmodel.model import heads as heads_
from specmodel.model import roofline
from specmodel.model.specs import Architecture, architecture_catalog, get_architecture
from specmodel.model.types import FloatArray, Numeric, StrArray
from specmodel.model.validation import compact

NGRAM = "ngram"
KINDS = ("model", "head", "ngram")

#: What the coefficients of a pass are: floats for one model, arrays for a grid of drafters.
N_co = TypeVar("N_co", bound=Numeric, covariant=True)


@dataclass(frozen=True)
class PassCoefficients(Generic[N_co]):
    """What one forward pass of a model costs, per unit of its inputs (SI units).

    ``weight_bytes`` is what a pass reads; ``resident_bytes`` is what the model adds to the
    card's memory (they differ for a head that reads the target's LM head).
    ``iteration_weight_bytes`` is what a drafter reads once per iteration rather than per pass
    (EAGLE-3's fused projection), at 2 FLOPs per weight per sequence; ``kind`` is ``model``,
    ``head`` or ``ngram`` (0, 1, 2 as numbers in a grid). ``layers``, ``kv_heads`` and
    ``activation_bytes`` (one position's hidden state, D b bytes) are what tensor parallelism
    needs: 2 L all-reduces of B Q D b bytes per pass, and the cache split by KV heads
    (:mod:`specmodel.model.parallel`). A mixture-of-experts model's ``weight_bytes`` are the
    weights every pass reads; it also reads ``expert_bytes`` (one expert in every MoE layer)
    for each distinct expert its tokens route to, top ``experts_per_token`` of ``experts``
    (:mod:`specmodel.model.experts`); 0, 1, 1 for a dense model."""

    weight_bytes: N_co
    resident_bytes: N_co
    kv_bytes_per_token: N_co
    dense_flops_per_position: N_co
    attention_flops_per_token: N_co
    iteration_weight_bytes: N_co
    iteration_flops_per_sequence: N_co
    kind: N_co
    layers: N_co
    kv_heads: N_co
    activation_bytes: N_co
    expert_bytes: N_co
    experts: N_co
    experts_per_token: N_co

    @classmethod
    def of_model(
        cls: type[PassCoefficients[Any]], arch: Architecture, flops_per_parameter: float
    ) -> PassCoefficients[float]:
        """A model of its own: holds all its weights; reads the shared ones every pass and the
        experts its tokens route to."""
        moe = arch_.is_moe(arch)
        return cls(
            float(arch_.shared_weight_bytes(arch)),
            float(arch_.weight_bytes(arch)),
            float(arch_.kv_cache_bytes_per_token(arch)),
            float(arch_.dense_flops_per_position(arch, flops_per_parameter)),
            float(arch_.attention_flops_per_position_per_token(arch)),
            0.0,
            0.0,
            float(KINDS.index("model")),
            float(arch.num_hidden_layers),
            float(arch.num_key_value_heads),
            float(arch.hidden_size * arch.bytes_per_element),
            float(arch_.moe_layer_count(arch) * arch_.expert_bytes(arch)) if moe else 0.0,
            float(arch.num_experts or 1) if moe else 1.0,
            float(arch.num_experts_per_tok or 1) if moe else 1.0,
        )

    @classmethod
    def of_head(
        cls: type[PassCoefficients[Any]], head: heads_.Head, target: Architecture, flops_per_parameter: float
    ) -> PassCoefficients[float]:
        """A draft head on ``target``: reads its own weights and the output head it scores with."""
        b = target.bytes_per_element
        read = heads_.head_parameters_read_per_step(head, target)
        fused = heads_.head_fused_projection_parameters(head, target)
        return cls(
            float(read * b),
            float(heads_.head_own_parameters(head, target) * b),
            float(heads_.head_kv_cache_bytes_per_token(head, target)),
            float(heads_.head_dense_flops_per_position(head, target, flops_per_parameter)),
            float(heads_.head_attention_flops_per_position_per_token(head, target)),
            float(fused * b),
            float(flops_per_parameter * fused),
            float(KINDS.index("head")),
            float(head.decoder_layers),
            float(target.num_key_value_heads),
            float(target.hidden_size * b),
            0.0,
            1.0,
            1.0,
        )

    @classmethod
    def of_drafters(
        cls: type[PassCoefficients[Any]], names: StrArray, target: str, flops_per_parameter: float
    ) -> PassCoefficients[FloatArray]:
        """The coefficients of each drafter in the array ``names``, as flat arrays of its size
        (each distinct name looked up once, on the compact form of a broadcast grid)."""
        small = compact(names)
        distinct, index = np.unique(small.ravel(), return_inverse=True)
        each = [drafter_coefficients(str(n), target, flops_per_parameter) for n in distinct]
        index = np.broadcast_to(index.reshape(small.shape), np.shape(names)).ravel()
        columns = {field: np.array([getattr(c, field) for c in each])[index] for field in cls.__dataclass_fields__}
        return cls(**columns)

    @classmethod
    def nothing(cls: type[PassCoefficients[Any]]) -> PassCoefficients[float]:
        """No pass at all (n-gram lookup)."""
        return cls(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, float(KINDS.index("ngram")), 0.0, 1.0, 0.0, 0.0, 1.0, 1.0)

    def flops_per_position(self, kv_length: Numeric) -> Numeric:
        """FLOPs for one query position at KV length n (:func:`specmodel.model.roofline.flops_per_position`)."""
        return roofline.flops_per_position(self.dense_flops_per_position, self.attention_flops_per_token, kv_length)


def drafter_kind(name: str) -> str:
    """``model``, ``head`` or ``ngram``; unknown names raise SpecModelError."""
    if name == NGRAM:
        return "ngram"
    if name in heads_.head_catalog():
        return "head"
    if name in architecture_catalog():
        return "model"
    raise SpecModelError(f"unknown drafter {name!r}; allowed: {', '.join(all_drafter_names())}")


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


def check_drafter(name: object, target: str, kinds: tuple[str, ...] = KINDS) -> str:
    """``name`` if it is a drafter of one of ``kinds`` for ``target``; else SpecModelError
    naming what is allowed."""
    allowed = [d for d in drafter_names(target) if drafter_kind(d) in kinds]
    if not isinstance(name, str) or name not in allowed:
        why = ""
        if isinstance(name, str) and name in architecture_catalog() and "model" in kinds:
            a, t = get_architecture(name), get_architecture(target)
            why = (
                f" (a draft model must share the target's vocabulary, {t.vocab_size} tokens, and be smaller; "
                f"{name} has {a.vocab_size} tokens and {arch_.parameter_count(a) / 1e9:.2f}B parameters)"
            )
        raise SpecModelError(f"drafter {name!r} cannot draft for {target}{why}; allowed: {', '.join(allowed)}")
    return name


def drafter_coefficients(name: str, target: str, flops_per_parameter: float) -> PassCoefficients[float]:
    """Pass coefficients of drafter ``name`` serving ``target`` (``flops_per_parameter``:
    ``FLOPS_PER_PARAMETER``)."""
    kind = drafter_kind(name)
    if kind == "ngram":
        return PassCoefficients.nothing()
    if kind == "head":
        return PassCoefficients.of_head(heads_.head_catalog()[name], get_architecture(target), flops_per_parameter)
    return PassCoefficients.of_model(get_architecture(name), flops_per_parameter)


def drafter_label(name: str) -> str:
    """A drafter's display name: the model's or head's name, or ``n-gram lookup``."""
    kind = drafter_kind(name)
    if kind == "ngram":
        return "n-gram lookup"
    if kind == "head":
        return heads_.head_catalog()[name].name
    return get_architecture(name).name
