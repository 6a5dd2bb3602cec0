"""vLLM's speculative-decoding counters (V1, and V0's totals): definitions, rendering, checks.

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
(``SpecDecodingLogging.log()``: :data:`LOG_FORMAT` after vLLM's logger prefix, e.g.
``(APIServer pid=2236552) INFO 09-09 11:51:35 [metrics.py:96] SpecDecoding metrics: ...``;
other layouts: :mod:`specmodel.vllm.logs`) and as Prometheus counters since the server
started (``SpecDecodingProm``: :data:`DRAFTS` etc., labelled ``model_name`` and
``engine``, the per-position ones also 0-based ``position``; with the ``_total`` suffix).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import overload

import numpy as np
import numpy.typing as npt

from specmodel.errors import SpecModelError
from specmodel.model.acceptance import alpha_for_mean_acceptance_length
from specmodel.model.types import FloatArray

#: The text that marks vLLM's spec-decode log line; the parser relies on nothing before it.
LOG_MARKER = "SpecDecoding metrics:"

#: vLLM's format string for the line, verbatim (``SpecDecodingLogging.log``); the arguments
#: are mean acceptance length, accepted and drafted throughput (tokens/s), accepted and
#: drafted tokens, the per-position rates joined by ", " (each ``f"{p:.3f}"``) and the
#: draft acceptance rate in percent.
LOG_FORMAT = (
    "SpecDecoding metrics: "
    "Mean acceptance length: %.2f, "
    "Accepted throughput: %.2f tokens/s, "
    "Drafted throughput: %.2f tokens/s, "
    "Accepted: %d tokens, "
    "Drafted: %d tokens, "
    "Per-position acceptance rate: %s, "
    "Avg Draft acceptance rate: %.1f%%"
)

#: Prometheus metric names vLLM registers (``SpecDecodingProm``), without the ``_total``.
DRAFTS = "vllm:spec_decode_num_drafts"
DRAFT_TOKENS = "vllm:spec_decode_num_draft_tokens"
ACCEPTED_TOKENS = "vllm:spec_decode_num_accepted_tokens"
ACCEPTED_PER_POSITION = "vllm:spec_decode_num_accepted_tokens_per_pos"
DRAFT_TOKENS_PER_POSITION = "vllm:spec_decode_num_draft_tokens_per_pos"

#: What only the V0 engine exposed (``vllm/engine/metrics.py``): two gauges (draft
#: acceptance rate, system efficiency) and the emitted-tokens counter.
V0_METRICS = (
    "vllm:spec_decode_draft_acceptance_rate",
    "vllm:spec_decode_efficiency",
    "vllm:spec_decode_num_emitted_tokens_total",
)

#: Labels on every vLLM metric, and the extra label of the per-position counters.
LABELS = ("model_name", "engine")
POSITION_LABEL = "position"

#: Rounding of the logged numbers (%.2f, %.3f, %.1f%%): the slack of the consistency checks.
_LENGTH_SLACK = 0.005
_RATE_SLACK = 0.0005
_PERCENT_SLACK = 0.05
_EPS = 1e-9


@dataclass(frozen=True)
class SpecDecodeCounters:
    """vLLM's spec-decode counters over some interval (counts; floats as Prometheus holds them).

    ``accepted_per_position[j]`` counts drafts whose guess j + 1 was accepted (vLLM's
    position label j), so its length is gamma; ``draft_tokens_per_position[j]``, when known
    (``num_draft_tokens_per_pos``), drafts that held a guess j + 1. ``notes`` say how the
    counters were inferred where the source did not give them. The fields may also be
    numpy arrays over scenarios (positions on the last axis); the definitions apply elementwise.
    """

    num_drafts: float
    num_draft_tokens: float
    num_accepted_tokens: float
    accepted_per_position: tuple[float, ...]
    draft_tokens_per_position: tuple[float, ...] | None = None
    notes: tuple[str, ...] = ()

    @property
    def gamma(self) -> int:
        """Draft positions counted: vLLM's num_speculative_tokens."""
        return int(np.shape(self.accepted_per_position)[-1])

    def __repr__(self) -> str:  # the optional fields only when set, as before they existed
        optional = ("draft_tokens_per_position", "notes")
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


