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


def thesis_bill(settings: SiteSettings) -> Said:
    """Speculation costs more arithmetic per output token than plain decoding."""
    b1, g10 = one(settings).arithmetic_ratio, one(settings, gamma=10).arithmetic_ratio
    outcome = "more" if min(b1, g10) > 1 else "not_more"
    return claim("thesis_bill", outcome, {"arith_b1": times(b1), "arith_g10": times(g10)})


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
    return claim("thesis_turn", f"{head}:{tail}", values)


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
    return claim("deployment", outcome, values)


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
    return claim("same_profile", outcome, values)


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
    return claim("memory_bound", "memory" if ridge > intensity else "compute", values)


def bill_constant(settings: SiteSettings) -> Said:
    """The arithmetic factor barely changes with concurrency."""
    ratio = np.asarray(one(settings, concurrency=LADDER).arithmetic_ratio)
    low, high = times(ratio.min()), times(ratio.max())
    spread = f"{low.text} at every rung" if low.text == high.text else f"{low.text} to {high.text}"
    outcome = "flat" if float(ratio.max() / ratio.min()) - 1 < 0.02 else "varies"
    return claim("bill_constant", outcome, {"spread": phrase(spread), "low": low, "high": high})


def thesis_idle(settings: SiteSettings) -> Said:
    """How much of the verify pass's time the tensor cores sit idle at one sequence."""
    idle = float(one(settings).verify_idle)
    level = "plenty" if idle > 0.8 else "some" if idle > 0.2 else "little"
    values = {"idle_b1": at(percent(idle), "verify_idle"), "busy_b1": percent(1 - idle)}
    return claim("thesis_idle", level, values)


def verify_hidden(settings: SiteSettings) -> Said:
    """Whether the verify pass's arithmetic at one sequence hides behind its memory time."""
    d = one(settings)
    values = {
        "plain_comp": plain(d.plain_compute_time * 1e3, 3),
        "verify_comp": plain(d.verify_compute_time * 1e3),
        "verify_mem": plain(d.verify_memory_time * 1e3),
    }
    outcome = "hidden" if float(d.verify_compute_time) < float(d.verify_memory_time) else "exposed"
    return claim("verify_hidden", outcome, values)


CLAIMS = (thesis_bill, thesis_idle, thesis_turn, deployment, same_profile, memory_bound, verify_hidden, bill_constant)
