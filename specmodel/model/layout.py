"""How a scenario is laid out beyond one card and one chain: the GPUs the target and the
drafter are split over (tensor parallelism), and the shape of a tree of guesses. Checks only;
the costs are in :mod:`specmodel.model.parallel` and :mod:`specmodel.model.passes`.

Tensor parallelism follows vLLM: ``tensor_parallel_size`` N_g must divide the target's
attention heads, and the drafter runs on all N_g GPUs or on one
(``draft_tensor_parallel_size``: "can only be 1 or the same as the target model's tensor
parallel size", vllm/config/speculative.py). A tree draft follows SGLang's EAGLE options:
``speculative_eagle_topk`` w candidates per step, ``speculative_num_steps`` gamma steps,
``speculative_num_draft_tokens`` Q_v positions verified (the root and Q_v - 1 guesses), at
most the ``w + (gamma - 1) w^2`` candidates SGLang scores (:mod:`specmodel.model.trees`);
w = 1 is a chain, and verifies Q_v = gamma + 1.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from specmodel.errors import SpecModelError
from specmodel.model import trees
from specmodel.model.drafters import DrafterKind, drafter_kind
from specmodel.model.specs import get_architecture, get_hardware
from specmodel.model.types import IntArray
from specmodel.model.validation import check_integer, compact, map_names

#: Most candidates per depth of a tree draft.
MAX_TREE_TOPK = 16


def allowed_tensor_parallel(hardware: str, target: str, degrees: Any = None) -> tuple[int, ...]:
    """The tensor-parallel degrees N_g (of ``degrees``; default 1 to the card's limit) that
    ``target`` may be split over on ``hardware``: at most the card's largest tensor-parallel
    group (its interconnect) and dividing the target's attention heads (vLLM's rule).

    >>> allowed_tensor_parallel("h100-sxm", "qwen3-8b")
    (1, 2, 4, 8)
    """
    limit = int(get_hardware(hardware).interconnect.max_tensor_parallel.value)
    heads = get_architecture(target).num_attention_heads
    candidates = range(1, limit + 1) if degrees is None else degrees
    return tuple(int(n) for n in candidates if 1 <= n <= limit and heads % n == 0)


def check_parallelism(
    tensor_parallel: Any, draft_tensor_parallel: Any, hardware: str, target: str, drafters: np.ndarray
) -> tuple[IntArray, IntArray]:
    """``(N_g, N_d)`` as integer arrays: N_g GPUs for the target, within the card's largest
    tensor-parallel group and dividing the target's attention heads; the drafter on N_d =
    N_g (the default, ``None``) or 1 GPU, dividing a draft model's attention heads."""
    limit = int(get_hardware(hardware).interconnect.max_tensor_parallel.value)
    n = check_integer("tensor_parallel", tensor_parallel, 1, limit)
    allowed = allowed_tensor_parallel(hardware, target)
    bad = ~np.isin(n, allowed)
    if np.any(bad):
        heads = get_architecture(target).num_attention_heads
        raise SpecModelError(
            f"tensor_parallel {int(n[bad].flat[0]) if n.ndim else int(n)} does not divide {target}'s {heads} "
            f"attention heads; allowed on {hardware}: {', '.join(map(str, allowed))}"
        )
    d = n if draft_tensor_parallel is None else check_integer("draft_tensor_parallel", draft_tensor_parallel, 1, limit)
    n_b, d_b = np.broadcast_arrays(n, d)
    bad = (d_b != 1) & (d_b != n_b)
    if np.any(bad):
        raise SpecModelError(
            f"draft_tensor_parallel {int(d_b[bad].flat[0])} is not allowed with tensor_parallel "
            f"{int(n_b[bad].flat[0])}: the drafter runs on 1 GPU or on all of the target's "
            "(vLLM's draft_tensor_parallel_size)"
        )
    for name in sorted(set(np.ravel(compact(drafters)).tolist())):  # not np.unique: it imports numpy.ma
        if drafter_kind(str(name)) != DrafterKind.MODEL:
            continue
        for parts in sorted(set(np.ravel(compact(d)).tolist())):
            if get_architecture(str(name)).num_attention_heads % parts == 0:
                continue
            draft_heads = get_architecture(str(name)).num_attention_heads
            raise SpecModelError(
                f"draft model {name} cannot be split over {parts} GPUs: {parts} does not divide its "
                f"{draft_heads} attention heads; give draft_tensor_parallel 1"
            )
    return n, d


