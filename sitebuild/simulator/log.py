"""The line vLLM would log for a simulated run: the model's expected counters, and vLLM's
log format split into the slots the simulator fills in (:mod:`sitebuild.simulator.data`)."""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from sitebuild.config import SiteSettings
from specmodel.model.evaluate import evaluate
from specmodel.model.evaluation import Evaluation
from specmodel.model.scenario import Scenario
from specmodel.vllm.counters import SpecDecodeCounters
from specmodel.vllm.log_line import LOG_FORMAT, format_log_message

#: The fields of vLLM's log line, in LOG_FORMAT's order.
LOG_SLOTS = (
    "mean_acceptance_length",
    "accepted_throughput",
    "drafted_throughput",
    "accepted",
    "drafted",
    "per_position",
    "draft_acceptance_percent",
)
SPEC = re.compile(r"%(?:\.(\d+))?([dfs%])")


def expected_counters(ev: Evaluation, concurrency: Any, gamma: Any) -> dict[str, np.ndarray]:
    """vLLM's counters over one run of B sequences generating G tokens each, at their expected
    values: B E[N] iterations, of which a share m (the n-gram match rate; 1 for every other
    drafter) verify a draft of gamma tokens, as vLLM counts drafts; E[X] - 1 accepted tokens
    per iteration, u_j of them at position j; elapsed time B G / speculative tokens/s."""
    iterations = np.asarray(concurrency, dtype=float) * ev.expected_iterations
    drafts = iterations * ev.ngram_match_rate
    return {
        "num_drafts": drafts,
        "num_draft_tokens": drafts * gamma,
        "num_accepted_tokens": iterations * (ev.mean_acceptance_length - 1.0),
        "accepted_per_position": ev.per_position * iterations[..., None],
        "elapsed": np.asarray(concurrency, dtype=float) * ev.generated_tokens / ev.spec_tokens_per_s,
    }


def as_counters(expected: dict[str, np.ndarray]) -> tuple[SpecDecodeCounters, float]:
    """:func:`expected_counters` of one scenario as vLLM's counter record and the elapsed
    seconds, in plain numbers."""
    counters = SpecDecodeCounters(
        float(expected["num_drafts"]),
        float(expected["num_draft_tokens"]),
        float(expected["num_accepted_tokens"]),
        tuple(float(x) for x in np.ravel(expected["accepted_per_position"])),
    )
    return counters, float(expected["elapsed"])


def grid_counters(expected: dict[str, np.ndarray]) -> tuple[SpecDecodeCounters, np.ndarray]:
    """:func:`expected_counters` over a grid as vLLM's counter record and the elapsed
    seconds, in arrays over the grid (positions on the last axis of the record's)."""
    counters = SpecDecodeCounters(
        expected["num_drafts"],
        expected["num_draft_tokens"],
        expected["num_accepted_tokens"],
        expected["accepted_per_position"],
    )
    return counters, expected["elapsed"]


def log_template() -> list[dict]:
    """LOG_FORMAT split into literal text and numbered slots with their precision."""
    parts: list[dict[str, str | int]] = []
    pos, fields = 0, iter(LOG_SLOTS)
    for m in SPEC.finditer(LOG_FORMAT):
        parts.append({"text": LOG_FORMAT[pos : m.start()]})
        if m.group(2) == "%":
            parts.append({"text": "%"})
        else:
            parts.append({"slot": next(fields), "decimals": int(m.group(1) or 0), "kind": m.group(2)})
        pos = m.end()
    parts.append({"text": LOG_FORMAT[pos:]})
    return [p for p in parts if p.get("text") != ""]


def log_line(settings: SiteSettings, scenario: Scenario) -> str:
    """The line vLLM would log for ``scenario`` over one run, from the model's expected
    counters: what the simulator shows at the same setting."""
    ev = evaluate(scenario, settings=settings)
    counters, elapsed = as_counters(expected_counters(ev, scenario.concurrency, scenario.gamma))
    return format_log_message(counters, elapsed)
