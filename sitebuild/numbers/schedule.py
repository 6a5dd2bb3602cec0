"""The article's part on scheduling gamma by load: the gain a gamma must beat (the schedules of
:mod:`sitebuild.figures.schedule`; what they say is a claim, :mod:`sitebuild.claims.schedule`)."""

from __future__ import annotations

from sitebuild.config import SiteSettings
from sitebuild.numbers.text import Number, name, percent, plain
from specmodel.formatting import EVEN_MARGIN
from specmodel.schedule import GammaSchedule


def largest_load(schedule: GammaSchedule) -> Number:
    """The largest load a schedule covers (``none`` where not one sequence fits in memory)."""
    return plain(int(schedule.batch_sizes[-1]), 0) if schedule.batch_sizes.size else name("none")


def numbers(settings: SiteSettings) -> dict[str, Number]:
    """The gain a gamma must beat to be scheduled."""
    return {"schedule_margin": percent(EVEN_MARGIN)}
