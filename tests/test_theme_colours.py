"""The verdict colours (sitebuild/theme.py: GAIN teal, EVEN grey, LOSS magenta) mean a verdict
against plain decoding and nothing else: no drafter, series, time part, engine or roofline
colour takes one, and in the figures the site publishes no series is drawn in one (points may
be, one by one, by their verdict, and the 1.0x line is "even")."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from sitebuild import theme
from sitebuild.build import FIGURES
from sitebuild.figures import timing

VERDICT = {c.lower() for c in theme.VERDICT}


def role_colours() -> dict[str, str]:
    """Every colour of the theme and the figures that stands for something other than a verdict."""
    roles = {f"drafter {k}": v for k, v in theme.ROLE_COLORS.items()}
    roles |= {f"sequence {i}": v for i, v in enumerate(theme.SEQUENCE)}
    roles |= {f"part {k}": colour for k, (_, colour) in timing.PARTS.items()}
    roles |= {f"engine {k}": v for k, v in theme.ENGINE_COLORS.items()}
    roles |= {"memory": theme.MEMORY, "compute": theme.COMPUTE, "idle": theme.IDLE, "muted": theme.MUTED}
    roles |= {"same acceptance": theme.SAME_ACCEPTANCE}
    roles |= {f"colorway {i}": v for i, v in enumerate(theme.TEMPLATE.layout.colorway)}
    return roles


def verdict_roles(roles: dict[str, str]) -> dict[str, str]:
    return {name: colour for name, colour in roles.items() if colour.lower() in VERDICT}


def test_the_three_verdict_colours_are_the_sites_teal_grey_and_magenta():
    assert (theme.GAIN, theme.EVEN, theme.LOSS) == ("#0f9d8a", "#8a8f98", "#c8359d")
    assert len(VERDICT) == 3


def test_no_role_takes_a_verdict_colour():
    roles = role_colours()
    assert len(roles) > 20
    assert verdict_roles(roles) == {}


def test_the_check_finds_a_role_in_a_verdict_colour():
    assert verdict_roles({"drafter ngram": "#0F9D8A", "drafter draft": "#3b6fd8"}) == {"drafter ngram": "#0F9D8A"}


def series_colours(figure: dict) -> Iterator[tuple[str, str]]:
    """(trace, colour) for each colour a whole series of the figure is drawn in: a line's, a
    fill's, or a marker's when it is one colour for every point (a list of per-point colours
    is each point's verdict or not, and is left out), except the reference lines the page
    re-colours with the scheme (the 1.0x line among them)."""
    for i, trace in enumerate(figure["data"]):
        if trace.get("meta") == theme.REFERENCE:
            continue
        name = f"trace {i} ({trace.get('name', trace.get('type', 'scatter'))})"
        marker, line = trace.get("marker") or {}, trace.get("line") or {}
        for colour in (
            line.get("color"),
            trace.get("fillcolor"),
            marker.get("color"),
            (marker.get("line") or {}).get("color"),
        ):
            if isinstance(colour, str):
                yield name, colour


def test_the_check_finds_a_series_in_a_verdict_colour():
    figure = {
        "data": [
            {"name": "n-gram", "line": {"color": "#0f9d8a"}, "marker": {"color": ["#c8359d", "#a67c00"]}},
            {"name": "1.0x", "meta": theme.REFERENCE, "line": {"color": "#8a8f98"}},
            {"type": "bar", "name": "target", "marker": {"color": "#8a8f98"}},
        ]
    }
    found = [(name, colour) for name, colour in series_colours(figure) if colour.lower() in VERDICT]
    assert found == [("trace 0 (n-gram)", "#0f9d8a"), ("trace 2 (target)", "#8a8f98")]


@pytest.mark.parametrize("spec", FIGURES, ids=[s.id for s in FIGURES])
def test_no_series_of_a_figure_is_drawn_in_a_verdict_colour(generated, spec):
    figure = json.loads((generated / "figdata" / f"{spec.id}.json").read_text(encoding="utf-8"))
    found = [(name, colour) for name, colour in series_colours(figure) if colour.lower() in VERDICT]
    assert found == [], spec.id
