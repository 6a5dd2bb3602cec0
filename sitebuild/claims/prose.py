"""The claims' wordings as the pages write them, and the sentence each outcome picks.

A page words a claim in a block, one branch per outcome it can have::

    {% claim gamma_b32 %}
    {% when level=lower %} At 32 sequences the whole curve sits lower;
    {% when level=not_lower %} At 32 sequences the curve is not lower everywhere;
    {% when peak=earlier %} it peaks earlier, at γ = {best} ({best_speedup}),
    ...
    {% endclaim %}

``{% when OUTCOME %}`` is short for ``{% when outcome=OUTCOME %}`` (a claim decided as a
whole). A branch's text runs to the next branch or to ``{% endclaim %}``; its runs of white
space, line breaks included, print as one space. ``{value}`` puts in one of the values the
claim computed; ``{facet}`` puts in the text chosen for that facet, where a sentence needs a
few words decided on their own (which part of a step is largest): a facet that some branch
puts in this way prints only there. Every other facet prints its chosen text in the order the
block first names it, joined by spaces.

The build computes each claim's outcomes and values (:mod:`sitebuild.claims`); the pages hold
every word. A facet whose outcome has no branch, a facet the claim does not have, or a value
the claim did not compute stops the build, naming the claim and its values.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path

from sitebuild.claims.core import ClaimError, Said

BLOCK = re.compile(r"\{%\s*claim\s+([a-z0-9_]+)\s*%\}(.*?)\{%\s*endclaim\s*%\}", re.S)
WHEN = re.compile(r"\{%\s*when\s+(?:([a-z0-9_]+)=)?([A-Za-z0-9_:\-]+)\s*%\}")
SLOT = re.compile(r"\{([a-z0-9_]+)\}")
#: A tag of the grammar left over once every whole block is worded (a block never closed).
STRAY = re.compile(r"\{%\s*(?:claim|when|endclaim)\b[^%]*%\}")
#: The facet of a claim decided as a whole.
WHOLE = "outcome"
#: The site's pages, beside the site builder in the repository.
DOCS = Path(__file__).resolve().parents[2] / "docs"

#: A block's branches: facet -> outcome -> text, facets in the order the block names them.
Branches = dict[str, dict[str, str]]


def branches(name: str, body: str) -> Branches:
    """The branches of claim ``name``'s block ``body`` (the text between its tags)."""
    parts = WHEN.split(body)
    if parts[0].strip():
        raise ClaimError(f"claim {name!r}: text before the first {{% when %}}: {parts[0].strip()[:60]!r}")
    out: Branches = {}
    for facet, outcome, text in zip(parts[1::3], parts[2::3], parts[3::3]):
        worded = out.setdefault(facet or WHOLE, {})
        if outcome in worded:
            raise ClaimError(f"claim {name!r}: two branches for {facet or WHOLE}={outcome}")
        worded[outcome] = " ".join(text.split())
    return out


def _shown(values: Mapping[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in values.items())


def _chosen(name: str, outcomes: Mapping[str, str], worded: Branches, values: Mapping[str, str]) -> dict[str, str]:
    """Facet -> the text its outcome picks; :class:`ClaimError` naming the claim, the facet and
    the values where the block has no branch for it, or words a facet the claim lacks."""
    extra = sorted(set(worded) - set(outcomes))
    if extra:
        raise ClaimError(f"claim {name!r}: the page words {', '.join(extra)}, which the claim does not decide "
                         f"(it decides {', '.join(outcomes)})")  # fmt: skip
    chosen = {}
    for facet, outcome in outcomes.items():
        options = worded.get(facet, {})
        if outcome not in options:
            part = "" if facet == WHOLE else f", part {facet!r}"
            raise ClaimError(
                f"claim {name!r}{part}: the model's outcome is {outcome!r}, for which the page has no wording "
                f"(worded outcomes: {', '.join(sorted(options)) or 'none'}; values: {_shown(values)})"
            )
        chosen[facet] = options[outcome]
    return chosen


def sentence(name: str, outcomes: Mapping[str, str], values: Mapping[str, str], body: str,
             show: Callable[[str], str] | None = None) -> str:  # fmt: skip
    """Claim ``name`` as its block ``body`` words its facets' ``outcomes``, with ``values`` (a
    value's name -> its text) put in by ``show`` (a value's name -> the text or Markdown the
    page prints; the value's text if None)."""
    worded = branches(name, body)
    chosen = _chosen(name, outcomes, worded, values)
    inserted = {
        f for options in worded.values() for text in options.values() for f in SLOT.findall(text) if f in chosen
    }
    clash = sorted(inserted & set(values))
    if clash:
        raise ClaimError(f"claim {name!r}: {', '.join(clash)} names both a facet and a value")
    text = " ".join(chosen[f] for f in worded if f not in inserted and chosen[f])
    text = SLOT.sub(lambda m: chosen[m.group(1)] if m.group(1) in inserted else m.group(0), text)
    missing = sorted(set(SLOT.findall(text)) - set(values))
    if missing:
        outcome = ":".join(outcomes.values())
        raise ClaimError(f"claim {name!r}, outcome {outcome!r}: the wording quotes {', '.join(missing)}, "
                         f"not computed (values: {_shown(values)})")  # fmt: skip
    return SLOT.sub(lambda m: show(m.group(1)) if show else values[m.group(1)], text)


def worded_page(markdown: str, word: Callable[[str, str], str]) -> str:
    """``markdown`` with each claim block replaced by ``word(name, body)``; :class:`ClaimError`
    for a tag outside a whole block (a block never closed, a branch outside any block)."""
    text = BLOCK.sub(lambda m: word(m.group(1), m.group(2)), markdown)
    stray = STRAY.search(text)
    if stray:
        line = text.count("\n", 0, stray.start()) + 1
        raise ClaimError(f"{stray.group(0)!r} outside a whole claim block (near line {line} of the page as worded)")
    return text


def blocks(markdown: str) -> dict[str, str]:
    """Claim name -> the body of its block in ``markdown``."""
    return {m.group(1): m.group(2) for m in BLOCK.finditer(markdown)}


def page_blocks(docs: Path) -> dict[str, str]:
    """Claim name -> its block's body, over every page of the folder ``docs``."""
    out: dict[str, str] = {}
    for page in sorted(docs.glob("*.md")):
        out.update(blocks(page.read_text(encoding="utf-8")))
    return out


def sentences(said: Mapping[str, Said], docs: Path = DOCS) -> dict[str, str]:
    """Claim name -> its sentence as the pages of ``docs`` word it, values as plain text;
    :class:`ClaimError` for a claim no page words."""
    bodies = page_blocks(docs)
    unworded = sorted(set(said) - set(bodies))
    if unworded:
        raise ClaimError(f"no page of {docs} words the claims {', '.join(unworded)}")
    return {k: sentence(k, s.outcomes, {n: v.text for n, v in s.values.items()}, bodies[k]) for k, s in said.items()}
