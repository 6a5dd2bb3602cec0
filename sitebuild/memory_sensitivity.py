"""What the assumed memory efficiency decides in the ``vllm`` profile.

The roofline prices a pass's bytes at ``eta_mem`` times the datasheet's bandwidth
(:func:`specmodel.model.roofline.memory_time`). The profile keeps the article's
``eta_mem = 0.80`` (:data:`sitebuild.public_fit.FIXED`): its rows are speedups, ratios of two
times, plus one absolute time, the 7.07 ms plain decode step, and a ratio cannot tell slower
memory from a larger fixed time per pass. So the fixed time per target pass ``t_0`` is what the
anchor leaves over a roofline priced at the assumed ``eta_mem``, not a measurement of vLLM's
overhead. This module refits the profile at other values of ``eta_mem`` and judges each refit
as the profile is judged (:func:`sitebuild.public_fit.held_out`): which constants move, and how
far the errors in sample and held out move with them.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from sitebuild import public_fit
from specmodel.measurements import Measurement
from specmodel.model.settings import Settings

#: The memory efficiencies the profile is refitted at (shares of the datasheet's bandwidth).
EFFICIENCIES = (0.70, 0.75, 0.80, 0.85, 0.90, 0.95)
#: The held-out splits, as :data:`sitebuild.public_fit.TARGETS` names them.
HELD_OUT = ("leave_one_source_out", "leave_one_workload_out", "small_to_large")


@dataclass(frozen=True)
class Refit:
    """The profile refitted with memory efficiency ``efficiency``: its fitted constants (SI), its
    plain step in the anchor's scenario (seconds), each split's ``(median, p90, worst)`` of
    ``|predicted / measured - 1|``, and the largest relative standard error of its constants."""

    efficiency: float
    values: dict[str, float]
    plain_step_s: float
    errors: dict[str, tuple[float, float, float]]
    largest_relative_se: float

    def met(self, split: str) -> bool:
        """Whether this refit meets ``split``'s targets (:data:`sitebuild.public_fit.TARGETS`)."""
        return public_fit.met(split, self.errors[split])

    @property
    def worst_held_out_median(self) -> float:
        """The largest median error of the held-out splits."""
        return max(self.errors[s][0] for s in HELD_OUT)


def refit(rows: list[Measurement], efficiency: float) -> Refit:
    """The profile fitted to ``rows`` with memory efficiency ``efficiency`` in place of the
    article's, judged in sample and held out."""
    fixed = {"memory_efficiency": efficiency}
    full = public_fit.fit(rows, public_fit.FITTED, fixed)
    splits = public_fit.held_out(rows, fixed=fixed)
    settings = Settings().with_engine(public_fit.profile(list(full.values.values()), list(full.values), **fixed))
    return Refit(
        efficiency=efficiency,
        values=full.values,
        plain_step_s=public_fit.plain_step_s(settings),
        errors={k: (v["median"], v["p90"], v["max"]) for k, v in splits.items()},
        largest_relative_se=max(public_fit.identifiability(full).relative_se.values()),
    )


@cache
def refits(rows: tuple[Measurement, ...], efficiencies: tuple[float, ...] = EFFICIENCIES) -> tuple[Refit, ...]:
    """:func:`refit` at each efficiency (cached: the table and the claim read the same)."""
    return tuple(refit(list(rows), e) for e in efficiencies)
