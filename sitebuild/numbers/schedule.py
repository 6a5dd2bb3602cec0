"""The article's part on scheduling gamma by load: the candidates, the gain a gamma must beat,
and the loads the article's schedule covers (the schedules of :mod:`sitebuild.figures.schedule`;
what they say is a claim, :mod:`sitebuild.claims.schedule`)."""

from __future__ import annotations

from sitebuild.config import SiteSettings
from sitebuild.figures import schedule as sched
from sitebuild.numbers.text import Number, name, percent, plain
from specmodel.formatting import EVEN_MARGIN
from specmodel.model.scenario import GAMMAS
from specmodel.schedule import GammaSchedule


def largest_load(schedule: GammaSchedule) -> Number:
    """The largest load a schedule covers (``none`` where not one sequence fits in memory)."""
    return plain(int(schedule.batch_sizes[-1]), 0) if schedule.batch_sizes.size else name("none")


def numbers(settings: SiteSettings) -> dict[str, Number]:
    """The smallest and largest candidate gamma, the gain a gamma must beat, and the largest load
    of the article's schedule."""
    every = sched.schedules(settings)
    return {
        "schedule_gamma_low": plain(min(GAMMAS), 0),
        "schedule_gamma_high": plain(max(GAMMAS), 0),
        "schedule_margin": percent(EVEN_MARGIN),
        "schedule_loads": largest_load(every[("article", "ideal")].schedule),
    }
