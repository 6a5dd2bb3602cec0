"""vLLM's speculative-decoding counters: the record, what vLLM derives from them, and the
arithmetic they obey.

vLLM's V1 engine counts, for every draft it verifies (one per sequence and iteration, and
only a draft holding a guess: the scheduler calls ``SpecDecodingStats.observe_draft`` for
requests with draft tokens): ``num_drafts`` (+1), ``num_draft_tokens`` (+ the draft's
length, at most num_speculative_tokens = gamma), ``num_accepted_tokens`` (+ the accepted
guesses), ``num_accepted_tokens_per_pos[j]`` (+1 for each accepted position j = 0 ..
accepted - 1: a guess counts only if every guess before it was accepted) and, in newer
versions, ``num_draft_tokens_per_pos[j]`` (+1 for each drafted position). So, exactly:
per-position counts add up to their totals; draft tokens <= gamma drafts (equal for
fixed-length drafters: draft model, EAGLE, MTP; n-gram drafts can be shorter); no count
rises with position. It reports them (vllm-project/vllm, ``vllm/v1/spec_decode/metrics.py``,
commit ee4ceaae5953d367d8edd2132fd86d6c42506e1e) as a line per logging interval
(:mod:`specmodel.vllm.log_line`) and as Prometheus counters since the server
started (``SpecDecodingProm``, :mod:`specmodel.vllm.prometheus`: :data:`DRAFTS` etc., labelled ``model_name`` and
``engine``, the per-position ones also 0-based ``position``; with the ``_total`` suffix).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import overload

import numpy as np
import numpy.typing as npt

from specmodel.errors import SpecModelError
from specmodel.formatting import shown
from specmodel.model.types import FloatArray, Numeric
from specmodel.model.validation import MAX_GAMMA

#: Prometheus metric names vLLM registers (``SpecDecodingProm``), without the ``_total``.
DRAFTS = "vllm:spec_decode_num_drafts"
DRAFT_TOKENS = "vllm:spec_decode_num_draft_tokens"
ACCEPTED_TOKENS = "vllm:spec_decode_num_accepted_tokens"
ACCEPTED_PER_POSITION = "vllm:spec_decode_num_accepted_tokens_per_pos"
DRAFT_TOKENS_PER_POSITION = "vllm:spec_decode_num_draft_tokens_per_pos"

#: Labels on every vLLM metric, and the extra label of the per-position counters.
LABELS = ("model_name", "engine")
POSITION_LABEL = "position"

#: Rounding of the logged numbers (%.2f, %.3f, %.1f%%): the slack of the consistency checks.
LENGTH_SLACK = 0.005
RATE_SLACK = 0.0005
PERCENT_SLACK = 0.05
EPS = 1e-9
#: Largest count read (2**53, where a float stops counting by ones): no server comes near it.
MAX_COUNT = 2.0**53


@dataclass(frozen=True)
class SpecDecodeCounters:
    """vLLM's spec-decode counters over some interval (counts; floats as Prometheus holds them).

    ``accepted_per_position[j]`` counts drafts whose guess j + 1 was accepted (vLLM's
    position label j), so its length is gamma; ``draft_tokens_per_position[j]``, when known
    (``num_draft_tokens_per_pos``), drafts that held a guess j + 1. ``notes`` say how the
    counters were inferred where the source did not give them; ``model_name``, the model
    the server named (a scrape's ``model_name`` label), says where they came from and is not
    compared. The fields may also be numpy arrays over scenarios (positions on the last axis);
    the definitions apply elementwise.
    """

    num_drafts: Numeric
    num_draft_tokens: Numeric
    num_accepted_tokens: Numeric
    accepted_per_position: tuple[float, ...] | FloatArray
    draft_tokens_per_position: tuple[float, ...] | None = None
    notes: tuple[str, ...] = ()
    model_name: str | None = field(default=None, compare=False)

    @property
    def gamma(self) -> int:
        """Draft positions counted: vLLM's num_speculative_tokens."""
        return int(np.shape(self.accepted_per_position)[-1])

    def __repr__(self) -> str:  # the optional fields only when set, as before they existed
        optional = ("draft_tokens_per_position", "notes", "model_name")
        shown = (name for name in self.__dataclass_fields__ if name not in optional or getattr(self, name))
        return f"SpecDecodeCounters({', '.join(f'{name}={getattr(self, name)!r}' for name in shown)})"


# --- vLLM's definitions -------------------------------------------------------------------


@overload
def _ratio(numerator: float, denominator: float, empty: float) -> float: ...
@overload
def _ratio(numerator: npt.ArrayLike, denominator: npt.ArrayLike, empty: float) -> float | FloatArray: ...
def _ratio(numerator: npt.ArrayLike, denominator: npt.ArrayLike, empty: float) -> float | FloatArray:
    """``numerator / denominator`` elementwise, ``empty`` where the denominator is not
    positive (vLLM's guard against empty intervals); a float for scalar inputs.

    >>> _ratio(3, 4, math.nan), _ratio(3, 0, 0.0)
    (0.75, 0.0)
    """
    num, den = np.asarray(numerator, dtype=float), np.asarray(denominator, dtype=float)
    out = np.where(den > 0, num / np.where(den > 0, den, 1.0), empty)
    return float(out) if out.ndim == 0 else out


def logged_position_rate(counters: SpecDecodeCounters) -> np.ndarray:
    """vLLM's logged per-position rate ``accepted_per_pos[j] / num_drafts`` (``np.sum(pos_matrix,
    axis=0) / num_drafts`` in ``SpecDecodingLogging.log``); NaN where there were no drafts.

    >>> logged_position_rate(SpecDecodeCounters(4, 8, 3, (2, 1))).tolist()
    [0.5, 0.25]
    """
    per_pos = np.asarray(counters.accepted_per_position, dtype=float)
    return np.asarray(_ratio(per_pos, np.asarray(counters.num_drafts, dtype=float)[..., None], math.nan))


def per_position_rate(counters: SpecDecodeCounters) -> np.ndarray:
    """The unconditional per-position acceptance the model wants, u_j = P(guess j reaches the
    output) for a draft of gamma guesses: accepted at position j over the drafts that held a
    guess j (that could have reached it). NaN where there were no drafts.

    * Without ``draft_tokens_per_position``: ``accepted_per_pos[j] / num_drafts``
      (:func:`logged_position_rate`; PromQL ``vllm:spec_decode_num_accepted_tokens_per_pos
      / vllm:spec_decode_num_drafts``). Exact when every draft holds gamma guesses; with
      shorter drafts (n-gram) a guess never drafted counts as rejected, an underestimate.
    * With it (vLLM's ``num_draft_tokens_per_pos``): ``accepted_per_pos[j] /
      draft_tokens_per_pos[j]``. (``draft_tokens_per_pos[0] / num_drafts`` is 1: vLLM counts
      only drafts holding a guess; were it less, the empty drafts would bear on no
      position's acceptance, so it does not scale the rate either.) This assumes a draft's
      length does not depend on whether its guesses would be accepted; where the ratio
      still rises with position (long drafts being the better ones), the running minimum
      is kept, since a draft's u_j cannot rise. A position never drafted gets 0.

    >>> per_position_rate(SpecDecodeCounters(4, 8, 3, (2, 1))).tolist()
    [0.5, 0.25]
    >>> per_position_rate(SpecDecodeCounters(10, 24, 9, (6, 3, 0), (10, 8, 6))).tolist()
    [0.6, 0.375, 0.0]
    """
    if counters.draft_tokens_per_position is None:
        return logged_position_rate(counters)
    per_pos = np.asarray(counters.accepted_per_position, dtype=float)
    rates = np.asarray(_ratio(per_pos, np.asarray(counters.draft_tokens_per_position, dtype=float), 0.0))
    rates = np.where(np.asarray(counters.num_drafts, dtype=float)[..., None] > 0, rates, math.nan)
    return np.minimum.accumulate(rates, axis=-1)


def mean_acceptance_length(counters: SpecDecodeCounters) -> Numeric:
    """Mean acceptance length ``1 + num_accepted_tokens / num_drafts`` (tokens per verify
    pass, the target's own token included), as vLLM logs it; NaN without drafts.

    >>> mean_acceptance_length(SpecDecodeCounters(4, 8, 3, (2, 1)))
    1.75
    """
    return 1.0 + _ratio(counters.num_accepted_tokens, counters.num_drafts, math.nan)


def draft_acceptance_rate(counters: SpecDecodeCounters) -> Numeric:
    """Draft acceptance rate ``num_accepted_tokens / num_draft_tokens`` (0..1; vLLM logs it
    times 100 as "Avg Draft acceptance rate"); NaN without draft tokens.

    >>> draft_acceptance_rate(SpecDecodeCounters(4, 8, 3, (2, 1)))
    0.375
    """
    return _ratio(counters.num_accepted_tokens, counters.num_draft_tokens, math.nan)


def throughput(tokens: Numeric, elapsed_s: Numeric) -> Numeric:
    """Tokens per second over a logging interval, ``tokens / elapsed``; 0 when no time
    elapsed, as vLLM does.

    >>> throughput(10, 4.0)
    2.5
    """
    return _ratio(tokens, elapsed_s, 0.0)


def counters_summary(counters: SpecDecodeCounters) -> dict[str, float]:
    """The counters and vLLM's two headline ratios, as plain numbers (for display).

    >>> counters_summary(SpecDecodeCounters(4, 8, 3, (2, 1)))["mean_acceptance_length"]
    1.75
    """
    return {
        "num_drafts": float(counters.num_drafts),
        "num_draft_tokens": float(counters.num_draft_tokens),
        "num_accepted_tokens": float(counters.num_accepted_tokens),
        "mean_acceptance_length": float(mean_acceptance_length(counters)),
        "draft_acceptance_rate": float(draft_acceptance_rate(counters)),
    }


# --- what vLLM's arithmetic guarantees ----------------------------------------------------


def check_counters(c: SpecDecodeCounters, source: str, rounding: float = 0.0) -> None:
    """Raise, naming the counters that disagree, unless they obey vLLM's arithmetic (module
    docstring): 1 to MAX_GAMMA positions; every count finite, >= 0 and at most MAX_COUNT;
    some drafts; at least one draft token per draft (vLLM counts only drafts holding a
    guess, so acceptance is defined) and at most one per position; accepted <= draft
    tokens; per-position counts within the drafts, not rising with position, and adding up
    to the accepted tokens (within ``rounding`` tokens, for counts rebuilt from logged
    rates); the per-position draft counts likewise. For one record of counters (plain
    numbers), as a server reports them."""
    drafts, draft_tokens, accepted = (float(x) for x in (c.num_drafts, c.num_draft_tokens, c.num_accepted_tokens))
    per_position = tuple(float(x) for x in c.accepted_per_position)
    _check_counts(c, source)
    if drafts <= 0:
        raise SpecModelError(f"{source}: {DRAFTS}_total is 0; no drafts to learn acceptance from")
    if draft_tokens < drafts * (1 - EPS) - rounding:
        raise SpecModelError(
            f"{source}: {shown(drafts)} drafts ({DRAFTS}_total) but {shown(draft_tokens)} draft tokens "
            f"({DRAFT_TOKENS}_total); vLLM counts a draft only when it holds a token, so acceptance is undefined: "
            "are the counters from different servers?"
        )
    if accepted > draft_tokens:
        raise SpecModelError(f"{source}: {accepted:g} accepted tokens exceed {draft_tokens:g} draft tokens")
    if draft_tokens > c.gamma * drafts * (1 + EPS):
        raise SpecModelError(
            f"{source}: {DRAFT_TOKENS}_total / {DRAFTS}_total = {draft_tokens:g} / {drafts:g} = "
            f"{draft_tokens / drafts:.4g} draft tokens per draft, but {ACCEPTED_PER_POSITION}_total "
            f"has {c.gamma} positions (0 to {c.gamma - 1}); a draft holds at most one token per position: "
            "is the scrape trimmed, or are its counters from different servers?"
        )
    _check_falling(ACCEPTED_PER_POSITION, per_position, drafts, source)
    _check_sum(ACCEPTED_PER_POSITION, per_position, ACCEPTED_TOKENS, accepted, source, rounding)
    if c.draft_tokens_per_position is not None:
        _check_drafted(per_position, c.draft_tokens_per_position, drafts, draft_tokens, source)


def _check_counts(c: SpecDecodeCounters, source: str) -> None:
    """1 to MAX_GAMMA positions, and every count a number from 0 to MAX_COUNT, named if not."""
    if not 1 <= c.gamma <= MAX_GAMMA:
        raise SpecModelError(
            f"{source}: {ACCEPTED_PER_POSITION}_total has {c.gamma} positions; the model takes 1 to {MAX_GAMMA}"
        )
    named = [(DRAFTS, c.num_drafts), (DRAFT_TOKENS, c.num_draft_tokens), (ACCEPTED_TOKENS, c.num_accepted_tokens)]
    named += [(f"{ACCEPTED_PER_POSITION} position {j}", x) for j, x in enumerate(c.accepted_per_position)]
    named += [(f"{DRAFT_TOKENS_PER_POSITION} position {j}", x) for j, x in enumerate(c.draft_tokens_per_position or ())]
    for name, value in named:
        x = float(value)
        if not (math.isfinite(x) and x >= 0):
            raise SpecModelError(
                f"{source}: {name} is {shown(x)}; a spec-decode count cannot be infinite, NaN or negative"
            )
        if x > MAX_COUNT:
            raise SpecModelError(f"{source}: {name} is {shown(x)}, more than any server counts (at most 2^53)")


def _check_falling(name: str, counts: tuple[float, ...], drafts: float, source: str) -> None:
    """Per-position counts within the drafts and not rising with position."""
    bound = drafts
    for position, value in enumerate(counts):
        if value > bound * (1 + EPS) + EPS:
            what = "drafts" if position == 0 else f"position {position - 1}'s count"
            raise SpecModelError(
                f"{source}: {name}_total position {position} is {value:g}, more than {what} "
                f"({bound:g}); a guess counts only if the one before it was counted"
            )
        bound = value


def _check_sum(name: str, counts: tuple[float, ...], total_name: str, total: float, source: str, slack: float) -> None:
    """Per-position counts add up to their total (each counted token is at one position)."""
    added = math.fsum(counts)
    if abs(added - total) > slack + 1e-9 * max(1.0, total):
        raise SpecModelError(
            f"{source}: {name}_total positions 0 to {len(counts) - 1} add up to {added:g}, but {total_name}_total "
            f"is {total:g}; vLLM counts each token at its position: are positions missing, or counters mixed?"
        )


def _check_drafted(
    per_position: tuple[float, ...], drafted: tuple[float, ...], drafts: float, draft_tokens: float, source: str
) -> None:
    """The per-position draft counts: one per position, within the drafts, not rising, adding
    up to the draft tokens, and never fewer than the accepted tokens at the same position."""
    if len(drafted) != len(per_position):
        raise SpecModelError(
            f"{source}: {DRAFT_TOKENS_PER_POSITION}_total has {len(drafted)} positions but "
            f"{ACCEPTED_PER_POSITION}_total has {len(per_position)}; vLLM counts both for every position"
        )
    _check_falling(DRAFT_TOKENS_PER_POSITION, drafted, drafts, source)
    _check_sum(DRAFT_TOKENS_PER_POSITION, drafted, DRAFT_TOKENS, draft_tokens, source, 0.0)
    for position, (accepted, held) in enumerate(zip(per_position, drafted)):
        if accepted > held * (1 + EPS) + EPS:
            raise SpecModelError(
                f"{source}: position {position}: {ACCEPTED_PER_POSITION}_total {accepted:g} exceeds "
                f"{DRAFT_TOKENS_PER_POSITION}_total {held:g}; a guess must be drafted to be accepted"
            )
