"""Claims of section 4, up the ladder: what the time of a step goes to at one sequence, at
tens of sequences and near a thousand, and how the prompt's length moves it."""

from __future__ import annotations

import numpy as np

from sitebuild.claims.core import Said, claim, composed, phrase
from sitebuild.claims.words import (
    PART_WORDS,
    first_rung,
    largest_extra,
    largest_part,
    not_faster,
    part,
    rung,
    verdict,
)
from sitebuild.config import SiteSettings
from sitebuild.numbers.common import LADDER, one
from sitebuild.numbers.text import at, percent, plain, speedup_at, times

#: The verdict words a claim inserts beside a speedup.
GAIN_WORDS = {"faster": "a gain", "even": "about even, within 3%", "slower": "a loss"}

RUNG_B1 = {
    "target_weights:faster": "the plain step is {weights_words} reading the target's weights ({weights_share} "
    "of its time). Speculation shares that read among {mal_b1} tokens per iteration on average and spends "
    "{draft_share_b1} of the wall clock drafting: {spec_tps_b1} tokens/s against {base_tps_b1}, {speedup_b1}.",
    "target_weights:even": "the plain step is {weights_words} reading the target's weights ({weights_share} of "
    "its time), yet drafting ({draft_share_b1} of the wall clock) eats what speculation saves: {spec_tps_b1} "
    "tokens/s against {base_tps_b1}, {speedup_b1}, about even.",
    "target_weights:slower": "the plain step is {weights_words} reading the target's weights ({weights_share} "
    "of its time), yet drafting ({draft_share_b1} of the wall clock) costs more than speculation saves: "
    "{spec_tps_b1} tokens/s against {base_tps_b1}, {speedup_b1}, a loss.",
    "other:faster": "the largest part of the plain step is {largest_words} ({largest_share} of its time), ahead "
    "of reading the target's weights ({weights_share}). Speculation shares each step among {mal_b1} tokens per "
    "iteration on average and spends {draft_share_b1} of the wall clock drafting: {spec_tps_b1} tokens/s against "
    "{base_tps_b1}, {speedup_b1}.",
    "other:even": "the largest part of the plain step is {largest_words} ({largest_share} of its time), ahead of "
    "reading the target's weights ({weights_share}), and drafting ({draft_share_b1} of the wall clock) eats what "
    "speculation saves: {spec_tps_b1} tokens/s against {base_tps_b1}, {speedup_b1}, about even.",
    "other:slower": "the largest part of the plain step is {largest_words} ({largest_share} of its time), ahead "
    "of reading the target's weights ({weights_share}), and drafting ({draft_share_b1} of the wall clock) costs "
    "more than speculation saves: {spec_tps_b1} tokens/s against {base_tps_b1}, {speedup_b1}, a loss.",
}


def rung_b1(settings: SiteSettings) -> Said:
    """At one sequence: the largest part of the plain step, and the verdict."""
    d = one(settings)
    base = d.base_time_parts
    share = part(base, "target_weights") / float(np.sum(base))
    values = {
        "weights_words": phrase("nearly all" if share > 0.9 else "mostly" if share > 0.5 else "partly"),
        "weights_share": percent(share),
        "mal_b1": at(plain(d.mean_acceptance_length), "mean_acceptance_length"),
        "draft_share_b1": at(percent(d.draft_share), "draft_share"),
        "spec_tps_b1": at(plain(d.spec_tokens_per_s, 0), "spec_tokens_per_s"),
        "base_tps_b1": at(plain(d.base_tokens_per_s, 0), "base_tokens_per_s"),
        "speedup_b1": speedup_at(d.speedup),
    }
    largest = largest_part(base)
    if largest != "target_weights":  # another part leads (all-reduces over many GPUs, the engine's fixed costs)
        values["largest_words"] = phrase(PART_WORDS[largest])
        values["largest_share"] = percent(part(base, largest) / float(np.sum(base)))
    outcome = f"{'target_weights' if largest == 'target_weights' else 'other'}:{verdict(d.speedup)}"
    return claim("rung_b1", outcome, values, RUNG_B1)


RUNG_B64_VERDICT = {
    "slower": "the draft model loses: {speedup_b64}, {slower_b64} slower than plain decoding.",
    "even": "the draft model no longer gains: {speedup_b64}, within 3% of plain decoding.",
    "faster": "the draft model still gains: {speedup_b64}.",
}
RUNG_B64_REASON = {
    "draft_kv": "Its verify pass is {verify_state} ({idle_b64} idle), lasts {verify_vs_plain} as long as a plain "
    "step and still yields {mal_b64} tokens. What grew is the drafting, {draft_share_b64} of the wall clock: each "
    "of the γ draft passes re-reads the draft's cache for every sequence, which alone costs {draft_kv_share} of a "
    "plain step per token, while the weight read that speculation saves is shared by ever more sequences.",
    "target_arithmetic": "Here the verify pass has run out of idle arithmetic ({idle_b64} of it idle) and lasts "
    "{verify_vs_plain} as long as a plain step, so the extra positions it scores now cost time; drafting takes "
    "{draft_share_b64} of the wall clock.",
    "other": "The largest time speculation adds over a plain step is {largest_words}; the verify pass lasts "
    "{verify_vs_plain} as long as a plain step and drafting takes {draft_share_b64} of the wall clock.",
}


