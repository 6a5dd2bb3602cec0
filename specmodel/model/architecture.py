"""Quantities derived from a model's architecture: parameters, bytes and FLOPs.

Notation: L layers, D hidden size, N query heads, K KV heads, H head dim, F MLP width,
V vocabulary, b bytes per element, n KV length (tokens in the cache a pass reads); for a
mixture-of-experts model also E experts per MoE layer, k_e experts per token, F_moe one
expert's MLP width and L_moe the number of MoE layers.
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
    """Gated MLP (gate, up and down projections): ``3 D F``.

    The dense MLP of width ``intermediate_size``; a mixture-of-experts model has it only in
    its dense layers (see :func:`moe_layer_count`).
    """
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

    Qwen3-MoE's attention is Qwen3's (``Qwen3MoeAttention`` has the same ``q_norm`` and
    ``k_norm``), so ``qwen3_moe`` counts them too.
    """
    qk_norms = {"qwen3": 2 * arch.head_dim, "qwen3_moe": 2 * arch.head_dim, "llama": 0}[arch.model_type]
    return 2 * arch.hidden_size + qk_norms


def decoder_layer_parameters(arch: Architecture) -> int:
    """One dense decoder layer: attention + MLP (width F) + norms.

    For a mixture-of-experts model this is one of its dense layers (``mlp_only_layers``), not
    an MoE layer; :func:`parameter_count` counts the MoE layers' experts and routers.

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


def input_embedding_bytes(arch: Architecture) -> int:
    """Bytes of the input embedding table that no other part of a pass reads whole: ``V D b``
    when untied, 0 when tied.

    A tied table (``tie_word_embeddings``) is also the output head, which every pass reads
    whole; an untied one is read by the token lookup alone, which gathers rows
    (:func:`embedding_gather_bytes`), not the table.

    >>> from specmodel.model.specs import get_architecture
    >>> input_embedding_bytes(get_architecture("qwen3-8b")), input_embedding_bytes(get_architecture("qwen3-0.6b"))
    (1244659712, 0)
    """
    return 0 if arch.tie_word_embeddings else arch.vocab_size * arch.hidden_size * arch.bytes_per_element


def embedding_gather_bytes(arch: Architecture, tokens: int = 1) -> int:
    """Bytes the token lookup of a pass reads from an untied input embedding for ``tokens``
    query positions: ``tokens D b`` (one row of D elements per position, B Q rows for B
    sequences of Q positions); 0 for a tied table, whose rows the output head reads anyway.

    An embedding lookup reads the rows its token ids index (PyTorch's ``F.embedding``, an
    index into the table; vLLM's ``VocabParallelEmbedding`` does the same on each GPU's slice
    of the vocabulary), not the V x D table: for Qwen3-8B one position reads 8 KiB, the
    table is 1.16 GiB.

    >>> from specmodel.model.specs import get_architecture
    >>> embedding_gather_bytes(get_architecture("qwen3-8b"), 64 * 5)  # 64 sequences, 5 positions each
    2621440
    >>> embedding_gather_bytes(get_architecture("qwen3-0.6b"), 64 * 5)  # tied
    0
    """
    row = 0 if arch.tie_word_embeddings else arch.hidden_size * arch.bytes_per_element
    return tokens * row


def is_moe(arch: Architecture) -> bool:
    """Whether ``arch`` is a mixture-of-experts model (its record carries the expert fields).

    >>> from specmodel.model.specs import get_architecture
    >>> is_moe(get_architecture("qwen3-30b-a3b")), is_moe(get_architecture("qwen3-8b"))
    (True, False)
    """
    return arch.num_experts is not None


def moe_layer_count(arch: Architecture) -> int:
    """``L_moe``: the layers whose MLP is a sparse block of experts (0 for a dense model).

    Layer ``i`` (0-based) is MoE iff ``i`` is not in ``mlp_only_layers`` and
    ``(i + 1) % decoder_sparse_step == 0``, with ``num_experts > 0``; every other layer keeps
    a dense MLP of width ``intermediate_size``. This is the rule of transformers'
    ``Qwen3MoeDecoderLayer.__init__`` (src/transformers/models/qwen3_moe/modeling_qwen3_moe.py,
    huggingface/transformers commit 00d4b3d2142cb4ced2f51b90614b5d26bc045015). Qwen3-30B-A3B
    and Qwen3-235B-A22B set ``decoder_sparse_step = 1`` and ``mlp_only_layers = []``: every
    layer is MoE and ``intermediate_size`` is unused.

    >>> from specmodel.model.specs import get_architecture
    >>> m = get_architecture("qwen3-30b-a3b")
    >>> moe_layer_count(m), moe_layer_count(m.model_copy(update={"decoder_sparse_step": 2, "mlp_only_layers": (1,)}))
    (48, 23)
    """
    if arch.decoder_sparse_step is None:
        return 0
    dense = set(arch.mlp_only_layers or ())
    step = arch.decoder_sparse_step
    return sum(1 for i in range(arch.num_hidden_layers) if i not in dense and (i + 1) % step == 0)


def expert_parameters(arch: Architecture) -> int:
    """One expert of one MoE layer, a gated MLP (gate, up, down, no biases): ``3 D F_moe``.

    transformers' ``Qwen3MoeSparseMoeBlock`` builds each expert as
    ``Qwen3MoeMLP(config, intermediate_size=config.moe_intermediate_size)``; Qwen3-MoE has
    no shared expert. 0 for a dense model.

    >>> from specmodel.model.specs import get_architecture
    >>> expert_parameters(get_architecture("qwen3-30b-a3b"))  # 3 x 2048 x 768
    4718592
    """
    if arch.moe_intermediate_size is None:
        return 0
    return 3 * arch.hidden_size * arch.moe_intermediate_size


def router_parameters(arch: Architecture) -> int:
    """The router (gate) of one MoE layer: ``D E`` (``nn.Linear(D, E, bias=False)`` in
    transformers' ``Qwen3MoeSparseMoeBlock``). 0 for a dense model.

    >>> from specmodel.model.specs import get_architecture
    >>> router_parameters(get_architecture("qwen3-30b-a3b"))  # 2048 x 128
    262144
    """
    if arch.num_experts is None:
        return 0
    return arch.hidden_size * arch.num_experts


def _experts_per_layer(arch: Architecture) -> tuple[int, int]:
    """(E, k): experts per MoE layer and experts per token; (0, 0) for a dense model."""
    if arch.num_experts is None or arch.num_experts_per_tok is None:
        return 0, 0
    return arch.num_experts, arch.num_experts_per_tok


def parameter_count(arch: Architecture) -> int:
    """Every weight: embeddings + ``L`` x (attention + norms) + ``(L - L_moe)`` dense MLPs
    + ``L_moe`` x (router + E experts) + the final norm ``D``.

    For a dense model (``L_moe = 0``) this is embeddings + ``L`` x (attention + MLP + norms)
    + ``D``. Every expert is counted: this is what the checkpoint holds.

    >>> from specmodel.model.specs import get_architecture
    >>> parameter_count(get_architecture("qwen3-8b"))
    8190735360
    >>> parameter_count(get_architecture("qwen3-30b-a3b"))  # card: "30.5B in total"
    30532122624
    """
    layers, moe_layers = arch.num_hidden_layers, moe_layer_count(arch)
    experts, _ = _experts_per_layer(arch)
    per_layer = attention_parameters_per_layer(arch) + norm_parameters_per_layer(arch)
    moe = router_parameters(arch) + experts * expert_parameters(arch)
    return (
        embedding_parameters(arch)
        + layers * per_layer
        + (layers - moe_layers) * mlp_parameters_per_layer(arch)
        + moe_layers * moe
        + arch.hidden_size
    )


def active_parameter_count(arch: Architecture) -> int:
    """The weights one token uses: every parameter but the ``E - k`` experts it is not routed
    to in each MoE layer, ``P - L_moe (E - k) 3 D F_moe``.

    Embeddings, attention, norms, dense MLPs and routers are used by every token; of each
    MoE layer's E experts a token uses its top k. Equal to :func:`parameter_count` for a
    dense model. Like the total, it counts the embedding table and the output head.

    >>> from specmodel.model.specs import get_architecture
    >>> active_parameter_count(get_architecture("qwen3-30b-a3b"))  # card: "3.3B activated"
    3353032704
    """
    experts, per_token = _experts_per_layer(arch)
    return parameter_count(arch) - moe_layer_count(arch) * (experts - per_token) * expert_parameters(arch)


def weight_bytes(arch: Architecture) -> int:
    """Bytes of every weight, ``parameters x b``: what the model holds, and what one forward
    pass reads when it reads every weight once (the output head reads the whole embedding
    table, so a tied table is read once, an untied pair twice).

    An engine's pass reads an untied input embedding by rows instead
    (:func:`embedding_gather_bytes`); the pass's price subtracts :func:`input_embedding_bytes`
    where its engine gathers (:mod:`specmodel.model.passes`).

    >>> from specmodel.model.specs import get_architecture
    >>> round(weight_bytes(get_architecture("qwen3-8b")) / 2**30, 2)
    15.26
    """
    return parameter_count(arch) * arch.bytes_per_element


def expert_bytes(arch: Architecture) -> int:
    """Bytes of one expert of one MoE layer: ``3 D F_moe b`` (0 for a dense model).

    >>> from specmodel.model.specs import get_architecture
    >>> expert_bytes(get_architecture("qwen3-30b-a3b"))
    9437184
    """
    return expert_parameters(arch) * arch.bytes_per_element


def shared_weight_bytes(arch: Architecture) -> int:
    """Bytes every pass reads whatever the routing: all weights but the experts,
    ``weight_bytes - L_moe E 3 D F_moe b`` (embeddings, attention, norms, dense MLPs, routers).

    Equal to :func:`weight_bytes` for a dense model. A pass of an MoE model reads this plus
    the experts its tokens are routed to (:func:`specmodel.model.experts.routed_expert_bytes`).

    >>> from specmodel.model.specs import get_architecture
    >>> round(shared_weight_bytes(get_architecture("qwen3-30b-a3b")) / 2**30, 3)  # of 56.871 GiB
    2.871
    """
    experts, _ = _experts_per_layer(arch)
    return weight_bytes(arch) - moe_layer_count(arch) * experts * expert_bytes(arch)


def kv_cache_bytes_per_token(arch: Architecture) -> int:
    """Bytes of K and V cache per token: ``2 L K H b``.

    Grouped-query attention stores K heads, not N (Ainslie et al. 2023, arXiv:2305.13245).

    >>> from specmodel.model.specs import get_architecture
    >>> kv_cache_bytes_per_token(get_architecture("qwen3-8b")) // 1024
    144
    """
    return 2 * arch.num_hidden_layers * arch.num_key_value_heads * arch.head_dim * arch.bytes_per_element


def dense_flops_per_position(arch: Architecture, flops_per_parameter: float) -> float:
    """FLOPs per query position outside attention: ``flops_per_parameter x active parameters``
    (``FLOPS_PER_PARAMETER``, 2).

    One multiply-add (2 FLOPs) per weight a position uses, the 2N rule of Kaplan et al. 2020
    (arXiv:2001.08361, Eq. 2.2; their N is P here). Following the article, P counts every
    weight the position goes through, embedding table included (see ``FLOPS_PER_PARAMETER``):
    all the weights of a dense model; of a mixture-of-experts model's experts only the k the
    position is routed to in each MoE layer (:func:`active_parameter_count`).

    >>> from specmodel.model.specs import get_architecture
    >>> dense_flops_per_position(get_architecture("qwen3-8b"), 2) / 1e9
    16.38147072
    >>> dense_flops_per_position(get_architecture("qwen3-30b-a3b"), 2) / 1e9
    6.706065408
    """
    return flops_per_parameter * active_parameter_count(arch)


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
