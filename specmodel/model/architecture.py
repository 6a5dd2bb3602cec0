"""Quantities derived from a model's architecture: parameters, bytes and FLOPs.

Notation: L layers, D hidden size, N query heads, K KV heads, H head dim, F MLP width,
V vocabulary, b bytes per element, n KV length (tokens in the cache a pass reads); for a
mixture-of-experts model also E experts per MoE layer, k_e experts per token, F_moe one
expert's MLP width and L_moe the number of MoE layers; for multi-head latent attention
(DeepSeek-V3) R_q the query rank, R_kv the key-value latent rank, P and R the per-head
query/key widths without and with rotary embedding, H_v the per-head value width.
All results are in SI units: counts, bytes, FLOPs.

The layouts and the transformers modelling file each follows (src/transformers/models/...):
``llama`` (llama/modeling_llama.py; also Mistral's mistral/modeling_mistral.py, Llama's
layout, read as ``llama``), ``qwen2`` (qwen2/modeling_qwen2.py: q/k/v with biases), ``qwen3``
(qwen3/modeling_qwen3.py: q/k RMSNorms), ``gemma2`` (gemma2/modeling_gemma2.py: four
RMSNorms a layer), ``gemma3_text`` (gemma3/modeling_gemma3.py: Gemma 2's plus q/k RMSNorms),
``mixtral`` (mixtral/modeling_mixtral.py), ``qwen2_moe`` (qwen2_moe/modeling_qwen2_moe.py:
one gated shared expert), ``qwen3_moe`` (qwen3_moe/modeling_qwen3_moe.py) and
``deepseek_v3`` (deepseek_v3/modeling_deepseek_v3.py and vLLM's
vllm/model_executor/models/deepseek_v2.py: latent attention, shared experts, dense first
layers).
"""

from __future__ import annotations

from dataclasses import dataclass

from specmodel.model import quantization
from specmodel.model.specs import Architecture


@dataclass(frozen=True)
class Layout:
    """What a family adds to the Llama decoder layer: biases on q, k and v (Qwen2's
    ``Qwen2Attention`` builds them with ``bias=True``, ``o_proj`` without), per-head q/k
    RMSNorms (Qwen3, Gemma 3), and the RMSNorms of width D per layer (2: input and
    post-attention; Gemma's 4 add pre- and post-feedforward)."""

    qkv_bias: bool = False
    qk_norms: bool = False
    layer_norms: int = 2


#: Each ``model_type``'s layout (see the module docstring for the modelling files).
LAYOUTS = {
    "llama": Layout(),
    "mixtral": Layout(),
    "qwen2": Layout(qkv_bias=True),
    "qwen2_moe": Layout(qkv_bias=True),
    "qwen3": Layout(qk_norms=True),
    "qwen3_moe": Layout(qk_norms=True),
    "gemma2": Layout(layer_norms=4),
    "gemma3_text": Layout(qk_norms=True, layer_norms=4),
    "deepseek_v3": Layout(),
}


def is_latent_attention(arch: Architecture) -> bool:
    """Whether ``arch`` uses multi-head latent attention (DeepSeek-V2/V3, arXiv:2405.04434):
    its cache holds one compressed latent per token and layer, not K heads.

    >>> from specmodel.model.specs import get_architecture
    >>> is_latent_attention(get_architecture("qwen3-8b"))
    False
    """
    return arch.kv_lora_rank is not None


def embedding_parameters(arch: Architecture) -> int:
    """Input embedding plus output head: ``V D`` if tied, else ``2 V D``.

    >>> from specmodel.model.specs import get_architecture
    >>> embedding_parameters(get_architecture("qwen3-0.6b"))
    155582464
    """
    tables = 1 if arch.tie_word_embeddings else 2
    return tables * arch.vocab_size * arch.hidden_size


