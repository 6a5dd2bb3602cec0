"""The advice as a terminal prints it and as one JSON object (keys documented in the README)."""

from __future__ import annotations

from specmodel.formatting import times_distinct as _times
from specmodel.vllm.advise import Advice


def advice_dict(advice: Advice, measured: dict | None = None) -> dict:
    """The advice as one JSON-ready object (keys documented in the README)."""
    out = {
        "conditional_acceptance": list(advice.conditional),
        "per_position_acceptance": list(advice.per_position),
        "predicted_speedup": {str(g): s for g, s in enumerate(advice.speedup, 1)},
        "recommended_gamma": advice.recommended_gamma,
        "verdict": advice.verdict,
        "reason": advice.reason,
        "recommended_drafter": advice.recommended_drafter,
        "deployed_gamma": advice.deployed_gamma,
        "drafter": advice.deployment.drafter,
        "deployment": advice.deployment.description,
        "notes": [advice.deployment.note] if advice.deployment.note else [],
        "concurrency": advice.concurrency,
        "context": advice.context,
        "hardware": advice.hardware,
        "target": advice.target,
        "engine": advice.engine,
    }
    if advice.zero_cost_speedup is not None:
        out["zero_cost_speedup"] = {str(g): z for g, z in enumerate(advice.zero_cost_speedup, 1)}
    if measured is not None:
        out["measured"] = measured
    return out


def format_advice(advice: Advice, measured: dict | None = None) -> str:
    """The advice as text for a terminal; ``measured``: the counters' summary
    (:func:`specmodel.vllm.metrics.counters_summary`), if any."""
    lines = [
        f"Deployment: {advice.deployment.description}, gamma {advice.deployed_gamma}, "
        f"{advice.concurrency} concurrent sequence(s), context {advice.context}, {advice.target} on {advice.hardware}, "
        f"engine {advice.engine}"
    ]
    if advice.deployment.note:
        lines.append(f"Note: {advice.deployment.note}")
    if measured:
        lines.append(
            f"Measured: {measured['num_drafts']:,.0f} drafts, "
            f"{measured['num_draft_tokens']:,.0f} draft tokens, "
            f"{measured['num_accepted_tokens']:,.0f} accepted ({measured['draft_acceptance_rate']:.1%}), "
            f"mean acceptance length {measured['mean_acceptance_length']:.2f}"
        )
    lines += ["", "Acceptance inferred from the metrics:", "position  per-position  conditional"]
    lines += [
        f"{j:>8}  {u:>12.3f}  {a:>11.3f}" for j, (u, a) in enumerate(zip(advice.per_position, advice.conditional), 1)
    ]
    head = f"speedup ({advice.deployment.drafter})"
    lines += [
        "",
        "Predicted speedup over plain decoding:",
        f"gamma  {head}" + ("  speedup (zero-cost drafter, same acceptance)" if advice.zero_cost_speedup else ""),
    ]
    for g, s in enumerate(advice.speedup, 1):
        row = f"{g:>5}  {_times(s):>{len(head)}}"
        if advice.zero_cost_speedup:
            row += f"  {_times(advice.zero_cost_speedup[g - 1]):>45}"
        lines.append(row)
    drafter = " with a zero-cost drafter (n-gram lookup)" if advice.verdict == "switch-drafter" else ""
    lines += [
        "",
        f"Recommended gamma: {advice.recommended_gamma}{drafter}"
        + (" (no speculation)" if advice.recommended_gamma == 0 else ""),
        f"Verdict: {advice.verdict} - {advice.reason}",
    ]
    return "\n".join(lines)
