"""The built site in headless Chromium: every page loads, every figure renders, nothing
reaches another host, nothing logs an error, and the figures follow the dark scheme."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

pytestmark = pytest.mark.browser

#: path -> minimum number of figures
PAGES = {"": 10, "beyond/": 5, "validation/": 2, "model/": 0, "notebook/": 1, "cli/": 0}
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


def test_figures_render_after_instant_navigation(page, site_server):
    page.goto(site_server + "cli/", wait_until="load")
    page.evaluate("() => { window.__sameDocument = true; }")
    page.locator("nav.md-nav--primary").get_by_role("link", name="Article").first.click()
    page.wait_for_url(site_server)
    page.wait_for_selector("#fig-ladder", state="attached")
    assert render_all(page) >= 10
    assert page.evaluate("() => window.__sameDocument === true"), "navigation reloaded the page: not instant"
    assert page.watch.errors == [] and page.watch.foreign == []


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
