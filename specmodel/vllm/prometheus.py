"""vLLM's spec-decode Prometheus counters: a scrape of ``/metrics`` read into counters.

Prometheus text is parsed with ``prometheus_client``. See
:mod:`specmodel.vllm.counters` for the counters, their names and what they guarantee. A
scrape of the V0 engine (its gauges and emitted-tokens counter,
:data:`~specmodel.vllm.v0.V0_METRICS`) has no drafts, no per-position counts and not
the number of speculative tokens: it is refused, naming the V0 format.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import TypeAlias, TypeVar

import numpy as np
from prometheus_client.parser import text_string_to_metric_families

from specmodel.errors import SpecModelError
from specmodel.safe_input import excerpt, path_text, read_limited_text
from specmodel.vllm.counters import (
    ACCEPTED_PER_POSITION,
    ACCEPTED_TOKENS,
    DRAFT_TOKENS,
    DRAFT_TOKENS_PER_POSITION,
    DRAFTS,
    EPS,
    MAX_COUNT,
    POSITION_LABEL,
    SpecDecodeCounters,
    check_counters,
)
from specmodel.vllm.v0 import V0_METRICS

#: Largest scrape read whole (bytes): far above any real one (vLLM's /metrics is ~100 KB).
MAX_SCRAPE_BYTES = 64 * 2**20

# --- reading a scrape ---------------------------------------------------------------------

_TOTALS = (DRAFTS, DRAFT_TOKENS, ACCEPTED_TOKENS)
_PER_POSITION = (ACCEPTED_PER_POSITION, DRAFT_TOKENS_PER_POSITION)
_WANTED = {f"{name}_total": name for name in (*_TOTALS, *_PER_POSITION)}

#: A position label as vLLM writes it (``str(j)``): ASCII digits, no leading zero, j < 10,000.
_POSITION = re.compile(r"0|[1-9][0-9]{0,3}", re.ASCII)
#: The label naming the model a server serves.
MODEL_LABEL = "model_name"

#: A series: the sample's name and its sorted labels.
_SeriesKey: TypeAlias = tuple[str, tuple[tuple[str, str], ...]]
_V = TypeVar("_V")


def _lines(text: str) -> list[str]:
    """Lines as an editor numbers them: split at newlines only, a trailing CR dropped."""
    return [line.removesuffix("\r") for line in text.split("\n")]


def exposition_samples(text: str, source: str) -> Iterator[tuple[int, str, dict[str, str], float]]:
    """``(line, name, labels, value)`` of every sample of a Prometheus text exposition, parsing
    each line with prometheus_client's parser (so an error can name its line; a sample keeps
    the name it has on its line, ``_sum``/``_count``/``_info`` included)."""
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
                yield number, sample.name, sample.labels, sample.value


def _samples(text: str, source: str, v0: set[str]) -> Iterator[tuple[int, str, dict[str, str], float]]:
    """``(line, name, labels, value)`` of every spec-decode counter sample
    (:func:`exposition_samples`); the names of V0's metrics seen are added to ``v0``."""
    for number, name, labels, value in exposition_samples(text, source):
        if name in _WANTED:
            yield number, name, labels, value
        elif name in V0_METRICS:
            v0.add(name)


def _series_windows(text: str, source: str, v0: set[str]) -> dict[_SeriesKey, list[float]]:
    """Per series: (first value, last value, occurrences, line of first). Several
    occurrences are successive scrapes appended to one file; a counter never decreases."""
    series: dict[_SeriesKey, list[float]] = {}
    for number, name, labels, sample in _samples(text, source, v0):
        value = float(sample)  # the parser gives an int for some texts
        if not math.isfinite(value) or value < 0 or value > MAX_COUNT or not value.is_integer():
            raise SpecModelError(
                f"{source} line {number}: {name} is {value:g}; a counter of events is a whole number from 0 to 2^53"
            )
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
            if label is None or not _POSITION.fullmatch(label):
                raise SpecModelError(
                    f"{source} line {line}: {name} needs a position label 0, 1, ... (ASCII digits); "
                    f"got {excerpt(label)}"
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
        rates = np.divide(c.accepted_per_position, np.maximum(drafted, EPS))
        rising = [j for j in range(1, gamma) if rates[j] > rates[j - 1] + 1e-12]
        if rising:
            notes.append(
                f"accepted / drafted rises at position {rising[0]} (longer drafts being the better ones, as with "
                "n-gram matches); a draft's acceptance cannot rise with position, so the lower rate before it is kept"
            )
        if 0.0 in drafted:
            notes.append(f"position {drafted.index(0.0)} and later were never drafted: their acceptance is taken as 0")
    return tuple(notes)


def parse_exposition(text: str, source: str = "metrics", model_name: str | None = None) -> SpecDecodeCounters:
    """The spec-decode counters in a Prometheus scrape of vLLM (text exposition format),
    summed over engines, checked (:func:`~specmodel.vllm.counters.check_counters`). A scrape
    whose counters name several models (``model_name``) is refused unless ``model_name``
    selects one: the acceptance of two models summed is neither's. One scrape gives the totals since the
    server started; several scrapes appended to one file give the increase from the first to
    the last, as PromQL's ``rate()`` would. Errors name the file (``source``) and, where
    there is one, the line."""
    v0: set[str] = set()
    series, model = one_model(_series_windows(text, source, v0), source, model_name)
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
        model_name=model,
    )
    check_counters(counters, source)
    notes = _notes(counters)
    return replace(counters, notes=notes) if notes else counters


def one_model(
    series: dict[_SeriesKey, _V], source: str, chosen: str | None, what: str = "spec-decode counters"
) -> tuple[dict[_SeriesKey, _V], str | None]:
    """The series of one model, and its name (None: the scrape names none): the only one in
    the scrape, or ``chosen`` (``--model-name``), which must be there. ``what``: the series, as
    the refusal of several models names them."""
    models = sorted({dict(labels).get(MODEL_LABEL) or "" for _, labels in series})
    named = ", ".join(excerpt(m) for m in models[:5]) + (f" and {len(models) - 5} more" if len(models) > 5 else "")
    if chosen is None:
        if len(models) > 1:
            raise SpecModelError(
                f"{source} holds {what} of {len(models)} models ({named}); their "
                f"{'acceptance summed is' if what == 'spec-decode counters' else 'numbers summed are'} neither's: "
                "choose one with --model-name"
            )
        return series, (models[0] or None) if models else None
    if chosen not in models:
        raise SpecModelError(
            f"{source}: --model-name {excerpt(chosen)} is not in the scrape; its models: {named or 'none'}"
        )
    return {key: value for key, value in series.items() if (dict(key[1]).get(MODEL_LABEL) or "") == chosen}, chosen


def load_exposition(path: str | Path, option: str = "--metrics", model_name: str | None = None) -> SpecDecodeCounters:
    """Counters from a file holding one or more Prometheus scrapes of vLLM's ``/metrics``
    (read whole, at most :data:`MAX_SCRAPE_BYTES`), of ``model_name`` if given (see :func:`parse_exposition`)."""
    where = f"{option} {path_text(path)}"
    return parse_exposition(read_limited_text(Path(path), where, MAX_SCRAPE_BYTES), where, model_name)
