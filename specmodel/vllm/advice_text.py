"""The advice as a terminal prints it and as one JSON object (keys documented in the README)."""

from __future__ import annotations

from typing import Any

from specmodel.formatting import times_distinct as _times
from specmodel.vllm.advise import MIN_GAIN, Advice, Alternative, with_interval


def advice_dict(advice: Advice, measured: dict[str, Any] | None = None, notes: tuple[str, ...] = ()) -> dict[str, Any]:
    """The advice as one JSON-ready object (keys documented in the README); ``notes``: what
    the reading of the metrics had to assume."""
    out: dict[str, Any] = {
        "conditional_acceptance": list(advice.conditional),
        "per_position_acceptance": list(advice.per_position),
        "predicted_speedup": {str(g): s for g, s in enumerate(advice.speedup, 1)},
        "predicted_speedup_interval": {
            str(g): [lo, hi] for g, (lo, hi) in enumerate(zip(advice.speedup_low, advice.speedup_high), 1)
        },
        "interval_level": advice.level,
        "recommended_gamma": advice.recommended_gamma,
        "verdict": advice.verdict,
        "reason": advice.reason,
        "measure": list(advice.compare),
        "deployed_gamma": advice.deployed_gamma,
        "drafter": advice.served.drafter,
        "deployment": advice.served.description,
        "alternatives": [
            {"drafter": a.drafter, "break_even_alpha": a.break_even_alpha, "gamma": a.gamma, "fits": a.fits}
            for a in advice.alternatives
        ],
        "fits": advice.fits,
        "observed_concurrency": advice.observed,
        "max_concurrency": advice.max_concurrency,
        "max_concurrency_without_draft": advice.max_concurrency_without_draft,
        "notes": [n for n in (advice.served.note, *notes) if n],
        "concurrency": advice.concurrency,
        "context": advice.context,
        "hardware": advice.hardware,
        "target": advice.target,
        "engine": advice.engine,
        "tensor_parallel": advice.tensor_parallel,
        **advice.served.layout(),
    }
    if measured is not None:
        out["measured"] = measured
    return out


def _alternative_line(alt: Alternative) -> str:
    if not alt.fits:
        return f"  {alt.drafter:<14} does not fit in memory beside the target here"
    if alt.break_even_alpha is None:
        return f"  {alt.drafter:<14} no acceptance would beat it"
    return f"  {alt.drafter:<14} alpha >= {alt.break_even_alpha:.2f} (at gamma {alt.gamma})"


def _gpus(advice: Advice) -> str:
    """``h100-sxm``, or ``4x h100-sxm (drafter on 1 GPU; a tree of 4 candidates per step, 8 verified)``."""
    layout = advice.served.layout()
    text = advice.hardware if advice.tensor_parallel == 1 else f"{advice.tensor_parallel}x {advice.hardware}"
    extra = []
    if layout.get("draft_tensor_parallel") not in (None, advice.tensor_parallel):
        extra.append(f"drafter on {layout['draft_tensor_parallel']} GPU")
    if "tree_topk" in layout or "verify_tokens" in layout:
        extra.append(f"a tree of {layout.get('tree_topk', 1)} candidates per step, "
                     f"{layout.get('verify_tokens', 'all')} positions verified")  # fmt: skip
    return text + (f" ({'; '.join(extra)})" if extra else "")


def _memory_note(advice: Advice) -> str | None:
    """What to say when the server was seen holding more sequences than the model's memory
    estimate lets fit: the server wins, and the estimate's figures are shown."""
    if advice.fits or not advice.observed:
        return None
    return (
        f"the server ran {advice.concurrency} sequences, more than the model's memory estimate lets fit "
        f"({advice.max_concurrency} with the drafter, {advice.max_concurrency_without_draft} without): priced as it "
        "ran (check --gpu-memory-utilization, --max-model-len and the formats if this is unexpected)"
    )


def format_advice(advice: Advice, measured: dict[str, Any] | None = None, notes: tuple[str, ...] = ()) -> str:
    """The advice as text for a terminal; ``measured``: the counters' summary
    (:func:`specmodel.vllm.counters.counters_summary`), if any."""
    lines = [
        f"Deployment: {advice.served.description}, gamma {advice.deployed_gamma}, "
        f"{advice.concurrency} concurrent sequence(s), context {advice.context}, {advice.target} on "
        f"{_gpus(advice)}, engine {advice.engine}"
    ]
    lines += [f"Note: {n}" for n in (advice.served.note, *notes, _memory_note(advice)) if n]
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
    head = f"speedup ({advice.served.drafter})"
    fitting = advice.fits or advice.observed
    title = "Predicted speedup over plain decoding" + ("" if fitting else " (were it to fit, which it does not)")
    lines += ["", title + ":", f"gamma  {head}"]
    shown = [with_interval(s, lo, hi, advice.level) if advice.speedup_low else _times(s)
             for s, lo, hi in zip(advice.speedup, advice.speedup_low or advice.speedup,
                                  advice.speedup_high or advice.speedup, strict=True)]  # fmt: skip
    lines += [f"{g:>5}  {text:>{len(head)}}" for g, text in enumerate(shown, 1)]
    recommended = {None: "none (the deployment does not fit in memory)", 0: "0 (turn speculation off)"}
    if advice.verdict == "measure":
        recommended[advice.recommended_gamma] = f"{advice.recommended_gamma} (the deployed gamma, until measured)"
    lines += [
        "",
        f"Recommended gamma for {advice.served.drafter}: "
        + recommended.get(advice.recommended_gamma, str(advice.recommended_gamma)),
        f"Verdict: {advice.verdict} - {advice.reason}",
    ]
    if advice.verdict == "measure":
        gammas = ",".join(str(g) for g in advice.compare if g)
        lines.append(
            f"How: `specmodel plan --gammas {gammas} --concurrency {advice.concurrency}` with this deployment's "
            "--target, --hardware and --speculative-config prints the vllm serve and vllm bench serve commands that "
            "measure them, and `specmodel advise --bench` reads the results"
        )
    if advice.alternatives:
        best = "turning speculation off" if advice.recommended_gamma == 0 else "that setting"
        lines += [
            "",
            f"Other drafters, to try and measure: each would beat {best} by more than {MIN_GAIN:.0%} "
            "only if it reached this acceptance on your traffic (same acceptance at every position):",
        ]
        lines += [_alternative_line(a) for a in advice.alternatives]
    return "\n".join(lines)