def attention_parameters_per_layer(arch: Architecture) -> int:
    """Q, K, V and output projections: ``2 D N H + 2 D K H``, plus ``N H + 2 K H`` biases
    where the layout has them (Qwen2, Qwen2-MoE); latent attention is
    :func:`latent_attention_parameters`.

    Q and O are ``D x N H``, K and V are ``D x K H`` (grouped-query attention, Ainslie et
    al. 2023, arXiv:2305.13245). Qwen3 and Llama both set ``attention_bias`` false in
    config.json (transformers' ``Qwen3Attention`` / ``LlamaAttention`` then build
    bias-free ``nn.Linear`` projections); the Architecture record rejects a true value.
    ``Qwen2Attention`` builds q, k and v with ``bias=True`` and o without, whatever config.json says.

    >>> from specmodel.model.specs import get_architecture
    >>> attention_parameters_per_layer(get_architecture("llama-3.2-1b"))
    10485760
    """
    if is_latent_attention(arch):
        return latent_attention_parameters(arch)
    d, h, n, k = arch.hidden_size, arch.head_dim, arch.num_attention_heads, arch.num_key_value_heads
    biases = (n * h + 2 * k * h) if LAYOUTS[arch.model_type].qkv_bias else 0
    return 2 * d * n * h + 2 * d * k * h + biases


