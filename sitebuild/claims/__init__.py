"""Every qualitative statement the article makes about the simulated system, as a claim: a
predicate over the model's outputs and the wording for each outcome
(:mod:`sitebuild.claims.core`), one module per part of the article.

The prose refers to them as ``{{ claim:name }}``; the MkDocs hook (hooks/numbers.py) puts in
the wording chosen at build time, with its numbers linked to the simulator where they can be
read there. A claim whose outcome has no wording stops the build, naming it.
"""

from __future__ import annotations

from sitebuild.claims import beyond, capacity, cards, drafts, gamma, ladder, opening, rules, serving, validation
from sitebuild.claims.core import ClaimError, Said
from sitebuild.config import SiteSettings

SECTIONS = (opening, ladder, drafts, gamma, capacity, serving, rules, cards, beyond, validation)


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
