"""Claims of the article's part on scheduling gamma by load: how the schedule of the article's
deployment runs under each engine, what it gains against one gamma at every load, and the
schedule of a small draft model serving a large target on four GPUs. The schedules are those
of :mod:`sitebuild.figures.schedule` (:mod:`specmodel.schedule` computes them)."""

from __future__ import annotations

import numpy as np

from sitebuild.claims.core import Said, composed, phrase
from sitebuild.claims.words import count, verdict
from sitebuild.config import SiteSettings
from sitebuild.figures import schedule as sched
from sitebuild.numbers.common import LADDER
from sitebuild.numbers.schedule import largest_load
from sitebuild.numbers.text import Number, name, percent, plain
from specmodel.formatting import EVEN_MARGIN
from specmodel.model.specs import get_architecture, get_hardware
from specmodel.schedule import OFF, GammaSchedule

#: The gain a gamma must beat to be scheduled, as the page prints it.
MARGIN = percent(EVEN_MARGIN)


def steps(schedule: GammaSchedule) -> tuple[list[tuple[str, str]], dict[str, Number]]:
    """The facets and values of a schedule's shape, as the page words it.

    ``shape``: ``falls`` (the gamma never rises with the load and takes more than one value
    before any 0), ``one`` (one gamma, then perhaps 0), ``other`` (it rises somewhere) or
    ``none`` (0 at every load). ``end``: ``on`` (speculation runs up to the largest load),
    ``off_gain`` or ``off_memory`` (0 from ``off_from`` on, because no gamma gains more than
    3% there or because the drafter no longer fits in memory), ``everywhere`` (never on). Both
    are ``nothing`` where not one sequence fits in memory (no schedule).
    Values: ``off_from``, the largest load (``loads``) and the gain a gamma must beat (``margin``)."""
    ranges = schedule.ranges
    if not ranges:
        return [("shape", "nothing"), ("end", "nothing")], {"loads": largest_load(schedule), "margin": MARGIN}
    on = [r for r in ranges if r.gamma != OFF]
    values = [r.gamma for r in ranges]
    if not on:
        shape, end = "none", "everywhere"
    else:
        rises = any(b > a for a, b in zip(values, values[1:]))
        shape = "other" if rises else "one" if len({r.gamma for r in on}) == 1 else "falls"
        last = ranges[-1]
        fits = bool(schedule.fits[np.searchsorted(schedule.batch_sizes, last.low)])
        end = "on" if last.gamma != OFF else "off_gain" if fits else "off_memory"
    out = {"off_from": plain(ranges[-1].low, 0), "loads": largest_load(schedule), "margin": MARGIN}
    return [("shape", shape), ("end", end)], out


def _article(settings: SiteSettings, engine: str, claim_name: str) -> Said:
    """The article's deployment's schedule under ``engine``, with the drafter's name."""
    facets, values = steps(sched.schedules(settings)[("article", engine)].schedule)
    values["draft"] = name(get_architecture(settings.deployment.draft).name)
    return composed(claim_name, facets, values)


def schedule_ideal(settings: SiteSettings) -> Said:
    """The schedule of the article's deployment under the ideal roofline."""
    return _article(settings, "ideal", "schedule_ideal")


def schedule_vllm(settings: SiteSettings) -> Said:
    """The schedule of the article's deployment under the vLLM profile."""
    return _article(settings, "vllm", "schedule_vllm")


def schedule_fixed(settings: SiteSettings) -> Said:
    """The schedule against FIXED_GAMMA at every load, under the ideal roofline: its largest
    gain where both speculate (``gain_share``), and both at a reference load
    (64 sequences, or the largest rung of the ladder that plain decoding holds, ``ref``): the
    fixed gamma's verdict there (``unfit`` where the drafter does not fit) and whether the
    schedule speculates there. Every facet is ``nothing`` where not one sequence fits in memory."""
    p = sched.schedules(settings)[("article", "ideal")]
    s = p.schedule
    if not s.ranges:
        return composed("schedule_fixed", [(f, "nothing") for f in ("fixed_ref", "schedule_ref", "gain")], {})
    rungs = [int(b) for b in LADDER if b <= s.batch_sizes[-1]]
    ref = 64 if 64 in rungs else rungs[-1]
    i = int(np.searchsorted(s.batch_sizes, ref))
    ran = np.where(s.gamma == OFF, 1.0, s.speedup)
    ratio = np.where(s.fits, ran / p.fixed_speedup, 0.0)
    best = int(np.argmax(ratio))
    g = int(s.gamma[i])
    fixed = float(p.fixed_speedup[i])
    values: dict[str, Number] = {
        "fixed": plain(sched.FIXED_GAMMA, 0),
        "ref": plain(ref, 0),
        "gamma_ref": plain(g, 0),
        "gain_share": percent(ratio[best] - 1.0),
        "margin": MARGIN,
    }
    facets = [
        ("fixed_ref", verdict(fixed) if s.fits[i] else "unfit"),
        ("schedule_ref", "off" if g == OFF else "on"),
        ("gain", "none" if verdict(ratio[best]) != "faster" else "some"),
    ]
    return composed("schedule_fixed", facets, values)


def schedule_big(settings: SiteSettings) -> Said:
    """The schedule of BIG_DRAFT serving the large target on its GPUs under the vLLM profile, and
    whether it starts at a higher gamma than the article's deployment's under the same profile
    (facet ``against``: ``higher``, ``same``, ``lower``; ``alone`` where the article's deployment
    holds no sequence, ``nothing`` where this pair holds none)."""
    every = sched.schedules(settings)
    big, article = (every[k].schedule for k in (("big", "vllm"), ("article", "vllm")))
    facets, values = steps(big)
    first = [int(x.gamma[0]) if x.ranges else None for x in (big, article)]
    values.update(
        draft=name(get_architecture(sched.BIG_DRAFT).name),
        target=name(get_architecture(sched.multi.BIG_TARGET).name),
        hardware=name(get_hardware(sched.multi.BIG_HARDWARE).name),
        gpus=phrase(count(sched.multi.BIG_TP)),
        workload=name(sched.multi.WORKLOAD),
    )
    if first[0] is None:
        against = "nothing"
    elif first[1] is None:
        against = "alone"
    else:
        against = "higher" if first[0] > first[1] else "same" if first[0] == first[1] else "lower"
    return composed("schedule_big", [*facets, ("against", against)], values)


CLAIMS = (schedule_ideal, schedule_vllm, schedule_fixed, schedule_big)
