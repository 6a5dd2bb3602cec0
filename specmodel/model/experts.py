"""Expert weights a pass of a mixture-of-experts model reads: how many distinct experts the
tokens of one forward pass are routed to, and their bytes.

A dense model reads all its weights once per pass whatever the number of positions; an MoE
model reads, in each MoE layer, only the experts that at least one of the pass's tokens is
routed to. More positions per pass (a verify pass of gamma + 1 positions, a larger batch)
therefore touch more experts: "draft tokens collectively activate more weights, increasing
data movement and verification time" (Saxena et al. 2025, arXiv:2506.20675, abstract; also
McDanel et al. 2026, MoE-Spec, arXiv:2602.16052, and Pan et al. 2026, EVICT,
arXiv:2605.00342, for draft trees).

Notation as in :mod:`specmodel.model.architecture`: E experts per MoE layer, k experts per
token, L_moe MoE layers, n token positions in the pass.
"""

from __future__ import annotations

import numpy as np

from specmodel.model.types import Numeric


def expected_distinct_experts(tokens: Numeric, experts: Numeric, experts_per_token: Numeric) -> Numeric:
    """Expected number of distinct experts of one MoE layer that ``tokens`` tokens are routed
    to: ``E (1 - (1 - k/E)^n)``.

    Assumption: each token is routed to k of the E experts chosen uniformly at random without
    replacement, independently of the other tokens. Then a given expert is among one token's
    k with probability ``C(E-1, k-1) / C(E, k) = k/E``, so the token skips it with probability
    ``1 - k/E``; n independent tokens all skip it with probability ``(1 - k/E)^n``; by
    linearity of expectation over the E experts the expected count touched is
    ``E (1 - (1 - k/E)^n)``. It is k at n = 1, grows monotonically in n, never exceeds
    ``min(n k, E)`` for whole n and tends to E. The closed form is derived here, not taken
    from a paper. Real routers are skewed, "expert routing probabilities are heavy-tailed"
    (McDanel et al. 2026, MoE-Spec, arXiv:2602.16052), and a sequence's tokens are
    correlated. For independent tokens whose expert i is chosen with probability p_i
    (sum k), the count is ``sum_i 1 - (1 - p_i)^n``, concave and symmetric in p, hence
    largest at the uniform p_i = k/E: this is an upper estimate.

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
