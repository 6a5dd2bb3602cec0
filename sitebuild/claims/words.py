"""What the claims share: verdicts read off a speedup as printed (with the 3% margin of
:data:`specmodel.formatting.EVEN_MARGIN`), the first rung of a ladder where one holds, the
largest part of a step's time, and small words."""

from __future__ import annotations

from typing import Any

import numpy as np

from sitebuild.numbers.text import Number, plain, speedup_at
from specmodel import formatting
from specmodel.model.timing import TIME_PARTS

_COUNT = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight"}


def verdict(speedup: Any) -> str:
    """``faster``, ``even`` or ``slower``, as the page prints the speedup (two decimals)."""
    return formatting.verdict(float(speedup), 2)


def first_rung(ladder: Any, mask: Any) -> int | None:
    """The first rung of ``ladder`` where ``mask`` holds; None if it never does."""
    mask = np.asarray(mask, dtype=bool)
    return int(np.asarray(ladder)[np.argmax(mask)]) if mask.any() else None


def not_faster(speedups: Any) -> np.ndarray:
    """Where a speedup is not a gain (even or slower)."""
    return np.array([verdict(s) != "faster" for s in np.ravel(speedups)])


def slower(speedups: Any) -> np.ndarray:
    """Where a speedup is a loss."""
    return np.array([verdict(s) == "slower" for s in np.ravel(speedups)])


def rung(b: int | None) -> Number:
    """A rung of the ladder as the prose prints it: ``64`` (NaN: none)."""
    return plain(b, 0) if b is not None else Number(float("nan"), "none")


def count(n: int) -> str:
    """``one``, ``two``, ... ``eight``, then digits."""
    return _COUNT.get(int(n), f"{int(n):,}")


def largest_part(parts: Any) -> str:
    """The name of the largest of :data:`TIME_PARTS` in ``parts`` (trailing axis)."""
    return TIME_PARTS[int(np.argmax(np.asarray(parts)))]


def largest_extra(spec_parts: Any, base_parts: Any) -> str:
    """The part of the speculative step that adds most time over the plain step's same part."""
    return TIME_PARTS[int(np.argmax(np.asarray(spec_parts) - np.asarray(base_parts)))]


def part(parts: Any, name: str) -> float:
    """One of :data:`TIME_PARTS` from a trailing-axis array."""
    return float(np.asarray(parts)[..., TIME_PARTS.index(name)])


#: How the prose names each engine whose verdict a claim gives beside the ideal one.
FITTED_ENGINE = "vllm"


def best_at(settings: Any, prefix: str, engine: str | None = None, **scenario: Any) -> tuple[str, dict[str, Number]]:
    """The best γ of :data:`specmodel.model.scenario.GAMMAS` at one load and its speedup, for a
    claim that gives a verdict about that load: the facet outcome (``gain``: the best γ gains;
    ``off``: no γ gains, so speculation should be off there) and the values ``<prefix>_best``
    and ``<prefix>_best_speedup`` (under ``engine``: the settings' own when None).

    The best γ is the one of highest speedup at that load, the same rule as the article's
    schedule; "gains" is the page's verdict (more than :data:`specmodel.formatting.EVEN_MARGIN`)."""
    from sitebuild.numbers.common import one
    from specmodel.model.scenario import GAMMAS

    gammas = np.array(GAMMAS)
    extra = {} if engine is None else {"engine": engine}
    curve = np.asarray(one(settings, gamma=gammas, **extra, **scenario).speedup, dtype=float)
    i = int(np.argmax(curve))
    link = {k: v for k, v in {**scenario, **extra}.items() if np.ndim(v) == 0}
    values = {
        f"{prefix}_best": plain(int(gammas[i]), 0),
        f"{prefix}_best_speedup": speedup_at(curve[i], **link, gamma=int(gammas[i])),
    }
    return ("gain" if verdict(curve[i]) == "faster" else "off"), values


def load_facets(settings: Any, prefix: str, **scenario: Any) -> tuple[list[tuple[str, str]], dict[str, Number]]:
    """The facets and values every verdict about a load adds: the best γ there under the ideal
    engine (facet ``best``) and, under the profile fitted to vLLM, the speedup at the same γ and
    the best γ (facets ``fitted`` and ``fitted_best``; values ``<prefix>_fitted``,
    ``<prefix>_fitted_best`` and ``<prefix>_fitted_best_speedup``)."""
    from sitebuild.numbers.common import one

    best, values = best_at(settings, prefix, **scenario)
    fitted_best, fitted = best_at(settings, f"{prefix}_fitted", engine=FITTED_ENGINE, **scenario)
    same = float(one(settings, engine=FITTED_ENGINE, **scenario).speedup)
    link = {k: v for k, v in scenario.items() if np.ndim(v) == 0}
    values.update(fitted)
    values[f"{prefix}_fitted"] = speedup_at(same, engine=FITTED_ENGINE, **link)
    return [("best", best), ("fitted", verdict(same)), ("fitted_best", fitted_best)], values


def settings_gamma(settings: Any) -> int:
    """The article's γ: the scenario's default (the simulator's too)."""
    from specmodel.model.scenario import default_scenario

    return int(default_scenario(settings).gamma)


def fitting(fits: Any) -> np.ndarray:
    """The rungs whose scenario fits in memory, or every rung where none does: a deployment that
    does not fit at all is said so by its own claim (``deployment``), and the claims about the
    ladder then read the model's speedups as if memory allowed them."""
    mask = np.asarray(fits, dtype=bool)
    return mask if mask.any() else np.ones_like(mask)
