"""vLLM's spec-decode Prometheus counters: read them back from a scrape of ``/metrics``.

Prometheus text is parsed with ``prometheus_client.parser``. See
:mod:`specmodel.vllm.metrics` for the counters and their names.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import TypeAlias

from prometheus_client.parser import text_string_to_metric_families

from specmodel.errors import SpecModelError
from specmodel.vllm.logs import _lines
from specmodel.vllm.metrics import (
    ACCEPTED_PER_POSITION,
    ACCEPTED_TOKENS,
    DRAFT_TOKENS,
    DRAFTS,
    POSITION_LABEL,
    SpecDecodeCounters,
    check_counters,
    read_text,
)

# --- the Prometheus scrape ----------------------------------------------------------------

_WANTED = {f"{name}_total": name for name in (DRAFTS, DRAFT_TOKENS, ACCEPTED_TOKENS, ACCEPTED_PER_POSITION)}

#: A series: the sample's name and its sorted labels.
_SeriesKey: TypeAlias = tuple[str, tuple[tuple[str, str], ...]]


def _samples(text: str, source: str) -> Iterator[tuple[int, str, dict[str, str], float]]:
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


def _series_windows(text: str, source: str) -> dict[_SeriesKey, list[float]]:
    """Per series: (first value, last value, occurrences, line of first). Several
    occurrences are successive scrapes appended to one file; a counter never decreases."""
    series: dict[_SeriesKey, list[float]] = {}
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
        raise SpecModelError(
            f"{source}: {ACCEPTED_PER_POSITION}_total has positions {sorted(per_position)}; "
            f"expected 0 to {len(per_position) - 1}"
        )
    counters = SpecDecodeCounters(
        num_drafts=totals[DRAFTS],
        num_draft_tokens=totals[DRAFT_TOKENS],
        num_accepted_tokens=totals[ACCEPTED_TOKENS],
        accepted_per_position=tuple(per_position[i] for i in range(len(per_position))),
    )
    check_counters(counters, source)
    return counters


def load_exposition(path: str | Path, option: str = "--metrics") -> SpecDecodeCounters:
    """Counters from a file holding one or more Prometheus scrapes of vLLM's ``/metrics``."""
    return parse_exposition(read_text(path, option), f"{option} {str(path)!r}")
