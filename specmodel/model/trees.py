"""Trees of guesses as the engines build them: how many positions a tree may verify, and how
many query positions per sequence its draft passes run. Pure functions on numbers or numpy
arrays; the passes themselves are priced once, by :func:`specmodel.model.passes.price_pass`.

Symbols as in the project's notation (:mod:`specmodel.notation`): gamma draft steps, w
candidates per depth (``tree_topk``), Q_v positions the verify pass scores (``verify_tokens``),
E[X] tokens per iteration.

**SGLang** (EAGLE worker; ``speculative_num_steps`` = gamma, ``speculative_eagle_topk`` = w,
``speculative_num_draft_tokens`` = Q_v; sglang 0.5.5
``srt/speculative/eagle_worker.py::draft_forward`` and ``eagle_utils.py::organize_draft_results``).
An iteration runs one draft *extend* pass over each sequence's accepted tokens + 1 (it
yields the first w candidates, ``forward_draft_extend_after_decode``) and gamma - 1 draft
passes of exactly w query positions per sequence (the w kept branches, one token each);
each of those scores w children per branch, so the candidate pool holds
``w + (gamma - 1) w^2`` candidates and the verify tree keeps the best Q_v - 1 of them by
cumulative probability plus the root: ``Q_v - 1 <= w + (gamma - 1) w^2`` (``torch.topk``
fails past it). With w = 1 SGLang sets Q_v = gamma + 1
(``server_args.py::_handle_speculative_decoding``).

**vLLM** (``speculative_token_tree``, vllm 0.10.1.1 ``v1/spec_decode/eagle.py::propose_tree``):
level widths w_1..w_gamma (w_j candidates at depth j, a tree gamma levels deep; its w is the
widest, max_j w_j); pass 0 over the accepted tokens + 1, then gamma - 1 passes, the one
drafting level j + 1 re-running every tree token drafted so far, ``w_1 + ... + w_j`` query
positions per sequence.

A chain (w = 1) keeps the article's convention: every one of its gamma passes is one
position per sequence (the extend pass's accepted tokens are not priced), so its numbers are
unchanged. A tree's first pass is priced at its accepted tokens + 1, the measured or modelled
mean tokens per iteration E[X] (eager mode; SGLang pads it to gamma + 1 under CUDA graphs,
but the model prices no padding anywhere, in verify or plain passes either).
"""

from __future__ import annotations

from itertools import accumulate

import numpy as np
import numpy.typing as npt

from specmodel.errors import SpecModelError
from specmodel.model.types import FloatArray


def candidate_pool(tree_topk: npt.ArrayLike, steps: npt.ArrayLike) -> np.ndarray:
    """Candidates SGLang's draft scores per sequence per iteration, ``w + (gamma - 1) w^2``
    (w = ``tree_topk`` at the extend pass, w^2 at each of the gamma - 1 = ``steps`` - 1 draft
    passes; ``organize_draft_results``).

    >>> candidate_pool(4, 3).tolist(), candidate_pool(8, 5).tolist(), candidate_pool(1, 4).tolist()
    (36, 264, 4)
    """
    k, s = np.asarray(tree_topk), np.asarray(steps)
    return k + (s - 1) * k * k


def max_verify_tokens(tree_topk: npt.ArrayLike, steps: npt.ArrayLike) -> np.ndarray:
    """The most positions Q_v a verify pass may score: the root and the whole pool,
    ``w + (gamma - 1) w^2 + 1`` (:func:`candidate_pool`); gamma + 1 for a chain (w = 1).

    >>> max_verify_tokens(4, 3).tolist(), max_verify_tokens(1, 5).tolist()
    (37, 6)
    """
    return candidate_pool(tree_topk, steps) + 1


def max_tokens_per_pass(gamma: npt.ArrayLike, verify_tokens: npt.ArrayLike) -> np.ndarray:
    """The most tokens one verify pass yields, ``min(gamma + 1, Q_v)`` (tokens per pass): the
    accepted path, one candidate per depth, so at most gamma and at most the Q_v - 1 candidates
    verified, plus the target's own next token; gamma + 1 for a chain (Q_v = gamma + 1). A
    measured mean acceptance length above it contradicts the tree (:func:`check_tokens_per_pass`).

    >>> max_tokens_per_pass(4, 3).tolist(), max_tokens_per_pass(4, 8).tolist(), max_tokens_per_pass(30, 5).tolist()
    (3, 5, 5)
    """
    return np.minimum(np.asarray(gamma) + 1, np.asarray(verify_tokens))


def check_tokens_per_pass(
    mean_length: npt.ArrayLike, gamma: npt.ArrayLike, verify_tokens: npt.ArrayLike, measured: str, tree: str
) -> None:
    """Refuse a measured mean acceptance length (tokens per verify pass) above what the tree
    verifies, :func:`max_tokens_per_pass`: one line naming the length and ``measured`` (where it
    came from), Q_v and gamma and ``tree`` (where they came from). Elementwise; the first bad one.

    >>> check_tokens_per_pass(2.9, 4, 3, "--log 'a.log'", "--verify-tokens 3")
    >>> check_tokens_per_pass(4.9, 4, 3, "--log 'a.log'", "--verify-tokens 3")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    specmodel.errors.SpecModelError: mean acceptance length 4.9 (tokens per verify pass, from --log 'a.log') ...
    """
    m, g, v = np.broadcast_arrays(np.asarray(mean_length, dtype=float), np.asarray(gamma), np.asarray(verify_tokens))
    top = max_tokens_per_pass(g, v)
    bad = m > top * (1.0 + 1e-9)  # a length rounded as the server writes it may reach the bound, not pass it
    if not np.any(bad):
        return
    i = int(np.flatnonzero(bad.ravel())[0])
    length, steps, positions, most = float(m.flat[i]), int(g.flat[i]), int(v.flat[i]), int(top.flat[i])
    raise SpecModelError(
        f"mean acceptance length {length:.3g} (tokens per verify pass, from {measured}) is more than the tree "
        f"allows: {positions} positions verified ({tree}) at gamma {steps} yield at most {most} tokens per pass "
        f"(the accepted guesses, one per depth, and the target's own token)"
    )


