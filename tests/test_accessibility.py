"""Accessibility of the built site in headless Chromium: axe-core finds no serious or
critical violation on any page in either colour scheme, the simulator's controls show
where the keyboard focus is, and its targets are large enough to touch.

axe-core is a test dependency vendored in tests/vendor/axe-core (see the README there); it
is injected into each page and is not part of the site.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

AXE = Path(__file__).resolve().parent / "vendor" / "axe-core" / "axe.min.js"
PAGES = ["", "hardware/", "beyond/", "validation/", "model/", "notebook/", "cli/"]
SCHEMES = {"light": "default", "dark": "slate"}  # prefers-color-scheme -> Material's scheme
READY = "[data-simulator][data-state=ready]"
BLOCKING = ("serious", "critical")
#: A losing scenario that does not fit in memory: the simulator's magenta texts are shown.
LOSS = "?concurrency=64&context=8192"

# No node is excluded from the audit: Plotly's SVG figures raise no violation today. If a new
# plotly.js does, exclude only that subtree here (e.g. ".specfig .main-svg"), saying why.
AXE_CONTEXT = {"include": [["html"]], "exclude": []}


def _settle(page) -> None:
    """Wait until the simulator (if any) is ready and every figure is drawn (figures draw when
    they near the viewport, so each is scrolled into view), then return to the top."""
    if page.locator("[data-simulator]").count():
        page.wait_for_selector(READY, timeout=20_000)
    figures = page.locator(".specfig")
    for i in range(figures.count()):
        figure = figures.nth(i)
        figure.scroll_into_view_if_needed()
        page.wait_for_function("el => el.dataset.state === 'rendered'", arg=figure.element_handle(), timeout=20_000)
    page.evaluate("() => window.scrollTo(0, 0)")
    page.wait_for_timeout(300)  # a11y.js marks scrollable regions after the page event


def _audit(page) -> list[dict]:
    page.add_script_tag(path=str(AXE))
    return page.evaluate(
        """async (context) => {
            const result = await axe.run(context, {resultTypes: ["violations"]});
            return result.violations.map(v => ({
                id: v.id, impact: v.impact, help: v.help,
                nodes: v.nodes.map(n => ({target: n.target.join(" "), summary: n.failureSummary})),
            }));
        }""",
        AXE_CONTEXT,
    )


def _report(violations: list[dict]) -> str:
    lines = []
    for v in violations:
        lines.append(f"{v['id']} ({v['impact']}, {len(v['nodes'])} nodes): {v['help']}")
        for node in v["nodes"][:4]:
            summary = " ".join((node["summary"] or "").split())[:300]
            lines.append(f"    {node['target'][:160]}  --  {summary}")
    return "\n".join(lines)


@pytest.fixture(params=list(SCHEMES))
def scheme(request) -> str:
    return request.param


@pytest.fixture
def page(browser, site_server, scheme):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme=scheme)
    pg = context.new_page()
    yield pg
    context.close()


def _open(page, url: str, scheme: str) -> None:
    page.goto(url, wait_until="load")
    # Material picks the palette entry whose media query matches the emulated preference.
    assert page.evaluate("() => document.body.dataset.mdColorScheme") == SCHEMES[scheme]
    _settle(page)


@pytest.mark.parametrize("path", PAGES)
def test_no_serious_or_critical_violation(page, site_server, scheme, path):
    _open(page, site_server + path, scheme)
    blocking = [v for v in _audit(page) if v["impact"] in BLOCKING]
    assert not blocking, f"/{path} in the {scheme} scheme:\n" + _report(blocking)


def test_no_serious_or_critical_violation_in_a_losing_scenario(page, site_server, scheme):
    """The simulator's loss and does-not-fit texts (magenta) only show for some settings."""
    _open(page, site_server + LOSS, scheme)
    assert "is-loss" in page.get_attribute("[data-simulator]", "class")
    blocking = [v for v in _audit(page) if v["impact"] in BLOCKING]
    assert not blocking, f"{LOSS} in the {scheme} scheme:\n" + _report(blocking)


def test_scrollable_regions_are_reachable_and_named(page, site_server, scheme):
    """A wide table gets into the tab order with a name of its own (docs/javascripts/a11y.js)."""
    page.set_viewport_size({"width": 600, "height": 900})  # narrow: the model page's tables scroll
    _open(page, site_server + "model/", scheme)
    regions = page.evaluate(
        """() => [...document.querySelectorAll('.md-typeset__scrollwrap')]
            .filter(el => el.scrollWidth > el.clientWidth + 1)
            .map(el => ({tabindex: el.getAttribute('tabindex'), name: el.getAttribute('aria-label')}))"""
    )
    assert regions, "no table scrolls at this width: the test no longer checks anything"
    assert all(r["tabindex"] == "0" and r["name"] for r in regions), regions
    names = [r["name"] for r in regions]
    assert len(set(names)) == len(names), names


def _focus_style(page, selector: str) -> dict:
    return page.evaluate(
        """(sel) => {
            const el = document.querySelector(sel), s = getComputedStyle(el);
            return {
                active: document.activeElement === el,
                visible: el.matches(':focus-visible'),
                outline: [s.outlineStyle, s.outlineWidth, s.outlineColor].join(' '),
                outlineStyle: s.outlineStyle,
                outlineWidth: parseFloat(s.outlineWidth) || 0,
                boxShadow: s.boxShadow,
            };
        }""",
        selector,
    )


