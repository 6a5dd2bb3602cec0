"""Acceptance of draft tokens and what it buys: tokens per iteration and arithmetic.

Positions are numbered j = 1..gamma. ``conditional`` acceptance is the probability that
guess j is accepted given guesses 1..j-1 were; ``per-position`` (unconditional) acceptance
is the probability that guess j reaches the output, the product of the conditionals,
because the first rejection ends the iteration (Leviathan et al. 2023, arXiv:2211.17192,
Algorithm 1).

Profiles: ``same`` has conditional acceptance alpha at every position (the paper's i.i.d.
assumption); ``falling`` has alpha r ** (j - 1) with r = FALLING_RATIO. Both are the family
``a_j = alpha r ** (j - 1)``, with r = 1 and r = FALLING_RATIO.
"""

from __future__ import annotations

from typing import Literal, get_args

import numpy as np
import numpy.typing as npt

from specmodel.model.types import FloatArray

#: An acceptance profile's name, and the profiles in the order the article presents them.
Profile = Literal["falling", "same"]
PROFILES: tuple[str, ...] = get_args(Profile)


def profile_ratio(profile: str, falling_ratio: float) -> float:
    """Ratio r between successive conditional acceptances: ``falling_ratio``
    (``FALLING_RATIO``) for ``falling``, 1 for ``same``.

    >>> profile_ratio("same", 0.85), profile_ratio("falling", 0.85)
    (1.0, 0.85)
    """
    return falling_ratio if profile == "falling" else 1.0


def _positions(gamma_max: int) -> np.ndarray:
    return np.arange(1, gamma_max + 1)


def conditional_from_per_position(per_position: npt.ArrayLike) -> FloatArray:
    """Conditional acceptance ``a_j = u_j / u_{j-1}`` (``u_0 = 1``): the probability that guess
    j is accepted given guesses 1..j-1 were, from the unconditional per-position rates u_j
    (as vLLM reports them, each counted over every draft). 0 where ``u_{j-1} = 0`` (never
    reached). The inverse of ``u_j = prod_{i<=j} a_i``.

    >>> conditional_from_per_position([0.8, 0.4, 0.0, 0.0]).tolist()
    [0.8, 0.5, 0.0, 0.0]
    """
    u = np.asarray(per_position, dtype=float)
    before = np.concatenate([np.ones(u.shape[:-1] + (1,)), u[..., :-1]], axis=-1)
    return np.where(before > 0, u / np.where(before > 0, before, 1.0), 0.0)


def per_position_acceptance(
    alpha: npt.ArrayLike, gamma: npt.ArrayLike, ratio: npt.ArrayLike, gamma_max: int | None = None
) -> FloatArray:
    """Unconditional acceptance of position j: ``u_j = prod_{i<=j} a_i
    = alpha ** j  r ** (j (j - 1) / 2)``; zero beyond gamma.

    >>> [round(x, 3) for x in per_position_acceptance(0.75, 4, 0.85).tolist()]
    [0.75, 0.478, 0.259, 0.119]
    """
    alpha, gamma, ratio = (np.asarray(x, dtype=float)[..., None] for x in (alpha, gamma, ratio))
    j = _positions(int(gamma.max()) if gamma_max is None else gamma_max)
    return np.where(j <= gamma, alpha**j * ratio ** (j * (j - 1) / 2.0), 0.0)


def expected_tokens_per_iteration(per_position):
    """Mean acceptance length: ``E[X] = 1 + sum_j u_j`` tokens per target pass
    (the accepted guesses plus the token the target emits itself).

    >>> float(expected_tokens_per_iteration(np.array([0.5, 0.25])))
    1.75
    """
    return 1.0 + np.sum(per_position, axis=-1)


def tokens_per_iteration_ceiling(alpha):
    """``1 / (1 - alpha)``: the limit of E[X] under i.i.d. acceptance as gamma grows
    (Leviathan et al. 2023, arXiv:2211.17192, Eq. 1 with gamma -> infinity).

    >>> tokens_per_iteration_ceiling(0.75)
    4.0
    """
    return 1.0 / (1.0 - alpha)


def closed_form_tokens_per_iteration(alpha, gamma):
    """``(1 - alpha ** (gamma + 1)) / (1 - alpha)``: E[X] under i.i.d. acceptance
    (Leviathan et al. 2023, arXiv:2211.17192, Eq. 1). Tends to ``1 / (1 - alpha)``.

    >>> float(closed_form_tokens_per_iteration(0.75, 4))
    3.05078125
    """
    alpha = np.asarray(alpha, dtype=float)
    return (1.0 - alpha ** (np.asarray(gamma) + 1)) / (1.0 - alpha)


def tokens_per_iteration_pmf(per_position):
    """Distribution of tokens emitted by one iteration, ``P(X = x)`` for x = 1..gamma+1.

    ``X >= x + 1`` exactly when guess x is accepted, so ``P(X = x) = u_{x-1} - u_x``
    with ``u_0 = 1`` and ``u_{gamma+1} = 0``.

    >>> tokens_per_iteration_pmf(np.array([0.5, 0.25])).tolist()
    [0.5, 0.25, 0.25]
    """
    per_position = np.asarray(per_position, dtype=float)
    ones = np.ones(per_position.shape[:-1] + (1,))
    zeros = np.zeros(per_position.shape[:-1] + (1,))
    survive = np.concatenate([ones, per_position, zeros], axis=-1)
    return survive[..., :-1] - survive[..., 1:]


