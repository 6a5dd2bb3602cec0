"""Expert weights a pass of a mixture-of-experts model reads: how many distinct experts the
tokens of one forward pass are routed to, and their bytes.

A dense model reads all its weights once per pass whatever the number of positions; an MoE
model reads, in each MoE layer, only the experts that at least one of the pass's tokens is
routed to. More positions per pass (a verify pass of gamma + 1 positions, a larger batch)
therefore touch more experts: "draft tokens collectively activate more weights, increasing
data movement and verification time" (Saxena et al. 2025, arXiv:2506.20675, abstract; also
McDanel et al. 2026, MoE-Spec, arXiv:2602.16052, and Pan et al. 2026, EVICT,
arXiv:2605.00342, for draft trees).

Notation as in :mod:`specmodel.model.architecture`: E experts per MoE layer, k_e experts per
token, L_moe MoE layers, n token positions in the pass.
"""

from __future__ import annotations

import numpy as np

from specmodel.model.types import Numeric


def expected_distinct_experts(tokens: Numeric, experts: Numeric, experts_per_token: Numeric) -> Numeric:
    """Expected number of distinct experts of one MoE layer that ``tokens`` tokens are routed
    to: ``E (1 - (1 - k_e/E)^n)``.

    Assumption: each token is routed to k_e of the E experts chosen uniformly at random without
    replacement, independently of the other tokens. Then a given expert is among one token's
    k_e with probability ``C(E-1, k_e-1) / C(E, k_e) = k_e/E``, so the token skips it with probability
    ``1 - k_e/E``; n independent tokens all skip it with probability ``(1 - k_e/E)^n``; by
    linearity of expectation over the E experts the expected count touched is
    ``E (1 - (1 - k_e/E)^n)``. It is k_e at n = 1, grows monotonically in n, never exceeds
    ``min(n k_e, E)`` for whole n and tends to E. The closed form is derived here, not taken
    from a paper. Real routers are skewed, "expert routing probabilities are heavy-tailed"
    (McDanel et al. 2026, MoE-Spec, arXiv:2602.16052), and a sequence's tokens are
    correlated. For independent tokens whose expert i is chosen with probability p_i
    (sum k_e), the count is ``sum_i 1 - (1 - p_i)^n``, concave and symmetric in p, hence
    largest at the uniform p_i = k_e/E: this is an upper estimate.

    ``tokens`` may be a mean (non-integer) and 0 gives 0; all arguments broadcast as numpy
    arrays (counts, dimensionless).

    >>> float(expected_distinct_experts(1, 128, 8)), round(float(expected_distinct_experts(5, 128, 8)), 2)
    (8.0, 35.3)
    >>> expected_distinct_experts(np.array([0.0, 64.0, 1e4]), 128, 8).round(1)
    array([  0. , 125.9, 128. ])
    """
    e = np.asarray(experts, dtype=np.float64)
    k = np.asarray(experts_per_token, dtype=np.float64)
    n = np.asarray(tokens, dtype=np.float64)
    return e * (1.0 - np.power(1.0 - k / e, n))


def routed_expert_bytes(
    expert_bytes: Numeric, tokens: Numeric, experts: Numeric, experts_per_token: Numeric
) -> Numeric:
    """Expected bytes of routed expert weights one forward pass over ``tokens`` token positions
    reads: ``e x E[distinct experts]``, with e = ``expert_bytes`` the bytes of one expert in
    every MoE layer, ``L_moe 3 D F_moe b`` (:func:`specmodel.model.passes.PassCoefficients.of_model`).

    Each MoE layer reads every expert that one of the pass's positions is routed to, once
    (:func:`expected_distinct_experts`, which assumes uniform top-k routing, independent across
    all the pass's positions, whatever sequence they belong to; each layer's routing is
    counted alike). Add the shared bytes
    (:func:`specmodel.model.architecture.shared_weight_bytes`) for the whole pass's weight
    traffic; 0 for a dense model (e = 0), whose MLP weights are in the shared bytes.

    >>> float(routed_expert_bytes(48 * 3 * 2048 * 768 * 2, 1, 128, 8)) == 48 * 8 * 3 * 2048 * 768 * 2
    True
    """
    return expert_bytes * expected_distinct_experts(tokens, experts, experts_per_token)


def tokens_per_expert(tokens: Numeric, experts: Numeric, experts_per_token: Numeric) -> Numeric:
    """m, the tokens each touched expert of one MoE layer multiplies: ``n k_e / E_touched``, the
    n k_e routed token-expert pairs over the expected distinct experts they reach
    (:func:`expected_distinct_experts`); 0 for no tokens.

    Over the experts touched, not over all E: the grouped kernel runs tiles only for experts
    that hold tokens, so at one token its k_e experts each get one. vLLM PR #24700's batch-1 rows
    (Mixtral 144 us, Qwen3-30B-A3B 44.5 us per layer) are 1.35 and 3.1 times the curve's time
    with m over the touched experts (the rest is the kernel's fixed latency: the 8 FP8 experts'
    bytes take 11 us), and 0.34 and 0.20 of it with m = k_e/E, which charges all E experts'
    weight stream. From about 4 tokens per expert on every expert is touched and the two
    agree, as in the rows the curves are fitted to (m = B k_e/E there). Dimensionless.

    >>> float(tokens_per_expert(1, 128, 8)), round(float(tokens_per_expert(1024, 128, 8)), 2)
    (1.0, 64.0)
    """
    touched = expected_distinct_experts(tokens, experts, experts_per_token)
    routed = np.multiply(tokens, experts_per_token)
    return np.where(touched > 0, routed / np.where(touched > 0, touched, 1.0), 0.0)


def grouped_gemm_efficiency(tokens_per_expert_: Numeric, e_max: Numeric, m_half: Numeric) -> Numeric:
    """Achieved share of peak FLOP/s of a grouped expert matrix multiply at m tokens per
    expert: ``eff(m) = e_max m / (m + m_half)``.

    A saturating curve: slope ``e_max / m_half`` at m = 0, ``e_max / 2`` at m = m_half, e_max
    as m grows. Its time ``FLOPs / (peak eff(m)) = FLOPs / (peak e_max) + 2 P m_half /
    (peak e_max)`` per expert of P parameters is a fixed weight stream plus arithmetic at
    e_max, the additive form the kernel measurements follow (constants from
    ``data/kernels.toml``: vLLM PR #24700, DeepGEMM's README). Dimensionless.

    >>> float(grouped_gemm_efficiency(245.0, 0.82, 245.0))
    0.41
    """
    m = np.asarray(tokens_per_expert_, dtype=float)
    return e_max * m / (m + m_half)


def routed_expert_compute_time(
    expert_flops: Numeric, peak_flops: Numeric, tokens_per_expert_: Numeric, e_max: Numeric, m_half: Numeric
) -> Numeric:
    """Seconds of a pass's routed expert arithmetic, ``F_e / (peak eff(m))``
    (:func:`grouped_gemm_efficiency`), F_e its routed expert FLOPs (one GPU's), peak the dense
    FLOP/s the curve's e_max is a fraction of; 0 where there are none.

    >>> round(float(routed_expert_compute_time(22.5e9, 989.4e12, 16.0, 0.82, 245.0)) * 1e6)
    452
    """
    eff = grouped_gemm_efficiency(tokens_per_expert_, e_max, m_half)
    flops = np.asarray(expert_flops, dtype=float)
    return np.where(flops > 0, flops / (peak_flops * np.where(eff > 0, eff, 1.0)), 0.0)
