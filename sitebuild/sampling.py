"""Speculative sampling on categorical distributions (Leviathan et al. 2023, arXiv:2211.17192).

One step of Algorithm 1 (SpeculativeDecodingStep), with the models' distributions given as
arrays over a vocabulary of V tokens: the draft's ``q_1..q_gamma`` and the target's
``p_1..p_{gamma+1}``, each a row summing to 1. (In a real decoder q_i and p_i depend on the
tokens before position i; here they are fixed, which is all the algorithm's guarantees
need: each holds for whatever distributions the models produce at each position.)

1. draw guesses ``x_i ~ q_i`` for i = 1..gamma;
2. draw ``r_i ~ U(0, 1)`` and accept guess i while ``r_i < p_i(x_i) / q_i(x_i)``; ``n`` is the
   number accepted, the index of the first rejection (gamma if none);
3. draw the emitted token ``t ~ p'``, where ``p' = norm(max(0, p_{n+1} - q_{n+1}))`` after a
   rejection and ``p' = p_{gamma+1}`` when all gamma were accepted;
4. the step outputs ``x_1..x_n, t``.

Every output token is distributed as the target alone would draw it (Section 2.3 and
Appendix A.1), and a guess is accepted with probability ``beta = sum_x min(p(x), q(x))
= 1 - D_LK(p, q)`` (Theorem 3.5, Corollary 3.6).

Everything is vectorised over independent trials; the distributions are either shared by
all trials, shapes ``(gamma, V)`` and ``(gamma + 1, V)``, or one set per trial, shapes
``(trials, gamma, V)`` and ``(trials, gamma + 1, V)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from specmodel.errors import SpecModelError
from specmodel.model.validation import check_integer

#: How far a distribution's total may stray from 1 (float rounding of user-supplied rows).
_SUM_TOLERANCE = 1e-6

#: Distribution tables up to this many rows are sampled with one searchsorted over the
#: rows laid end to end; larger ones (one set per trial) by comparing against the
#: gathered cumulative rows (the shift by the row index would cost precision there).
_ROW_LOOP_LIMIT = 256


@dataclass(frozen=True)
class SpeculativeStep:
    """The outcome of Algorithm 1 for each trial (token ids are 0..V-1)."""

    drafts: np.ndarray  #: (trials, gamma): the guesses x_1..x_gamma, drawn from q
    rejected_at: np.ndarray  #: (trials,): n, the 0-based index of the first rejection (gamma if none)
    token: np.ndarray  #: (trials,): t, the token the target emits after the accepted guesses

    @property
    def gamma(self) -> int:
        return self.drafts.shape[-1]

    def accepted_tokens(self) -> np.ndarray:
        """(trials, gamma): the accepted guesses x_1..x_n, -1 from the first rejection on."""
        keep = np.arange(self.gamma) < self.rejected_at[:, None]
        return np.where(keep, self.drafts, -1)

    def output(self) -> np.ndarray:
        """(trials, gamma + 1): the tokens the step emits, ``x_1..x_n, t``, then -1."""
        out = np.concatenate([self.accepted_tokens(), np.full((self.drafts.shape[0], 1), -1)], axis=1)
        out[np.arange(out.shape[0]), self.rejected_at] = self.token
        return out


# --- the formulas -------------------------------------------------------------------------


def acceptance_probability(p, q):
    """``beta = sum_x min(p(x), q(x))``: probability that speculative sampling accepts a
    guess drawn from q when the target's distribution is p (Leviathan et al. 2023,
    arXiv:2211.17192, Theorem 3.5 with Lemma 3.4; its mean over positions is alpha,
    Corollary 3.6). Dimensionless, over the last axis.

    >>> float(acceptance_probability([0.5, 0.5, 0.0], [0.0, 0.5, 0.5]))
    0.5
    """
    return np.minimum(np.asarray(p, dtype=float), np.asarray(q, dtype=float)).sum(axis=-1)


def total_variation_distance(p, q):
    """``TV(p, q) = 1/2 sum_x |p(x) - q(x)|`` over the last axis: how far an empirical
    distribution lies from the one it should follow. Dimensionless, 0..1.

    >>> float(total_variation_distance([0.5, 0.5], [0.25, 0.75]))
    0.25
    """
    return 0.5 * np.abs(np.subtract(np.asarray(p, dtype=float), np.asarray(q, dtype=float))).sum(axis=-1)


def residual_distribution(p, q):
    """``p' = norm(max(0, p - q))``: where the target resamples after rejecting a guess from q
    (Leviathan et al. 2023, arXiv:2211.17192, Algorithm 1, and Section 2.3). Rows where
    ``p <= q`` everywhere (p = q, so no guess is ever rejected) fall back to p.

    >>> residual_distribution([0.5, 0.5, 0.0], [0.0, 0.5, 0.5]).tolist()
    [1.0, 0.0, 0.0]
    """
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    excess = np.maximum(p - q, 0.0)
    total = excess.sum(axis=-1, keepdims=True)
    return np.where(total > 0, excess / np.where(total > 0, total, 1.0), p)


# --- sampling -----------------------------------------------------------------------------


def _check_distributions(name: str, array: npt.ArrayLike, rows: int) -> np.ndarray:
    """``array`` as float, shape (rows, V) or (trials, rows, V), each row a distribution."""
    a = np.asarray(array, dtype=float)
    if a.ndim not in (2, 3) or a.shape[-2] != rows or a.shape[-1] < 1:
        raise SpecModelError(f"{name} must have shape ({rows}, V) or (trials, {rows}, V); got {a.shape}")
    if not np.all(np.isfinite(a)) or np.any(a < 0):
        raise SpecModelError(f"{name} must hold finite probabilities >= 0")
    sums = a.sum(axis=-1)
    if np.any(np.abs(sums - 1.0) > _SUM_TOLERANCE):
        worst = sums.flat[np.argmax(np.abs(sums - 1.0))]
        raise SpecModelError(f"each row of {name} must sum to 1; one sums to {worst:.6g}")
    return a


def sample_rows(table: np.ndarray, which: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One draw from each chosen row of a table of distributions, by inverting its cumulative
    distribution at a uniform draw: ``table`` (K, V), ``which`` (trials,) row indices.
    A token of zero probability is never drawn.

    >>> sample_rows(np.array([[0.0, 1.0], [1.0, 0.0]]), np.array([0, 1, 0]), np.random.default_rng(0)).tolist()
    [1, 0, 1]
    """
    cdf = np.cumsum(table, axis=-1)
    cdf = cdf / cdf[:, -1:]  # each row ends at exactly 1
    u = rng.random(which.shape)  # in [0, 1): never reaches a row's end
    if table.shape[0] <= _ROW_LOOP_LIMIT:
        # Rows laid end to end, row k shifted by k: one sorted array, one search.
        flat = (cdf + np.arange(table.shape[0])[:, None]).ravel()
        return np.searchsorted(flat, which + u, side="right") - which * table.shape[1]
    return (cdf[which] <= u[:, None]).sum(axis=-1)


