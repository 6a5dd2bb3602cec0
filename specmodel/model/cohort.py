"""A cohort of B sequences decoding G tokens each, as the article simulates it.

All B sequences start together. Each iteration every unfinished sequence emits X tokens
(X i.i.d. with the distribution from :func:`specmodel.model.acceptance.tokens_per_iteration_pmf`),
a sequence leaves the batch once it has its G tokens (tokens past G are discarded), and the
cohort runs until the last one finishes. Plain decoding is the case X = 1: exactly G passes.

With N the number of iterations a sequence needs and ``S_i = P(N >= i)``:

* iteration i runs with probability ``1 - (1 - S_i) ** B`` (some sequence is unfinished);
* when it runs, it holds on average ``B S_i / (1 - (1 - S_i) ** B)`` sequences;
* the expected cohort time is the sum over iterations of the first times the iteration
  time at the second. (Evaluating the roofline at the mean batch, rather than averaging
  it over the batch's distribution, is the one approximation; it is exact whenever the
  pass is memory-bound or compute-bound throughout the iteration's possible batches.)

A pass over A sequences costs ``max(m0 + m1 A, c1 A)`` (roofline: fixed memory time m0 for
the weights, m1 per sequence for its cache, c1 per sequence of arithmetic), so the sum is
evaluated in closed form from prefix sums (:func:`expected_pass_time_sum`) rather than
iteration by iteration.

Weights are read once per iteration however few sequences remain, so the tail of a large
cohort costs weight reads without output; that is why a busy batch loses more to
speculation than the mean tokens per iteration alone would say.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from specmodel.model.types import FloatArray, IntArray

#: Probability mass below which the iteration recursion stops (every later S_i is smaller).
_NEGLIGIBLE = 1e-15


def iteration_survival(pmf: npt.ArrayLike, generated_tokens: int) -> FloatArray:
    """``S_i = P(N >= i)`` for i = 1..G, for tokens-per-iteration distribution ``pmf``.

    ``pmf[..., x - 1] = P(X = x)``. Recursion over the tokens emitted so far, t < G:
    ``P_0 = delta_0``, ``P_k[t] = sum_x pmf[x] P_{k-1}[t - x]``, and
    ``S_{k+1} = sum_t P_k[t]`` (still unfinished after k iterations). Returns shape
    ``pmf.shape[:-1] + (G,)``.

    >>> iteration_survival(np.array([1.0]), generated_tokens=3).tolist()  # plain decoding
    [1.0, 1.0, 1.0]
    >>> iteration_survival(np.array([0.0, 1.0]), generated_tokens=3).tolist()  # always 2
    [1.0, 1.0, 0.0]
    """
    pmf = np.asarray(pmf, dtype=float)
    shape, flat = pmf.shape[:-1], pmf.reshape(-1, pmf.shape[-1])
    g = int(generated_tokens)
    # Layout (tokens so far, configuration): each shift below is a contiguous block.
    unfinished = np.zeros((g, flat.shape[0]))
    unfinished[0] = 1.0
    step = np.empty_like(unfinished)
    survival = np.zeros((flat.shape[0], g))
    for k in range(g):
        mass = unfinished.sum(axis=0)
        survival[:, k] = np.minimum(mass, 1.0)  # summation can overshoot 1 by an ulp
        if mass.max(initial=0.0) < _NEGLIGIBLE:
            break
        step[:] = 0.0
        for x in range(1, min(flat.shape[1], g - 1) + 1):
            step[x:] += flat[:, x - 1] * unfinished[: g - x]
        unfinished, step = step, unfinished
    return survival.reshape(shape + (g,))


def expected_iterations(survival):
    """``E[N] = sum_i P(N >= i)``: iterations one sequence needs for its G tokens.

    >>> float(expected_iterations(np.array([1.0, 1.0, 0.5])))
    2.5
    """
    return np.sum(survival, axis=-1)


def probability_iteration_runs(survival, batch):
    """``1 - (1 - S_i) ** B``: some sequence of B still needs iteration i.

    Evaluated as ``-expm1(B log1p(-S_i))`` to keep precision where S_i is tiny.

    >>> probability_iteration_runs(np.array([1.0, 0.5]), 2).tolist()
    [1.0, 0.75]
    """
    with np.errstate(divide="ignore"):  # log1p(-1) = -inf gives exactly 1
        return -np.expm1(batch * np.log1p(-np.asarray(survival, dtype=float)))


def expected_active_sequences(survival, batch, runs):
    """``B S_i / P(iteration i runs)``: mean batch of iteration i, given that it runs
    (0 where it never runs).

    >>> expected_active_sequences(np.array([1.0, 0.5]), 2, np.array([1.0, 0.75])).tolist()
    [2.0, 1.3333333333333333]
    """
    safe = np.where(runs > 0, runs, 1.0)
    return np.where(runs > 0, batch * survival / safe, 0.0)


class CohortTable:
    """Per-iteration quantities of cohorts, one row per (acceptance, batch) pair.

    ``runs[r, i]`` = P(iteration i runs), ``active[r, i]`` = mean batch when it runs
    (non-increasing in i), and prefix sums ``runs_before[r, k] = sum_{i<k} runs`` and
    ``sequences_before[r, k] = sum_{i<k} B S_i`` (sequence-iterations), k = 0..G.
    """

    def __init__(self, survival, batch):
        survival = np.asarray(survival, dtype=float)
        batch = np.asarray(batch, dtype=float).reshape(-1, 1)
        self.runs = probability_iteration_runs(survival, batch)
        self.active = expected_active_sequences(survival, batch, self.runs)
        zero = np.zeros((survival.shape[0], 1))
        self.runs_before = np.concatenate([zero, np.cumsum(self.runs, axis=1)], axis=1)
        self.sequences_before = np.concatenate([zero, np.cumsum(batch * survival, axis=1)], axis=1)

    def count_above(self, row, threshold):
        """Number of leading iterations of ``row`` whose mean batch exceeds ``threshold``
        (binary search; ``active`` is non-increasing along a row)."""
        lo = np.zeros(np.shape(row), dtype=np.int64)
        hi = np.full(np.shape(row), self.active.shape[1], dtype=np.int64)
        for _ in range(int(np.ceil(np.log2(self.active.shape[1] + 1)))):
            open_ = lo < hi
            mid = np.where(open_, (lo + hi) // 2, 0)
            above = open_ & (self.active[row, np.minimum(mid, self.active.shape[1] - 1)] > threshold)
            lo = np.where(above, mid + 1, lo)
            hi = np.where(open_ & ~above, mid, hi)
        return lo


def expected_pass_time_sum(
    table: CohortTable,
    row: IntArray,
    fixed: npt.ArrayLike,
    per_sequence_memory: npt.ArrayLike,
    per_sequence_compute: npt.ArrayLike,
) -> FloatArray:
    """``sum_i P(i runs) max(m0 + m1 A_i, c1 A_i)`` in seconds, with m0 = ``fixed``,
    m1 = ``per_sequence_memory``, c1 = ``per_sequence_compute`` and A_i the mean batch.

    Since ``P(i runs) A_i = B S_i``, each term is ``max(m0 P_i + m1 B S_i, c1 B S_i)``. The
    pass is compute-bound exactly while ``(c1 - m1) A_i > m0``, which, A_i being
    non-increasing, holds on a prefix of k iterations, so the sum is
    ``c1 W_k + m0 (R_G - R_k) + m1 (W_G - W_k)`` with prefix sums R of P(i runs) and W of
    B S_i.
    """
    m0, m1, c1 = (np.asarray(x, dtype=float) for x in (fixed, per_sequence_memory, per_sequence_compute))
    gap = c1 - m1
    threshold = np.where(gap > 0, m0 / np.where(gap > 0, gap, 1.0), np.inf)
    k = table.count_above(row, threshold)
    g = table.active.shape[1]
    w_k, w_g = table.sequences_before[row, k], table.sequences_before[row, g]
    r_k, r_g = table.runs_before[row, k], table.runs_before[row, g]
    return c1 * w_k + m0 * (r_g - r_k) + m1 * (w_g - w_k)
