"""vLLM's speculative-decoding counters: render them as vLLM does, and read them back.

vLLM (V1 engine) counts, for every draft it verifies (one per sequence per iteration):
``num_drafts`` (+1), ``num_draft_tokens`` (+ the draft's length, gamma),
``num_accepted_tokens`` (+ the accepted guesses) and ``num_accepted_tokens_per_pos[i]``
(+1 for each accepted position i = 0 .. accepted - 1; a guess counts only if every guess
before it was accepted). It reports them two ways (source: vllm-project/vllm,
``vllm/v1/spec_decode/metrics.py``, commit ee4ceaae5953d367d8edd2132fd86d6c42506e1e):

* ``SpecDecodingLogging.log()`` prints, once per logging interval (the counts are reset
  after each line), the message :data:`LOG_FORMAT`, after vLLM's logger prefix, e.g.
  ``(APIServer pid=2236552) INFO 09-09 11:51:35 [metrics.py:96] SpecDecoding metrics: ...``;
* ``SpecDecodingProm`` registers Prometheus counters (cumulative since the server
  started) named :data:`DRAFTS` etc., labelled ``model_name`` and ``engine``, plus
  ``position`` (0-based) on :data:`ACCEPTED_PER_POSITION`; ``prometheus_client`` exposes
  a counter with the ``_total`` suffix.

This module renders :class:`SpecDecodeCounters` both ways (formatting), parses both back
(text in, counters out, every bad line a one-line :class:`~specmodel.errors.SpecModelError`
naming it), and reads files (:func:`read_text`). Prometheus text is parsed with
``prometheus_client.parser``; only the log line, which no library reads, is matched here.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import overload

import numpy as np
import numpy.typing as npt
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily

from specmodel.errors import SpecModelError
from specmodel.model.types import FloatArray
from specmodel.safe_input import read_limited_text

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

#: Help texts vLLM gives them.
_DOCUMENTATION = {
    DRAFTS: "Number of spec decoding drafts.",
    DRAFT_TOKENS: "Number of draft tokens.",
    ACCEPTED_TOKENS: "Number of accepted tokens.",
    ACCEPTED_PER_POSITION: "Accepted tokens per draft position.",
}

#: Labels on every vLLM metric, and the extra label of the per-position counter.
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

    ``accepted_per_position[i]`` counts drafts whose guess i + 1 was accepted (vLLM's
    position label i), so its length is num_speculative_tokens (gamma). The fields may also
    be numpy arrays over many scenarios (positions on the last axis of
    ``accepted_per_position``); vLLM's definitions below then apply elementwise.
    """

    num_drafts: float
    num_draft_tokens: float
    num_accepted_tokens: float
    accepted_per_position: tuple[float, ...]

    @property
    def gamma(self) -> int:
        """Draft positions counted: vLLM's num_speculative_tokens."""
        return int(np.shape(self.accepted_per_position)[-1])


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


def per_position_rate(counters: SpecDecodeCounters) -> np.ndarray:
    """Per-position acceptance rate ``accepted_per_pos[i] / num_drafts``: the share of drafts
    whose guess i + 1 reached the output (unconditional). vLLM: ``SpecDecodingLogging.log``
    (``np.sum(pos_matrix, axis=0) / num_drafts``); PromQL
    ``vllm:spec_decode_num_accepted_tokens_per_pos / vllm:spec_decode_num_drafts``.
    NaN where there were no drafts.

    >>> per_position_rate(SpecDecodeCounters(4, 8, 3, (2, 1))).tolist()
    [0.5, 0.25]
    """
    per_pos = np.asarray(counters.accepted_per_position, dtype=float)
    return np.asarray(_ratio(per_pos, np.asarray(counters.num_drafts, dtype=float)[..., None], math.nan))


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


# --- rendering ----------------------------------------------------------------------------