def sglang_later_positions(tree_topk: npt.ArrayLike, steps: npt.ArrayLike) -> np.ndarray:
    """Query positions per sequence of SGLang's gamma - 1 draft passes after the extend pass,
    ``(gamma - 1) w`` (each pass runs the w kept branches; ``draft_forward``, and the draft CUDA
    graph's ``num_tokens_per_bs = speculative_eagle_topk``).

    >>> sglang_later_positions(4, 3).tolist(), sglang_later_positions(1, 4).tolist()
    (8, 3)
    """
    return (np.asarray(steps) - 1) * np.asarray(tree_topk)


def vllm_pass_positions(widths: tuple[int, ...]) -> tuple[int, ...]:
    """Query positions per sequence of vLLM's tree passes after pass 0: the cumulative level
    widths ``w_1, w_1 + w_2, ..., w_1 + ... + w_(gamma-1)`` (``propose_tree``: ``query_len =
    total_num_drafts``); empty for a tree one level deep.

    >>> vllm_pass_positions((3, 6)), vllm_pass_positions((1, 1, 1)), vllm_pass_positions((3,))
    ((3,), (1, 2), ())
    """
    return tuple(accumulate(widths[:-1]))


def draft_positions(
    tree_topk: npt.ArrayLike, gamma: npt.ArrayLike, later: npt.ArrayLike, tokens_per_iteration: npt.ArrayLike
) -> tuple[FloatArray, FloatArray]:
    """``(Q_d, gamma Q_d)``: Q_d, the mean query positions per sequence of one of an
    iteration's gamma draft passes, and gamma Q_d, their sum over the iteration (positions per
    sequence): the first pass's positions (1 for a chain, E[X] = ``tokens_per_iteration`` for
    a tree, w > 1) plus ``later``, the positions of the gamma - 1 passes after it
    (:func:`sglang_later_positions` or the sum of :func:`vllm_pass_positions`).

    Pricing gamma passes at the mean Q_d is exact for the bytes, FLOPs and all-reduces (a
    dense pass's are linear in Q, its weights and caches independent of it); the roofline's
    max of memory and arithmetic is taken once at the mean rather than pass by pass, which
    differs only where some of the passes are compute-bound and others memory-bound. A
    chain's Q_d is 1 exactly.

    >>> [x.tolist() for x in draft_positions(4, 3, 8, 2.5)], [x.tolist() for x in draft_positions(1, 4, 3, 2.5)]
    ([3.5, 10.5], [1.0, 4.0])
    """
    k, g = np.asarray(tree_topk, dtype=float), np.asarray(gamma, dtype=float)
    first = np.where(k > 1, np.asarray(tokens_per_iteration, dtype=float), 1.0)
    total = first + np.asarray(later, dtype=float)
    return total / g, total


def vllm_tree_fields(widths: tuple[int, ...]) -> dict[str, int]:
    """The scenario fields of a vLLM tree of level widths w_1..w_gamma: ``tree_topk`` w, the
    widest level, ``verify_tokens`` Q_v, its nodes + 1, and ``tree_draft_positions`` the sum
    of :func:`vllm_pass_positions`; a chain-shaped tree (every width 1) is the model's chain,
    w = 1 and Q_v = gamma + 1 (vLLM drafts it with the chain proposer, one position per pass).

    >>> vllm_tree_fields((3, 6)), vllm_tree_fields((1, 1, 1))
    ({'tree_topk': 6, 'verify_tokens': 10, 'tree_draft_positions': 3}, {'tree_topk': 1, 'verify_tokens': 4})
    """
    if max(widths) == 1:
        return {"tree_topk": 1, "verify_tokens": len(widths) + 1}
    return {
        "tree_topk": max(widths),
        "verify_tokens": sum(widths) + 1,
        "tree_draft_positions": sum(vllm_pass_positions(widths)),
    }


def cut_tree(fields: dict[str, int], depth: int, widths: tuple[int, ...] | None = None) -> dict[str, int]:
    """``fields`` (scenario fields) with their tree cut to ``depth`` draft steps: a vLLM tree
    (``widths``) keeps its first ``depth`` levels (:func:`vllm_tree_fields`); an SGLang tree
    verifies at most :func:`max_verify_tokens` positions at that depth (gamma + 1 for a chain).

    >>> cut_tree({"tree_topk": 4, "verify_tokens": 16}, 1), cut_tree({}, 2, (3, 6, 6))
    ({'tree_topk': 4, 'verify_tokens': 5}, {'tree_topk': 6, 'verify_tokens': 10, 'tree_draft_positions': 3})
    """
    out = {k: v for k, v in fields.items() if k not in ("tree_topk", "verify_tokens", "tree_draft_positions")}
    if widths is not None:
        return {**out, **vllm_tree_fields(widths[:depth])}
    if "verify_tokens" not in fields:
        return dict(fields)
    k = fields.get("tree_topk", 1)
    return {**out, "tree_topk": k, "verify_tokens": min(fields["verify_tokens"], int(max_verify_tokens(k, depth)))}
