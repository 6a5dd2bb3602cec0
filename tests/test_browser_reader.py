"""The simulator as readers meet it: the answer stays near the controls on a phone and on a laptop, the
ladder is something to read and to click, an unfit scenario says so at the headline, and a
change made before the data arrives is kept."""

from __future__ import annotations

import re

import pytest

from specmodel import evaluate
from specmodel.readouts import BY_KEY
from tests.simulator_page import READY, control_value, set_controls

pytestmark = pytest.mark.browser

VIEWPORTS = {"phone": {"width": 390, "height": 844}, "laptop": {"width": 1280, "height": 800}}
CONTROLS = ("concurrency", "context", "gamma", "drafter", "acceptance", "alpha", "engine")


def open_page(browser, url: str, viewport: dict):
    context = browser.new_context(viewport=viewport)
    page = context.new_page()
    page.goto(url, wait_until="load")
    page.wait_for_selector(READY, timeout=20_000)
    return context, page


def headline_in_view(page) -> bool:
    """Whether the speedup lies wholly in the viewport, below the page's header."""
    box = page.evaluate("""() => {
        const r = document.querySelector('[data-simulator] .specsim__speedup').getBoundingClientRect();
        const header = document.querySelector('.md-header').getBoundingClientRect().bottom;
        return [r.top, r.bottom, r.left, r.right, innerHeight, innerWidth, header];
    }""")
    top, bottom, left, right, height, width, header = box
    return top >= header and bottom <= height and left >= 0 and right <= width


@pytest.mark.parametrize("size", VIEWPORTS)
def test_the_headline_is_in_view_whenever_a_control_is_used(browser, site_server, size):
    """On a laptop the answer keeps beside every control (in a column of its own, covering
    nothing); on a phone it sits right above the controls, in view while the first is used, and
    nothing sticky covers the controls below it (tests/test_browser_simulator_layout.py)."""
    context, page = open_page(browser, site_server, VIEWPORTS[size])
    for name in CONTROLS if size == "laptop" else CONTROLS[:1]:
        control = page.locator(f"[data-simulator] [name={name}]").last
        control.scroll_into_view_if_needed()
        control.focus()
        page.keyboard.press("ArrowDown" if name in ("drafter", "acceptance", "engine") else "ArrowRight")
        page.wait_for_selector(READY)
        assert headline_in_view(page), (size, name)
    context.close()


def test_a_click_on_a_bar_sets_the_concurrency(browser, site_server):
    context, page = open_page(browser, site_server, VIEWPORTS["laptop"])
    page.click("[data-ladder] [data-concurrency='64']")
    page.wait_for_selector(READY)
    assert control_value(page, "concurrency") == "64"
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
    # Its accessible name is its visible text (concurrency, then speedup); the tooltip describes it.
    one = page.locator("[data-ladder] [data-concurrency='1']")
    assert re.fullmatch(r"1\s+\d+\.\d+x", one.evaluate("el => el.textContent.trim()"))
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
    set_controls(page, {"concurrency": 1})
    assert not fit.is_visible()
    context.close()


class _Held:
    """Requests for the simulator's data held until the test releases them (a slow connection:
    the reader acts before the numbers arrive); after the release they go through at once."""

    def __init__(self, page) -> None:
        self.routes: list = []
        self.released = False
        page.route("**/data/sim/*.bin.gz", self._handle)

    def _handle(self, route) -> None:
        if self.released:
            route.continue_()
        else:
            self.routes.append(route)

    def release(self) -> None:
        self.released = True
        for route in self.routes:
            route.continue_()


def test_a_change_before_the_data_arrives_is_kept_and_nothing_stale_is_shown(browser, site_server):
    context = browser.new_context(viewport=VIEWPORTS["laptop"])
    page = context.new_page()
    held = _Held(page)
    # The default setting's numbers come with the page; n-gram lookup's must be fetched.
    page.goto(site_server + "?drafter=ngram", wait_until="domcontentloaded")
    page.wait_for_selector("[data-simulator][data-state=loading]")
    set_controls(page, {"concurrency": 64}, wait=False)
    # While the numbers are on their way, none is shown: not the default's, not a guess.
    assert page.get_attribute("[data-simulator]", "data-state") == "loading"
    shown = page.text_content("[data-simulator] .specsim__speedup")
    assert shown == "…", shown
    assert "x" not in page.text_content("[data-ladder] [data-concurrency='64'] .specsim__value")
    held.release()
    page.wait_for_selector(READY, timeout=30_000)
    assert control_value(page, "concurrency") == "64" and control_value(page, "drafter") == "ngram"
    expected = BY_KEY["speedup"].format(float(evaluate(concurrency=64, drafter="ngram").speedup))
    assert page.text_content("[data-simulator] .specsim__speedup") == expected
    assert "concurrency=64" in page.url
    context.close()