def rung_b64(settings: SiteSettings) -> Said:
    """At 64 sequences: the verdict and the part of the speculative step that grew most over
    the plain step (the draft's cache reads, or the verify pass's arithmetic)."""
    d = one(settings, concurrency=64)
    spec, base = d.spec_time_parts, d.base_time_parts
    plain_step = float(np.sum(base))
    verify_time = sum(part(spec, p) for p in ("target_weights", "target_kv", "target_arithmetic"))
    plain_target = sum(part(base, p) for p in ("target_weights", "target_kv", "target_arithmetic"))
    per_pass = verify_time * float(d.mean_acceptance_length) / plain_target
    largest = largest_extra(spec, base)
    values = {
        "speedup_b64": speedup_at(d.speedup, concurrency=64),
        "slower_b64": percent(1 - float(d.speedup)),
        "idle_b64": at(percent(d.verify_idle), "verify_idle", concurrency=64),
        "verify_state": phrase("still memory-bound" if float(d.verify_idle) > 0.01 else "compute-bound"),
        "verify_vs_plain": times(per_pass),
        "mal_b64": plain(d.mean_acceptance_length),
        "draft_share_b64": at(percent(d.draft_share), "draft_share", concurrency=64),
        "draft_kv_share": percent(part(spec, "draft_kv") / plain_step),
        "largest_words": phrase(PART_WORDS[largest]),
    }
    reason = largest if largest in ("draft_kv", "target_arithmetic") else "other"
    facets = [("verdict", verdict(d.speedup), RUNG_B64_VERDICT), ("reason", reason, RUNG_B64_REASON)]
    return composed("rung_b64", facets, values)


NGRAM_LADDER = {
    "every": "N-gram lookup, with no weights and no cache to read, gains at every rung at this prompt length, "
    "between {ngram_min} and {ngram_max}.",
    "stops": "N-gram lookup, with no weights and no cache to read, gives {ngram_b64} at 64 sequences and stops "
    "gaining from {ngram_stop} sequences at this prompt length.",
}


def ngram_ladder(settings: SiteSettings) -> Said:
    """Whether n-gram lookup gains at every rung at the default prompt length."""
    s = one(settings, concurrency=LADDER, drafter="ngram").speedup
    stop = first_rung(LADDER, not_faster(s))
    values = {
        "ngram_min": times(np.min(s)),
        "ngram_max": times(np.max(s)),
        "ngram_b64": speedup_at(s[6], concurrency=64, drafter="ngram"),
        "ngram_stop": rung(stop),
    }
    return claim("ngram_ladder", "every" if stop is None else "stops", values, NGRAM_LADDER)


RUNG_B1024_VERDICT = {
    "slower": "the draft model gives {speedup_b1024}, a loss,",
    "even": "the draft model gives {speedup_b1024}, about even,",
    "faster": "the draft model still gives {speedup_b1024},",
}
RUNG_B1024_IDLE = {
    "scarce": "and the verify pass is idle only {idle_b1024} of the time: the batch now uses nearly all of the "
    "card's arithmetic.",
    "gone": "and the verify pass has no idle arithmetic left: its positions' arithmetic takes at least as long as "
    "its memory traffic, so every extra position now costs time.",
    "left": "yet the verify pass is still idle {idle_b1024} of the time: at this prompt length the batch never "
    "uses up the arithmetic on the ladder.",
}
RUNG_B1024_NGRAM = {
    "faster": "N-gram lookup still gains {ngram_b1024} here, but once no arithmetic is left even a free drafter "
    "stops paying.",
    "even": "N-gram lookup, which costs nothing to run, is about even here ({ngram_b1024}): the arithmetic its "
    "extra positions need is no longer free.",
    "slower": "Even n-gram lookup, which costs nothing to run, loses here ({ngram_b1024}): the arithmetic its "
    "extra positions need is no longer free.",
}


def rung_b1024(settings: SiteSettings) -> Said:
    """At 1,024 sequences: how much idle arithmetic the verify pass has left, and what that
    does to the draft model and to n-gram lookup."""
    d = one(settings, concurrency=1024)
    ngram = one(settings, concurrency=1024, drafter="ngram").speedup
    idle = float(d.verify_idle)
    level = "gone" if idle <= 0.01 else "scarce" if idle < 0.15 else "left"
    values = {
        "speedup_b1024": speedup_at(d.speedup, concurrency=1024),
        "idle_b1024": at(percent(idle), "verify_idle", concurrency=1024),
        "ngram_b1024": speedup_at(ngram, concurrency=1024, drafter="ngram"),
    }
    facets = [("verdict", verdict(d.speedup), RUNG_B1024_VERDICT), ("idle", level, RUNG_B1024_IDLE),
              ("n-gram", verdict(ngram), RUNG_B1024_NGRAM)]  # fmt: skip
    return composed("rung_b1024", facets, values)