def format_log_message(counters: SpecDecodeCounters, elapsed_s: float) -> str:
    """The SpecDecodingLogging message vLLM prints for ``counters`` gathered over
    ``elapsed_s`` seconds (one logging interval), without the logger prefix.

    >>> format_log_message(SpecDecodeCounters(100, 400, 161, (75, 48, 26, 12)), 2.0)
    'SpecDecoding metrics: Mean acceptance length: 2.61, Accepted throughput: 80.50 tokens/s, \
Drafted throughput: 200.00 tokens/s, Accepted: 161 tokens, Drafted: 400 tokens, \
Per-position acceptance rate: 0.750, 0.480, 0.260, 0.120, Avg Draft acceptance rate: 40.2%'
    """
    rates = ", ".join(f"{p:.3f}" for p in per_position_rate(counters))
    return LOG_FORMAT % (
        mean_acceptance_length(counters),
        throughput(counters.num_accepted_tokens, elapsed_s),
        throughput(counters.num_draft_tokens, elapsed_s),
        counters.num_accepted_tokens,
        counters.num_draft_tokens,
        rates,
        100.0 * draft_acceptance_rate(counters),
    )


class _CountersCollector:
    """A prometheus_client collector that exposes fixed counter values."""

    def __init__(self, counters: SpecDecodeCounters, labels: tuple[str, str]):
        self.counters, self.labels = counters, list(labels)

    def collect(self) -> Iterator[CounterMetricFamily]:
        c = self.counters
        for name, value in (
            (DRAFTS, c.num_drafts),
            (DRAFT_TOKENS, c.num_draft_tokens),
            (ACCEPTED_TOKENS, c.num_accepted_tokens),
        ):
            family = CounterMetricFamily(name, _DOCUMENTATION[name], labels=list(LABELS))
            family.add_metric(self.labels, float(value))
            yield family
        family = CounterMetricFamily(
            ACCEPTED_PER_POSITION, _DOCUMENTATION[ACCEPTED_PER_POSITION], labels=[*LABELS, POSITION_LABEL]
        )
        for position, value in enumerate(c.accepted_per_position):
            family.add_metric([*self.labels, str(position)], float(value))
        yield family


def format_exposition(counters: SpecDecodeCounters, model_name: str = "Qwen/Qwen3-8B", engine: str = "0") -> str:
    """The four spec-decode counters as vLLM's ``/metrics`` exposes them (Prometheus text
    format, rendered by ``prometheus_client``): ``vllm:spec_decode_num_drafts_total``,
    ``..._num_draft_tokens_total``, ``..._num_accepted_tokens_total`` and
    ``..._num_accepted_tokens_per_pos_total{position="0".."gamma-1"}``, each labelled
    ``model_name`` and ``engine``. (No ``_created`` samples, so the text is deterministic.)

    >>> print(format_exposition(SpecDecodeCounters(4, 8, 3, (2, 1))).splitlines()[2])
    vllm:spec_decode_num_drafts_total{engine="0",model_name="Qwen/Qwen3-8B"} 4.0
    """
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_CountersCollector(counters, (model_name, engine)))
    return generate_latest(registry).decode("utf-8")


def check_counters(c: SpecDecodeCounters, source: str) -> None:
    """Raise unless the counters obey vLLM's arithmetic: some drafts; accepted <= draft
    tokens; per-position counts within the drafts and not rising with position."""
    if c.num_drafts <= 0:
        raise SpecModelError(f"{source}: {DRAFTS}_total is 0; no drafts to learn acceptance from")
    if c.num_accepted_tokens > c.num_draft_tokens:
        raise SpecModelError(
            f"{source}: {c.num_accepted_tokens:g} accepted tokens exceed {c.num_draft_tokens:g} draft tokens"
        )
    bound = c.num_drafts
    for position, value in enumerate(c.accepted_per_position):
        if value > bound + _EPS:
            what = "drafts" if position == 0 else f"position {position - 1}'s count"
            raise SpecModelError(
                f"{source}: {ACCEPTED_PER_POSITION}_total position {position} is {value:g}, more than {what} "
                f"({bound:g}); a guess counts only if the one before it was accepted"
            )
        bound = value


# --- reading files ------------------------------------------------------------------------


#: Largest scrape or log read whole (bytes).
MAX_INPUT_BYTES = 256 * 2**20


def read_text(path: str | Path, option: str) -> str:
    """The text of ``path`` (UTF-8, at most :data:`MAX_INPUT_BYTES`), or a one-line error
    naming ``option`` and the file if it is missing, unreadable, too large, empty or binary."""
    return read_limited_text(Path(path), f"{option} {str(path)!r}", MAX_INPUT_BYTES)