def speculative_step(
    q: npt.ArrayLike, p: npt.ArrayLike, rng: np.random.Generator, trials: int | None = None
) -> SpeculativeStep:
    """Run Algorithm 1 of Leviathan et al. 2023 (arXiv:2211.17192) once per trial.

    ``q``: the draft's distributions, (gamma, V) shared or (trials, gamma, V); ``p``: the
    target's, (gamma + 1, V) or (trials, gamma + 1, V); ``trials`` defaults to the leading
    axis of per-trial arrays, else 1. Returns the guesses, the index of the first rejection
    and the emitted token (see :class:`SpeculativeStep` and the module docstring).

    >>> step = speculative_step([[0.0, 1.0]], [[0.0, 1.0], [1.0, 0.0]], np.random.default_rng(0), trials=2)
    >>> step.output().tolist()  # q = p at position 1: always accepted; then p_2 emits token 0
    [[1, 0], [1, 0]]
    """
    q = np.asarray(q, dtype=float)
    if q.ndim not in (2, 3):
        raise SpecModelError(f"q must have shape (gamma, V) or (trials, gamma, V); got {q.shape}")
    gamma = q.shape[-2]
    q = _check_distributions("q", q, gamma)
    p = _check_distributions("p", p, gamma + 1)
    if p.shape[-1] != q.shape[-1]:
        raise SpecModelError(f"p and q must share the vocabulary; got V = {p.shape[-1]} and {q.shape[-1]}")
    per_trial = [a.shape[0] for a in (q, p) if a.ndim == 3]
    if trials is None:
        trials = per_trial[0] if per_trial else 1
    if any(n != trials for n in per_trial):
        raise SpecModelError(f"per-trial distributions have {per_trial} trials, but trials = {trials}")
    trials = int(check_integer("trials", trials, 1))
    vocab = q.shape[-1]
    # Tables of rows: q -> (L * gamma, V); trial k, position i uses row  k * gamma + i  (k = 0 if shared).
    q_owner = np.arange(trials)[:, None] if q.ndim == 3 else np.zeros((trials, 1), dtype=np.int64)
    p_owner = np.arange(trials)[:, None] if p.ndim == 3 else np.zeros((trials, 1), dtype=np.int64)
    positions = np.arange(gamma)[None, :]

    # 1. guesses x_i ~ q_i
    q_rows = q.reshape(-1, vocab)
    p_rows = p.reshape(-1, vocab)
    q_index = q_owner * gamma + positions
    drafts = sample_rows(q_rows, q_index.ravel(), rng).reshape(trials, gamma)

    # 2. accept guess i while r_i < p_i(x_i) / q_i(x_i), i.e. r_i q_i(x_i) < p_i(x_i) (q_i(x_i) > 0)
    q_x = q_rows[q_index, drafts]
    p_x = p_rows[p_owner * (gamma + 1) + positions, drafts]
    accepted = rng.random((trials, gamma)) * q_x < p_x
    rejected_at = np.where(accepted.all(axis=1), gamma, np.argmin(accepted, axis=1))

    # 3. t ~ p': the residual of position n + 1 after a rejection, p_{gamma+1} otherwise
    q_by_owner = q.reshape(-1, gamma, vocab)
    q_padded = np.concatenate([q_by_owner, np.zeros((q_by_owner.shape[0], 1, vocab))], axis=1)
    final = residual_distribution(p.reshape(-1, gamma + 1, vocab), q_padded)  # (L, gamma + 1, V)
    owner = np.maximum(q_owner, p_owner)[:, 0] if final.shape[0] > 1 else np.zeros(trials, dtype=np.int64)
    token = sample_rows(final.reshape(-1, vocab), owner * (gamma + 1) + rejected_at, rng)
    return SpeculativeStep(drafts=drafts, rejected_at=rejected_at, token=token)