def _keyboard_focus(page, selector: str) -> dict:
    """Reach the element with the keyboard (Shift+Tab away from it, Tab back) and return its
    computed focus style; the style without focus is returned under "blurred"."""
    page.focus(selector)
    page.keyboard.press("Shift+Tab")
    blurred = _focus_style(page, selector)
    page.keyboard.press("Tab")
    style = _focus_style(page, selector)
    style["blurred"] = blurred
    return style


def _focus_targets(page) -> tuple[list[str], list[str]]:
    """Selectors of the simulator's range inputs and of the checked radio button of each
    group (the one Tab reaches)."""
    return page.evaluate(
        """() => {
            const sim = '[data-simulator] input';
            const names = sel => [...document.querySelectorAll(sel)].map(el => el.name);
            return [
                names(`${sim}[type=range]`).map(n => `${sim}[name="${n}"]`),
                names(`${sim}[type=radio]:checked`).map(n => `${sim}[name="${n}"]:checked`),
            ];
        }"""
    )


def test_simulator_controls_show_a_focus_ring(page, site_server, scheme):
    _open(page, site_server, scheme)
    ranges, radios = _focus_targets(page)
    assert len(ranges) >= 2 and len(radios) >= 3, (ranges, radios)
    for selector in [*ranges, *radios, "[data-simulator] [data-resample]"]:
        style = _keyboard_focus(page, selector)
        assert style["active"] and style["visible"], (selector, style)
        ring = style["outlineStyle"] != "none" and style["outlineWidth"] >= 2
        assert ring or style["boxShadow"] != "none", (selector, style)
        blurred = style["blurred"]
        unchanged = (blurred["outline"], blurred["boxShadow"]) == (style["outline"], style["boxShadow"])
        assert not unchanged, (f"{selector}: focused and unfocused look the same", style)


def test_radio_after_arrow_key_shows_a_focus_ring(page, site_server, scheme):
    """Arrow keys move the focus within a radio group; the newly focused radio shows it."""
    _open(page, site_server, scheme)
    _keyboard_focus(page, '[data-simulator] input[name="acceptance"]:checked')
    page.keyboard.press("ArrowDown")
    page.wait_for_selector(READY)
    style = _focus_style(page, '[data-simulator] input[name="acceptance"]:checked')
    assert style["active"] and style["visible"], style
    assert style["outlineStyle"] != "none" and style["outlineWidth"] >= 2, style


def test_a_link_in_the_text_shows_a_focus_ring_and_is_underlined(page, site_server, scheme):
    _open(page, site_server, scheme)
    link = ".md-content article p a[href]:not(.headerlink)"
    assert page.evaluate(f"() => getComputedStyle(document.querySelector('{link}')).textDecorationLine") == "underline"
    style = _keyboard_focus(page, link)
    assert style["active"] and style["visible"], style
    assert style["outlineStyle"] != "none" and style["outlineWidth"] >= 2, style


def _boxes(page, selector: str) -> list[dict]:
    return page.evaluate(
        """(sel) => [...document.querySelectorAll(sel)].map(el => {
            const r = el.getBoundingClientRect();
            return {what: el.outerHTML.slice(0, 80), x: r.x + r.width / 2, y: r.y + r.height / 2,
                    width: r.width, height: r.height};
        })""",
        selector,
    )


@pytest.mark.parametrize("width", [1280, 390])
def test_touch_targets_are_at_least_24px(browser, site_server, width):
    """WCAG 2.5.8: a target is at least 24 x 24 CSS px, or a 24 px circle on its centre meets
    no other target's circle (the spacing exception; the ladder's bars on a phone)."""
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    try:
        page.goto(site_server, wait_until="load")
        page.wait_for_selector(READY, timeout=20_000)
        labels = _boxes(page, "[data-simulator] fieldset label")
        buttons = _boxes(page, "[data-simulator] button, .md-content .md-code__button")
        assert len(labels) >= 6 and buttons
        small = [b for b in labels if b["width"] < 24 or b["height"] < 24]
        assert small == [], small
        for b in buttons:
            if b["width"] >= 24 and b["height"] >= 24:
                continue
            near = [o for o in buttons if o is not b and ((o["x"] - b["x"]) ** 2 + (o["y"] - b["y"]) ** 2) ** 0.5 < 24]
            assert near == [], (b, near)
    finally:
        context.close()


def test_figure_controls_are_labelled_show_a_focus_ring_and_are_large_enough(page, site_server, scheme):
    """The native controls of the figures' sliders and menus (docs/javascripts/figures.js) have
    a visible label naming them, show where the keyboard focus is, and are at least 24 px tall;
    each figure's link to its data has a name of its own."""
    _open(page, site_server, scheme)
    controls = page.evaluate(
        """() => [...document.querySelectorAll('.specfig-controls input, .specfig-controls select')].map(c => ({
            id: c.id, label: c.labels.length ? c.labels[0].textContent.trim() : '',
            visible: c.labels.length > 0 && c.labels[0].getBoundingClientRect().width > 0,
            height: c.getBoundingClientRect().height}))"""
    )
    assert len(controls) >= 4, controls
    assert all(c["label"] and c["visible"] and c["height"] >= 24 for c in controls), controls
    for control in controls:
        style = _keyboard_focus(page, f"#{control['id']}")
        assert style["active"] and style["visible"], (control, style)
        assert style["outlineStyle"] != "none" and style["outlineWidth"] >= 2, (control, style)
    names = page.evaluate("() => [...document.querySelectorAll('a.specfig-data')].map(a => a.ariaLabel)")
    assert len(names) >= 10 and len(set(names)) == len(names)
    assert all(n.startswith("The data behind this figure (CSV)") for n in names)  # the visible text, first
