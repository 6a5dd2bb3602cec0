"""vLLM's spec-decode log line (``SpecDecodingLogging``): parse it back into counters.

See :mod:`specmodel.vllm.metrics` for the counters and the format vLLM prints.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from specmodel.errors import SpecModelError
from specmodel.vllm.metrics import (
    _EPS,
    _LENGTH_SLACK,
    _PERCENT_SLACK,
    _RATE_SLACK,
    LOG_MARKER,
    SpecDecodeCounters,
    check_counters,
    read_text,
)


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
    for label, value in (
        ("Accepted throughput", iv.accepted_throughput),
        ("Drafted throughput", iv.drafted_throughput),
    ):
        if not math.isfinite(value):
            raise SpecModelError(f"{where}: {label} {value} is not a finite number")
    if iv.drafted == 0:
        if iv.accepted != 0:
            raise SpecModelError(f"{where}: Accepted {iv.accepted} tokens out of Drafted 0 tokens")
        return
    numbers = [
        ("Mean acceptance length", iv.mean_acceptance_length),
        ("Avg Draft acceptance rate", iv.draft_acceptance_percent),
    ]
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
        raise SpecModelError(
            f"{source}: no line contains {LOG_MARKER!r} (is speculative decoding on, "
            "and are stats logged, i.e. no --disable-log-stats?)"
        )
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


def load_log(path: str | Path, option: str = "--log") -> SpecDecodeCounters:
    """Counters from a vLLM log file (every SpecDecodingLogging line in it)."""
    source = f"{option} {str(path)!r}"
    intervals = parse_log(read_text(path, option), source)
    counters = counters_from_log(intervals)
    check_counters(counters, source)
    return counters
