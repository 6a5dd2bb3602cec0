"""Claims of the opening and sections 1-3: the arithmetic bill, where the ladder turns, the
deployment, the independence assumption, and the memory-bound decode step."""

from __future__ import annotations

import numpy as np

from sitebuild.claims.core import Said, claim, phrase
from sitebuild.claims.words import count, first_rung, largest_extra, not_faster, rung
from sitebuild.config import SiteSettings
from sitebuild.numbers.common import LADDER, one
from sitebuild.numbers.text import at, gib, name, percent, plain, speedup_at, times
from specmodel.model.roofline import ridge_intensity
from specmodel.model.specs import get_architecture, get_hardware

THESIS_BILL = {
    "more": "Per output token the GPU does {arith_b1} the arithmetic of plain decoding in the scenario "
    "simulated here, and {arith_g10} with ten guesses per iteration.",
}


def thesis_bill(settings: SiteSettings) -> Said:
    """Speculation costs more arithmetic per output token than plain decoding."""
    b1, g10 = one(settings).arithmetic_ratio, one(settings, gamma=10).arithmetic_ratio
    outcome = "more" if min(b1, g10) > 1 else "not_more"
    return claim("thesis_bill", outcome, {"arith_b1": times(b1), "arith_g10": times(g10)}, THESIS_BILL)


THESIS_TURN = {
    "stops:draft_kv:ngram_every": "In the model, {draft} gains {speedup_b1} at one sequence and stops "
    "gaining from {stop} sequences, as reading its own cache grows with every sequence; n-gram lookup, which "
    "keeps no cache, gains at every rung up to 1,024.",
    "stops:draft_kv:ngram_stops": "In the model, {draft} gains {speedup_b1} at one sequence and stops "
    "gaining from {stop} sequences, because reading its own cache costs more with every sequence it serves; "
    "n-gram lookup, which keeps no cache, gains until the batch itself takes the spare arithmetic, "
    "from {ngram_stop} sequences on.",
    "stops:target_arithmetic:ngram_stops": "In the model, {draft} gains {speedup_b1} at one sequence "
    "and stops gaining from {stop} sequences, once the batch has taken the spare arithmetic; n-gram lookup, "
    "which costs nothing to draft, stops from {ngram_stop} sequences.",
    "stops:draft_kv:ngram_stops_other": "In the model, {draft} gains {speedup_b1} at one sequence and stops "
    "gaining from {stop} sequences, because reading its own cache costs more with every sequence it serves; "
    "n-gram lookup, which keeps no cache, stops from {ngram_stop} sequences.",
    "never:ngram_every": "In the model, {draft} gains at every rung up to 1,024 sequences, from "
    "{speedup_b1} at one sequence to {speedup_top} at the top, and so does n-gram lookup.",
    "none:ngram_every": "In the model, {draft} does not gain even at one sequence ({speedup_b1}); "
    "n-gram lookup, which costs nothing to draft, gains at every rung.",
    "none:ngram_stops": "In the model, {draft} does not gain even at one sequence ({speedup_b1}), and "
    "n-gram lookup, which costs nothing to draft, stops gaining from {ngram_stop} sequences.",
}


def thesis_turn(settings: SiteSettings) -> Said:
    """Where the deployment's draft model stops gaining on the ladder, why (the part of the
    speculative step that grew most over the plain step there), and whether n-gram lookup
    gains at every rung."""
    ev = one(settings, concurrency=LADDER)
    ngram = one(settings, concurrency=LADDER, drafter="ngram").speedup
    stop = first_rung(LADDER, not_faster(ev.speedup))
    ngram_stop = first_rung(LADDER, not_faster(ngram))
    if stop == 1:
        head = "none"
    elif stop is None:
        head = "never"
    else:
        i = int(np.flatnonzero(stop == LADDER)[0])
        head = "stops:" + largest_extra(ev.spec_time_parts[i], ev.base_time_parts[i])
    tail = "ngram_every" if ngram_stop is None else "ngram_stops"
    if ngram_stop is not None and ngram_stop > 1:
        g = one(settings, concurrency=ngram_stop, drafter="ngram")
        if largest_extra(g.spec_time_parts, g.base_time_parts) != "target_arithmetic":
            tail = "ngram_stops_other"
    values = {
        "draft": name(get_architecture(settings.deployment.draft).name),
        "speedup_b1": speedup_at(ev.speedup[0]),
        "speedup_top": speedup_at(ev.speedup[-1], concurrency=int(LADDER[-1])),
        "stop": rung(stop),
        "ngram_stop": rung(ngram_stop),
    }
    return claim("thesis_turn", f"{head}:{tail}", values, THESIS_TURN)


DEPLOYMENT = {
    "one": "The system simulated is {target} in bf16 on one {hardware}.",
    "several": "The system simulated is {target} in bf16, split by tensor parallelism over {gpus} "
    "{hardware} GPUs, the fewest that hold it with its draft.",
    "unfit": "The system simulated is {target} in bf16 on {gpus} {hardware}, where it does not fit: at one "
    "sequence it needs {needed} per GPU against {usable} usable. Every figure below describes that server as if "
    "the memory were there; the sections on memory say how far off it is.",
}


def deployment(settings: SiteSettings) -> Said:
    """The deployment the article simulates, on how many GPUs, and whether it fits there."""
    dep = settings.deployment
    gpus = dep.tensor_parallel or 1
    d = one(settings)
    outcome = "unfit" if not bool(d.fits) else "one" if gpus == 1 else "several"
    values = {
        "target": name(get_architecture(dep.target).name),
        "hardware": name(get_hardware(dep.hardware).name),
        "gpus": name(count(gpus)),
        "needed": gib(d.memory_required_bytes),
        "usable": gib(d.usable_memory_bytes),
    }
    return claim("deployment", outcome, values, DEPLOYMENT)


