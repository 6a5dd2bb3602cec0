"""Every figure's caption says only what its figure shows: each thing a caption names that a
reader looks for (a marker shape, a line style, a colour, a slider or a menu) is drawn in the
figure's own JSON, as the site publishes it."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from sitebuild.build import FIGURES

#: The theme's colours a caption may name, by the word it uses.
COLOURS = {
    "teal": {"#0f9d8a"},
    "orange": {"#d9822b", "#e0662f"},
    "grey": {"#8a8f98"},
    "magenta": {"#c8359d"},
    "blue": {"#3b6fd8"},
    "purple": {"#7c6bd6"},
}
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
    if re.search(r"\bsliders?\b", text) and "slider" not in shown["controls"]:
        gaps.append("slider")
    if re.search(r"\b(menu|buttons?)\b", text) and "menu" not in shown["controls"]:
        gaps.append("menu")
    if re.search(r"\bbars?\b", text) and "bar" not in shown["types"]:
        gaps.append("bars")
    return gaps


def test_the_checker_catches_a_caption_that_names_what_is_not_drawn():
    shown = {"symbols": {"circle"}, "dashes": {"solid"}, "colours": {"#3b6fd8"}, "types": {"scatter"}}
    shown["controls"] = set()
    assert missing("Open markers do not fit; teal diamonds and a slider.", shown) == [
        "open markers", "diamond", "teal", "slider"
    ]  # fmt: skip
    assert missing("Blue circles, one per rung.", shown) == []


@pytest.mark.parametrize("spec", FIGURES, ids=[s.id for s in FIGURES])
def test_each_caption_names_only_what_its_figure_draws(generated, spec):
    figure = json.loads((generated / "figdata" / f"{spec.id}.json").read_text(encoding="utf-8"))
    assert missing(spec.caption, drawn(figure)) == [], (spec.id, spec.caption)
