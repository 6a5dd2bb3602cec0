"""A claim: a qualitative statement of the prose as a predicate over the model's outputs and
the wording for each outcome.

A claim function computes the values it quotes, decides its outcome (a short key such as
``slower:draft_kv``) from them, and picks the wording for that outcome from a table written
next to it. The prose refers to the claim by name (``{{ claim:name }}``) as it refers to a
number; when an author changes a constant and the outcome moves, the sentence changes with
it, and when no wording fits the outcome the build stops, naming the claim and its values.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sitebuild.numbers.text import Number
from specmodel.errors import SpecModelError

SLOT = re.compile(r"\{([a-z0-9_]+)\}")


class ClaimError(SpecModelError):
    """A claim whose computed outcome has no wording, or whose wording quotes a value it lacks."""


@dataclass(frozen=True)
class Said:
    """A claim as the page prints it: its outcome, the wording chosen for it (Markdown with
    ``{slot}`` for each value it quotes) and the values."""

    name: str
    outcome: str
    wording: str
    values: Mapping[str, Number]

    def text(self) -> str:
        """The wording with every value's text in its slot (no links)."""
        return SLOT.sub(lambda m: self.values[m.group(1)].text, self.wording)


def _shown(values: Mapping[str, Number]) -> str:
    return ", ".join(f"{k}={v.text}" for k, v in values.items())


def claim(name: str, outcome: str, values: Mapping[str, Number], wordings: Mapping[str, str]) -> Said:
    """The claim ``name`` in the wording its ``outcome`` calls for; :class:`ClaimError` naming the
    claim, the outcome and the values if there is none, or if the wording quotes a value that
    was not computed."""
    if outcome not in wordings:
        raise ClaimError(
            f"claim {name!r}: the model's outcome is {outcome!r}, for which the prose has no wording "
            f"(worded outcomes: {', '.join(sorted(wordings))}; values: {_shown(values)})"
        )
    wording = wordings[outcome]
    missing = sorted(set(SLOT.findall(wording)) - set(values))
    if missing:
        raise ClaimError(f"claim {name!r}, outcome {outcome!r}: the wording quotes {', '.join(missing)}, not computed")
    return Said(name, outcome, wording, dict(values))


def phrase(text: str) -> Number:
    """Words a claim inserts (decided with the outcome), as a value with no number."""
    return Number(float("nan"), text)


def composed(name: str, facets: Sequence[tuple[str, str, Mapping[str, str]]], values: Mapping[str, Number]) -> Said:
    """A claim whose wording is made of facets decided one by one: each facet is ``(facet,
    outcome, wordings)``, and the claim's wording is the chosen wordings joined by spaces (a
    facet's wording may be empty). :class:`ClaimError` names the claim and the facet whose
    outcome has no wording."""
    chosen = []
    for facet, outcome, wordings in facets:
        if outcome not in wordings:
            raise ClaimError(
                f"claim {name!r}, part {facet!r}: the model's outcome is {outcome!r}, for which the prose has no "
                f"wording (worded outcomes: {', '.join(sorted(wordings))}; values: {_shown(values)})"
            )
        chosen.append(wordings[outcome])
    outcome = ":".join(o for _, o, _ in facets)
    return claim(name, outcome, values, {outcome: " ".join(w for w in chosen if w)})
