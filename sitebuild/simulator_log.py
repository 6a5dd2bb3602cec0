"""The line vLLM would log for a simulated run: the model's expected counters, and vLLM's
log format split into the slots the simulator fills in (:mod:`sitebuild.simulator`)."""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from specmodel.model.evaluate import evaluate
from specmodel.model.evaluation import Evaluation
from specmodel.model.scenario import Scenario
from specmodel.model.settings import Settings
from specmodel.vllm import metrics as vllm

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


def as_counters(expected: dict[str, np.ndarray]) -> tuple[vllm.SpecDecodeCounters, object]:
    """:func:`expected_counters` as vLLM's counter record and the elapsed seconds: plain
    numbers for one scenario, arrays over a grid."""
    if np.ndim(expected["num_drafts"]) == 0:
        counters = vllm.SpecDecodeCounters(
            float(expected["num_drafts"]),
            float(expected["num_draft_tokens"]),
            float(expected["num_accepted_tokens"]),
            tuple(float(x) for x in np.ravel(expected["accepted_per_position"])),
        )
        return counters, float(expected["elapsed"])
    counters = vllm.SpecDecodeCounters(
        expected["num_drafts"],
        expected["num_draft_tokens"],
        expected["num_accepted_tokens"],
        expected["accepted_per_position"],
    )
    return counters, expected["elapsed"]


def log_template() -> list[dict]:
    """LOG_FORMAT split into literal text and numbered slots with their precision."""
    parts, pos, fields = [], 0, iter(LOG_SLOTS)
    for m in SPEC.finditer(vllm.LOG_FORMAT):
        parts.append({"text": vllm.LOG_FORMAT[pos : m.start()]})
        if m.group(2) == "%":
            parts.append({"text": "%"})
        else:
            parts.append({"slot": next(fields), "decimals": int(m.group(1) or 0), "kind": m.group(2)})
        pos = m.end()
    parts.append({"text": vllm.LOG_FORMAT[pos:]})
    return [p for p in parts if p.get("text") != ""]


def log_line(settings: Settings, scenario: Scenario) -> str:
    """The line vLLM would log for ``scenario`` over one run, from the model's expected
    counters: what the simulator shows at the same setting."""
    ev = evaluate(scenario, settings=settings)
    counters, elapsed = as_counters(expected_counters(ev, scenario.concurrency, scenario.gamma))
    return vllm.format_log_message(counters, elapsed)
