"""Draft heads (EAGLE, multi-token prediction): their structure and what one step costs.

A head is one decoder layer of the target's shape (width D, heads N and K, head dim H, MLP
width F, b bytes per element) on the target's hidden states: an input projection from
``w D`` features to D, optional input RMSNorms, ``L_h`` decoder layers with their own KV
cache, a final norm, and an output head that is either the target's (``V D``, shared) or the
head's own over a reduced draft vocabulary (``V_d D``). The token embedding is the target's:
a step looks up one row per position (:func:`head_embedding_row_bytes`), charged where the
engine prices embedding reads as gathers (:mod:`specmodel.model.passes`), as the target's own
passes are; the ``ideal`` engine charges none, as the article does.

Each draft step reads every weight of the head plus the output head it scores with:
that read, ``V D b`` bytes with the target's head (1.16 GiB for Qwen3-8B), is most of the
step, which is why a reduced draft vocabulary matters.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Annotated

from annotated_types import Ge, MinLen

from specmodel.model import architecture as arch_
from specmodel.model.specs import Architecture, load_catalog
from specmodel.records import Record


@dataclass(frozen=True, kw_only=True)
class Head(Record):
    """A draft head's structure (``data/heads.toml``)."""

    key: str
    name: str
    source: Annotated[str, MinLen(1)]
    input_width: Annotated[int, Ge(0)]  #: per-step input projection from input_width x D to D (0: none)
    input_norms: Annotated[int, Ge(0)]
    decoder_layers: Annotated[int, Ge(1)]
    draft_vocab_size: Annotated[int, Ge(0)]  #: 0: the target's LM head
    fused_input_layers: Annotated[int, Ge(0)] = 0  #: target layers merged by a projection once per iteration
    attention_input_width: Annotated[int, Ge(1)] = 1  #: the first layer's q, k, v read this many times D features

    @property
    def shares_lm_head(self) -> bool:
        """Whether the head scores with the target's own LM head."""
        return self.draft_vocab_size == 0


@cache
def head_catalog() -> dict[str, Head]:
    """All draft heads in ``data/heads.toml``, by key."""
    return load_catalog("heads.toml", Head)


def draft_vocabulary(head: Head, target: Architecture) -> int:
    """Tokens the head scores each step: its draft vocabulary, or the target's V."""
    return target.vocab_size if head.shares_lm_head else head.draft_vocab_size


def head_wide_attention_parameters(head: Head, target: Architecture) -> int:
    """Extra q, k and v weights of a first layer that reads ``a`` times D features instead of
    D: ``(a - 1) D (N + 2K) H`` (EAGLE-3: a = 2, vLLM's llama_eagle3.py).

    >>> from specmodel.model.specs import get_architecture
    >>> head_wide_attention_parameters(head_catalog()["eagle3"], get_architecture("llama-3.1-8b"))
    25165824
    """
    d, n, k, h = target.hidden_size, target.num_attention_heads, target.num_key_value_heads, target.head_dim
    return (head.attention_input_width - 1) * d * (n + 2 * k) * h


def head_fused_projection_parameters(head: Head, target: Architecture) -> int:
    """The projection that merges ``f`` target layers' hidden states once per iteration,
    ``f D x D`` (EAGLE-3: f = 3, arXiv:2503.01840 Sec. 3); 0 for heads without one.

    >>> from specmodel.model.specs import get_architecture
    >>> head_fused_projection_parameters(head_catalog()["eagle3"], get_architecture("llama-3.1-8b"))
    50331648
    """
    return head.fused_input_layers * target.hidden_size * target.hidden_size


def head_own_parameters(head: Head, target: Architecture) -> int:
    """Weights the head adds to the card: ``w D^2 + f D^2 + n_norm D + L_h P_layer + P_wide + D``
    plus its own output matrix ``V_d D`` when it has a reduced vocabulary (EAGLE,
    arXiv:2401.15077, Sec. 4.1; DeepSeek-V3, arXiv:2412.19437, Eq. 21; EAGLE-3,
    arXiv:2503.01840: the fused projection f D^2 and the wide first layer P_wide).

    >>> from specmodel.model.specs import get_architecture
    >>> head_own_parameters(head_catalog()["eagle"], get_architecture("qwen3-8b"))
    226504960
    """
    d = target.hidden_size
    own = (
        head.input_width * d * d
        + head_fused_projection_parameters(head, target)
        + head.input_norms * d
        + head.decoder_layers * arch_.decoder_layer_parameters(target)
        + head_wide_attention_parameters(head, target)
        + d
    )
    if not head.shares_lm_head:
        own += arch_.lm_head_parameters(target, head.draft_vocab_size)
    return own


