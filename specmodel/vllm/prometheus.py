"""vLLM's spec-decode Prometheus counters: render them as a scrape of ``/metrics`` and read
them back; and the bounded file readers (a scrape read whole, a log streamed by line).

Prometheus text is rendered and parsed with ``prometheus_client``. See
:mod:`specmodel.vllm.metrics` for the counters, their names and what they guarantee. A
scrape of the V0 engine (its gauges and emitted-tokens counter,
:data:`~specmodel.vllm.metrics.V0_METRICS`) has no drafts, no per-position counts and not
the number of speculative tokens: it is refused, naming the V0 format.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import BinaryIO, TypeAlias

import numpy as np
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily
from prometheus_client.parser import text_string_to_metric_families

from specmodel.errors import SpecModelError
from specmodel.safe_input import excerpt
from specmodel.vllm.metrics import (
    _EPS,
    ACCEPTED_PER_POSITION,
    ACCEPTED_TOKENS,
    DRAFT_TOKENS,
    DRAFT_TOKENS_PER_POSITION,
    DRAFTS,
    LABELS,
    MAX_INPUT_BYTES,
    POSITION_LABEL,
    V0_METRICS,
    SpecDecodeCounters,
    check_counters,
)

# --- rendering ----------------------------------------------------------------------------

#: Help texts vLLM gives them.
_DOCUMENTATION = {
    DRAFTS: "Number of spec decoding drafts.",
    DRAFT_TOKENS: "Number of draft tokens.",
    ACCEPTED_TOKENS: "Number of accepted tokens.",
    ACCEPTED_PER_POSITION: "Accepted tokens per draft position.",
    DRAFT_TOKENS_PER_POSITION: "Draft tokens per draft position.",
}


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
        per_position = [(ACCEPTED_PER_POSITION, c.accepted_per_position)]
        if c.draft_tokens_per_position is not None:
            per_position.append((DRAFT_TOKENS_PER_POSITION, c.draft_tokens_per_position))
        for name, values in per_position:
            family = CounterMetricFamily(name, _DOCUMENTATION[name], labels=[*LABELS, POSITION_LABEL])
            for position, value in enumerate(values):
                family.add_metric([*self.labels, str(position)], float(value))
            yield family


def render_exposition(counters: SpecDecodeCounters, model_name: str, engine: str) -> str:
    """:func:`~specmodel.vllm.metrics.format_exposition`, rendered by ``prometheus_client``."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_CountersCollector(counters, (model_name, engine)))
    return generate_latest(registry).decode("utf-8")


# --- reading a scrape ---------------------------------------------------------------------

_TOTALS = (DRAFTS, DRAFT_TOKENS, ACCEPTED_TOKENS)
_PER_POSITION = (ACCEPTED_PER_POSITION, DRAFT_TOKENS_PER_POSITION)
_WANTED = {f"{name}_total": name for name in (*_TOTALS, *_PER_POSITION)}

#: A series: the sample's name and its sorted labels.
_SeriesKey: TypeAlias = tuple[str, tuple[tuple[str, str], ...]]


def _lines(text: str) -> list[str]:
    """Lines as an editor numbers them: split at newlines only, a trailing CR dropped."""
    return [line.removesuffix("\r") for line in text.split("\n")]


def _samples(text: str, source: str, v0: set[str]) -> Iterator[tuple[int, str, dict[str, str], float]]:
    """``(line, name, labels, value)`` of every spec-decode counter sample, parsing each line
    with prometheus_client's parser (so an error can name its line); the names of V0's
    metrics seen are added to ``v0``."""
    for number, line in enumerate(_lines(text), 1):
        if not line.strip():
            continue
        try:
            families = list(text_string_to_metric_families(line + "\n"))
        except Exception as exc:  # noqa: BLE001 - the library raises several types for bad text
            reason = excerpt("".join(c if c.isprintable() else repr(c)[1:-1] for c in str(exc)), 100)  # one line
            raise SpecModelError(f"{source} line {number}: not Prometheus text exposition ({reason})") from None
        for family in families:
            for sample in family.samples:
                if sample.name in _WANTED:
                    yield number, sample.name, sample.labels, sample.value
                elif sample.name in V0_METRICS:
                    v0.add(sample.name)