def check_tree(
    tree_topk: Any, verify_tokens: Any, gamma: Any, drafters: np.ndarray, later: Any = None
) -> tuple[IntArray, IntArray, IntArray]:
    """``(w, Q_v, later)`` as integer arrays: w candidates per step (``tree_topk``; 1: a
    chain); Q_v positions verified (``verify_tokens``), from 2 to the
    ``w + (gamma - 1) w^2 + 1`` SGLang's candidate pool allows
    (:func:`specmodel.model.trees.max_verify_tokens`; default w gamma + 1, the w kept nodes
    of each depth), and gamma + 1 exactly for a chain; ``later``, the draft positions per
    sequence of the gamma - 1 passes after the first (``tree_draft_positions``; default
    SGLang's (gamma - 1) w, :func:`specmodel.model.trees.sglang_later_positions`). An n-gram
    lookup drafts one chain."""
    k = check_integer("tree_topk", tree_topk, 1, MAX_TREE_TOPK)
    g = np.asarray(gamma)
    v = k * g + 1 if verify_tokens is None else check_integer("verify_tokens", verify_tokens, 2)
    k_b, v_b, g_b = np.broadcast_arrays(k, v, g)
    chain = (k_b == 1) & (v_b != g_b + 1)
    if np.any(chain):
        i = np.flatnonzero(chain.ravel())[0]
        raise SpecModelError(
            f"verify_tokens {int(v_b.flat[i])} with tree_topk 1 and gamma {int(g_b.flat[i])}: a chain verifies "
            f"gamma + 1 = {int(g_b.flat[i]) + 1} positions (SGLang adjusts speculative_num_draft_tokens to "
            "speculative_num_steps + 1 when speculative_eagle_topk is 1); give that or leave verify_tokens out"
        )
    top = trees.max_verify_tokens(k_b, g_b)
    bad = v_b > top
    if np.any(bad):
        i = np.flatnonzero(bad.ravel())[0]
        kk, gg = int(k_b.flat[i]), int(g_b.flat[i])
        raise SpecModelError(
            f"verify_tokens {int(v_b.flat[i])} is more than tree_topk {kk} and gamma {gg} can draft: at most "
            f"tree_topk + (gamma - 1) tree_topk^2 + 1 = {int(top.flat[i])} (the root and SGLang's candidate pool)"
        )
    p = trees.sglang_later_positions(k, g) if later is None else _check_later(later, g, v)
    lookup = map_names(compact(drafters), lambda name: drafter_kind(name) == DrafterKind.NGRAM, bool)
    tree, ngram = np.broadcast_arrays(k > 1, lookup)
    if np.any(tree & ngram):
        raise SpecModelError("tree_topk must be 1 for the n-gram drafter: a lookup drafts one chain")
    return k, np.asarray(v), np.asarray(p)


def _check_later(later: Any, gamma: np.ndarray, verify_tokens: np.ndarray) -> IntArray:
    """``tree_draft_positions`` checked: from gamma - 1 (one position per later pass) to
    (gamma - 1)(Q_v - 1) (each later pass re-running at most every drafted node)."""
    p = check_integer("tree_draft_positions", later, 0)
    p_b, g_b, v_b = np.broadcast_arrays(p, gamma, verify_tokens)
    bad = (p_b < g_b - 1) | (p_b > (g_b - 1) * (v_b - 1))
    if np.any(bad):
        i = np.flatnonzero(bad.ravel())[0]
        low, high = int(g_b.flat[i]) - 1, (int(g_b.flat[i]) - 1) * (int(v_b.flat[i]) - 1)
        raise SpecModelError(
            f"tree_draft_positions {int(p_b.flat[i])} is not allowed at gamma {int(g_b.flat[i])} with verify_tokens "
            f"{int(v_b.flat[i])}; it must lie between {low} and {high}"
        )
    return p