def head_parameters_read_per_step(head: Head, target: Architecture) -> int:
    """Weights one draft step reads: the head's own, but for a fused projection read once per
    iteration, plus the target's LM head ``V D`` if it scores with that one.

    >>> from specmodel.model.specs import get_architecture
    >>> t = get_architecture("qwen3-8b")
    >>> head_parameters_read_per_step(head_catalog()["eagle"], t) - head_own_parameters(head_catalog()["eagle"], t)
    622329856
    """
    shared = arch_.lm_head_parameters(target) if head.shares_lm_head else 0
    return head_own_parameters(head, target) - head_fused_projection_parameters(head, target) + shared


def head_embedding_row_bytes(head: Head, target: Architecture) -> int:
    """Bytes one position of a draft step gathers from the target's token embedding: a row,
    ``D b`` (:func:`specmodel.model.architecture.embedding_gather_bytes` of an untied table);
    0 when the step reads that table whole anyway, a tied target's output head that the head
    scores with.

    >>> from specmodel.model.specs import get_architecture
    >>> t, tied = get_architecture("qwen3-8b"), get_architecture("qwen3-4b")
    >>> head_embedding_row_bytes(head_catalog()["eagle"], t), head_embedding_row_bytes(head_catalog()["eagle"], tied)
    (8192, 0)
    >>> head_embedding_row_bytes(head_catalog()["eagle-32k"], tied)
    5120
    """
    if target.tie_word_embeddings and head.shares_lm_head:
        return 0
    return target.hidden_size * target.bytes_per_element


def lm_head_bytes_per_step(head: Head, target: Architecture) -> int:
    """Bytes of output matrix one draft step reads: ``V_d D b`` (``V D b`` with the target's head).

    >>> from specmodel.model.specs import get_architecture
    >>> lm_head_bytes_per_step(head_catalog()["eagle-32k"], get_architecture("qwen3-8b"))
    262144000
    """
    return arch_.lm_head_bytes(target, draft_vocabulary(head, target))


def head_kv_cache_bytes_per_token(head: Head, target: Architecture) -> int:
    """The head's own cache: ``2 L_h K H b`` per token (one layer: 4 KiB for Qwen3-8B), ``L_h``
    of the target's layers' share of :func:`specmodel.model.architecture.kv_cache_bytes_per_token`
    (a latent-attention target's layers cache ``R_kv + R`` elements).

    >>> from specmodel.model.specs import get_architecture
    >>> head_kv_cache_bytes_per_token(head_catalog()["mtp"], get_architecture("qwen3-8b"))
    4096
    """
    return head.decoder_layers * arch_.kv_cache_bytes_per_token(target) // target.num_hidden_layers


def head_dense_flops_per_position(head: Head, target: Architecture, flops_per_parameter: float) -> float:
    """FLOPs per query position outside attention: ``flops_per_parameter`` (``FLOPS_PER_PARAMETER``,
    2) per weight the step reads, as :func:`specmodel.model.architecture.dense_flops_per_position`
    counts a model's.

    >>> from specmodel.model.specs import get_architecture
    >>> head_dense_flops_per_position(head_catalog()["eagle"], get_architecture("qwen3-8b"), 2) / 1e9
    1.697669632
    """
    return flops_per_parameter * head_parameters_read_per_step(head, target)


def head_attention_flops_per_position_per_token(head: Head, target: Architecture) -> int:
    """Attention FLOPs per query position per cached token: ``4 L_h N H``, ``L_h`` of the target's
    layers' share of :func:`specmodel.model.architecture.attention_flops_per_position_per_token`."""
    return head.decoder_layers * arch_.attention_flops_per_position_per_token(target) // target.num_hidden_layers
