"""Every figure's caption says what its figure shows in one sentence, and only what it shows:
each thing a caption names that a reader looks for (a marker shape, a line style, a colour, a
slider or a menu) is drawn in the figure's own JSON, as the site publishes it."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from sitebuild.build import FIGURES

#: The theme's colours a caption may name, by the word it uses (sitebuild/theme.py): the verdict
#: colours (teal a gain, grey even, magenta a loss), then the others. "dark grey" is matched
#: before "grey", which then means the verdict's grey only.
COLOURS = {
    "teal": {"#0f9d8a"},
    "dark grey": {"#6b7280"},
    "grey": {"#8a8f98"},
    "magenta": {"#c8359d"},
    "orange": {"#d9822b", "#e0662f"},
    "blue": {"#3b6fd8"},
    "purple": {"#7c6bd6"},
    "gold": {"#a67c00"},
    "green": {"#5c8a2e"},
    "brown": {"#9c6b4e"},
}
#: The end of a sentence: a full stop, question or exclamation mark before a space or the end.
SENTENCE_END = re.compile(r"[.!?](?=\s|$)")
#: Marker shapes a caption may name, by word -> the Plotly symbol it means (a substring).
SHAPES = {"diamond": "diamond", "triangle": "triangle", "star": "star", "square": "square", "circle": "circle"}


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _strings(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)


def drawn(figure: dict) -> dict[str, set[str]]:
    """What the figure draws: marker symbols, line dashes, colours, trace types, and its controls
    (the frames of a slider or menu included)."""
    traces = list(figure["data"])
    for frame in figure.get("frames", []):
        traces += frame.get("data", [])
    layout = figure["layout"]
    for menu in layout.get("updatemenus", []) + layout.get("sliders", []):
        for step in menu.get("buttons", []) + menu.get("steps", []):
            for arg in step.get("args", []):
                if isinstance(arg, dict) and isinstance(arg.get("data"), list):
                    traces += arg["data"]
    out: dict[str, set[str]] = {"symbols": set(), "dashes": set(), "colours": set(), "types": set(), "controls": set()}
    for t in traces:
        marker, line = t.get("marker", {}) or {}, t.get("line", {}) or {}
        symbols = set(_strings(marker.get("symbol", "circle" if "markers" in t.get("mode", "") else [])))
        out["symbols"] |= symbols
        out["dashes"] |= set(_strings(line.get("dash", [])))
        out["colours"] |= {c.lower() for c in _strings([marker.get("color"), line.get("color"), t.get("fillcolor")])}
        out["colours"] |= {c.lower() for c in _strings(t.get("colorscale", []))}
        out["types"].add(t.get("type", "scatter"))
    out["colours"] |= {c.lower() for c in _strings([s.get("line", {}) for s in layout.get("shapes", [])])}
    out["dashes"] |= set(_strings([s.get("line", {}).get("dash") for s in layout.get("shapes", [])]))
    if layout.get("sliders"):
        out["controls"].add("slider")
    if layout.get("updatemenus"):
        out["controls"].add("menu")
    return out


def missing(caption: str, shown: dict[str, set[str]]) -> list[str]:
    """The things ``caption`` names that the figure does not draw."""
    text = caption.lower()
    gaps = []
    if re.search(r"\bopen markers?\b", text) and not any("open" in s for s in shown["symbols"]):
        gaps.append("open markers")
    for word, symbol in SHAPES.items():
        if re.search(rf"\b{word}s?\b", text) and not any(symbol in s for s in shown["symbols"]):
            gaps.append(word)
    if re.search(r"\bdashed\b", text) and not any("dash" in d for d in shown["dashes"]):
        gaps.append("dashed")
    if re.search(r"\bdotted\b", text) and not any("dot" in d for d in shown["dashes"]):
        gaps.append("dotted")
    for word, colours in COLOURS.items():
        if re.search(rf"\b{word}\b", text) and not colours & shown["colours"]:
            gaps.append(word)
        text = re.sub(rf"\b{word}\b", "", text)  # "dark grey" is not also "grey"
    if re.search(r"\bsliders?\b", text) and "slider" not in shown["controls"]:
        gaps.append("slider")
    if re.search(r"\b(menu|buttons?)\b", text) and "menu" not in shown["controls"]:
        gaps.append("menu")
    if re.search(r"\bbars?\b", text) and "bar" not in shown["types"]:
        gaps.append("bars")
    return gaps


def sentences(caption: str) -> int:
    """How many sentences ``caption`` has: its sentence ends (an abbreviation such as "e.g."
    counts as one, which is why captions avoid them)."""
    return len(SENTENCE_END.findall(caption.strip()))


def test_the_checker_catches_a_caption_that_names_what_is_not_drawn():
    shown = {"symbols": {"circle"}, "dashes": {"solid"}, "colours": {"#3b6fd8"}, "types": {"scatter"}}
    shown["controls"] = set()
    assert missing("Open markers do not fit; teal diamonds and a slider.", shown) == [
        "open markers", "diamond", "teal", "slider"
    ]  # fmt: skip
    assert missing("Blue circles, one per rung.", shown) == []
    assert missing("Dark grey lines.", {**shown, "colours": {"#8a8f98"}}) == ["dark grey"]
    assert missing("Dark grey lines.", {**shown, "colours": {"#6b7280"}}) == []
    assert missing("Grey points are even.", {**shown, "colours": {"#6b7280"}}) == ["grey"]


def test_the_sentence_count_sees_every_sentence_end():
    assert sentences("One point per rung, open where it does not fit.") == 1
    assert sentences("Speedup against γ (off: 1x); the slider adds a third curve.") == 1
    assert sentences("Lines: the model. Diamonds: the measurements.") == 2
    assert sentences("Each guess, e.g. the first, reaches the output.") == 2
    assert sentences("No full stop at the end") == 0


@pytest.mark.parametrize("spec", FIGURES, ids=[s.id for s in FIGURES])
def test_each_caption_is_one_sentence(spec):
    assert sentences(spec.caption) == 1 and spec.caption.rstrip().endswith("."), spec.caption


@pytest.mark.parametrize("spec", FIGURES, ids=[s.id for s in FIGURES])
def test_each_caption_names_only_what_its_figure_draws(generated, spec):
    figure = json.loads((generated / "figdata" / f"{spec.id}.json").read_text(encoding="utf-8"))
    assert missing(spec.caption, drawn(figure)) == [], (spec.id, spec.caption)
