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
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily
from prometheus_client.parser import text_string_to_metric_families

from specmodel.errors import SpecModelError

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


@dataclass(frozen=True)
class LogInterval:
    """One parsed SpecDecodingLogging line: the counts of one logging interval."""

    line: int  #: 1-based line number in the file
    mean_acceptance_length: float
    accepted_throughput: float  #: tokens/s
    drafted_throughput: float  #: tokens/s
    accepted: int  #: accepted draft tokens
    drafted: int  #: draft tokens
    per_position: tuple[float, ...]  #: per-position acceptance rate, as logged (%.3f)
    draft_acceptance_percent: float  #: "Avg Draft acceptance rate", percent


# --- vLLM's definitions -------------------------------------------------------------------


def _ratio(numerator, denominator, empty: float):
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

    def collect(self):
        c = self.counters
        for name, value in ((DRAFTS, c.num_drafts), (DRAFT_TOKENS, c.num_draft_tokens),
                            (ACCEPTED_TOKENS, c.num_accepted_tokens)):
            family = CounterMetricFamily(name, _DOCUMENTATION[name], labels=list(LABELS))
            family.add_metric(self.labels, float(value))
            yield family
        family = CounterMetricFamily(ACCEPTED_PER_POSITION, _DOCUMENTATION[ACCEPTED_PER_POSITION],
                                     labels=[*LABELS, POSITION_LABEL])
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


# --- reading files ------------------------------------------------------------------------


