"""Claims of the opening and sections 1 and 3: the arithmetic bill, where the ladder turns, the
deployment, the memory-bound decode step, and the independence assumption."""

from __future__ import annotations

import numpy as np

from sitebuild.claims.core import Said, claim, composed
from sitebuild.claims.words import (
    FITTED_ENGINE,
    count,
    first_rung,
    fitting,
    largest_extra,
    not_faster,
    rung,
    settings_gamma,
)
from sitebuild.config import SiteSettings
from sitebuild.numbers.common import LADDER, one
from sitebuild.numbers.text import at, gib, name, percent, plain, speedup_at, times
from specmodel.model.evaluation import Evaluation
from specmodel.model.roofline import ridge_intensity
from specmodel.model.scenario import GAMMAS
from specmodel.model.specs import get_architecture, get_hardware


def thesis_bill(settings: SiteSettings) -> Said:
    """Speculation costs more arithmetic per output token than plain decoding."""
    b1, g10 = one(settings).arithmetic_ratio, one(settings, gamma=10).arithmetic_ratio
    return claim("thesis_bill", "more" if min(b1, g10) > 1 else "not_more", {})


def _tuned_stop(settings: SiteSettings, fits: np.ndarray, **scenario: object) -> int | None:
    """The first rung that fits where no γ of :data:`GAMMAS` gains (None: some γ gains on every
    rung that fits)."""
    curves = one(settings, concurrency=LADDER[:, None], gamma=np.array(GAMMAS)[None, :], **scenario).speedup
    return first_rung(LADDER[fits], not_faster(np.max(curves, axis=1)[fits]))


def _other_pair(settings: SiteSettings) -> float:
    """The speedup at 64 sequences of the small-draft, large-target pair of the page "Beyond one
    GPU" (a 1B draft for a 70B target on four H100s, fitted acceptance, the fitted profile)."""
    from sitebuild.figures import beyond as multi

    draft = multi.workload_series(settings)["llama-3.2-1b"]
    return float(multi.evaluate_series(settings, draft, concurrency=64, tensor_parallel=multi.BIG_TP).speedup)


def _turn(ev: Evaluation, stop: int | None) -> str:
    """Where a ladder at one γ turns, and why: ``none`` (no gain at one sequence), ``never``,
    or ``stops:<part>``, the part of the step that grew most over the plain step there."""
    if stop == 1:
        return "none"
    if stop is None:
        return "never"
    i = int(np.flatnonzero(stop == LADDER)[0])
    return "stops:" + largest_extra(ev.spec_time_parts[i], ev.base_time_parts[i])


def thesis_turn(settings: SiteSettings) -> Said:
    """Where the deployment's draft model stops gaining on the ladder at the article's γ, why,
    whether a γ tuned to each load still gains where the deployment fits, the same under the
    profile fitted to vLLM, whether a small draft for a far larger target does better at 64
    sequences, and whether n-gram lookup gains on every rung that fits."""
    ev = one(settings, concurrency=LADDER)
    fits = fitting(ev.fits)
    fitted = one(settings, concurrency=LADDER, engine=FITTED_ENGINE)
    stop, fitted_stop = first_rung(LADDER, not_faster(ev.speedup)), first_rung(LADDER, not_faster(fitted.speedup))
    tuned, fitted_tuned = _tuned_stop(settings, fits), _tuned_stop(settings, fits, engine=FITTED_ENGINE)
    ngram_ev = one(settings, concurrency=LADDER, drafter="ngram")
    ngram_fits = fitting(ngram_ev.fits)
    ngram_stop = first_rung(LADDER[ngram_fits], not_faster(np.asarray(ngram_ev.speedup)[ngram_fits]))
    d64 = one(settings, concurrency=64)
    values = {
        "draft": name(get_architecture(settings.deployment.draft).name),
        "gamma": plain(settings_gamma(settings), 0),
        "stop": rung(stop),
        "fitted_stop": rung(fitted_stop),
        "tuned_stop": rung(tuned),
        "fitted_tuned_stop": rung(fitted_tuned),
        "kv_share": percent(float(d64.draft_kv_bytes_per_token / d64.target_kv_bytes_per_token)),
        "ngram_stop": rung(ngram_stop),
    }
    facets = [
        ("outcome", _turn(ev, stop)),
        ("tuned", "always" if tuned is None else "none" if tuned == 1 else "stops"),
        ("room", "fits" if np.asarray(ev.fits).any() else "unfit"),
        ("fitted", _turn(fitted, fitted_stop).split(":")[0]),
        ("fitted_tuned", "always" if fitted_tuned is None else "none" if fitted_tuned == 1 else "stops"),
        ("pair", "better" if _other_pair(settings) > float(d64.speedup) else "worse"),
        ("ngram", "every" if ngram_stop is None else "stops"),
    ]
    return composed("thesis_turn", facets, values)


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
        "flattering": percent(same.mean_acceptance_length / d.mean_acceptance_length - 1),
        "ratio": plain(settings.constants.FALLING_RATIO),
    }
    lengths = plain(same.mean_acceptance_length).text, plain(d.mean_acceptance_length).text
    return claim("same_profile", "flatters" if lengths[0] != lengths[1] else "equal", values)


def memory_bound(settings: SiteSettings) -> Said:
    """A one-sequence decode step's arithmetic intensity against the card's ridge point."""
    hw = get_hardware(settings.deployment.hardware)
    ridge = ridge_intensity(hw.peak_flops.value, hw.memory_bandwidth.value)
    intensity = float(one(settings).plain_intensity)
    values = {"hardware": name(hw.name), "ridge": plain(ridge, 0), "factor": plain(ridge / intensity, 0)}
    return claim("memory_bound", "memory" if ridge > intensity else "compute", values)


def bill_constant(settings: SiteSettings) -> Said:
    """The arithmetic factor barely changes with concurrency."""
    ratio = np.asarray(one(settings, concurrency=LADDER).arithmetic_ratio)
    outcome = "flat" if float(ratio.max() / ratio.min()) - 1 < 0.02 else "varies"
    return claim("bill_constant", outcome, {"low": times(ratio.min()), "high": times(ratio.max())})


def thesis_idle(settings: SiteSettings) -> Said:
    """How much of the verify pass's time the tensor cores sit idle at one sequence."""
    idle = float(one(settings).verify_idle)
    level = "plenty" if idle > 0.8 else "some" if idle > 0.2 else "little"
    values = {"idle_b1": at(percent(idle), "verify_idle"), "busy_b1": percent(1 - idle)}
    return claim("thesis_idle", level, values)


def verify_hidden(settings: SiteSettings) -> Said:
    """Whether the verify pass's arithmetic at one sequence hides behind its memory time."""
    d = one(settings)
    outcome = "hidden" if float(d.verify_compute_time) < float(d.verify_memory_time) else "exposed"
    return claim("verify_hidden", outcome, {})


CLAIMS = (thesis_bill, thesis_idle, thesis_turn, deployment, same_profile, memory_bound, verify_hidden, bill_constant)
