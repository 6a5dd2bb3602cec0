"""A cohort of B sequences decoding G tokens each, as the article simulates it.

All B sequences start together. Each iteration every unfinished sequence emits X tokens
(X i.i.d. with the distribution from :func:`specmodel.model.acceptance.tokens_per_iteration_pmf`),
a sequence leaves the batch once it has its G tokens (tokens past G are discarded), and the
cohort runs until the last one finishes. Plain decoding is the case X = 1: exactly G passes.
This draining model and its sums are the project's own derivation.

With N_it the number of iterations a sequence needs, T_k = X_1 + ... + X_k the tokens after k
iterations and ``S_i = P(N_it >= i) = P(T_{i-1} <= G - 1)``:

* iteration i runs with probability ``1 - (1 - S_i) ** B`` (some sequence is unfinished);
* when it runs, it holds on average ``B S_i / (1 - (1 - S_i) ** B)`` sequences;
* the expected cohort time is the sum over iterations of the first times the iteration
  time at the second. (Evaluating the roofline at the mean batch, rather than averaging
  it over the batch's distribution, is the one approximation; it is exact whenever the
  pass is memory-bound or compute-bound throughout the iteration's possible batches.)

Cost linear in G, not quadratic (:class:`Survival`): T_k has mean k E[X] and spread
O(sqrt k), so S_i is 1 (to 1e-20) for every i up to some k0 near G / E[X] minus a few
spreads, and 0 (below 1e-15) a few spreads after G / E[X]. Only the window between is
computed: the distribution of T_{k0} by repeated squaring (FFT convolutions, each cut to
the interval that Bernstein's inequality says holds all but 1e-20 of its mass), then the
token recursion ``P_{k+1}[t] = sum_x P(X = x) P_k[t - x]`` on the tokens [a, G) that
T_{k0} reaches; the leading iterations, each with S_i = 1, enter every sum as a count.
Every sum over iterations is then a prefix sum over that window, O(sqrt G) long.

A pass over A sequences costs ``max(m0 + m1 A, c1 A)`` (roofline: fixed memory time m0 for
the weights, m1 per sequence for its cache, c1 per sequence of arithmetic), so the sum is
evaluated in closed form from prefix sums (:func:`expected_pass_time_sum`) rather than
iteration by iteration.

Weights are read once per iteration however few sequences remain, so the tail of a large
cohort costs weight reads without output; that is why a busy batch loses more to
speculation than the mean tokens per iteration alone would say.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from specmodel.model.types import FloatArray, IntArray

#: Probability mass below which the iteration recursion stops (every later S_i is smaller).
_NEGLIGIBLE = 1e-15
#: Tail mass that Bernstein's inequality allows a cut to drop (each power makes at most
#: about 70 cuts, and the leading S_i = 1 hide at most this much).
_TAIL = 1e-20
#: Below this many leading iterations the window starts at 0 (nothing to gain).
_SHORT = 32


def _convolve(a: FloatArray, b: FloatArray) -> FloatArray:
    """The distribution of the sum of two independent counts with masses ``a`` and ``b``
    (``(a * b)[n] = sum_k a[k] b[n - k]``): direct for short arrays, by FFT otherwise
    (absolute error ~1e-16 of the largest mass); round-off below 0 clipped."""
    n = len(a) + len(b) - 1
    if min(len(a), len(b)) < 64:
        return np.maximum(np.convolve(a, b), 0.0)
    size = 1 << (n - 1).bit_length()
    return np.maximum(np.fft.irfft(np.fft.rfft(a, size) * np.fft.rfft(b, size), size)[:n], 0.0)


def bernstein_spread(count: float, variance: float, bound: float) -> float:
    """Half-width s of the interval around its mean that holds the sum of ``count`` i.i.d.
    counts of ``variance`` within ``bound`` of their mean, but for a mass below
    :data:`_TAIL` on each side (Bernstein's inequality, ``P(U - k mu >= s) <= exp(-s^2 / 2
    / (k var + bound s / 3))``): ``s = bound L / 3 + sqrt((bound L / 3)^2 + 2 L k var)``,
    ``L = ln(1 / _TAIL)``. Tokens."""
    log = np.log(1 / _TAIL)
    linear = bound * log / 3
    return float(linear + np.sqrt(linear * linear + 2 * log * count * variance))


@dataclass(frozen=True)
class _Moments:
    """Mean, variance and range of U = X - 1 (tokens past one per iteration)."""

    mean: float
    variance: float
    bound: float  #: largest U (bounds |U - mean|)

    @classmethod
    def of(cls, pmf: FloatArray) -> _Moments:
        u = np.arange(len(pmf))
        mean = float(np.dot(u, pmf))
        return cls(mean, max(float(np.dot(u * u, pmf)) - mean * mean, 0.0), float(np.flatnonzero(pmf)[-1]))

    def trim(self, offset: int, mass: FloatArray, count: int) -> tuple[int, FloatArray]:
        """``(offset, mass)`` of the sum of ``count`` U's (``mass[u] = P(sum = offset + u)``)
        cut to mean +- :func:`bernstein_spread`: less than 2 :data:`_TAIL` of true mass
        dropped, and the FFT's round-off outside with it."""
        spread = bernstein_spread(count, self.variance, self.bound)
        lo = max(int(np.ceil(count * self.mean - spread)) - offset, 0)
        hi = min(int(np.floor(count * self.mean + spread)) - offset + 1, len(mass))
        return offset + lo, mass[lo : max(hi, lo + 1)]