def theorem_3_11_arithmetic_increase(alpha, gamma, cost_ratio):
    """Expected increase in arithmetic operations, Leviathan et al. 2023
    (arXiv:2211.17192, Theorem 3.11): ``(1 - alpha)(gamma c + gamma + 1) / (1 - alpha ** (gamma + 1))``
    with c = draft ops / target ops per token, under i.i.d. acceptance.

    >>> round(float(theorem_3_11_arithmetic_increase(0.75, 4, 0.0)), 2)
    1.64
    """
    alpha = np.asarray(alpha, dtype=float)
    gamma = np.asarray(gamma)
    return (1.0 - alpha) * (gamma * cost_ratio + gamma + 1) / (1.0 - alpha ** (gamma + 1))


def alpha_for_mean_acceptance_length(mean_acceptance_length, gamma):
    """The alpha of the ``same`` profile whose expected tokens per iteration at ``gamma`` is
    ``M``: the root in (0, 1) of ``(1 - a^(gamma + 1)) / (1 - a) = M`` (Leviathan et al. 2023,
    arXiv:2211.17192, Eq. 1), which rises with a, found by bisection to float precision.
    Needs ``1 < M < gamma + 1``; elementwise.

    >>> round(float(alpha_for_mean_acceptance_length(3.05078125, 4)), 6)
    0.75
    """
    m = np.asarray(mean_acceptance_length, dtype=float)
    g = np.asarray(gamma, dtype=float)
    low, high = np.zeros(np.broadcast(m, g).shape), np.ones(np.broadcast(m, g).shape)
    for _ in range(60):
        mid = 0.5 * (low + high)
        below = closed_form_tokens_per_iteration(mid, g) < m
        low, high = np.where(below, mid, low), np.where(below, high, mid)
    alpha = 0.5 * (low + high)
    return float(alpha) if alpha.ndim == 0 else alpha


def tree_candidates_per_depth(
    tree_topk: npt.ArrayLike, verify_tokens: npt.ArrayLike, gamma: npt.ArrayLike, depths: int
) -> FloatArray:
    """Candidates k_j a tree of gamma depths holds at depths j = 1..``depths`` (trailing axis)
    with Q_v - 1 guesses (``verify_tokens``) of at most w per depth (``tree_topk``): first one
    per depth (the chain, as deep as the guesses reach), then the other
    ``spare = Q_v - 1 - min(gamma, Q_v - 1)`` as extra candidates from the shallowest depth
    down, w - 1 at most at each, as a tree that keeps its highest-probability nodes would (a
    shallow node's path is shorter, so likelier):
    ``k_j = [j <= min(gamma, Q_v - 1)] + clip(spare - (w - 1)(j - 1), 0, w - 1)`` (0 past gamma).

    >>> tree_candidates_per_depth(4, 8, 4, 4).tolist(), tree_candidates_per_depth(1, 5, 4, 5).tolist()
    ([4.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0, 0.0])
    """
    k = np.asarray(tree_topk, dtype=float)[..., None]
    guesses = np.asarray(verify_tokens, dtype=float)[..., None] - 1.0
    deep = np.minimum(np.asarray(gamma, dtype=float)[..., None], guesses)
    j = _positions(depths)
    chain = (j <= deep).astype(float)
    extra = np.clip(guesses - deep - (k - 1.0) * (j - 1.0), 0.0, k - 1.0)
    return chain + np.where(j <= deep, extra, 0.0)


def tree_per_position(
    per_position: npt.ArrayLike, tree_topk: npt.ArrayLike, verify_tokens: npt.ArrayLike, gamma: npt.ArrayLike
) -> FloatArray:
    """Unconditional acceptance of each depth of a tree draft, from a chain's ``per_position``
    acceptance u_j (trailing axis), under a stated simple model: depth j holds k_j candidates
    (:func:`tree_candidates_per_depth`), each accepted independently with the chain's
    conditional acceptance ``a_j = u_j / u_(j-1)``, and the tree reaches depth j when one of
    them is: ``u'_j = prod_(i <= j) (1 - (1 - a_i) ** k_i)``.

    Independent candidates make this an upper bound: a drafter's top-w guesses at one depth
    are correlated, and a candidate accepted beside the chain's node does not lead on to the
    chain's deeper nodes. For a chain (w = 1, Q_v = gamma + 1) it returns u_j. The tree's own
    acceptance can be given instead, measured (a mean acceptance length).

    >>> tree_per_position([0.75, 0.5], 2, 5, 2).round(4).tolist()
    [0.9375, 0.8333]
    """
    u = np.asarray(per_position, dtype=float)
    previous = np.concatenate([np.ones(u.shape[:-1] + (1,)), u[..., :-1]], axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        conditional = np.where(previous > 0, u / previous, 0.0)
    k = tree_candidates_per_depth(tree_topk, verify_tokens, gamma, u.shape[-1])
    reached = 1.0 - (1.0 - conditional) ** k
    return np.asarray(np.cumprod(np.where(k > 0, reached, 0.0), axis=-1), dtype=float)