def mean_acceptance_length(counters: SpecDecodeCounters) -> float:
    """Mean acceptance length ``1 + num_accepted_tokens / num_drafts`` (tokens per verify
    pass, the target's own token included), as vLLM logs it; NaN without drafts.

    >>> mean_acceptance_length(SpecDecodeCounters(4, 8, 3, (2, 1)))
    1.75
    """
    return 1.0 + _ratio(counters.num_accepted_tokens, counters.num_drafts, math.nan)


def draft_acceptance_rate(counters: SpecDecodeCounters) -> float:
    """Draft acceptance rate ``num_accepted_tokens / num_draft_tokens`` (0..1; vLLM logs it
    times 100 as "Avg Draft acceptance rate"); NaN without draft tokens.

    >>> draft_acceptance_rate(SpecDecodeCounters(4, 8, 3, (2, 1)))
    0.375
    """
    return _ratio(counters.num_accepted_tokens, counters.num_draft_tokens, math.nan)


def throughput(tokens: float, elapsed_s: float) -> float:
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
        "mean_acceptance_length": mean_acceptance_length(counters),
        "draft_acceptance_rate": draft_acceptance_rate(counters),
    }


# --- V0 ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class V0Totals:
    """The V0 engine's counts (vLLM 0.5 to 0.9, ``vllm/spec_decode/metrics.py``), as its
    "Speculative metrics" log line gives them: totals since the server started. V0 drafted
    ``num_spec_tokens`` = k tokens a sequence and step; its accepted tokens count every
    guess the target accepted, even after a rejection (``RejectionSampler._create_output``:
    ``accepted.sum()``); its emitted tokens (accepted in order, plus one) reach the output."""

    line: int  #: of the log line
    num_spec_tokens: int
    accepted: int
    drafted: int
    emitted: int
    acceptance_rate: float  #: accepted / drafted, as logged (%.3f)
    efficiency: float  #: emitted / (drafts (k + 1)), as logged (%.3f)


def check_v0_totals(t: V0Totals, where: str) -> None:
    """Raise unless V0's arithmetic holds: draft tokens a multiple of k (drafts = draft
    tokens / k); 1 to k + 1 emitted tokens a draft; emitted - drafts (accepted in order)
    <= accepted <= draft tokens; the logged ratios (3 decimals) match the counts."""
    k, accepted, drafted, emitted, rate, efficiency = (t.num_spec_tokens, t.accepted, t.drafted, t.emitted,
                                                        t.acceptance_rate, t.efficiency)  # fmt: skip
    drafts, ok = drafted // max(k, 1), _RATE_SLACK + 1e-6
    for broken, what in (
        (k < 1 or drafted % k, f"Number of draft tokens {drafted} is not a multiple of speculative tokens {k}"),
        (accepted > drafted, f"Number of accepted tokens {accepted} exceeds Number of draft tokens {drafted}"),
        (not drafts <= emitted <= drafts * (k + 1), f"Number of emitted tokens {emitted} is not 1 to {k + 1} for "
         f"each of the {drafts} drafts (draft tokens / {k})"),
        (emitted - drafts > accepted, f"Number of emitted tokens - drafts = {emitted - drafts} (accepted in order) "
         f"exceeds Number of accepted tokens {accepted}"),
        (drafts and not abs(rate - accepted / drafted) <= ok, f"Draft acceptance rate {rate} is not accepted / "
         f"draft tokens = {accepted}/{drafted}"),
        (drafts and not abs(efficiency - emitted / (drafts * k + drafts)) <= ok, f"System efficiency {efficiency} "
         f"is not emitted / ((k + 1) drafts) = {emitted}/{drafts * (k + 1)}"),
    ):  # fmt: skip
        if broken:
            raise SpecModelError(f"{where}: {what}")