def _series_windows(text: str, source: str, v0: set[str]) -> dict[_SeriesKey, list[float]]:
    """Per series: (first value, last value, occurrences, line of first). Several
    occurrences are successive scrapes appended to one file; a counter never decreases."""
    series: dict[_SeriesKey, list[float]] = {}
    for number, name, labels, value in _samples(text, source, v0):
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


def _sums(series: dict[_SeriesKey, list[float]], source: str) -> dict[str, dict[int, float]]:
    """Per metric, the counts summed over engines and models (the increase from the first
    scrape to the last when there are several); per position for the per-position ones,
    under position -1 for the others."""
    sums: dict[str, dict[int, float]] = {}
    for (name, labels), (first, last, count, line) in series.items():
        value = last - first if count > 1 else last
        metric = _WANTED[name]
        position = -1
        if metric in _PER_POSITION:
            label = dict(labels).get(POSITION_LABEL)
            if label is None or not label.isdigit() or len(label) > 4:
                raise SpecModelError(
                    f"{source} line {line}: {name} needs a position label 0, 1, ...; got {excerpt(label)}"
                )
            position = int(label)
        sums.setdefault(metric, {})
        sums[metric][position] = sums[metric].get(position, 0.0) + value
    return sums


def _require(sums: dict[str, dict[int, float]], v0: set[str], source: str) -> None:
    """Refuse a scrape without the V1 counters, saying why: the V0 engine's, an old vLLM's,
    or no speculative decoding at all."""
    missing = [name for name in (*_TOTALS, ACCEPTED_PER_POSITION) if name not in sums]
    if not missing:
        return
    if v0:
        raise SpecModelError(
            f"{source}: a scrape of vLLM's V0 engine ({', '.join(sorted(v0))}), which exposes no drafts, no "
            "per-position counts and not the number of speculative tokens, so no per-position acceptance; give the "
            "server's log (--log), whose V0 'Speculative metrics:' lines have what is needed, or run the V1 engine"
        )
    present = [f"{name}_total" for name in (*_TOTALS, *_PER_POSITION) if name in sums]
    why = (
        f"though it has {', '.join(present)}: vLLM before 0.8.5 counts no drafts or per-position acceptance; "
        "else the scrape is trimmed"
        if present
        else "is speculative decoding on in this server?"
    )
    raise SpecModelError(f"{source}: no {missing[0]}_total sample ({why})")


def _positions(counts: dict[int, float], name: str, source: str) -> tuple[float, ...]:
    if sorted(counts) != list(range(len(counts))):
        raise SpecModelError(f"{source}: {name}_total has positions {sorted(counts)}; expected 0 to {len(counts) - 1}")
    return tuple(counts[i] for i in range(len(counts)))


def _notes(c: SpecDecodeCounters) -> tuple[str, ...]:
    """What a reader of the advice should know about how the counters were read."""
    gamma, notes = c.gamma, []
    drafted = c.draft_tokens_per_position
    if drafted is None and c.num_draft_tokens < gamma * c.num_drafts * (1 - 1e-6):
        notes.append(
            f"drafts held {c.num_draft_tokens / c.num_drafts:.2f} of {gamma} tokens on average (as n-gram drafts can), "
            f"and this vLLM exports no {DRAFT_TOKENS_PER_POSITION}_total: a position a draft did not reach counts as "
            "not accepted, which understates later positions"
        )
    if drafted is not None:
        rates = np.divide(c.accepted_per_position, np.maximum(drafted, _EPS))
        rising = [j for j in range(1, gamma) if rates[j] > rates[j - 1] + 1e-12]
        if rising:
            notes.append(
                f"accepted / drafted rises at position {rising[0]} (longer drafts being the better ones, as with "
                "n-gram matches); a draft's acceptance cannot rise with position, so the lower rate before it is kept"
            )
        if 0.0 in drafted:
            notes.append(f"position {drafted.index(0.0)} and later were never drafted: their acceptance is taken as 0")
    return tuple(notes)