def read_text(path: str | Path, option: str) -> str:
    """The text of ``path`` (UTF-8), or a one-line error naming ``option`` and the file if it
    is missing, unreadable, empty or binary."""
    where = f"{option} {str(path)!r}"
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise SpecModelError(f"{where}: no such file") from None
    except IsADirectoryError:
        raise SpecModelError(f"{where} is a folder, not a file") from None
    except OSError as exc:
        raise SpecModelError(f"{where} cannot be read: {exc.strerror or exc}") from None
    if not data.strip():
        raise SpecModelError(f"{where} is empty")
    nul = data.find(b"\x00")
    if nul >= 0:
        raise SpecModelError(f"{where} is a binary file (NUL byte at offset {nul}), not text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise SpecModelError(f"{where} line {line}: not UTF-8 text (byte {exc.start}); is it a binary file?") from None


# --- the log line -------------------------------------------------------------------------

_NUMBER = r"(?:\d+(?:\.\d*)?|nan|inf)"
_INTEGER = r"\d+"
_RATES = rf"{_NUMBER}(?:, {_NUMBER})*"

#: (label, group, value pattern, unit after the value, what the value should look like).
_FIELDS = (
    ("Mean acceptance length", "mean_acceptance_length", _NUMBER, "", "<number>"),
    ("Accepted throughput", "accepted_throughput", _NUMBER, " tokens/s", "<number> tokens/s"),
    ("Drafted throughput", "drafted_throughput", _NUMBER, " tokens/s", "<number> tokens/s"),
    ("Accepted", "accepted", _INTEGER, " tokens", "<integer> tokens"),
    ("Drafted", "drafted", _INTEGER, " tokens", "<integer> tokens"),
    ("Per-position acceptance rate", "per_position", _RATES, "", "<rate>, <rate>, ..."),
    ("Avg Draft acceptance rate", "draft_acceptance_percent", _NUMBER, "%", "<number>%"),
)


def _field_pattern(index: int) -> str:
    label, group, value, unit, _ = _FIELDS[index]
    return f"{re.escape(label)}: (?P<{group}>{value}){re.escape(unit)}"


def _prefix_pattern(count: int) -> re.Pattern:
    """The message up to and including field ``count - 1``; the last field must end the
    line or be followed by ", " and whatever a patched build appends."""
    body = ", ".join(_field_pattern(i) for i in range(count))
    tail = r"(?:, .*)?\s*$" if count == len(_FIELDS) else ", "
    return re.compile(re.escape(LOG_MARKER) + " " + body + tail)


_PREFIXES = tuple(_prefix_pattern(n) for n in range(1, len(_FIELDS) + 1))
_LINE = _PREFIXES[-1]


def _snippet(text: str, limit: int = 40) -> str:
    text = text.rstrip("\r\n")
    if not text:
        return "the end of the line"
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _malformed(message: str, where: str) -> SpecModelError:
    """Say which field of a spec-decode message does not match vLLM's format, and what is there."""
    start = len(LOG_MARKER) + 1
    for index, pattern in enumerate(_PREFIXES):
        match = pattern.match(message)
        if match is None:
            label, _, _, unit, shape = _FIELDS[index]
            expected = f"'{label}: {shape}'"
            return SpecModelError(
                f"{where}: malformed or truncated SpecDecoding metrics line: expected {expected}, "
                f"found {_snippet(message[start:])}"
            )
        start = match.end()
    return SpecModelError(f"{where}: malformed SpecDecoding metrics line")  # pragma: no cover


def _lines(text: str) -> list[str]:
    """Lines as an editor numbers them: split at newlines only, a trailing CR dropped."""
    return [line.removesuffix("\r") for line in text.split("\n")]


def parse_log_message(message: str, where: str = "line 1", line: int = 1) -> LogInterval:
    """Parse the part of a vLLM log line from ``SpecDecoding metrics:`` on (vLLM's current
    format, :data:`LOG_FORMAT`; fields a patched build appends after the last are ignored).

    Checks what vLLM's arithmetic guarantees (with the slack of its rounding): accepted <=
    drafted; rates in [0, 1] and not rising with position; "Avg Draft acceptance rate" =
    100 accepted / drafted; mean acceptance length = 1 + the sum of the per-position
    rates. An interval with no drafts (vLLM prints ``nan``) must have drafted nothing.

    >>> parse_log_message("SpecDecoding metrics: Mean acceptance length: 1.75, "
    ...     "Accepted throughput: 1.50 tokens/s, Drafted throughput: 4.00 tokens/s, Accepted: 3 tokens, "
    ...     "Drafted: 8 tokens, Per-position acceptance rate: 0.500, 0.250, "
    ...     "Avg Draft acceptance rate: 37.5%").per_position
    (0.5, 0.25)
    """
    match = _LINE.match(message)
    if match is None:
        raise _malformed(message, where)
    fields = match.groupdict()
    if max(len(fields["accepted"]), len(fields["drafted"])) > 18:
        raise SpecModelError(f"{where}: token counts of more than 18 digits are not plausible")
    interval = LogInterval(
        line=line,
        mean_acceptance_length=float(fields["mean_acceptance_length"]),
        accepted_throughput=float(fields["accepted_throughput"]),
        drafted_throughput=float(fields["drafted_throughput"]),
        accepted=int(fields["accepted"]),
        drafted=int(fields["drafted"]),
        per_position=tuple(float(x) for x in fields["per_position"].split(", ")),
        draft_acceptance_percent=float(fields["draft_acceptance_percent"]),
    )
    _check_interval(interval, where)
    return interval


def _check_interval(iv: LogInterval, where: str) -> None:
    """Raise if a parsed interval breaks vLLM's arithmetic (see :func:`parse_log_message`)."""
    for label, value in (("Accepted throughput", iv.accepted_throughput),
                         ("Drafted throughput", iv.drafted_throughput)):
        if not math.isfinite(value):
            raise SpecModelError(f"{where}: {label} {value} is not a finite number")
    if iv.drafted == 0:
        if iv.accepted != 0:
            raise SpecModelError(f"{where}: Accepted {iv.accepted} tokens out of Drafted 0 tokens")
        return
    numbers = [("Mean acceptance length", iv.mean_acceptance_length),
               ("Avg Draft acceptance rate", iv.draft_acceptance_percent)]
    numbers += [(f"per-position acceptance rate {j}", r) for j, r in enumerate(iv.per_position, 1)]
    for label, value in numbers:
        if not math.isfinite(value):
            raise SpecModelError(f"{where}: {label} is {value} although {iv.drafted} tokens were drafted")
    if iv.accepted > iv.drafted:
        raise SpecModelError(f"{where}: Accepted {iv.accepted} tokens exceeds Drafted {iv.drafted} tokens")
    rates = iv.per_position
    for j, r in enumerate(rates, 1):
        if r > 1 + _EPS:
            raise SpecModelError(f"{where}: per-position acceptance rate {r} at position {j} is above 1")
    for j in range(1, len(rates)):
        if rates[j] > rates[j - 1] + _EPS:
            raise SpecModelError(
                f"{where}: per-position acceptance rises from {rates[j - 1]} at position {j} to {rates[j]} at "
                f"position {j + 1}; a guess counts only if the one before it was accepted"
            )
    percent = 100.0 * iv.accepted / iv.drafted
    if abs(iv.draft_acceptance_percent - percent) > _PERCENT_SLACK + 1e-6:
        raise SpecModelError(
            f"{where}: Avg Draft acceptance rate {iv.draft_acceptance_percent}% does not match "
            f"Accepted/Drafted = {iv.accepted}/{iv.drafted} = {percent:.1f}%"
        )
    total = 1.0 + sum(rates)
    if abs(iv.mean_acceptance_length - total) > _LENGTH_SLACK + _RATE_SLACK * len(rates) + 1e-6:
        raise SpecModelError(
            f"{where}: Mean acceptance length {iv.mean_acceptance_length} does not match 1 + the sum of the "
            f"per-position rates = {total:.3f}"
        )


def parse_log(text: str, source: str = "log") -> list[LogInterval]:
    """Every SpecDecodingLogging interval in a log's text, in order. Lines without
    ``SpecDecoding metrics:`` are skipped; a log without one, or whose lines disagree on the
    number of draft positions, is an error naming the file (``source``) and line."""
    intervals: list[LogInterval] = []
    for number, line in enumerate(_lines(text), 1):
        at = line.find(LOG_MARKER)
        if at < 0:
            continue
        where = f"{source} line {number}"
        interval = parse_log_message(line[at:], where, number)
        if intervals and len(interval.per_position) != len(intervals[0].per_position):
            raise SpecModelError(
                f"{where}: {len(interval.per_position)} per-position rates, but line {intervals[0].line} has "
                f"{len(intervals[0].per_position)}; was num_speculative_tokens changed? give one server run"
            )
        intervals.append(interval)
    if not intervals:
        raise SpecModelError(f"{source}: no line contains {LOG_MARKER!r} (is speculative decoding on, "
                             "and are stats logged, i.e. no --disable-log-stats?)")
    return intervals


def drafts_in_interval(interval: LogInterval) -> float:
    """Drafts in a logged interval, ``Drafted / gamma`` (gamma = the number of per-position
    rates). Assumes every draft carries gamma tokens, as vLLM's draft-model, EAGLE and MTP
    proposers do; n-gram drafts can be shorter, which makes this an undercount."""
    return interval.drafted / len(interval.per_position)


def counters_from_log(intervals: list[LogInterval]) -> SpecDecodeCounters:
    """The counters summed over logged intervals. Accepted and drafted tokens are exact;
    drafts come from :func:`drafts_in_interval` and per-position counts from the logged
    rates times the drafts, so they carry the rates' rounding (+-0.0005 drafts each)."""
    drafts = [drafts_in_interval(iv) for iv in intervals]
    per_position = np.sum([np.asarray(iv.per_position) * d for iv, d in zip(intervals, drafts) if d > 0], axis=0)
    return SpecDecodeCounters(
        num_drafts=float(sum(drafts)),
        num_draft_tokens=float(sum(iv.drafted for iv in intervals)),
        num_accepted_tokens=float(sum(iv.accepted for iv in intervals)),
        accepted_per_position=tuple(float(x) for x in np.atleast_1d(per_position)),
    )


# --- the Prometheus scrape ----------------------------------------------------------------

_WANTED = {f"{name}_total": name for name in (DRAFTS, DRAFT_TOKENS, ACCEPTED_TOKENS, ACCEPTED_PER_POSITION)}


def _samples(text: str, source: str):
    """``(line, name, labels, value)`` of every spec-decode counter sample, parsing each line
    with prometheus_client's parser (so an error can name its line)."""
    for number, line in enumerate(_lines(text), 1):
        if not line.strip():
            continue
        try:
            families = list(text_string_to_metric_families(line + "\n"))
        except Exception as exc:  # noqa: BLE001 - the library raises several types for bad text
            reason = "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(exc))  # keep it one line
            raise SpecModelError(f"{source} line {number}: not Prometheus text exposition ({reason})") from None
        for family in families:
            for sample in family.samples:
                if sample.name in _WANTED:
                    yield number, sample.name, sample.labels, sample.value


def _series_windows(text: str, source: str):
    """Per series: (first value, last value, occurrences, line of first). Several
    occurrences are successive scrapes appended to one file; a counter never decreases."""
    series: dict[tuple, list] = {}
    for number, name, labels, value in _samples(text, source):
        if not math.isfinite(value) or value < 0:
            raise SpecModelError(f"{source} line {number}: {name} is {value}; a counter is a finite count >= 0")
        key = (name, tuple(sorted(labels.items())))
        if key in series:
            first, last, count, first_line = series[key]
            if value < last:
                raise SpecModelError(
                    f"{source} line {number}: counter {name} decreases from {last:g} to {value:g} (a counter only "
                    "grows; was the server restarted between scrapes?)"
                )
            series[key] = [first, value, count + 1, first_line]
        else:
            series[key] = [value, value, 1, number]
    return series


def parse_exposition(text: str, source: str = "metrics") -> SpecDecodeCounters:
    """The spec-decode counters in a Prometheus scrape of vLLM (text exposition format),
    summed over engines and models. One scrape gives the totals since the server started;
    several scrapes appended to one file give the increase from the first to the last,
    as PromQL's ``rate()`` would. Errors name the file (``source``) and, where there is
    one, the line."""
    series = _series_windows(text, source)
    counts = {s[2] for s in series.values()}
    if len(counts) > 1:
        raise SpecModelError(f"{source}: the spec-decode series appear {sorted(counts)} times; give whole scrapes")
    totals: dict[str, float] = {}
    per_position: dict[int, float] = {}
    for (name, labels), (first, last, count, line) in series.items():
        value = last - first if count > 1 else last
        metric = _WANTED[name]
        if metric != ACCEPTED_PER_POSITION:
            totals[metric] = totals.get(metric, 0.0) + value
            continue
        position = dict(labels).get(POSITION_LABEL)
        if position is None or not position.isdigit():
            raise SpecModelError(f"{source} line {line}: {name} needs a position label 0, 1, ...; got {position!r}")
        per_position[int(position)] = per_position.get(int(position), 0.0) + value
    for metric in (DRAFTS, DRAFT_TOKENS, ACCEPTED_TOKENS, ACCEPTED_PER_POSITION):
        if metric not in totals and (metric != ACCEPTED_PER_POSITION or not per_position):
            raise SpecModelError(f"{source}: no {metric}_total sample (is speculative decoding on in this server?)")
    if sorted(per_position) != list(range(len(per_position))):
        raise SpecModelError(f"{source}: {ACCEPTED_PER_POSITION}_total has positions {sorted(per_position)}; "
                             f"expected 0 to {len(per_position) - 1}")
    counters = SpecDecodeCounters(
        num_drafts=totals[DRAFTS],
        num_draft_tokens=totals[DRAFT_TOKENS],
        num_accepted_tokens=totals[ACCEPTED_TOKENS],
        accepted_per_position=tuple(per_position[i] for i in range(len(per_position))),
    )
    check_counters(counters, source)
    return counters


def check_counters(c: SpecDecodeCounters, source: str) -> None:
    """Raise unless the counters obey vLLM's arithmetic: some drafts; accepted <= draft
    tokens; per-position counts within the drafts and not rising with position."""
    if c.num_drafts <= 0:
        raise SpecModelError(f"{source}: {DRAFTS}_total is 0; no drafts to learn acceptance from")
    if c.num_accepted_tokens > c.num_draft_tokens:
        raise SpecModelError(f"{source}: {c.num_accepted_tokens:g} accepted tokens exceed "
                             f"{c.num_draft_tokens:g} draft tokens")
    bound = c.num_drafts
    for position, value in enumerate(c.accepted_per_position):
        if value > bound + _EPS:
            what = "drafts" if position == 0 else f"position {position - 1}'s count"
            raise SpecModelError(
                f"{source}: {ACCEPTED_PER_POSITION}_total position {position} is {value:g}, more than {what} "
                f"({bound:g}); a guess counts only if the one before it was accepted"
            )
        bound = value


# --- files --------------------------------------------------------------------------------


def load_log(path: str | Path, option: str = "--log") -> SpecDecodeCounters:
    """Counters from a vLLM log file (every SpecDecodingLogging line in it)."""
    source = f"{option} {str(path)!r}"
    intervals = parse_log(read_text(path, option), source)
    counters = counters_from_log(intervals)
    check_counters(counters, source)
    return counters


def load_exposition(path: str | Path, option: str = "--metrics") -> SpecDecodeCounters:
    """Counters from a file holding one or more Prometheus scrapes of vLLM's ``/metrics``."""
    return parse_exposition(read_text(path, option), f"{option} {str(path)!r}")
