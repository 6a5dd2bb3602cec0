"""vLLM's spec-decode log lines, in every layout vLLM has printed, parsed into counters.

A line is found by its marker anywhere in it (after a logger prefix, a container prefix
such as ``vllm-1  | ``, a shell prompt, in a Markdown table cell or backticks) and read by
field name, in any order; a field a later vLLM adds is ignored. The layouts (vllm-project/
vllm, ``vllm/v1/spec_decode/metrics.py``; V0: ``vllm/engine/metrics.py``):

* V1, about 0.8.5 to 0.10: ``SpecDecoding metrics: Draft acceptance rate: 41.2%, Mean
  acceptance length: 2.65, Accepted: 1650 tokens, Drafted: 4000 tokens, Per-position
  acceptance rate: 0.702, 0.455, ...`` (some with ``Accepted throughput: X tokens/s,
  Drafted throughput: Y tokens/s`` after the mean acceptance length);
* V1, current: :data:`~specmodel.vllm.metrics.LOG_FORMAT`, and with dynamic speculation
  depth ``Current speculative depth: 4`` after the mean acceptance length;
* V0 (vLLM 0.5 to 0.9): ``Speculative metrics: Draft acceptance rate: 0.581, System
  efficiency: 0.520, Number of speculative tokens: 4, Number of accepted tokens: 2324,
  Number of draft tokens: 4000, Number of emitted tokens: 2600.``

V1 lines count one logging interval each and are summed; V0 lines hold totals since the
server started: the last one counts. :func:`load_log` streams a file, keeping running sums
(bounds: :func:`~specmodel.vllm.prometheus.marker_lines`). Errors are one line each."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TypeAlias

from specmodel.errors import SpecModelError
from specmodel.safe_input import excerpt
from specmodel.vllm.metrics import (
    _EPS,
    _LENGTH_SLACK,
    _PERCENT_SLACK,
    _RATE_SLACK,
    LOG_MARKER,
    SpecDecodeCounters,
    V0Totals,
    check_counters,
    check_v0_totals,
    v0_counters,
)
from specmodel.vllm.prometheus import marker_lines

#: The marker of the V0 engine's line.
V0_MARKER = "Speculative metrics:"


@dataclass(frozen=True)
class LogInterval:
    """One parsed V1 SpecDecoding metrics line: the counts of one logging interval."""

    line: int  #: 1-based line number in the file
    mean_acceptance_length: float
    accepted_throughput: float  #: tokens/s; NaN in layouts without it
    drafted_throughput: float  #: tokens/s; NaN in layouts without it
    accepted: int  #: accepted draft tokens
    drafted: int  #: draft tokens
    per_position: tuple[float, ...]  #: per-position acceptance rate, as logged (%.3f)
    draft_acceptance_percent: float  #: "(Avg) Draft acceptance rate", percent
    depth: int | None = None  #: "Current speculative depth", in layouts with it


LogRecord: TypeAlias = LogInterval | V0Totals

# --- fields, by name ----------------------------------------------------------------------

_NUMBER, _INTEGER = r"(\d{1,20}(?:\.\d{1,20})?|nan|inf)", r"(\d{1,18})"
_RATE = r"(?:\d\.\d{3}|nan)"  # vLLM prints every rate f"{p:.3f}": a cut one has fewer digits
_Table: TypeAlias = dict[str, tuple[str, re.Pattern[str], str]]  # label: (attribute, value pattern, shape)


def _table(*rows: tuple[str, str, str, str]) -> _Table:
    return {label: (attribute, re.compile(value), shape) for label, attribute, value, shape in rows}


_V1 = _table(
    ("Mean acceptance length", "mean_acceptance_length", _NUMBER, "<number>"),
    ("Current speculative depth", "depth", r"(\d{1,4})", "<integer>"),
    ("Accepted throughput", "accepted_throughput", _NUMBER + " tokens/s", "<number> tokens/s"),
    ("Drafted throughput", "drafted_throughput", _NUMBER + " tokens/s", "<number> tokens/s"),
    ("Accepted", "accepted", _INTEGER + " tokens", "<integer> tokens"),
    ("Drafted", "drafted", _INTEGER + " tokens", "<integer> tokens"),
    ("Per-position acceptance rate", "per_position", rf"({_RATE}(?:, {_RATE})*)", "<rate>, <rate>, ..."),
    ("Avg Draft acceptance rate", "draft_acceptance_percent", _NUMBER + "%", "<number>%"),
    ("Draft acceptance rate", "draft_acceptance_percent", _NUMBER + "%", "<number>%"),
)
_V0 = _table(
    ("Draft acceptance rate", "acceptance_rate", _NUMBER, "<number>"),
    ("System efficiency", "efficiency", _NUMBER, "<number>"),
    ("Number of speculative tokens", "num_spec_tokens", r"(\d{1,4})", "<integer>"),
    ("Number of accepted tokens", "accepted", _INTEGER, "<integer>"),
    ("Number of draft tokens", "drafted", _INTEGER, "<integer>"),
    ("Number of emitted tokens", "emitted", _INTEGER, "<integer>"),
)
_LABEL = re.compile(r"[A-Za-z][\w /().%-]*")
_CELL_END = re.compile(r"[|`\"']")  # never in vLLM's message: ends a table cell or a quote


def _malformed(where: str, marker: str, detail: str) -> SpecModelError:
    return SpecModelError(f"{where}: malformed or truncated {marker[:-1]} line: {detail}")


def _found(text: str) -> str:
    return excerpt(text, 40) if text else "the end of the line"


def _fields(message: str, marker: str, where: str, table: _Table, required: list[str]) -> dict[str, str]:
    """``attribute: value text`` of the fields of ``table`` in ``message`` (from ``marker``
    on, up to a table-cell bar, backtick or quote), each matched against its pattern;
    fields not in the table are skipped, those ``required`` must be there."""
    body = _CELL_END.split(message[len(marker) :], maxsplit=1)[0].strip()
    if marker == V0_MARKER and not body.endswith("."):  # V0 ends its message with a full stop
        raise _malformed(where, marker, f"expected it to end with '.', found {_found(body[-20:])}")
    fields: dict[str, str] = {}
    label = None
    for chunk in body.removesuffix(".").split(", "):
        name, sep, value = chunk.partition(": ")
        if sep and _LABEL.fullmatch(name):
            if name in fields:
                raise _malformed(where, marker, f"field {excerpt(name, 40)} appears twice")
            fields[name], label = value, name
        elif label is None:
            raise _malformed(where, marker, f"expected '<field>: <value>', found {_found(chunk)}")
        else:  # a list goes on (the per-position rates, or in a field vLLM added)
            fields[label] += ", " + chunk
    values: dict[str, str] = {}
    for name, text in fields.items():
        if name in table:
            attribute, pattern, shape = table[name]
            match = pattern.fullmatch(text)
            if match is None:
                raise _malformed(where, marker, f"expected '{name}: {shape}', found {_found(text)}")
            if attribute in values:
                raise _malformed(where, marker, f"two fields give the {attribute.replace('_', ' ')}")
            values[attribute] = match.group(1)
    if table is _V1 and {"mean_acceptance_length", "per_position"}.isdisjoint(values) and "drafted" in values:
        raise SpecModelError(
            f"{where}: this SpecDecoding metrics line (vLLM before 0.8.5) has no per-position acceptance and no mean "
            "acceptance length; use vLLM 0.8.5 or later, or give a Prometheus scrape (--metrics)"
        )
    for name in required:
        if table[name][0] not in values:
            raise _malformed(where, marker, f"no '{name}: {table[name][2]}' field")
    return values


# --- V1 -----------------------------------------------------------------------------------

_V1_REQUIRED = ["Mean acceptance length", "Accepted", "Drafted"]
_V1_REQUIRED += ["Per-position acceptance rate", "Avg Draft acceptance rate"]


def parse_log_message(message: str, where: str = "line 1", line: int = 1) -> LogInterval:
    """Parse a V1 message, from ``SpecDecoding metrics:`` on (any layout in the module
    docstring). Checks what vLLM's arithmetic guarantees (with the slack of its rounding):
    accepted <= drafted; rates in [0, 1] and not rising with position; the draft acceptance
    rate = 100 accepted / drafted; mean acceptance length = 1 + the sum of the per-position
    rates. An interval with no drafts (vLLM prints ``nan``) must have accepted nothing.

    >>> parse_log_message("SpecDecoding metrics: Mean acceptance length: 1.75, "
    ...     "Accepted throughput: 1.50 tokens/s, Drafted throughput: 4.00 tokens/s, Accepted: 3 tokens, "
    ...     "Drafted: 8 tokens, Per-position acceptance rate: 0.500, 0.250, "
    ...     "Avg Draft acceptance rate: 37.5%").per_position
    (0.5, 0.25)
    """
    v = _fields(message, LOG_MARKER, where, _V1, _V1_REQUIRED)
    for label in ("Accepted throughput", "Drafted throughput"):
        if not math.isfinite(value := float(v.get(_V1[label][0], "0"))):
            raise SpecModelError(f"{where}: {label} {value} is not a finite number")
    interval = LogInterval(
        line=line,
        mean_acceptance_length=float(v["mean_acceptance_length"]),
        accepted_throughput=float(v.get("accepted_throughput", "nan")),
        drafted_throughput=float(v.get("drafted_throughput", "nan")),
        accepted=int(v["accepted"]),
        drafted=int(v["drafted"]),
        per_position=tuple(float(x) for x in v["per_position"].split(", ")),
        draft_acceptance_percent=float(v["draft_acceptance_percent"]),
        depth=int(v["depth"]) if "depth" in v else None,
    )
    _check_interval(interval, where)
    return interval


def _check_interval(iv: LogInterval, where: str) -> None:
    """Raise if a parsed interval breaks vLLM's arithmetic (see :func:`parse_log_message`)."""
    rates = iv.per_position
    if iv.depth is not None and not (1 if iv.drafted else 0) <= iv.depth <= len(rates):
        raise SpecModelError(f"{where}: Current speculative depth {iv.depth} is not 1 to {len(rates)}, the positions")
    if iv.drafted == 0:
        if iv.accepted != 0:
            raise SpecModelError(f"{where}: Accepted {iv.accepted} tokens out of Drafted 0 tokens")
        return
    numbers = [
        ("Mean acceptance length", iv.mean_acceptance_length),
        ("Draft acceptance rate", iv.draft_acceptance_percent),
    ]
    for label, value in numbers + [(f"per-position acceptance rate {j}", r) for j, r in enumerate(rates, 1)]:
        if not math.isfinite(value):
            raise SpecModelError(f"{where}: {label} is {value} although {iv.drafted} tokens were drafted")
    if iv.accepted > iv.drafted:
        raise SpecModelError(f"{where}: Accepted {iv.accepted} tokens exceeds Drafted {iv.drafted} tokens")
    for j, r in enumerate(rates, 1):
        if r > 1 + _EPS:
            raise SpecModelError(f"{where}: per-position acceptance rate {r} at position {j} is above 1")
        if j > 1 and r > rates[j - 2] + _EPS:
            raise SpecModelError(
                f"{where}: per-position acceptance rises from {rates[j - 2]} at position {j - 1} to {r} at "
                f"position {j}; a guess counts only if the one before it was accepted"
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


def _interval_drafts(iv: LogInterval, where: str) -> tuple[float, bool]:
    """Drafts in a logged interval, and whether estimated: ``Drafted / depth`` (the "Current
    speculative depth", else gamma, the number of rates) when it agrees with ``Accepted =
    drafts x the sum of the rates`` within their rounding (fixed-length drafts); else
    ``Accepted / the sum of the rates`` (drafts shorter than the depth, as n-gram ones),
    within ``Drafted / gamma`` to ``Drafted`` (1 to gamma tokens a draft). Numbers that fit
    no count of drafts are an error naming them."""
    gamma, rates = len(iv.per_position), math.fsum(iv.per_position)
    if iv.drafted == 0:
        return 0.0, False

    def off(drafts: float) -> float:
        return abs(rates * drafts - iv.accepted) - _RATE_SLACK * gamma * drafts - 1e-6

    fixed = iv.drafted / (iv.depth or gamma)
    if off(fixed) <= 0:
        return fixed, False
    drafts = min(max(iv.accepted / rates if rates > 0 else iv.drafted, iv.drafted / gamma), iv.drafted)
    if off(drafts) > 0:  # with no depth, also when the drafts would be fewer than Drafted / gamma
        implied = f"{iv.accepted / rates:.1f}" if rates > 0 else "unboundedly many"
        raise SpecModelError(
            f"{where}: Accepted {iv.accepted} tokens at {rates:.3f} a draft (the sum of the per-position rates) make "
            f"{implied} drafts, but Drafted {iv.drafted} tokens of 1 to {gamma} a draft (the positions the line "
            f"reports) make {iv.drafted / gamma:.1f} to {iv.drafted}: was a position cut from the line?"
        )
    return drafts, True


def drafts_in_interval(interval: LogInterval) -> float:
    """Drafts in a logged interval (:func:`_interval_drafts`)."""
    return _interval_drafts(interval, f"line {interval.line}")[0]


# --- V0 -----------------------------------------------------------------------------------


def parse_v0_message(message: str, where: str = "line 1", line: int = 1) -> V0Totals:
    """Parse a V0 message, from ``Speculative metrics:`` on, checked by
    :func:`~specmodel.vllm.metrics.check_v0_totals`."""
    v = _fields(message, V0_MARKER, where, _V0, list(_V0))
    k, accepted, drafted, emitted = (int(v[key]) for key in ("num_spec_tokens", "accepted", "drafted", "emitted"))
    totals = V0Totals(line, k, accepted, drafted, emitted, float(v["acceptance_rate"]), float(v["efficiency"]))
    check_v0_totals(totals, where)
    return totals


# --- a log: running sums ------------------------------------------------------------------


class _Sums:
    """A log's counters so far: running sums of V1 intervals, or the last V0 totals (which
    must not fall: one server run). ``rounding``: tokens the per-position counts may be off."""

    def __init__(self, source: str):
        self.source, self.first, self.last = source, None, None  # type: str, LogRecord | None, LogRecord | None
        self.drafts, self.draft_tokens, self.accepted, self.rounding = 0.0, 0, 0, 0.0
        self.per_position: list[float] = []
        self.intervals, self.estimated, self.depths = 0, 0, set[int]()

    def add(self, record: LogRecord, where: str) -> None:
        first = self.first = self.first or record
        last, self.last = self.last, record
        kinds = {LogInterval: f"V1 {LOG_MARKER!r}", V0Totals: f"V0 {V0_MARKER!r}"}
        if type(record) is not type(first):
            raise SpecModelError(f"{where}: a {kinds[type(record)]} line, but line {first.line} is a "
                                 f"{kinds[type(first)]} line; give the log of one server run")  # fmt: skip
        if isinstance(record, V0Totals):
            for what in ("num_spec_tokens", "accepted", "drafted", "emitted") if last else ():
                now, before = getattr(record, what), getattr(last, what)
                if now < before or (what == "num_spec_tokens" and now != before):
                    raise SpecModelError(
                        f"{where}: {what.replace('_', ' ')} {now}, but line {last.line} has {before}; V0 logs totals "  # type: ignore[union-attr]
                        "since the server started: was it restarted or reconfigured? give one server run"
                    )
            self.rounding = 1e-6 * record.drafted
            return
        gamma = len(first.per_position)  # type: ignore[union-attr]
        if len(record.per_position) != gamma:
            raise SpecModelError(
                f"{where}: {len(record.per_position)} per-position rates, but line {first.line} has {gamma}; "
                "was num_speculative_tokens changed? give one server run"
            )
        drafts, estimated = _interval_drafts(record, where)
        self.intervals += 1
        if record.drafted:
            self.drafts, self.draft_tokens = self.drafts + drafts, self.draft_tokens + record.drafted
            self.accepted, self.rounding = self.accepted + record.accepted, self.rounding + _RATE_SLACK * gamma * drafts
            sums = self.per_position or [0.0] * gamma
            self.per_position = [s + r * drafts for s, r in zip(sums, record.per_position)]
            self.estimated += estimated
            self.depths.add(record.depth or gamma)

    def counters(self) -> SpecDecodeCounters:
        if self.first is None:
            raise SpecModelError(
                f"{self.source}: no line contains {LOG_MARKER!r} (nor V0's {V0_MARKER!r}); is speculative decoding "
                "on, and are stats logged, i.e. no --disable-log-stats?"
            )
        if isinstance(self.last, V0Totals):
            return v0_counters(self.last)
        gamma, notes = len(self.first.per_position), []  # type: ignore[union-attr]
        if self.estimated:
            notes.append(
                f"in {self.estimated} of {self.intervals} logged intervals drafts held fewer than {gamma} tokens (as "
                "n-gram drafts can): drafts = Accepted / the sum of the rates there, and vLLM's rates count a position "
                "a draft did not reach as not accepted, which understates later positions"
            )
        if self.depths and min(self.depths) < gamma:
            notes.append(
                f"speculative depth {min(self.depths)} to {max(self.depths)} of {gamma} positions: drafts = Drafted / "
                "depth; vLLM's rates count positions past the depth as not accepted"
            )
        per_position = tuple(self.per_position or [0.0] * gamma)
        return SpecDecodeCounters(self.drafts, float(self.draft_tokens), float(self.accepted), per_position,
                                  notes=tuple(notes))  # fmt: skip


# --- the public API -----------------------------------------------------------------------


def parse_line(line: str, where: str, number: int) -> LogRecord | None:
    """The record of a line holding a V1 or V0 marker (anywhere in it), else None."""
    at = line.find(LOG_MARKER)
    if at >= 0:
        return parse_log_message(line[at:], where, number)
    at = line.find(V0_MARKER)
    return parse_v0_message(line[at:], where, number) if at >= 0 else None


def parse_log(text: str, source: str = "log") -> list[LogRecord]:
    """Every spec-decode record in a log's text, in order, checked as :func:`load_log` checks
    them (lines without a marker are skipped); errors name ``source`` and the line."""
    records: list[LogRecord] = []
    sums = _Sums(source)
    for number, line in enumerate(text.split("\n"), 1):
        where = f"{source} line {number}"
        if (record := parse_line(line.removesuffix("\r"), where, number)) is not None:
            sums.add(record, where)
            records.append(record)
    if not records:
        sums.counters()  # the error for a log without a marker
    return records


def counters_from_log(records: list[LogRecord], source: str = "log") -> SpecDecodeCounters:
    """The counters of parsed records: V1 intervals summed (accepted and drafted tokens
    exact; drafts from :func:`drafts_in_interval`; per-position counts the logged rates
    times the drafts, so with the rates' rounding, +-0.0005 drafts each), or the last V0
    totals with the inferred same-profile acceptance (see its ``notes``)."""
    sums = _Sums(source)
    for record in records:
        sums.add(record, f"{source} line {record.line}")
    return sums.counters()


_MARKERS = (LOG_MARKER.encode(), V0_MARKER.encode())


def load_log(path: str | Path, option: str = "--log") -> SpecDecodeCounters:
    """Counters from a vLLM log file, streamed line by line (every spec-decode line in it)."""
    source = f"{option} {str(path)!r}"
    sums = _Sums(source)
    for number, raw in marker_lines(path, option, _MARKERS):
        where = f"{source} line {number}"
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SpecModelError(f"{where}: not UTF-8 text (byte {exc.start} of the line)") from None
        if (record := parse_line(line, where, number)) is not None:
            sums.add(record, where)
    counters = sums.counters()
    check_counters(counters, source, sums.rounding)
    return counters
