"""One vLLM spec-decode log line, in every layout vLLM has printed: parsed by field name, checked
against vLLM's arithmetic, and rendered as vLLM prints it.

A line is found by its marker anywhere in it (after a logger prefix, a container prefix
such as ``vllm-1  | ``, a shell prompt, in a Markdown table cell or backticks) and read by
field name, in any order; a field a later vLLM adds is ignored. The layouts (vllm-project/
vllm, ``vllm/v1/spec_decode/metrics.py``; V0: ``vllm/engine/metrics.py``):

* V1, about 0.8.5 to 0.10: ``SpecDecoding metrics: Draft acceptance rate: 41.2%, Mean
  acceptance length: 2.65, Accepted: 1650 tokens, Drafted: 4000 tokens, Per-position
  acceptance rate: 0.702, 0.455, ...`` (some with ``Accepted throughput: X tokens/s,
  Drafted throughput: Y tokens/s`` after the mean acceptance length);
* V1, current: :data:`LOG_FORMAT` (after vLLM's logger prefix, e.g. ``(APIServer
  pid=2236552) INFO 09-09 11:51:35 [metrics.py:96] ``), and with dynamic speculation depth
  ``Current speculative depth: 4`` after the mean acceptance length;
* V0 (vLLM 0.5 to 0.9): ``Speculative metrics: Draft acceptance rate: 0.581, System
  efficiency: 0.520, Number of speculative tokens: 4, Number of accepted tokens: 2324,
  Number of draft tokens: 4000, Number of emitted tokens: 2600.``

A whole log is read by :mod:`specmodel.vllm.logs`. Errors are one line each."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TypeAlias

from specmodel.errors import SpecModelError
from specmodel.safe_input import excerpt
from specmodel.vllm.counters import (
    EPS,
    LENGTH_SLACK,
    PERCENT_SLACK,
    RATE_SLACK,
    SpecDecodeCounters,
    draft_acceptance_rate,
    logged_position_rate,
    mean_acceptance_length,
    throughput,
)
from specmodel.vllm.v0 import V0Totals, check_v0_totals

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
    """Each field's pattern, compiled ASCII-only: ``\\d`` is 0-9, never another script's digit
    ("３112" is no count vLLM writes)."""
    return {label: (attribute, re.compile(value, re.ASCII), shape) for label, attribute, value, shape in rows}


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
_LABEL = re.compile(r"[A-Za-z][\w /().%-]*", re.ASCII)
_CELL_END = re.compile(r"[|`\"']")  # never in vLLM's message: ends a table cell or a quote


def _malformed(where: str, marker: str, detail: str) -> SpecModelError:
    return SpecModelError(f"{where}: malformed or truncated {marker[:-1]} line: {detail}")


def _found(text: str) -> str:
    return excerpt(text, 40) if text else "the end of the line"


def _labelled(message: str, marker: str, where: str) -> dict[str, str]:
    """``label: value text`` of every field in ``message`` from ``marker`` on, up to a table-cell
    bar, backtick or quote (a value that is a list runs on over the commas that follow it)."""
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
    return fields


def _fields(message: str, marker: str, where: str, table: _Table, required: list[str]) -> dict[str, str]:
    """``attribute: value text`` of the fields of ``table`` in ``message`` (from ``marker``
    on, up to a table-cell bar, backtick or quote), each matched against its pattern;
    fields not in the table are skipped, those ``required`` must be there."""
    values: dict[str, str] = {}
    for name, text in _labelled(message, marker, where).items():
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
        if r > 1 + EPS:
            raise SpecModelError(f"{where}: per-position acceptance rate {r} at position {j} is above 1")
        if j > 1 and r > rates[j - 2] + EPS:
            raise SpecModelError(
                f"{where}: per-position acceptance rises from {rates[j - 2]} at position {j - 1} to {r} at "
                f"position {j}; a guess counts only if the one before it was accepted"
            )
    percent = 100.0 * iv.accepted / iv.drafted
    if abs(iv.draft_acceptance_percent - percent) > PERCENT_SLACK + 1e-6:
        raise SpecModelError(
            f"{where}: Avg Draft acceptance rate {iv.draft_acceptance_percent}% does not match "
            f"Accepted/Drafted = {iv.accepted}/{iv.drafted} = {percent:.1f}%"
        )
    total = 1.0 + sum(rates)
    if abs(iv.mean_acceptance_length - total) > LENGTH_SLACK + RATE_SLACK * len(rates) + 1e-6:
        raise SpecModelError(
            f"{where}: Mean acceptance length {iv.mean_acceptance_length} does not match 1 + the sum of the "
            f"per-position rates = {total:.3f}"
        )


def interval_drafts(iv: LogInterval, where: str) -> tuple[float, bool]:
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
        return abs(rates * drafts - iv.accepted) - RATE_SLACK * gamma * drafts - 1e-6

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


# --- V0 -----------------------------------------------------------------------------------


def parse_v0_message(message: str, where: str = "line 1", line: int = 1) -> V0Totals:
    """Parse a V0 message, from ``Speculative metrics:`` on, checked by
    :func:`~specmodel.vllm.v0.check_v0_totals`."""
    v = _fields(message, V0_MARKER, where, _V0, list(_V0))
    k, accepted, drafted, emitted = (int(v[key]) for key in ("num_spec_tokens", "accepted", "drafted", "emitted"))
    totals = V0Totals(line, k, accepted, drafted, emitted, float(v["acceptance_rate"]), float(v["efficiency"]))
    check_v0_totals(totals, where)
    return totals


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


def parse_line(line: str, where: str, number: int) -> LogRecord | None:
    """The record of a line holding a V1 or V0 marker (anywhere in it), else None."""
    at = line.find(LOG_MARKER)
    if at >= 0:
        return parse_log_message(line[at:], where, number)
    at = line.find(V0_MARKER)
    return parse_v0_message(line[at:], where, number) if at >= 0 else None