SAME_PROFILE = {
    "flatters": "Assume instead that every guess passes as often as the first, as the closed form does, and "
    "the same scenario gives {speedup_same} rather than {speedup_b1}, with {mal_same} tokens per iteration "
    "rather than {mal_b1}: independence flatters the yield by {flattering}.",
    "equal": "With this ratio at {ratio} the falling profile is the closed form's own: every guess passes as "
    "often as the first, and the scenario gives {speedup_b1} with {mal_b1} tokens per iteration either way.",
}


def same_profile(settings: SiteSettings) -> Said:
    """The ``same`` (i.i.d.) profile against the ``falling`` one at the defaults."""
    d, same = one(settings), one(settings, acceptance="same")
    values = {
        "speedup_same": speedup_at(same.speedup, acceptance="same"),
        "speedup_b1": speedup_at(d.speedup),
        "mal_same": at(plain(same.mean_acceptance_length), "mean_acceptance_length", acceptance="same"),
        "mal_b1": at(plain(d.mean_acceptance_length), "mean_acceptance_length"),
        "flattering": percent(same.mean_acceptance_length / d.mean_acceptance_length - 1),
        "ratio": plain(settings.constants.FALLING_RATIO),
    }
    outcome = "flatters" if values["mal_same"].text != values["mal_b1"].text else "equal"
    return claim("same_profile", outcome, values, SAME_PROFILE)


MEMORY_BOUND = {
    "memory": "The {hardware} needs about {ridge} FLOP per byte ({peak} TFLOP/s of dense BF16 over {hbm} TB/s) "
    "before arithmetic rather than memory sets the pace, so a decode step for one sequence is memory-bound, "
    "about {factor} times short of that.",
    "compute": "The {hardware} needs only about {ridge} FLOP per byte ({peak} TFLOP/s of dense BF16 over {hbm} "
    "TB/s) before arithmetic sets the pace, so even a decode step for one sequence is compute-bound.",
}


def memory_bound(settings: SiteSettings) -> Said:
    """A one-sequence decode step's arithmetic intensity against the card's ridge point."""
    hw = get_hardware(settings.deployment.hardware)
    ridge = ridge_intensity(hw.peak_flops.value, hw.memory_bandwidth.value)
    intensity = float(one(settings).plain_intensity)
    values = {
        "hardware": name(hw.name),
        "ridge": plain(ridge, 0),
        "peak": plain(hw.peak_flops.value / 1e12, 1),
        "hbm": plain(hw.memory_bandwidth.value / 1e12),
        "factor": plain(ridge / intensity, 0),
    }
    return claim("memory_bound", "memory" if ridge > intensity else "compute", values, MEMORY_BOUND)


BILL_CONSTANT = {
    "flat": "Concurrency hardly moves this factor ({spread} from one sequence to 1,024): the drafter and the "
    "acceptance set it, and the batch decides only whether the arithmetic it adds was idle.",
    "varies": "Concurrency moves this factor only from {low} to {high} across the ladder: the drafter and the "
    "acceptance set it, and the batch decides mainly whether the arithmetic it adds was idle.",
}


def bill_constant(settings: SiteSettings) -> Said:
    """The arithmetic factor barely changes with concurrency."""
    ratio = np.asarray(one(settings, concurrency=LADDER).arithmetic_ratio)
    low, high = times(ratio.min()), times(ratio.max())
    spread = f"{low.text} at every rung" if low.text == high.text else f"{low.text} to {high.text}"
    outcome = "flat" if float(ratio.max() / ratio.min()) - 1 < 0.02 else "varies"
    return claim("bill_constant", outcome, {"spread": phrase(spread), "low": low, "high": high}, BILL_CONSTANT)


THESIS_IDLE = {
    "plenty": "At one sequence a decode step has plenty: the tensor cores sit idle for {idle_b1} of even the "
    "verify pass, waiting on memory.",
    "some": "At one sequence the verify pass leaves the tensor cores idle {idle_b1} of the time, less than a "
    "decode step usually does.",
    "little": "Here even at one sequence the verify pass keeps the tensor cores busy {busy_b1} of the time, so "
    "there is little to spare.",
}


def thesis_idle(settings: SiteSettings) -> Said:
    """How much of the verify pass's time the tensor cores sit idle at one sequence."""
    idle = float(one(settings).verify_idle)
    level = "plenty" if idle > 0.8 else "some" if idle > 0.2 else "little"
    values = {"idle_b1": at(percent(idle), "verify_idle"), "busy_b1": percent(1 - idle)}
    return claim("thesis_idle", level, values, THESIS_IDLE)


VERIFY_HIDDEN = {
    "hidden": "Only the arithmetic grows, from {plain_comp} ms to {verify_comp} ms, and it stays hidden behind "
    "{verify_mem} ms of memory time.",
    "exposed": "Only the arithmetic grows, from {plain_comp} ms to {verify_comp} ms, which here exceeds the "
    "{verify_mem} ms of memory time: the extra positions are not free.",
}


def verify_hidden(settings: SiteSettings) -> Said:
    """Whether the verify pass's arithmetic at one sequence hides behind its memory time."""
    d = one(settings)
    values = {
        "plain_comp": plain(d.plain_compute_time * 1e3, 3),
        "verify_comp": plain(d.verify_compute_time * 1e3),
        "verify_mem": plain(d.verify_memory_time * 1e3),
    }
    outcome = "hidden" if float(d.verify_compute_time) < float(d.verify_memory_time) else "exposed"
    return claim("verify_hidden", outcome, values, VERIFY_HIDDEN)


CLAIMS = (thesis_bill, thesis_idle, thesis_turn, deployment, same_profile, memory_bound, verify_hidden, bill_constant)