SHORT_CONTEXT = {
    "bound:slower": "With 256-token prompts the verify pass turns compute-bound from {bound_from} sequences, "
    "and n-gram lookup, which reads no cache at all, stops gaining from {ngram_stop} sequences and gives "
    "{ngram_b1024_t256} at 1,024.",
    "bound:even": "With 256-token prompts the verify pass turns compute-bound from {bound_from} sequences, and "
    "n-gram lookup, which reads no cache at all, stops gaining from {ngram_stop} sequences ({ngram_b1024_t256} at "
    "1,024).",
    "bound:faster": "With 256-token prompts the verify pass turns compute-bound from {bound_from} sequences; "
    "n-gram lookup, which reads no cache at all, still gives {ngram_b1024_t256} at 1,024.",
    "never:faster": "Even with 256-token prompts the verify pass keeps some idle arithmetic up to 1,024 "
    "sequences, and n-gram lookup gives {ngram_b1024_t256} there.",
    "never:even": "Even with 256-token prompts the verify pass keeps some idle arithmetic up to 1,024 sequences; "
    "n-gram lookup, which reads no cache at all, stops gaining from {ngram_stop} sequences ({ngram_b1024_t256} at "
    "1,024).",
    "never:slower": "Even with 256-token prompts the verify pass keeps some idle arithmetic up to 1,024 "
    "sequences; n-gram lookup, which reads no cache at all, stops gaining from {ngram_stop} sequences and gives "
    "{ngram_b1024_t256} at 1,024.",
    "bound:none": "With 256-token prompts the verify pass turns compute-bound from {bound_from} sequences, and "
    "n-gram lookup gains at no rung ({ngram_b1024_t256} at 1,024).",
    "never:none": "Even with 256-token prompts the verify pass keeps some idle arithmetic up to 1,024 sequences, "
    "yet n-gram lookup gains at no rung ({ngram_b1024_t256} at 1,024).",
}


def short_context(settings: SiteSettings) -> Said:
    """With 256-token prompts: where the verify pass turns compute-bound, and n-gram lookup there."""
    ev = one(settings, concurrency=LADDER, context=256, drafter="ngram")
    bound = first_rung(LADDER, np.asarray(ev.verify_idle) <= 0.01)
    stop = first_rung(LADDER, not_faster(ev.speedup))
    values = {
        "bound_from": rung(bound),
        "ngram_stop": rung(stop),
        "ngram_b1024_t256": speedup_at(ev.speedup[-1], concurrency=1024, context=256, drafter="ngram"),
    }
    gains = "none" if stop == LADDER[0] else verdict(ev.speedup[-1])  # no rung gains: nothing stops
    outcome = f"{'never' if bound is None else 'bound'}:{gains}"
    return claim("short_context", outcome, values, SHORT_CONTEXT)


LONG_CONTEXT_VERDICT = {
    "slower": "at 8,192 tokens and 64 sequences drafting takes {draft_share} of the wall clock and the draft model "
    "gives {speedup}, a loss;",
    "even": "at 8,192 tokens and 64 sequences drafting takes {draft_share} of the wall clock and the draft model "
    "gives {speedup}, about even;",
    "faster": "at 8,192 tokens and 64 sequences drafting takes {draft_share} of the wall clock and the draft model "
    "still gives {speedup};",
}
LONG_CONTEXT_STOP = {
    "earlier": "it stops gaining from {stop_long} sequences, against {stop_default} at 2,048 tokens.",
    "same": "it stops gaining from {stop_long} sequences, as at 2,048 tokens.",
    "later": "it stops gaining from {stop_long} sequences, later than the {stop_default} of 2,048 tokens.",
    "never_both": "at neither length does it stop gaining on the ladder.",
    "never_long": "at this length it gains at every rung, where at 2,048 tokens it stops from {stop_default}.",
    "none_both": "at neither length does it gain even at one sequence.",
}


def long_context(settings: SiteSettings) -> Said:
    """At 8,192-token prompts: the draft's share, the verdict at 64 sequences, and where the
    draft model stops gaining against the default prompt length."""
    d = one(settings, concurrency=64, context=8192)
    stop_long = first_rung(LADDER, not_faster(one(settings, concurrency=LADDER, context=8192).speedup))
    stop_default = first_rung(LADDER, not_faster(one(settings, concurrency=LADDER).speedup))
    if stop_long is None:
        order = "never_both" if stop_default is None else "never_long"
    elif stop_long == 1 and stop_default == 1:
        order = "none_both"
    else:
        far = 10**9
        a, b = stop_long, stop_default or far
        order = "earlier" if a < b else "same" if a == b else "later"
    values = {
        "draft_share": at(percent(d.draft_share), "draft_share", concurrency=64, context=8192),
        "speedup": speedup_at(d.speedup, concurrency=64, context=8192),
        "stop_long": rung(stop_long),
        "stop_default": rung(stop_default),
    }
    facets = [("verdict", verdict(d.speedup), LONG_CONTEXT_VERDICT), ("stop", order, LONG_CONTEXT_STOP)]
    return composed("long_context", facets, values)


CLAIMS = (rung_b1, rung_b64, ngram_ladder, rung_b1024, short_context, long_context)
