"""vLLM's V0 engine (vLLM 0.5 to 0.9): its spec-decode totals, the arithmetic they obey, and the
counters the model can take from them (V0 logs no per-position counts).
"""

from __future__ import annotations

from dataclasses import dataclass

from specmodel.errors import SpecModelError
from specmodel.model.acceptance import alpha_for_mean_acceptance_length
from specmodel.vllm.counters import RATE_SLACK, SpecDecodeCounters

#: What only the V0 engine exposed (``vllm/engine/metrics.py``): two gauges (draft
#: acceptance rate, system efficiency) and the emitted-tokens counter.
V0_METRICS = (
    "vllm:spec_decode_draft_acceptance_rate",
    "vllm:spec_decode_efficiency",
    "vllm:spec_decode_num_emitted_tokens_total",
)


@dataclass(frozen=True)
class V0Totals:
    """The V0 engine's counts (vLLM 0.5 to 0.9, ``vllm/spec_decode/metrics.py``), as its
    "Speculative metrics" log line gives them: totals since the server started. V0 drafted
    ``num_spec_tokens`` = k tokens a sequence and step; its accepted tokens count every
    guess the target accepted, even after a rejection (``RejectionSampler._create_output``:
    ``accepted.sum()``); its emitted tokens (accepted in order, plus one) reach the output."""

    line: int  #: of the log line
    num_spec_tokens: int
    accepted: int
    drafted: int
    emitted: int
    acceptance_rate: float  #: accepted / drafted, as logged (%.3f)
    efficiency: float  #: emitted / (drafts (k + 1)), as logged (%.3f)


def check_v0_totals(t: V0Totals, where: str) -> None:
    """Raise unless V0's arithmetic holds: draft tokens a multiple of k (drafts = draft
    tokens / k); 1 to k + 1 emitted tokens a draft; emitted - drafts (accepted in order)
    <= accepted <= draft tokens; the logged ratios (3 decimals) match the counts."""
    k, accepted, drafted, emitted, rate, efficiency = (t.num_spec_tokens, t.accepted, t.drafted, t.emitted,
                                                        t.acceptance_rate, t.efficiency)  # fmt: skip
    drafts, ok = drafted // max(k, 1), RATE_SLACK + 1e-6
    for broken, what in (
        (k < 1 or drafted % k, f"Number of draft tokens {drafted} is not a multiple of speculative tokens {k}"),
        (accepted > drafted, f"Number of accepted tokens {accepted} exceeds Number of draft tokens {drafted}"),
        (not drafts <= emitted <= drafts * (k + 1), f"Number of emitted tokens {emitted} is not 1 to {k + 1} for "
         f"each of the {drafts} drafts (draft tokens / {k})"),
        (emitted - drafts > accepted, f"Number of emitted tokens - drafts = {emitted - drafts} (accepted in order) "
         f"exceeds Number of accepted tokens {accepted}"),
        (drafts and not abs(rate - accepted / drafted) <= ok, f"Draft acceptance rate {rate} is not accepted / "
         f"draft tokens = {accepted}/{drafted}"),
        (drafts and not abs(efficiency - emitted / (drafts * k + drafts)) <= ok, f"System efficiency {efficiency} "
         f"is not emitted / ((k + 1) drafts) = {emitted}/{drafts * (k + 1)}"),
    ):  # fmt: skip
        if broken:
            raise SpecModelError(f"{where}: {what}")


def v0_counters(t: V0Totals) -> SpecDecodeCounters:
    """Counters from V0 totals. Without per-position counts, the same acceptance alpha is
    assumed at every position (u_j = alpha^j): the alpha whose expected tokens a draft,
    ``1 + sum_j u_j = (1 - alpha^(k+1)) / (1 - alpha)``, are the emitted tokens a draft; the
    accepted tokens (V1's sense, in order) are emitted - drafts. ``notes`` say so."""
    k, drafts = t.num_spec_tokens, t.drafted / t.num_spec_tokens
    if drafts == 0:
        return SpecDecodeCounters(0.0, 0.0, 0.0, (0.0,) * k)
    emitted, accepted = t.emitted / drafts, t.emitted - drafts
    alpha = float(alpha_for_mean_acceptance_length(emitted, k))
    note = (
        f"vLLM V0 log (totals since the server started, line {t.line}) has no per-position counts: assumed the same "
        f"acceptance alpha = {alpha:.3f} at every position (u_j = alpha^j), solved from {emitted:.3f} tokens emitted "
        f"a draft = (1 - alpha^{k + 1}) / (1 - alpha), drafts = {t.drafted} draft tokens / {k}; accepted tokens = "
        f"emitted - drafts = {accepted:g} (V0's count, {t.accepted}, also has guesses accepted after a rejection)"
    )
    per_position = tuple(drafts * alpha**j for j in range(1, k + 1))
    return SpecDecodeCounters(drafts, float(t.drafted), accepted, per_position, notes=(note,))