# --- the article's toy example ------------------------------------------------------------

#: A toy vocabulary and two distributions over it for the article: the target's p and a
#: draft's q that disagree, q putting no mass on "dog" (which p likes) and p none on
#: "banana" (which q likes).
TOY_VOCABULARY = ("the", "cat", "dog", "sat", "on", "mat", "banana", ".")
TOY_TARGET = (0.10, 0.25, 0.20, 0.15, 0.10, 0.15, 0.00, 0.05)
TOY_DRAFT = (0.15, 0.35, 0.00, 0.10, 0.10, 0.05, 0.15, 0.10)


@dataclass(frozen=True)
class ToyDemo:
    """Speculative sampling with one guess (gamma = 1) on the toy vocabulary."""

    labels: tuple[str, ...]  #: the vocabulary
    p: tuple[float, ...]  #: the target's distribution
    q: tuple[float, ...]  #: the draft's distribution
    residual: tuple[float, ...]  #: norm(max(0, p - q)), what a rejection resamples from
    output: tuple[float, ...]  #: empirical distribution of the first token emitted
    acceptance_rate: float  #: share of trials whose guess was accepted
    expected_acceptance: float  #: sum_x min(p, q) = 1 - D_LK(p, q) (Leviathan et al., Corollary 3.6 for one pair)
    trials: int
    seed: int


def toy_demo(seed: int = 0, trials: int = 200_000) -> ToyDemo:
    """Run Algorithm 1 with one guess ``trials`` times on :data:`TOY_VOCABULARY` (target
    :data:`TOY_TARGET` as p_1 and p_2, draft :data:`TOY_DRAFT`) and tabulate the first
    emitted token. Deterministic for a seed.

    >>> demo = toy_demo(seed=0, trials=20_000)
    >>> round(demo.expected_acceptance, 2), abs(demo.acceptance_rate - demo.expected_acceptance) < 0.02
    (0.65, True)
    """
    p = np.asarray(TOY_TARGET)
    q = np.asarray(TOY_DRAFT)
    step = speculative_step(q[None, :], np.stack([p, p]), np.random.default_rng(seed), trials=trials)
    first = step.output()[:, 0]
    output = np.bincount(first, minlength=p.size) / trials
    return ToyDemo(
        labels=TOY_VOCABULARY,
        p=tuple(float(x) for x in p),
        q=tuple(float(x) for x in q),
        residual=tuple(float(x) for x in residual_distribution(p, q)),
        output=tuple(float(x) for x in output),
        acceptance_rate=float(np.mean(step.rejected_at >= 1)),
        expected_acceptance=float(acceptance_probability(p, q)),
        trials=int(trials),
        seed=int(seed),
    )
