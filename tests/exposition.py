"""A scrape of vLLM's ``/metrics`` rendered from counters, as the server exposes them: what the
tests feed :func:`specmodel.vllm.prometheus.parse_exposition` (rendered by
``prometheus_client``, the library vLLM itself uses)."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily

from specmodel.vllm.counters import (
    ACCEPTED_PER_POSITION,
    ACCEPTED_TOKENS,
    DRAFT_TOKENS,
    DRAFT_TOKENS_PER_POSITION,
    DRAFTS,
    LABELS,
    POSITION_LABEL,
    SpecDecodeCounters,
)

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


def format_exposition(counters: SpecDecodeCounters, model_name: str = "Qwen/Qwen3-8B", engine: str = "0") -> str:
    """The counters as vLLM's ``/metrics`` exposes them (Prometheus text, rendered by
    ``prometheus_client``): :data:`~specmodel.vllm.counters.DRAFTS` etc. with
    ``_total``, labelled ``model_name`` and ``engine``, the per-position ones ``position``
    "0" to "gamma-1". (No ``_created`` samples, so the text is deterministic.)

    >>> print(format_exposition(SpecDecodeCounters(4, 8, 3, (2, 1))).splitlines()[2])
    vllm:spec_decode_num_drafts_total{engine="0",model_name="Qwen/Qwen3-8B"} 4.0
    """
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_CountersCollector(counters, (model_name, engine)))
    return generate_latest(registry).decode("utf-8")