def _power(pmf: FloatArray, k: int, moments: _Moments) -> tuple[int, FloatArray]:
    """``(offset, mass)`` of the sum of ``k`` i.i.d. U with ``pmf[u] = P(U = u)``, by
    repeated squaring, each convolution trimmed (:meth:`_Moments.trim`)."""
    result: tuple[int, FloatArray] = (0, np.ones(1))
    base, count, done = (0, pmf), 1, 0
    while k:
        if k & 1:
            done += count
            result = moments.trim(result[0] + base[0], _convolve(result[1], base[1]), done)
        k >>= 1
        if k:
            count *= 2
            base = moments.trim(2 * base[0], _convolve(base[1], base[1]), count)
    return result


def _leading(pmf: FloatArray, g: int) -> tuple[int, int, FloatArray]:
    """``(k0, a, P)``: k0 iterations that every sequence needs but for a probability below
    :data:`_TAIL`, and ``P[t - a] = P(T_{k0} = t)`` for the tokens a <= t < G.

    T_k = k + U_k with U_k a sum of k U's; k0 is the largest k with ``k (1 + mu) + s(G / (1 +
    mu)) <= G - 1``, s the :func:`bernstein_spread` (which grows with k, so s(k0) is smaller);
    0 if that is below :data:`_SHORT`.
    """
    pmf = pmf[: int(np.flatnonzero(pmf)[-1]) + 1]  # the same work however wide the rows it came with
    moments = _Moments.of(pmf)
    per_iteration = 1 + moments.mean
    spread = bernstein_spread(g / per_iteration, moments.variance, moments.bound)
    k0 = int(np.floor((g - 1 - spread) / per_iteration))
    if k0 < _SHORT:
        return 0, 0, np.ones(1)
    offset, mass = _power(pmf, k0, moments)
    a = k0 + offset
    return k0, a, mass[: max(g - a, 0)]


@dataclass(frozen=True)
class Survival:
    """``S_i = P(N_it >= i)``, i = 1..G, of each row in compact form: 1 for i <= ``start``,
    ``window[:, j]`` for i = start + 1 + j, 0 after (below 1e-15)."""

    start: IntArray  #: leading iterations with S_i = 1, per row
    window: FloatArray  #: (rows, L): S_{start + 1 + j}
    generated_tokens: int  #: G

    @classmethod
    def of_dense(cls, survival: npt.ArrayLike) -> Survival:
        """The compact form of dense ``S[..., i - 1]`` rows (no leading iterations)."""
        dense = np.asarray(survival, dtype=float)
        flat = dense.reshape(-1, dense.shape[-1])
        return cls(np.zeros(flat.shape[0], dtype=np.int64), flat, int(dense.shape[-1]))

    def take(self, rows: IntArray) -> Survival:
        """The rows ``rows``."""
        return Survival(self.start[rows], self.window[rows], self.generated_tokens)

    def expected_iterations(self) -> FloatArray:
        """``E[N_it] = sum_i S_i = start + sum_j window_j`` per row."""
        summed = np.cumsum(self.window, axis=1)[:, -1] if self.window.shape[1] else 0.0
        return np.asarray(self.start + summed, dtype=float)


