"""The simulator as readers meet it: the answer stays in view on a phone and on a laptop, the
ladder is something to read and to click, an unfit scenario says so at the headline, and a
change made before the data arrives is kept."""

from __future__ import annotations

import re
import time

import pytest

from specmodel import evaluate
from specmodel.readouts import BY_KEY

pytestmark = pytest.mark.browser

READY = "[data-simulator][data-state=ready]"
VIEWPORTS = {"phone": {"width": 390, "height": 844}, "laptop": {"width": 1280, "height": 800}}
CONTROLS = ("concurrency", "context", "gamma", "drafter", "acceptance", "alpha", "engine")


def open_page(browser, url: str, viewport: dict):
    context = browser.new_context(viewport=viewport)
    page = context.new_page()
    page.goto(url, wait_until="load")
    page.wait_for_selector(READY, timeout=20_000)
    return context, page


def headline_in_view(page) -> bool:
    box = page.evaluate("""() => {
        const r = document.querySelector('[data-simulator] .specsim__speedup').getBoundingClientRect();
        return [r.top, r.bottom, r.left, r.right, innerHeight, innerWidth];
    }""")
    top, bottom, left, right, height, width = box
    return top >= 0 and bottom <= height and left >= 0 and right <= width


@pytest.mark.parametrize("size", VIEWPORTS)
def test_the_headline_is_in_view_whenever_a_control_is_used(browser, site_server, size):
    context, page = open_page(browser, site_server, VIEWPORTS[size])
    for name in CONTROLS:
        control = page.locator(f"[data-simulator] [name={name}]").last
        control.scroll_into_view_if_needed()
        control.focus()
        page.keyboard.press("ArrowDown" if name in ("concurrency", "context", "drafter", "acceptance", "engine")
                            else "ArrowRight")  # fmt: skip
        page.wait_for_selector(READY)
        assert headline_in_view(page), (size, name)
    context.close()


def test_a_click_on_a_bar_sets_the_concurrency(browser, site_server):
    context, page = open_page(browser, site_server, VIEWPORTS["laptop"])
    page.click("[data-ladder] [data-concurrency='64']")
    assert page.input_value("[name=concurrency]") == "64"
    assert "concurrency=64" in page.url
    expected = BY_KEY["speedup"].format(float(evaluate(concurrency=64).speedup))
    assert page.text_content("[data-simulator] .specsim__speedup") == expected
    assert page.get_attribute("[data-ladder] [data-concurrency='64']", "aria-pressed") == "true"
    context.close()


def test_the_ladder_says_what_each_bar_means(browser, site_server):
    context, page = open_page(browser, site_server, VIEWPORTS["laptop"])
    title = page.get_attribute("[data-ladder] [data-concurrency='64']", "title")
    speed = BY_KEY["speedup"].format(float(evaluate(concurrency=64).speedup))
    assert title == f"64 sequences: {speed}, slower than plain decoding: a loss"
    # Its accessible name is its visible text (speedup, then concurrency); the tooltip describes it.
    one = page.locator("[data-ladder] [data-concurrency='1']")
    assert re.fullmatch(r"\d+\.\d+x 1", one.evaluate("el => el.textContent.trim()"))
    assert page.get_by_role("button", name=one.evaluate("el => el.textContent.trim()"), exact=True).count() == 1
    assert "does not fit in memory" in page.get_attribute("[data-ladder] [data-concurrency='1024']", "title")
    context.close()


def test_an_unfit_scenario_says_so_at_the_headline(browser, site_server):
    context, page = open_page(browser, site_server + "?concurrency=256&drafter=eagle-32k", VIEWPORTS["laptop"])
    assert not bool(evaluate(concurrency=256, drafter="eagle-32k").fits)
    fit = page.locator("[data-simulator] [data-headline-fit]")
    assert fit.is_visible() and "does not fit in memory" in fit.text_content()
    # The headline, fit note included, is a polite live region: screen readers announce it whole.
    status = page.locator("[data-simulator] [role=status]:has([data-headline-fit])")
    assert status.get_attribute("aria-live") == "polite" and status.get_attribute("aria-atomic") == "true"
    page.select_option("[name=concurrency]", "1")
    page.wait_for_selector(READY)
    assert not fit.is_visible()
    context.close()


def test_a_change_before_the_data_arrives_is_kept(browser, site_server):
    context = browser.new_context(viewport=VIEWPORTS["laptop"])
    page = context.new_page()

    def slow(route):
        time.sleep(1.5)  # a slow connection: the reader acts before the numbers arrive
        route.continue_()

    page.route("**/simulator-*.bin.gz", slow)
    page.goto(site_server, wait_until="domcontentloaded")
    page.wait_for_selector("[data-simulator][data-state=loading]")
    page.select_option("[name=concurrency]", "64")
    page.wait_for_selector(READY, timeout=30_000)
    assert page.input_value("[name=concurrency]") == "64"
    expected = BY_KEY["speedup"].format(float(evaluate(concurrency=64).speedup))
    assert page.text_content("[data-simulator] .specsim__speedup") == expected
    assert "concurrency=64" in page.url
    context.close()


def test_switching_engine_loads_its_numbers_and_keeps_the_setting(browser, site_server):
    context, page = open_page(browser, site_server + "?concurrency=16", VIEWPORTS["laptop"])
    page.check("[name=engine][value=vllm]")
    page.wait_for_selector(READY)
    expected = BY_KEY["speedup"].format(float(evaluate(concurrency=16, engine="vllm").speedup))
    assert page.text_content("[data-simulator] .specsim__speedup") == expected
    assert "engine=vllm" in page.url and "concurrency=16" in page.url
    context.close()


def test_section_7s_log_line_is_the_simulators_at_64_sequences(browser, site_server):
    context, page = open_page(browser, site_server + "?concurrency=64", VIEWPORTS["laptop"])
    shown = page.text_content("[data-simulator] [data-log]")
    article = page.evaluate("""() => [...document.querySelectorAll('.md-content pre:not(.specsim__log) code')]
        .map(e => e.textContent.trim()).filter(t => t.startsWith('SpecDecoding metrics'))""")
    assert article == [shown]
    context.close()