def test_a_change_before_the_script_runs_is_read_from_the_controls(browser, site_server):
    """A reader who moves a control while the page is still arriving keeps that choice: the
    script, when it starts, reads the controls rather than resetting them. Here the page is
    served with the simulator's script held back (wrapped in a function the test calls), as if
    it had not arrived yet when the reader acted."""
    context = browser.new_context(viewport=VIEWPORTS["laptop"])
    page = context.new_page()
    html = page.request.get(site_server).text()
    start = html.index("<script>/* The simulator at the top of the article.")
    end = html.index("</script>", start)
    held = html[:start] + "<script>window.startSimulator = function () {" + html[start + 8 : end] + "};" + html[end:]
    page.route(site_server, lambda route: route.fulfill(status=200, content_type="text/html", body=held))
    page.goto(site_server, wait_until="load")
    assert page.get_attribute("[data-simulator]", "data-state") is None  # the script has not run
    page.evaluate("""() => {
        const form = document.querySelector('[data-simulator] form');
        form.elements.concurrency.value = '6';  // the slider's position for 64 sequences
        form.elements.gamma.value = '2';
        for (const r of form.elements.drafter) r.checked = r.value === 'ngram';
    }""")
    page.evaluate("() => window.startSimulator()")
    page.wait_for_selector(READY, timeout=30_000)
    assert control_value(page, "concurrency") == "64" and control_value(page, "gamma") == "2"
    assert control_value(page, "drafter") == "ngram"
    expected = BY_KEY["speedup"].format(float(evaluate(concurrency=64, gamma=2, drafter="ngram").speedup))
    assert page.text_content("[data-simulator] .specsim__speedup") == expected
    assert "concurrency=64" in page.url and "drafter=ngram" in page.url
    context.close()


def test_an_engine_switch_never_shows_the_other_engines_answer(browser, site_server):
    context = browser.new_context(viewport=VIEWPORTS["laptop"])
    page = context.new_page()
    held = _Held(page)  # nothing is prefetched: the vLLM slice is not here when chosen
    page.goto(site_server, wait_until="load")
    page.wait_for_selector(READY)
    page.evaluate("() => document.querySelector('[name=engine][value=vllm]').click()")
    assert page.get_attribute("[data-simulator]", "data-state") == "loading"
    assert page.text_content("[data-simulator] .specsim__speedup") == "…"  # not the ideal engine's
    assert page.text_content("[data-simulator] [data-verdict]").startswith("(loading")
    held.release()
    page.wait_for_selector(READY, timeout=30_000)
    expected = BY_KEY["speedup"].format(float(evaluate(engine="vllm").speedup))
    assert page.text_content("[data-simulator] .specsim__speedup") == expected
    context.close()


def test_switching_engine_loads_its_numbers_and_keeps_the_setting(browser, site_server):
    context, page = open_page(browser, site_server + "?concurrency=16", VIEWPORTS["laptop"])
    page.check("[name=engine][value=vllm]")
    page.wait_for_selector(READY)
    expected = BY_KEY["speedup"].format(float(evaluate(concurrency=16, engine="vllm").speedup))
    assert page.text_content("[data-simulator] .specsim__speedup") == expected
    assert "engine=vllm" in page.url and "concurrency=16" in page.url
    context.close()


def test_section_8s_log_line_is_the_simulators_at_64_sequences(browser, site_server):
    context, page = open_page(browser, site_server + "?concurrency=64", VIEWPORTS["laptop"])
    shown = page.text_content("[data-simulator] [data-log]")
    article = page.evaluate("""() => [...document.querySelectorAll('.md-content pre:not(.specsim__log) code')]
        .map(e => e.textContent.trim()).filter(t => t.startsWith('SpecDecoding metrics'))""")
    assert article == [shown]
    context.close()


def test_every_control_has_a_name_and_the_sliders_say_their_value(browser, site_server):
    context, page = open_page(browser, site_server, VIEWPORTS["laptop"])
    names = {
        "concurrency": ("Concurrent sequences", "1 sequence"),
        "context": ("Context (prompt tokens)", "2,048 tokens"),
        "gamma": ("Draft tokens per iteration, γ (vLLM's num_speculative_tokens)", "4"),
        "alpha": ("Acceptance rate, α", "0.75"),
    }
    for name, (label, value) in names.items():
        slider = page.get_by_role("slider", name=label, exact=True)
        assert slider.count() == 1, name
        assert slider.get_attribute("name") == name and slider.get_attribute("aria-valuetext") == value
    for group in ("Drafts come from", "Acceptance across draft positions", "Engine"):
        assert page.get_by_role("group", name=group).count() == 1
    set_controls(page, {"concurrency": 64, "context": 8192})
    # The simulator's own slider (a figure above it has a slider over the batch too).
    slider = page.locator("[data-simulator]").get_by_role("slider", name="Concurrent sequences")
    assert slider.get_attribute("aria-valuetext") == "64 sequences"
    assert page.text_content("[data-output=context]") == "8,192 tokens"
    context.close()


def test_one_live_region_announces_each_change_once(browser, site_server):
    """Only the headline is a live region (the token row and the readouts are not), and while
    a setting's numbers are on their way it is busy, so a screen reader announces the answer
    once, not the waiting text and then the answer."""
    context = browser.new_context(viewport=VIEWPORTS["laptop"])
    page = context.new_page()
    held = _Held(page)
    page.goto(site_server, wait_until="load")
    page.wait_for_selector(READY)
    live = page.locator("[data-simulator] [aria-live]")
    assert live.count() == 1 and live.get_attribute("role") == "status"
    page.evaluate("() => document.querySelector('[name=drafter][value=ngram]').click()")
    assert live.get_attribute("aria-busy") == "true"
    held.release()
    page.wait_for_selector(READY)
    assert live.get_attribute("aria-busy") is None
    context.close()