def survival_window(pmf: npt.ArrayLike, generated_tokens: int) -> Survival:
    """:class:`Survival` of each row of ``pmf`` (``pmf[..., x - 1] = P(X = x)``; rows
    flattened): :func:`window_survival`, remembered for the last few ``pmf`` (a sweep's
    chunks share their acceptance rows). Its arrays are read-only."""
    flat = np.ascontiguousarray(pmf, dtype=float)
    flat = flat.reshape(-1, flat.shape[-1])
    return _remembered(flat.tobytes(), flat.shape, int(generated_tokens))


@functools.lru_cache(maxsize=8)
def _remembered(data: bytes, shape: tuple[int, ...], generated_tokens: int) -> Survival:
    """:func:`window_survival` of the rows in ``data`` (read-only arrays)."""
    survival = window_survival(np.frombuffer(data).reshape(shape), generated_tokens)
    for array in (survival.start, survival.window):
        array.setflags(write=False)
    return survival


def window_survival(pmf: npt.ArrayLike, generated_tokens: int) -> Survival:
    """:class:`Survival` of each row of ``pmf`` (``pmf[..., x - 1] = P(X = x)``; rows flattened).

    After the k0 leading iterations of :func:`_leading`, the recursion over tokens t in
    [a, G): ``S_{k0+1+j} = sum_t P_{k0+j}[t]``, ``P_{k+1}[t] = sum_x pmf[x] P_k[t - x]``
    (mass reaching G leaves), until every row's mass is below 1e-15. Rows share one array
    (the widest window) and step together. Cost O(G) per row: the window is O(sqrt G)
    tokens wide and lasts O(sqrt G) iterations.
    """
    pmf = np.asarray(pmf, dtype=float)
    flat = pmf.reshape(-1, pmf.shape[-1])
    g = int(generated_tokens)
    leading = [_leading(row, g) for row in flat]
    start = np.array([k0 for k0, _, _ in leading], dtype=np.int64)
    width = max([g - a for _, a, _ in leading] + [1])
    # Layout (tokens G - width .. G - 1, row): each shift below is a contiguous block.
    unfinished = np.zeros((width, flat.shape[0]))
    for r, (_, a, mass) in enumerate(leading):
        unfinished[a - (g - width) : a - (g - width) + len(mass), r] = mass
    step = np.empty_like(unfinished)
    columns = []
    for _ in range(g - int(start.min(initial=0))):
        mass = np.cumsum(unfinished, axis=0)[-1]  # in token order, whatever the width: see _own_end
        columns.append(np.minimum(mass, 1.0))  # summation can overshoot 1 by an ulp
        if mass.max(initial=0.0) < _NEGLIGIBLE:
            break
        step[:] = 0.0
        for x in range(1, min(flat.shape[1], width - 1) + 1):
            step[x:] += flat[:, x - 1] * unfinished[: width - x]
        unfinished, step = step, unfinished
    window = np.stack(columns, axis=1) if columns else np.zeros((flat.shape[0], 0))
    return Survival(start, _own_end(window, start, g), g)


def _own_end(window: FloatArray, start: IntArray, g: int) -> FloatArray:
    """``window`` with each row cut after its own first value below 1e-15 and at i = G
    (T_k >= k): a row's values do not depend on which rows shared its array."""
    j = np.arange(window.shape[1])
    below = window < _NEGLIGIBLE
    last = np.where(below.any(axis=1), np.argmax(below, axis=1), window.shape[1])
    keep = (j <= last[:, None]) & (start[:, None] + j < g)
    return np.where(keep, window, 0.0)


