"""The built site served at another address than the one it was built for (another host
name and port than its site_url): links between pages and the article's links to a setting
of the simulator load their target there, and no request goes to another host (the built-in
address included). Only the canonical links name site_url."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from benchmarks.common import free_port, serve

pytestmark = pytest.mark.browser

HOST = "localhost"  # the site is built for http://127.0.0.1:<port>/ (tests/conftest.py)


@pytest.fixture(scope="module")
def elsewhere(built_site, site_url):
    """The built site served at http://localhost:<another port>/; yields that URL."""
    port = free_port()
    assert port != urlsplit(site_url).port
    url = f"http://{HOST}:{port}/"
    assert urlsplit(url).netloc != urlsplit(site_url).netloc
    with serve(built_site, port):
        yield url


@pytest.fixture
def page(browser, elsewhere):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme="light")
    pg = context.new_page()
    host = urlsplit(elsewhere).netloc
    pg.foreign, pg.errors = [], []

    def request(r):
        parts = urlsplit(r.url)
        if parts.scheme in ("http", "https", "ws", "wss") and parts.netloc != host:
            pg.foreign.append(r.url)

    pg.on("request", request)
    pg.on("pageerror", lambda e: pg.errors.append(str(e)))
    pg.on("console", lambda m: m.type == "error" and pg.errors.append(m.text))
    yield pg
    context.close()


def _in_view(page, selector: str) -> bool:
    return page.evaluate(
        """(sel) => { const r = document.querySelector(sel).getBoundingClientRect();
                      return r.bottom > 0 && r.top < window.innerHeight; }""",
        selector,
    )


def test_links_between_pages_load_their_target(page, elsewhere, site_url):
    page.goto(elsewhere + "cli/", wait_until="load")
    assert site_url in page.evaluate("() => document.querySelector('link[rel=canonical]').href")
    page.locator("nav.md-nav--primary").get_by_role("link", name="Article").first.click()
    page.wait_for_url(elsewhere)
    page.wait_for_load_state("load")
    page.wait_for_selector("#simulator", state="attached")
    page.locator("nav.md-nav--primary").get_by_role("link", name="Does it match a real server?").first.click()
    page.wait_for_url(elsewhere + "validation/")
    page.wait_for_load_state("load")
    figure = page.locator("#fig-validation")
    figure.scroll_into_view_if_needed()
    page.wait_for_function("el => el.dataset.state === 'rendered'", arg=figure.element_handle(), timeout=20_000)
    assert page.foreign == [] and page.errors == []


def test_a_link_to_a_simulator_setting_opens_the_simulator_there(page, elsewhere):
    page.goto(elsewhere, wait_until="load")
    link = page.locator("#figure-roofline a.specfig-open")
    href = link.get_attribute("href")
    assert href.startswith("?") and href.endswith("#simulator")
    link.scroll_into_view_if_needed()
    link.click()
    # The simulator may take the link in hand (and write its whole setting into the address);
    # either way the page at this address shows the setting, at the simulator.
    page.wait_for_function("q => location.search.includes(q)", arg=href[1:].split("#")[0])
    page.wait_for_load_state("load")
    page.wait_for_timeout(500)
    assert urlsplit(page.url).netloc == urlsplit(elsewhere).netloc
    assert _in_view(page, "#simulator"), "the page did not open at the simulator"
    assert page.foreign == [] and page.errors == []
