"""The built site in headless Chromium: every page loads, every figure renders, nothing
reaches another host, nothing logs an error, and the figures follow the dark scheme."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

pytestmark = pytest.mark.browser

#: path -> minimum number of figures
PAGES = {"": 10, "beyond/": 5, "validation/": 4, "model/": 0, "notebook/": 1, "cli/": 0}
ALL_RENDERED = "() => [...document.querySelectorAll('.specfig')].every(e => e.dataset.state === 'rendered')"


def render_all(page, timeout: int = 20_000) -> int:
    """Scroll every figure into view (figures draw when they near the viewport) and wait
    until all are drawn; returns how many there are."""
    count = page.locator(".specfig").count()
    for i in range(count):
        figure = page.locator(".specfig").nth(i)
        figure.scroll_into_view_if_needed()
        page.wait_for_function("el => el.dataset.state === 'rendered'", arg=figure.element_handle(), timeout=timeout)
    page.wait_for_function(ALL_RENDERED, timeout=timeout)
    return count


class Watch:
    """Console errors, page errors and requests to other hosts, for one page."""

    def __init__(self, page, base: str):
        self.host = urlsplit(base).netloc
        self.errors: list[str] = []
        self.foreign: list[str] = []
        page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        page.on("pageerror", lambda e: self.errors.append(str(e)))
        page.on("request", self._request)

    def _request(self, request):
        parts = urlsplit(request.url)
        if parts.scheme in ("http", "https", "ws", "wss") and parts.netloc != self.host:
            self.foreign.append(request.url)


@pytest.fixture
def page(browser, site_server):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme="light")
    pg = context.new_page()
    pg.watch = Watch(pg, site_server)
    yield pg
    context.close()


@pytest.mark.parametrize("path", list(PAGES))
def test_page_loads_and_every_figure_renders(page, site_server, path):
    page.goto(site_server + path, wait_until="load")
    count = render_all(page)
    assert count >= PAGES[path]
    if count:
        # A rendered figure has axes with tick labels, not an empty div.
        assert page.locator(".specfig .main-svg").count() >= count
    page.wait_for_timeout(300)
    assert page.watch.errors == []
    assert page.watch.foreign == []


def test_figures_render_after_a_plain_navigation(page, site_server):
    """Links between pages are plain links (no instant navigation, which works only at the
    address the site was built for): the new page loads and figures.js draws its figures."""
    page.goto(site_server + "cli/", wait_until="load")
    page.evaluate("() => { window.__previousDocument = true; }")
    page.locator("nav.md-nav--primary").get_by_role("link", name="Article").first.click()
    page.wait_for_url(site_server)
    page.wait_for_load_state("load")
    page.wait_for_selector("#fig-ladder", state="attached")
    assert page.evaluate("() => window.__previousDocument === undefined"), "the page was swapped in, not loaded"
    assert render_all(page) >= 10
    assert page.watch.errors == [] and page.watch.foreign == []


def test_figure_json_is_fetched_only_when_the_figure_nears_the_viewport(page, site_server):
    """The article's HTML holds no figure JSON; each figure's file is requested when the figure
    comes near the viewport, and the figure is drawn from it."""
    fetched: list[str] = []
    page.on("request", lambda r: "/generated/figdata/" in r.url and fetched.append(r.url.rsplit("/", 1)[1]))
    page.goto(site_server, wait_until="load")
    page.wait_for_timeout(500)
    html = page.content()
    assert "data-figure=" not in html
    assert "breakeven.json" not in fetched  # the last figure of the page, far below the fold
    page.locator("#fig-breakeven").scroll_into_view_if_needed()
    page.wait_for_function("() => document.querySelector('#fig-breakeven').dataset.state === 'rendered'")
    assert "breakeven.json" in fetched
    assert page.locator("#fig-breakeven .main-svg").count() >= 1
    assert page.watch.errors == [] and page.watch.foreign == []


#: Each figure control's state: the layout's (active step or button), the traces shown, and
#: the native control figures.js put above the plot (value, value text, label).
CONTROL_STATE = """el => ({
    active: [...(el.layout.sliders || []), ...(el.layout.updatemenus || [])].map(c => c.active),
    shown: el.data.map((t, i) => (t.visible === undefined || t.visible === true) ? i : -1).filter(i => i >= 0),
    native: [...el.parentNode.querySelectorAll('.specfig-controls input, .specfig-controls select')].map(c => ({
        value: c.value, text: c.getAttribute('aria-valuetext'),
        label: c.labels.length ? c.labels[0].textContent : ''})),
})"""


def _drawn(page, selector: str):
    figure = page.locator(selector)
    figure.scroll_into_view_if_needed()
    page.wait_for_function("el => el.dataset.state === 'rendered'", arg=figure.element_handle(), timeout=20_000)
    return figure


def test_a_figure_slider_is_a_labelled_range_input_reachable_by_keyboard(page, site_server):
    """The ladder's slider is a native, labelled range input above the plot (Plotly draws none):
    the arrow keys step it, so does a click on its rail; the narrow redraw keeps the choice."""
    page.goto(site_server, wait_until="load")
    figure = _drawn(page, "#fig-ladder")
    start = figure.evaluate(CONTROL_STATE)
    assert start["native"] == [{"value": "3", "text": "2,048", "label": "context (prompt tokens)"}], start
    page.focus("#fig-ladder-control-0")
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Tab")  # reached with the keyboard
    assert page.evaluate("() => document.activeElement.id") == "fig-ladder-control-0"
    page.keyboard.press("ArrowRight")
    page.wait_for_function("el => el.layout.sliders[0].active === 4", arg=figure.element_handle())
    moved = figure.evaluate(CONTROL_STATE)
    assert moved["native"][0]["value"] == "4" and moved["native"][0]["text"] == "4,096"
    assert moved["shown"] != start["shown"] and len(moved["shown"]) == len(start["shown"])
    assert figure.locator(".slider-container").count() == 0
    # The pointer: a click at the left end of the native rail picks step 0.
    rail = page.locator("#fig-ladder-control-0").bounding_box()
    page.mouse.click(rail["x"] + 2, rail["y"] + rail["height"] / 2)
    page.wait_for_function("el => el.layout.sliders[0].active === 0", arg=figure.element_handle())
    assert figure.evaluate(CONTROL_STATE)["native"][0]["value"] == "0"
    page.set_viewport_size({"width": 390, "height": 844})
    page.wait_for_function("el => el.dataset.layout === 'narrow'", arg=figure.element_handle())
    narrow = figure.evaluate(CONTROL_STATE)
    assert narrow["active"] == [0] and narrow["native"][0]["value"] == "0"
    page.focus("#fig-ladder-control-0")
    page.keyboard.press("End")
    page.wait_for_function("el => el.layout.sliders[0].active === 7", arg=figure.element_handle())
    assert figure.evaluate(CONTROL_STATE)["native"][0]["text"] == "32,768"
    assert page.watch.errors == []


def test_a_figure_menu_is_a_labelled_select_and_plotly_draws_none(page, site_server):
    page.goto(site_server, wait_until="load")
    figure = _drawn(page, "#fig-breakeven")
    assert figure.evaluate(CONTROL_STATE)["native"] == [{"value": "0", "text": None, "label": "drafter"}]
    options = page.locator("#fig-breakeven-control-0 option").all_inner_texts()
    buttons = figure.evaluate("el => el.layout.updatemenus[0].buttons.map(b => b.label)")
    assert options == buttons and len(options) == 5
    page.select_option("#fig-breakeven-control-0", "2")
    page.wait_for_function("el => el.layout.updatemenus[0].active === 2", arg=figure.element_handle())
    shown = figure.evaluate("el => el.data.filter(t => t.type === 'heatmap' && t.visible === true).map(t => t.name)")
    assert shown == ["n-gram lookup"]
    assert figure.locator(".updatemenu-container").count() == 0
    page.focus("#fig-breakeven-control-0")
    page.keyboard.press("End")
    page.wait_for_function("el => el.layout.updatemenus[0].active === 4", arg=figure.element_handle())
    assert page.locator("#fig-breakeven-control-0").evaluate("c => c.value") == "4"
    assert page.watch.errors == []


def test_every_figure_with_a_plotly_control_has_a_native_one(page, site_server):
    for path, ids in {
        "": ["timeline", "roofline", "ladder", "breakdown", "gamma", "gamma-schedule", "breakeven"],
        "hardware/": ["hardware"],
    }.items():
        page.goto(site_server + path, wait_until="load")
        render_all(page)
        counts = page.evaluate(
            """() => [...document.querySelectorAll('.specfig')].map(el => [el.id.slice(4),
                (el.layout.sliders || []).length + (el.layout.updatemenus || []).length,
                el.parentNode.querySelectorAll(
                    '.specfig-controls input[type=range], .specfig-controls select').length])"""
        )
        with_controls = [fid for fid, plotly, native in counts if plotly]
        assert sorted(with_controls) == sorted(ids)
        assert all(plotly == native for _, plotly, native in counts), counts
    assert page.watch.errors == []


def test_the_data_behind_a_figure_is_a_csv_linked_under_it(page, site_server):
    page.goto(site_server + "beyond/", wait_until="load")
    link = page.locator("#figure-beyond-tree a.specfig-data")
    assert link.inner_text() == "The data behind this figure (CSV)"
    assert link.get_attribute("aria-label").startswith("The data behind this figure (CSV): ")
    response = page.request.get(link.evaluate("a => a.href"))
    assert response.ok
    header = response.text().splitlines()[0].split(",")
    assert {"shape", "concurrency", "speedup", "mean_acceptance_length"} <= set(header)
    assert page.watch.foreign == []


def test_figures_and_scroll_hints_work_without_the_themes_script(browser, site_server):
    """figures.js and a11y.js start on a plain page load, with or without the theme's
    document$ (here the theme's script is not loaded at all)."""
    context = browser.new_context(viewport={"width": 390, "height": 844}, color_scheme="light")
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.route(
            "**/assets/javascripts/bundle.*.min.js",
            lambda route: route.fulfill(body="", content_type="text/javascript"),
        )
        page.goto(site_server + "cli/", wait_until="load")
        page.wait_for_selector("pre > code[data-scroll~=right]", state="attached", timeout=5_000)
        page.goto(site_server, wait_until="load")
        assert page.evaluate("() => typeof document$") == "undefined"
        figure = page.locator("#fig-ladder")
        figure.scroll_into_view_if_needed()
        page.wait_for_function("el => el.dataset.state === 'rendered'", arg=figure.element_handle(), timeout=20_000)
        assert errors == []
    finally:
        context.close()


def _tick_fill(page) -> str:
    return page.evaluate("() => getComputedStyle(document.querySelector('#fig-ladder .xtick text')).fill")


def _luminance(rgb: str) -> float:
    values = [float(v) for v in rgb[rgb.index("(") + 1 : rgb.index(")")].split(",")[:3]]
    lin = [(v / 255 / 12.92) if v / 255 <= 0.03928 else ((v / 255 + 0.055) / 1.055) ** 2.4 for v in values]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def test_dark_scheme_keeps_figures_legible(page, site_server):
    page.goto(site_server, wait_until="load")
    render_all(page)
    light = _tick_fill(page)
    page.evaluate("() => window.scrollTo(0, 0)")
    page.click("label[title='Switch to the dark scheme']")
    page.wait_for_function(
        "() => [...document.querySelectorAll('.specfig')].every(e => e.dataset.theme === 'slate')", timeout=10_000
    )
    dark = _tick_fill(page)
    assert dark != light
    background = page.evaluate("() => getComputedStyle(document.body).backgroundColor")
    fg, bg = _luminance(dark), _luminance(background)
    contrast = (max(fg, bg) + 0.05) / (min(fg, bg) + 0.05)
    assert contrast >= 4.5, (dark, background, contrast)
    assert page.watch.errors == []


def test_math_is_typeset_by_the_local_katex(page, site_server):
    page.goto(site_server, wait_until="load")
    page.wait_for_selector(".arithmatex .katex", timeout=10_000)
    raw = page.evaluate(
        "() => [...document.querySelectorAll('.arithmatex')].filter(e => !e.querySelector('.katex')).length"
    )
    assert raw == 0
    assert page.watch.errors == [] and page.watch.foreign == []