def expected_iterations(survival):
    """``E[N_it] = sum_i P(N_it >= i)``: iterations one sequence needs for its G tokens.

    >>> float(expected_iterations(np.array([1.0, 1.0, 0.5])))
    2.5
    """
    if isinstance(survival, Survival):
        return survival.expected_iterations()
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
    """Per-iteration quantities of cohorts, one row per (acceptance, batch) pair, over the
    window of :class:`Survival` (its ``start`` leading iterations all run, with B sequences).

    ``runs[r, j]`` = P(iteration start + 1 + j runs), ``active[r, j]`` = mean batch when it
    runs (non-increasing in j, at most B), and prefix sums counting the leading iterations,
    ``runs_before[r, k] = start + sum_{j<k} runs`` and ``sequences_before[r, k] = B start +
    sum_{j<k} B S_j`` (sequence-iterations), k = 0..L; the last column is the whole cohort.
    """

    def __init__(self, survival: Survival | npt.ArrayLike, batch: npt.ArrayLike):
        if not isinstance(survival, Survival):
            survival = Survival.of_dense(survival)
        window = survival.window
        self.batch = np.asarray(batch, dtype=float).reshape(-1)
        self.start = survival.start.astype(float)
        b = self.batch[:, None]
        self.runs = probability_iteration_runs(window, b)
        self.active = expected_active_sequences(window, b, self.runs)
        # Non-increasing but for round-off; the search needs it exactly so to give one answer.
        self._descending = np.minimum.accumulate(self.active, axis=1)
        zero = np.zeros((window.shape[0], 1))
        self.runs_before = self.start[:, None] + np.concatenate([zero, np.cumsum(self.runs, axis=1)], axis=1)
        sequences = np.concatenate([zero, np.cumsum(b * window, axis=1)], axis=1)
        self.sequences_before = b * self.start[:, None] + sequences

    def total_runs(self, row: IntArray) -> FloatArray:
        """``sum_i P(i runs)``: expected iterations of the cohort of each ``row``."""
        return self.runs_before[row, -1]

    def total_sequences(self, row: IntArray) -> FloatArray:
        """``sum_i B S_i = B E[N_it]``: expected sequence-iterations of each ``row``."""
        return self.sequences_before[row, -1]

    def count_above(self, row, threshold):
        """Number of leading window iterations of ``row`` whose mean batch exceeds
        ``threshold`` (binary search; ``active`` is non-increasing along a row)."""
        width = self.active.shape[1]
        lo = np.zeros(np.shape(row), dtype=np.int64)
        hi = np.full(np.shape(row), width, dtype=np.int64)
        for _ in range(int(np.ceil(np.log2(width + 1)))):
            open_ = lo < hi
            mid = np.where(open_, (lo + hi) // 2, 0)
            above = open_ & (self._descending[row, np.minimum(mid, width - 1)] > threshold)
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
    non-increasing, holds on a prefix of k iterations (all the leading ones and k - start
    of the window when B is above the threshold, none otherwise), so the sum is
    ``c1 W_k + m0 (R_G - R_k) + m1 (W_G - W_k)`` with prefix sums R of P(i runs) and W of
    B S_i.
    """
    m0, m1, c1 = (np.asarray(x, dtype=float) for x in (fixed, per_sequence_memory, per_sequence_compute))
    gap = c1 - m1
    threshold = np.where(gap > 0, m0 / np.where(gap > 0, gap, 1.0), np.inf)
    k = table.count_above(row, threshold)
    leading = table.batch[row] > threshold
    w_k = np.where(leading, table.sequences_before[row, k], 0.0)
    r_k = np.where(leading, table.runs_before[row, k], 0.0)
    w_g, r_g = table.total_sequences(row), table.total_runs(row)
    return c1 * w_k + m0 * (r_g - r_k) + m1 * (w_g - w_k)