def latent_attention_parameters(arch: Architecture) -> int:
    """Multi-head latent attention of one layer: ``D R_q + R_q + R_q N (P + R)`` (q_a_proj,
    q_a_layernorm, q_b_proj; ``D N (P + R)`` for a plain q_proj when ``q_lora_rank`` is
    absent) ``+ D (R_kv + R) + R_kv`` (kv_a_proj_with_mqa, kv_a_layernorm) ``+ R_kv N (P + H_v)``
    (kv_b_proj) ``+ N H_v D`` (o_proj), no biases (``attention_bias`` false).

    transformers' ``DeepseekV3Attention`` (deepseek_v3/modeling_deepseek_v3.py), vLLM's
    ``DeepseekV2MLAAttention`` (vllm/model_executor/models/deepseek_v2.py); DeepSeek-V2,
    arXiv:2405.04434, Sec. 2.1. 0 for a model without latent attention.
    """
    r_kv, p, r, h_v = arch.kv_lora_rank, arch.qk_nope_head_dim, arch.qk_rope_head_dim, arch.v_head_dim
    if r_kv is None or p is None or r is None or h_v is None:
        return 0
    d, n, r_q = arch.hidden_size, arch.num_attention_heads, arch.q_lora_rank
    query = d * n * (p + r) if r_q is None else d * r_q + r_q + r_q * n * (p + r)
    return query + d * (r_kv + r) + r_kv + r_kv * n * (p + h_v) + n * h_v * d


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

    Gemma 2 and 3 have four of width D (``input_layernorm``, ``post_attention_layernorm``,
    ``pre_feedforward_layernorm``, ``post_feedforward_layernorm`` in ``Gemma2DecoderLayer`` /
    ``Gemma3DecoderLayer``), Gemma 3 also Qwen3's q/k norms: ``4 D + 2 H``.

    >>> from dataclasses import replace
    >>> norm_parameters_per_layer(replace(get_architecture("llama-3.1-8b"), model_type="gemma2"))
    16384
    """
    layout = LAYOUTS[arch.model_type]
    return layout.layer_norms * arch.hidden_size + (2 * arch.head_dim if layout.qk_norms else 0)


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

    Qwen2-MoE follows the same rule (``Qwen2MoeDecoderLayer``). Mixtral has experts in every
    layer (``MixtralDecoderLayer``). DeepSeek-V3's layer ``i`` is MoE iff
    ``i >= first_k_dense_replace`` and ``i % moe_layer_freq == 0`` (vLLM's
    ``DeepseekV2DecoderLayer``, vllm/model_executor/models/deepseek_v2.py): 58 of its 61.

    >>> from specmodel.model.specs import get_architecture
    >>> from dataclasses import replace
    >>> m = get_architecture("qwen3-30b-a3b")
    >>> moe_layer_count(m), moe_layer_count(replace(m, decoder_sparse_step=2, mlp_only_layers=(1,)))
    (48, 23)
    """
    if arch.num_experts is None:
        return 0
    layers = range(arch.num_hidden_layers)
    if arch.decoder_sparse_step is not None:
        dense = set(arch.mlp_only_layers or ())
        step = arch.decoder_sparse_step
        return sum(1 for i in layers if i not in dense and (i + 1) % step == 0)
    first, freq = arch.first_k_dense_replace or 0, arch.moe_layer_freq or 1
    return sum(1 for i in layers if i >= first and i % freq == 0)


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
    transformers' ``Qwen3MoeSparseMoeBlock``, ``MixtralSparseMoeBlock``,
    ``Qwen2MoeSparseMoeBlock``), ``D E + E`` for DeepSeek-V3, whose ``DeepseekV3TopkRouter``
    also holds an ``e_score_correction_bias`` of E. 0 for a dense model.

    >>> from specmodel.model.specs import get_architecture
    >>> router_parameters(get_architecture("qwen3-30b-a3b"))  # 2048 x 128
    262144
    """
    if arch.num_experts is None:
        return 0
    correction = arch.num_experts if arch.model_type == "deepseek_v3" else 0
    return arch.hidden_size * arch.num_experts + correction


def shared_expert_parameters(arch: Architecture) -> int:
    """The shared experts of one MoE layer, which every token goes through: Qwen2-MoE's one
    gated MLP of width F_s (``shared_expert_intermediate_size``) and its 1-output gate,
    ``3 D F_s + D`` (``shared_expert``, ``shared_expert_gate`` in ``Qwen2MoeSparseMoeBlock``);
    DeepSeek-V3's ``n_shared_experts`` experts of width F_moe, ``3 D F_moe n_shared`` (one MLP
    of width ``F_moe n_shared``, ``DeepseekV3MoE.shared_experts``). 0 for other layouts.

    >>> from specmodel.model.specs import get_architecture
    >>> shared_expert_parameters(get_architecture("qwen3-30b-a3b"))
    0
    """
    d = arch.hidden_size
    if arch.shared_expert_intermediate_size is not None:
        return 3 * d * arch.shared_expert_intermediate_size + d
    if arch.n_shared_experts and arch.moe_intermediate_size is not None:
        return 3 * d * arch.moe_intermediate_size * arch.n_shared_experts
    return 0


def _experts_per_layer(arch: Architecture) -> tuple[int, int]:
    """(E, k): experts per MoE layer and experts per token; (0, 0) for a dense model."""
    if arch.num_experts is None or arch.num_experts_per_tok is None:
        return 0, 0
    return arch.num_experts, arch.num_experts_per_tok


def parameter_count(arch: Architecture) -> int:
    """Every weight: embeddings + ``L`` x (attention + norms) + ``(L - L_moe)`` dense MLPs
    + ``L_moe`` x (router + E experts + shared experts) + the final norm ``D``.

    For a dense model (``L_moe = 0``) this is embeddings + ``L`` x (attention + MLP + norms)
    + ``D``. Every expert is counted: this is what the checkpoint holds. Multi-token-prediction
    modules are not part of the model that serves (:func:`mtp_parameters` counts them).

    >>> from specmodel.model.specs import get_architecture
    >>> parameter_count(get_architecture("qwen3-8b"))
    8190735360
    >>> parameter_count(get_architecture("qwen3-30b-a3b"))  # card: "30.5B in total"
    30532122624
    """
    layers, moe_layers = arch.num_hidden_layers, moe_layer_count(arch)
    experts, _ = _experts_per_layer(arch)
    per_layer = attention_parameters_per_layer(arch) + norm_parameters_per_layer(arch)
    moe = router_parameters(arch) + experts * expert_parameters(arch) + shared_expert_parameters(arch)
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


def linear_parameters(arch: Architecture) -> int:
    """The weights of the decoder layers' linear layers, what a ``weight_format`` quantizes:
    every parameter but the embeddings, the norms and the routers, ``P - (V D or 2 V D) -
    L n_norm - L_moe r - D`` (n_norm: :func:`norm_parameters_per_layer`, r:
    :func:`router_parameters`, D the final norm).

    vLLM quantizes ``LinearBase`` layers and ``FusedMoE`` experts; the output head
    (``ParallelLMHead``), the input embedding, the norms and Qwen3-MoE's router
    (``ReplicatedLinear(..., quant_config=None)``) stay in the checkpoint's dtype
    (:mod:`specmodel.model.quantization`). A layout's biases and latent-attention norms, a few
    thousand weights a layer, are counted with the linear layers.

    >>> from specmodel.model.specs import get_architecture
    >>> linear_parameters(get_architecture("qwen3-8b"))  # 36 x (attention + MLP) of Qwen3-8B
    6945767424
    """
    return parameter_count(arch) - _unquantized_parameters(arch)


def active_linear_parameters(arch: Architecture) -> int:
    """The linear-layer weights one token uses: :func:`active_parameter_count` less the same
    embeddings, norms and routers (:func:`linear_parameters` for a dense model).

    >>> from specmodel.model.specs import get_architecture
    >>> active_linear_parameters(get_architecture("qwen3-30b-a3b"))
    2717908992
    """
    return active_parameter_count(arch) - _unquantized_parameters(arch)


def _unquantized_parameters(arch: Architecture) -> int:
    """Embeddings + ``L`` norms + ``L_moe`` routers + the final norm: the weights no format quantizes."""
    layers = arch.num_hidden_layers * norm_parameters_per_layer(arch)
    return embedding_parameters(arch) + layers + moe_layer_count(arch) * router_parameters(arch) + arch.hidden_size


def mtp_parameters(arch: Architecture) -> int:
    """The multi-token-prediction modules a checkpoint ships besides the model
    (``num_nextn_predict_layers``, 0 for most), their own weights: each ``2 D`` (enorm, hnorm)
    ``+ 2 D D`` (eh_proj) + one decoder layer (an MoE layer past ``first_k_dense_replace``)
    ``+ D`` (shared_head norm). The embedding and output head they use are the model's
    (shared, ``V D`` each, though the checkpoint stores a copy).

    vLLM's ``DeepSeekMultiTokenPredictorLayer`` (vllm/model_executor/models/deepseek_mtp.py);
    DeepSeek-V3 Technical Report, arXiv:2412.19437, Sec. 2.2. DeepSeek-V3's README_WEIGHTS.md
    (github.com/deepseek-ai/DeepSeek-V3): "11.5B unique parameters (excluding the shared 0.9B
    Embedding and 0.9B output Head)"; its model card's "685B ... 671B of the Main Model
    weights and 14B of the Multi-Token Prediction (MTP) Module weights" counts the copies.

    >>> from specmodel.model.specs import get_architecture
    >>> mtp_parameters(get_architecture("qwen3-8b"))
    0
    """
    d = arch.hidden_size
    moe_layer = moe_layer_count(arch) > 0
    experts, _ = _experts_per_layer(arch)
    mlp = (
        router_parameters(arch) + experts * expert_parameters(arch) + shared_expert_parameters(arch)
        if moe_layer
        else mlp_parameters_per_layer(arch)
    )
    layer = attention_parameters_per_layer(arch) + norm_parameters_per_layer(arch) + mlp
    return arch.num_nextn_predict_layers * (3 * d + 2 * d * d + layer)


def weight_bytes(arch: Architecture) -> int:
    """Bytes of every weight, ``parameters x b``: what the model holds, and what one forward
    pass reads when it reads every weight once (the output head reads the whole embedding
    table, so a tied table is read once, an untied pair twice).

    With a ``weight_format``, the linear layers' weights (:func:`linear_parameters`) cost
    :func:`specmodel.model.quantization.quantized_weight_bytes` each instead of b, the rest b:
    ``(P - P_lin) b + P_lin b_q``, rounded to a whole byte.

    An engine's pass reads an untied input embedding by rows instead
    (:func:`embedding_gather_bytes`); the pass's price subtracts :func:`input_embedding_bytes`
    where its engine gathers (:mod:`specmodel.model.passes`).

    >>> from specmodel.model.specs import get_architecture
    >>> round(weight_bytes(get_architecture("qwen3-8b")) / 2**30, 2)
    15.26
    """
    if arch.weight_format is None:
        return parameter_count(arch) * arch.bytes_per_element
    linear = linear_parameters(arch)
    kept = (parameter_count(arch) - linear) * arch.bytes_per_element
    return kept + round(linear * quantization.linear_weight_bytes(arch))


def expert_bytes(arch: Architecture) -> int:
    """Bytes of one expert of one MoE layer: ``3 D F_moe b`` (0 for a dense model); with a
    ``weight_format`` b is its bytes per quantized weight
    (:func:`specmodel.model.quantization.linear_weight_bytes`), rounded to a whole byte.

    >>> from specmodel.model.specs import get_architecture
    >>> expert_bytes(get_architecture("qwen3-30b-a3b"))
    9437184
    """
    if arch.weight_format is None:
        return expert_parameters(arch) * arch.bytes_per_element
    return round(expert_parameters(arch) * quantization.linear_weight_bytes(arch))


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


def kv_cache_elements_per_layer(arch: Architecture) -> int:
    """Cache elements one token adds in one layer: ``2 K H`` (a key and a value per KV head;
    grouped-query attention stores K heads, not N, Ainslie et al. 2023, arXiv:2305.13245), or
    ``R_kv + R`` for latent attention: the compressed latent and the shared rotary key, what
    vLLM's MLA backends cache (vllm/v1/attention/backends/mla/common.py; DeepSeek-V2,
    arXiv:2405.04434, Sec. 2.1.2). DeepSeek-V3: 512 + 64.

    >>> from specmodel.model.specs import get_architecture
    >>> kv_cache_elements_per_layer(get_architecture("qwen3-8b"))  # 2 x 8 x 128
    2048
    """
    if arch.kv_lora_rank is not None and arch.qk_rope_head_dim is not None:
        return arch.kv_lora_rank + arch.qk_rope_head_dim
    return 2 * arch.num_key_value_heads * arch.head_dim


def tensor_parallel_kv_heads(arch: Architecture) -> int:
    """The heads tensor parallelism splits the cache by: K, or 1 for latent attention, whose
    one latent per token every GPU keeps whole (vLLM's MLA backends replicate it across the
    tensor-parallel group; vllm/v1/attention/backends/mla/common.py).

    >>> from specmodel.model.specs import get_architecture
    >>> tensor_parallel_kv_heads(get_architecture("qwen3-8b"))
    8
    """
    return 1 if is_latent_attention(arch) else arch.num_key_value_heads


def kv_cache_bytes_per_token(arch: Architecture) -> int:
    """Bytes of K and V cache per token: ``2 L K H b`` (``L (R_kv + R) b`` for latent
    attention, :func:`kv_cache_elements_per_layer`), b one cached element's bytes
    (:func:`specmodel.model.quantization.kv_bytes_per_element`: 1 for an fp8 cache).

    Grouped-query attention stores K heads, not N (Ainslie et al. 2023, arXiv:2305.13245).

    >>> from specmodel.model.specs import get_architecture
    >>> kv_cache_bytes_per_token(get_architecture("qwen3-8b")) // 1024
    144
    """
    return arch.num_hidden_layers * kv_cache_elements_per_layer(arch) * quantization.kv_bytes_per_element(arch)


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

    Latent attention as vLLM's decode runs it, with ``W_UK`` absorbed into the query and
    ``W_UV`` applied after (the "data-movement friendly" path of
    vllm/v1/attention/backends/mla/common.py): each head scores over the ``R_kv + R`` latent
    and rotary key and sums ``R_kv``-wide latent values, ``2 L N (2 R_kv + R)``.

    >>> from specmodel.model.specs import get_architecture
    >>> attention_flops_per_position_per_token(get_architecture("qwen3-8b"))  # 4 x 36 x 32 x 128
    589824
    """
    if arch.kv_lora_rank is not None and arch.qk_rope_head_dim is not None:
        return 2 * arch.num_hidden_layers * arch.num_attention_heads * (2 * arch.kv_lora_rank + arch.qk_rope_head_dim)
    return 4 * arch.num_hidden_layers * arch.num_attention_heads * arch.head_dim