def parse_exposition(text: str, source: str = "metrics") -> SpecDecodeCounters:
    """The spec-decode counters in a Prometheus scrape of vLLM (text exposition format),
    summed over engines and models, checked (:func:`~specmodel.vllm.metrics.check_counters`).
    One scrape gives the totals since the server started; several scrapes appended to one
    file give the increase from the first to the last, as PromQL's ``rate()`` would. Errors
    name the file (``source``) and, where there is one, the line."""
    v0: set[str] = set()
    series = _series_windows(text, source, v0)
    counts = {s[2] for s in series.values()}
    if len(counts) > 1:
        raise SpecModelError(f"{source}: the spec-decode series appear {sorted(counts)} times; give whole scrapes")
    sums = _sums(series, source)
    _require(sums, v0, source)
    drafted = sums.get(DRAFT_TOKENS_PER_POSITION)
    counters = SpecDecodeCounters(
        num_drafts=sums[DRAFTS][-1],
        num_draft_tokens=sums[DRAFT_TOKENS][-1],
        num_accepted_tokens=sums[ACCEPTED_TOKENS][-1],
        accepted_per_position=_positions(sums[ACCEPTED_PER_POSITION], ACCEPTED_PER_POSITION, source),
        draft_tokens_per_position=None if drafted is None else _positions(drafted, DRAFT_TOKENS_PER_POSITION, source),
    )
    check_counters(counters, source)
    notes = _notes(counters)
    return replace(counters, notes=notes) if notes else counters


def load_exposition(path: str | Path, option: str = "--metrics") -> SpecDecodeCounters:
    """Counters from a file holding one or more Prometheus scrapes of vLLM's ``/metrics``
    (read whole, at most :data:`~specmodel.vllm.metrics.MAX_INPUT_BYTES`)."""
    return parse_exposition(read_whole(path, option), f"{option} {str(path)!r}")


# --- reading files ------------------------------------------------------------------------


#: Longest log line parsed (bytes): a line holding a marker must be shorter; any other
#: line is skipped whatever its length (a request logged with its prompt can be long).
MAX_LINE_BYTES = 64 * 2**10
_CHUNK = 2**20


@contextmanager
def _opened(path: str | Path, where: str) -> Iterator[BinaryIO]:
    """``path`` opened for reading bytes; a one-line error if it is missing, a folder or
    unreadable (also while it is read)."""
    try:
        with open(path, "rb") as handle:
            yield handle
    except FileNotFoundError:
        raise SpecModelError(f"{where}: no such file") from None
    except IsADirectoryError:
        raise SpecModelError(f"{where} is a folder, not a file") from None
    except OSError as exc:
        raise SpecModelError(f"{where} cannot be read: {exc.strerror or exc}") from None


def _binary(where: str, offset: int) -> SpecModelError:
    return SpecModelError(f"{where} is a binary file (NUL byte at offset {offset}), not text")


def read_whole(path: str | Path, option: str, limit: int = MAX_INPUT_BYTES) -> str:
    """The text of ``path`` (UTF-8, at most ``limit`` bytes, read in chunks so a device such
    as /dev/zero fails at once), or a one-line error naming ``option`` and the file if it is
    missing, unreadable, too large, empty or binary."""
    where = f"{option} {str(path)!r}"
    chunks: list[bytes] = []
    size = 0
    with _opened(path, where) as handle:
        while chunk := handle.read(min(_CHUNK, limit + 1 - size) or 1):
            if (nul := chunk.find(b"\x00")) >= 0:
                raise _binary(where, size + nul)
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                raise SpecModelError(f"{where} is larger than {limit:,} bytes; is it the right file?")
    data = b"".join(chunks)
    if not data.strip():
        raise SpecModelError(f"{where} is empty")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise SpecModelError(f"{where} line {line}: not UTF-8 text (byte {exc.start}); is it a binary file?") from None


