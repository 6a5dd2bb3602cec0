"""A vLLM log, read whole or streamed, into counters: V1 lines count one logging interval each
and are summed; V0 lines hold totals since the server started, so the last one counts.
:func:`load_log` streams a file keeping running sums (bounds:
:func:`specmodel.safe_input.marker_lines`); each line is read by
:mod:`specmodel.vllm.log_line`. Errors are one line each."""

from __future__ import annotations

from pathlib import Path

from specmodel.errors import SpecModelError
from specmodel.safe_input import marker_lines, path_text
from specmodel.vllm.counters import RATE_SLACK, SpecDecodeCounters, check_counters
from specmodel.vllm.log_line import LOG_MARKER, V0_MARKER, LogInterval, LogRecord, interval_drafts, parse_line
from specmodel.vllm.v0 import V0Totals, v0_counters


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
        drafts, estimated = interval_drafts(record, where)
        self.intervals += 1
        if record.drafted:
            self.drafts, self.draft_tokens = self.drafts + drafts, self.draft_tokens + record.drafted
            self.accepted, self.rounding = self.accepted + record.accepted, self.rounding + RATE_SLACK * gamma * drafts
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
    exact; drafts from :func:`~specmodel.vllm.log_line.interval_drafts`; per-position counts the logged rates
    times the drafts, so with the rates' rounding, +-0.0005 drafts each), or the last V0
    totals with the inferred same-profile acceptance (see its ``notes``)."""
    sums = _Sums(source)
    for record in records:
        sums.add(record, f"{source} line {record.line}")
    return sums.counters()


_MARKERS = (LOG_MARKER.encode(), V0_MARKER.encode())


def load_log(path: str | Path, option: str = "--log") -> SpecDecodeCounters:
    """Counters from a vLLM log file, streamed line by line (every spec-decode line in it)."""
    source = f"{option} {path_text(path)}"
    sums = _Sums(source)
    for number, raw in marker_lines(path, source, _MARKERS):
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
