"""Every number the article and its pages state about the simulated system, computed from
the model, one module per part of the article, keyed by role (the target, the draft, the big
draft) so that a ``--config`` deployment renames nothing.

The prose refers to them as ``{{ name }}``; the MkDocs hook (hooks/numbers.py) replaces each
with its ``text`` and fails the build on an unknown name.
"""

from __future__ import annotations

from sitebuild.config import SiteSettings
from sitebuild.numbers import (
    beyond,
    calibrate,
    capacity,
    drafts,
    engines,
    gamma,
    lender,
    opening,
    pages,
    schedule,
    validation,
)
from sitebuild.numbers.text import Number

SECTIONS = (
    opening.numbers,
    lender.numbers,
    drafts.numbers,
    capacity.numbers,
    gamma.numbers,
    schedule.numbers,
    engines.numbers,
    pages.hardware_numbers,
    pages.literature_numbers,
    beyond.measured_numbers,
    beyond.card_numbers,
    beyond.tree_numbers,
    beyond.moe_numbers,
    beyond.validation_numbers,
    calibrate.numbers,
    validation.draft_model_numbers,
    validation.interval_numbers,
)


def article_numbers(settings: SiteSettings) -> dict[str, Number]:
    """Name -> number for the site's prose, for the deployment and constants of ``settings``."""
    out: dict[str, Number] = {}
    for section in SECTIONS:
        part = section(settings)
        clash = set(part) & set(out)
        if clash:
            raise ValueError(f"numbers defined twice: {sorted(clash)}")
        out.update(part)
    return out


__all__ = ["Number", "article_numbers"]
