"""Quantities derived from a model's architecture: parameters, bytes and FLOPs.

Notation: L layers, D hidden size, N query heads, K KV heads, H head dim, F MLP width,
V vocabulary, b bytes per element, n KV length (tokens in the cache a pass reads).
All results are in SI units: counts, bytes, FLOPs.
"""

from __future__ import annotations

from specmodel.model.specs import Architecture


def embedding_parameters(arch: Architecture) -> int:
    """Input embedding plus output head: ``V D`` if tied, else ``2 V D``.

    >>> from specmodel.model.specs import get_architecture
    >>> embedding_parameters(get_architecture("qwen3-0.6b"))
    155582464
    """
    tables = 1 if arch.tie_word_embeddings else 2
    return tables * arch.vocab_size * arch.hidden_size


def attention_parameters_per_layer(arch: Architecture) -> int:
    """Q, K, V and output projections, without biases: ``2 D N H + 2 D K H``.

    Q and O are ``D x N H``, K and V are ``D x K H`` (grouped-query attention, Ainslie et
    al. 2023, arXiv:2305.13245). Qwen3 and Llama both set ``attention_bias`` false in
    config.json (transformers' ``Qwen3Attention`` / ``LlamaAttention`` then build
    bias-free ``nn.Linear`` projections); the Architecture record rejects a true value.

    >>> from specmodel.model.specs import get_architecture
    >>> attention_parameters_per_layer(get_architecture("llama-3.2-1b"))
    10485760
    """
    d, h = arch.hidden_size, arch.head_dim
    return 2 * d * arch.num_attention_heads * h + 2 * d * arch.num_key_value_heads * h


def mlp_parameters_per_layer(arch: Architecture) -> int:
    """Gated MLP (gate, up and down projections): ``3 D F``."""
    return 3 * arch.hidden_size * arch.intermediate_size


def norm_parameters_per_layer(arch: Architecture) -> int:
    """RMSNorm gains per layer: ``2 D + 2 H`` for Qwen3, ``2 D`` for Llama.

    Both families have the input and post-attention RMSNorms of width D
    (transformers ``LlamaDecoderLayer`` / ``Qwen3DecoderLayer``). Qwen3 also normalises
    queries and keys per head: ``q_norm`` and ``k_norm`` are ``Qwen3RMSNorm(head_dim)``
    in ``Qwen3Attention`` ("qk layernorm for all models", Qwen3 model cards; Qwen3
    Technical Report, arXiv:2505.09388). Llama has no q/k norms.

    >>> from specmodel.model.specs import get_architecture
    >>> norm_parameters_per_layer(get_architecture("qwen3-8b"))  # 2 x 4096 + 2 x 128
    8448
    >>> norm_parameters_per_layer(get_architecture("llama-3.1-8b"))  # 2 x 4096
    8192
    """
    qk_norms = {"qwen3": 2 * arch.head_dim, "llama": 0}[arch.model_type]
    return 2 * arch.hidden_size + qk_norms


def decoder_layer_parameters(arch: Architecture) -> int:
    """One decoder layer: attention + MLP + norms.

    >>> from specmodel.model.specs import get_architecture
    >>> decoder_layer_parameters(get_architecture("qwen3-8b"))
    192946432
    """
    return attention_parameters_per_layer(arch) + mlp_parameters_per_layer(arch) + norm_parameters_per_layer(arch)


def lm_head_parameters(arch: Architecture, vocab_size: int | None = None) -> int:
    """The output head's matrix over a vocabulary of ``vocab_size`` tokens (default V): ``V D``.

    >>> from specmodel.model.specs import get_architecture
    >>> lm_head_parameters(get_architecture("qwen3-8b")), lm_head_parameters(get_architecture("qwen3-8b"), 32000)
    (622329856, 131072000)
    """
    return (arch.vocab_size if vocab_size is None else vocab_size) * arch.hidden_size


def lm_head_bytes(arch: Architecture, vocab_size: int | None = None) -> int:
    """Bytes of the output head over ``vocab_size`` tokens (default V): ``V D b``, read in full by
    every pass that scores the vocabulary.

    >>> from specmodel.model.specs import get_architecture
    >>> lm_head_bytes(get_architecture("qwen3-0.6b"))
    311164928
    """
    return lm_head_parameters(arch, vocab_size) * arch.bytes_per_element


def parameter_count(arch: Architecture) -> int:
    """Every weight: embeddings + ``L`` x (attention + MLP + norms) + the final norm ``D``.

    >>> from specmodel.model.specs import get_architecture
    >>> parameter_count(get_architecture("qwen3-8b"))
    8190735360
    """
    return embedding_parameters(arch) + arch.num_hidden_layers * decoder_layer_parameters(arch) + arch.hidden_size


def weight_bytes(arch: Architecture) -> int:
    """Bytes one forward pass reads for the weights: ``parameters x b``.

    A decode pass touches every weight once (the output head reads the whole
    embedding table, so a tied table is read once, an untied pair twice).

    >>> from specmodel.model.specs import get_architecture
    >>> round(weight_bytes(get_architecture("qwen3-8b")) / 2**30, 2)
    15.26
    """
    return parameter_count(arch) * arch.bytes_per_element


def kv_cache_bytes_per_token(arch: Architecture) -> int:
    """Bytes of K and V cache per token: ``2 L K H b``.

    Grouped-query attention stores K heads, not N (Ainslie et al. 2023, arXiv:2305.13245).

    >>> from specmodel.model.specs import get_architecture
    >>> kv_cache_bytes_per_token(get_architecture("qwen3-8b")) // 1024
    144
    """
    return 2 * arch.num_hidden_layers * arch.num_key_value_heads * arch.head_dim * arch.bytes_per_element


def dense_flops_per_position(arch: Architecture, flops_per_parameter: float) -> float:
    """FLOPs per query position outside attention: ``flops_per_parameter x parameters``
    (``FLOPS_PER_PARAMETER``, 2).

    One multiply-add (2 FLOPs) per weight read, the 2N rule of Kaplan et al. 2020
    (arXiv:2001.08361, Eq. 2.2). Following the article, N counts every weight the pass
    reads, embedding table included (see ``FLOPS_PER_PARAMETER``).

    >>> from specmodel.model.specs import get_architecture
    >>> dense_flops_per_position(get_architecture("qwen3-8b"), 2) / 1e9
    16.38147072
    """
    return flops_per_parameter * parameter_count(arch)


def draft_cost_ratio(draft: Architecture, target: Architecture, flops_per_parameter: float) -> float:
    """``c``: the draft model's dense operations per token over the target's,
    ``P_draft / P_target`` (Leviathan et al. 2023, arXiv:2211.17192, Sec. 3.3 and Theorem 3.11).

    >>> from specmodel.model.specs import get_architecture
    >>> round(draft_cost_ratio(get_architecture("qwen3-0.6b"), get_architecture("qwen3-8b"), 2), 3)
    0.073
    """
    return dense_flops_per_position(draft, flops_per_parameter) / dense_flops_per_position(target, flops_per_parameter)


def attention_flops_per_position_per_token(arch: Architecture) -> int:
    """Attention FLOPs per query position per cached token: ``4 L N H``.

    Scores ``q.k`` and the weighted sum of values each cost one multiply-add per head
    dimension per cached token: ``2 x 2 L N H`` (Chowdhery et al. 2022, PaLM,
    arXiv:2204.02311, Appendix B). Multiply by the KV length n.
    """
    return 4 * arch.num_hidden_layers * arch.num_attention_heads * arch.head_dim