def v0_counters(t: V0Totals) -> SpecDecodeCounters:
    """Counters from V0 totals. Without per-position counts, the same acceptance alpha is
    assumed at every position (u_j = alpha^j): the alpha whose expected tokens a draft,
    ``1 + sum_j u_j = (1 - alpha^(k+1)) / (1 - alpha)``, are the emitted tokens a draft; the
    accepted tokens (V1's sense, in order) are emitted - drafts. ``notes`` say so."""
    k, drafts = t.num_spec_tokens, t.drafted / t.num_spec_tokens
    if drafts == 0:
        return SpecDecodeCounters(0.0, 0.0, 0.0, (0.0,) * k)
    emitted, accepted = t.emitted / drafts, t.emitted - drafts
    alpha = float(alpha_for_mean_acceptance_length(emitted, k))
    note = (
        f"vLLM V0 log (totals since the server started, line {t.line}) has no per-position counts: assumed the same "
        f"acceptance alpha = {alpha:.3f} at every position (u_j = alpha^j), solved from {emitted:.3f} tokens emitted "
        f"a draft = (1 - alpha^{k + 1}) / (1 - alpha), drafts = {t.drafted} draft tokens / {k}; accepted tokens = "
        f"emitted - drafts = {accepted:g} (V0's count, {t.accepted}, also has guesses accepted after a rejection)"
    )
    per_position = tuple(drafts * alpha**j for j in range(1, k + 1))
    return SpecDecodeCounters(drafts, float(t.drafted), accepted, per_position, notes=(note,))


# --- rendering ----------------------------------------------------------------------------


def format_log_message(counters: SpecDecodeCounters, elapsed_s: float) -> str:
    """The SpecDecodingLogging message vLLM prints for ``counters`` gathered over
    ``elapsed_s`` seconds (one logging interval), without the logger prefix.

    >>> format_log_message(SpecDecodeCounters(100, 400, 161, (75, 48, 26, 12)), 2.0)
    'SpecDecoding metrics: Mean acceptance length: 2.61, Accepted throughput: 80.50 tokens/s, \
Drafted throughput: 200.00 tokens/s, Accepted: 161 tokens, Drafted: 400 tokens, \
Per-position acceptance rate: 0.750, 0.480, 0.260, 0.120, Avg Draft acceptance rate: 40.2%'
    """
    rates = ", ".join(f"{p:.3f}" for p in logged_position_rate(counters))
    return LOG_FORMAT % (
        mean_acceptance_length(counters),
        throughput(counters.num_accepted_tokens, elapsed_s),
        throughput(counters.num_draft_tokens, elapsed_s),
        counters.num_accepted_tokens,
        counters.num_draft_tokens,
        rates,
        100.0 * draft_acceptance_rate(counters),
    )


def format_exposition(counters: SpecDecodeCounters, model_name: str = "Qwen/Qwen3-8B", engine: str = "0") -> str:
    """The counters as vLLM's ``/metrics`` exposes them (Prometheus text, rendered by
    ``prometheus_client`` in :mod:`specmodel.vllm.prometheus`): :data:`DRAFTS` etc. with
    ``_total``, labelled ``model_name`` and ``engine``, the per-position ones ``position``
    "0" to "gamma-1". (No ``_created`` samples, so the text is deterministic.)

    >>> print(format_exposition(SpecDecodeCounters(4, 8, 3, (2, 1))).splitlines()[2])
    vllm:spec_decode_num_drafts_total{engine="0",model_name="Qwen/Qwen3-8B"} 4.0
    """
    from specmodel.vllm.prometheus import render_exposition  # the Prometheus side, which imports this module

    return render_exposition(counters, model_name, engine)


# --- what vLLM's arithmetic guarantees ----------------------------------------------------


