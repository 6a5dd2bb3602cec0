"""Every qualitative statement the article makes about the simulated system, as a claim: a
predicate over the model's outputs that decides its outcome and computes the values its
sentence quotes (:mod:`sitebuild.claims.core`), one module per part of the article.

The pages word each claim in a block ``{% claim name %} ... {% endclaim %}`` with a branch
per outcome (:mod:`sitebuild.claims.prose`); the MkDocs hook (hooks/numbers.py) puts in the
branch the build's outcome picks, with its numbers linked to the simulator where they can be
read there. An outcome the page has no branch for stops the build, naming the claim.
"""

from __future__ import annotations

from sitebuild.claims import (
    beyond,
    capacity,
    cards,
    drafts,
    gamma,
    ladder,
    opening,
    rules,
    schedule,
    serving,
    validation,
)
from sitebuild.claims.core import ClaimError, Said
from sitebuild.config import SiteSettings

SECTIONS = (opening, ladder, drafts, gamma, schedule, capacity, serving, rules, cards, beyond, validation)


def article_claims(settings: SiteSettings) -> dict[str, Said]:
    """Name -> the claim as the page states it, for the deployment and constants of ``settings``."""
    out: dict[str, Said] = {}
    for section in SECTIONS:
        for make in section.CLAIMS:
            said = make(settings)
            if said.name in out:
                raise ValueError(f"claim {said.name!r} defined twice")
            out[said.name] = said
    return out


__all__ = ["ClaimError", "Said", "article_claims"]
