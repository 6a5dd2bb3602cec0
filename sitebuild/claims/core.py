"""A claim: a qualitative statement of the prose as a predicate over the model's outputs.

A claim function computes the values it quotes and decides its outcome (a short key such as
``slower``) from them, or one outcome per facet where a sentence is made of parts decided one
by one. The pages hold the wording for every outcome (:mod:`sitebuild.claims.prose`); when an
author changes a constant and the outcome moves, the sentence changes with it, and when no
wording fits the outcome the build stops, naming the claim and its values.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sitebuild.numbers.text import Number
from specmodel.errors import SpecModelError


class ClaimError(SpecModelError):
    """A claim whose computed outcome has no wording, or whose wording quotes a value it lacks."""


@dataclass(frozen=True)
class Said:
    """A claim as the model decides it: the outcome of each of its facets (``outcome`` alone
    for a claim decided as a whole), in order, and the values its wording may quote."""

    name: str
    outcomes: Mapping[str, str]
    values: Mapping[str, Number]

    @property
    def outcome(self) -> str:
        """The facets' outcomes joined by ``:`` (the outcome of a claim decided as a whole)."""
        return ":".join(self.outcomes.values())


def claim(name: str, outcome: str, values: Mapping[str, Number]) -> Said:
    """The claim ``name``, decided as a whole: its ``outcome`` and ``values``."""
    return Said(name, {"outcome": outcome}, dict(values))


def phrase(text: str) -> Number:
    """Words a value prints as (a list of names, "none" for a count), with no number."""
    return Number(float("nan"), text)


def composed(name: str, facets: Sequence[tuple[str, str]], values: Mapping[str, Number]) -> Said:
    """A claim whose sentence is made of facets decided one by one: each facet is ``(facet,
    outcome)``; the page words each facet's outcomes."""
    return Said(name, dict(facets), dict(values))