def check_counters(c: SpecDecodeCounters, source: str, rounding: float = 0.0) -> None:
    """Raise, naming the counters that disagree, unless they obey vLLM's arithmetic (module
    docstring): every count finite and >= 0; some drafts; accepted <= draft tokens; at most
    one draft token per position per draft; per-position counts within the drafts, not
    rising with position, and adding up to the accepted tokens (within ``rounding``
    tokens, for counts rebuilt from logged rates); the per-position draft counts likewise."""
    scalars = (c.num_drafts, c.num_draft_tokens, c.num_accepted_tokens)
    vectors = (*c.accepted_per_position, *(c.draft_tokens_per_position or ()))
    if not all(math.isfinite(x) and x >= 0 for x in (*scalars, *vectors)):
        raise SpecModelError(f"{source}: a spec-decode count is infinite, NaN or negative; counts are finite and >= 0")
    if c.num_drafts <= 0:
        raise SpecModelError(f"{source}: {DRAFTS}_total is 0; no drafts to learn acceptance from")
    if c.num_accepted_tokens > c.num_draft_tokens:
        raise SpecModelError(
            f"{source}: {c.num_accepted_tokens:g} accepted tokens exceed {c.num_draft_tokens:g} draft tokens"
        )
    if c.num_draft_tokens > c.gamma * c.num_drafts * (1 + _EPS):
        raise SpecModelError(
            f"{source}: {DRAFT_TOKENS}_total / {DRAFTS}_total = {c.num_draft_tokens:g} / {c.num_drafts:g} = "
            f"{c.num_draft_tokens / c.num_drafts:.4g} draft tokens per draft, but {ACCEPTED_PER_POSITION}_total "
            f"has {c.gamma} positions (0 to {c.gamma - 1}); a draft holds at most one token per position: "
            "is the scrape trimmed, or are its counters from different servers?"
        )
    _check_falling(ACCEPTED_PER_POSITION, c.accepted_per_position, c.num_drafts, source)
    _check_sum(ACCEPTED_PER_POSITION, c.accepted_per_position, ACCEPTED_TOKENS, c.num_accepted_tokens, source, rounding)
    if c.draft_tokens_per_position is not None:
        _check_drafted(c, c.draft_tokens_per_position, source)


def _check_falling(name: str, counts: tuple[float, ...], drafts: float, source: str) -> None:
    """Per-position counts within the drafts and not rising with position."""
    bound = drafts
    for position, value in enumerate(counts):
        if value > bound * (1 + _EPS) + _EPS:
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


def _check_drafted(c: SpecDecodeCounters, drafted: tuple[float, ...], source: str) -> None:
    """The per-position draft counts: one per position, within the drafts, not rising, adding
    up to the draft tokens, and never fewer than the accepted tokens at the same position."""
    if len(drafted) != c.gamma:
        raise SpecModelError(
            f"{source}: {DRAFT_TOKENS_PER_POSITION}_total has {len(drafted)} positions but "
            f"{ACCEPTED_PER_POSITION}_total has {c.gamma}; vLLM counts both for every position"
        )
    _check_falling(DRAFT_TOKENS_PER_POSITION, drafted, c.num_drafts, source)
    _check_sum(DRAFT_TOKENS_PER_POSITION, drafted, DRAFT_TOKENS, c.num_draft_tokens, source, 0.0)
    for position, (accepted, held) in enumerate(zip(c.accepted_per_position, drafted)):
        if accepted > held * (1 + _EPS) + _EPS:
            raise SpecModelError(
                f"{source}: position {position}: {ACCEPTED_PER_POSITION}_total {accepted:g} exceeds "
                f"{DRAFT_TOKENS_PER_POSITION}_total {held:g}; a guess must be drafted to be accepted"
            )


# --- reading files ------------------------------------------------------------------------

#: Largest scrape read whole (bytes): far above any real one (vLLM's /metrics is ~100 KB).
MAX_INPUT_BYTES = 64 * 2**20


def read_text(path: str | Path, option: str, limit: int = MAX_INPUT_BYTES) -> str:
    """The text of ``path`` (UTF-8, at most ``limit`` bytes, read in chunks, so a device such
    as /dev/zero fails at once), or a one-line error naming ``option`` and the file if it is
    missing, unreadable, too large, empty or binary. (The file readers, this one and the
    line-by-line :func:`~specmodel.vllm.prometheus.marker_lines`, are in that module.)"""
    from specmodel.vllm.prometheus import read_whole

    return read_whole(path, option, limit)