def marker_lines(path: str | Path, option: str, markers: tuple[bytes, ...]) -> Iterator[tuple[int, bytes]]:
    """``(line number, line without its end)`` of every line of ``path`` that holds one of
    ``markers``, found by scanning the bytes a block at a time (memory bounded by the block
    and :data:`MAX_LINE_BYTES`, whatever the file's size; no line is split unless it holds
    a marker). One-line errors, naming ``option`` and the file: missing, unreadable, empty,
    binary (a NUL byte, so /dev/zero fails at once), or a line with a marker that is longer
    than MAX_LINE_BYTES."""
    where, keep = f"{option} {str(path)!r}", max(map(len, markers)) - 1
    tail = markers[0]  # the end all markers share (b" metrics:"), to find them in one search
    for marker in markers:
        while not marker.endswith(tail):
            tail = tail[1:]
    needles = [tail] if tail else list(markers)
    number, offset, pending, skipping, blank = 1, 0, b"", False, True
    with _opened(path, where) as handle:
        while chunk := handle.read(_CHUNK):
            if (nul := chunk.find(b"\x00")) >= 0:
                raise _binary(where, offset + nul)
            offset += len(chunk)
            blank = blank and not chunk.strip()
            if skipping:  # in a line too long to hold a marker: find its end
                end = chunk.find(b"\n")
                _no_marker(pending + chunk[: end if end >= 0 else len(chunk)], markers, where, number)
                if end < 0:
                    pending = (pending + chunk)[-keep:]
                    continue
                skipping, pending, chunk, number = False, b"", chunk[end + 1 :], number + 1
            buffer = pending + chunk
            last = buffer.rfind(b"\n") + 1
            hits, number = _hits(buffer, last, markers, needles, number, where)
            yield from hits
            pending = buffer[last:]
            if len(pending) > MAX_LINE_BYTES:
                _no_marker(pending, markers, where, number)
                skipping, pending = True, pending[-keep:]
    if pending and not skipping:  # a last line without a line break
        yield from _hits(pending + b"\n", len(pending) + 1, markers, needles, number, where)[0]
    if blank:
        raise SpecModelError(f"{where} is empty")


def _no_marker(text: bytes, markers: tuple[bytes, ...], where: str, number: int) -> None:
    for marker in markers:
        if marker in text:
            raise SpecModelError(
                f"{where} line {number} holds {marker.decode()!r} but is longer than {MAX_LINE_BYTES:,} bytes; "
                "vLLM's metrics lines are far shorter: is the file a log?"
            )


def _hits(
    buffer: bytes, end: int, markers: tuple[bytes, ...], needles: list[bytes], number: int, where: str
) -> tuple[list[tuple[int, bytes]], int]:
    """The lines of ``buffer[:end]`` (whole lines, the first numbered ``number``) that hold a
    marker (found by searching ``needles``), in order, each at most MAX_LINE_BYTES long;
    and the number of the line at ``end``."""
    starts = []
    for needle in needles:
        at = buffer.find(needle, 0, end)
        while at >= 0:
            if any((k := at + len(needle) - len(m)) >= 0 and buffer.startswith(m, k) for m in markers):
                starts.append(buffer.rfind(b"\n", 0, at) + 1)
                at = buffer.find(needle, buffer.find(b"\n", at), end)  # the next line
            else:
                at = buffer.find(needle, at + 1, end)
    hits, counted = [], 0
    for start in sorted(set(starts)):
        number += buffer.count(b"\n", counted, start)
        counted, stop = start, buffer.find(b"\n", start)
        _no_marker(b"" if stop - start <= MAX_LINE_BYTES else buffer[start:stop], markers, where, number)
        hits.append((number, buffer[start:stop].rstrip(b"\r")))
    return hits, number + buffer.count(b"\n", counted, end)
