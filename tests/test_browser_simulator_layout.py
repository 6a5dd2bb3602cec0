"""The simulator on first contact, in headless Chromium: nothing covers a control, a ladder row
or a readout at any scroll position (phone and laptop, light and dark scheme, with the
does-not-fit message showing too); Reset returns to the article's setting; the token row, the
ladder and the time split explain themselves on screen; a readout an engine does not define
says so; the drafter's sizes are shown beside its ratios; and the verdict's colours mark the
verdict alone."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import numpy as np
import pytest

from sitebuild.config import SiteSettings
from sitebuild.simulator.data import axes as simulator_axes
from sitebuild.simulator.data import default_text
from specmodel import evaluate
from specmodel.model.scenario import default_scenario
from specmodel.model.timing import TIME_PARTS
from specmodel.readouts import BY_KEY
from tests.simulator_page import READY, control_value, set_controls

pytestmark = pytest.mark.browser

WIDTHS = {"phone": {"width": 390, "height": 844}, "laptop": {"width": 1280, "height": 900}}
SCHEMES = {"light": "default", "dark": "slate"}  # prefers-color-scheme -> Material's scheme
#: The largest concurrency at the longest context: far beyond the card's memory.
UNFIT = {"concurrency": max(simulator_axes(SiteSettings())["concurrency"]),
         "context": max(simulator_axes(SiteSettings())["context"])}  # fmt: skip
STEP = 80  # px scrolled between two looks

#: Everything a reader reads or operates in the simulator: every control's input, every ladder
#: row's button and every readout's value.
TARGETS = ", ".join(
    f"[data-simulator] {s}"
    for s in (
        "form input",
        "[data-ladder] [data-concurrency]",
        "[data-readout]",
        "[data-fits]",
        "[data-acceptance]",
        "[data-best-gamma]",
        "[data-size]",
        "[data-engine-note]",
        "[data-part-plain]",
        "[data-part-spec]",
        "[data-part-total]",
        "[data-reset]",
        "[data-resample]",
    )
)

#: The targets whose centre lies in the viewport below the page's header, and those of them
#: that another element covers there (the element at their centre is neither them nor inside them).
COVERED = """sel => {
    const header = document.querySelector('.md-header').getBoundingClientRect().bottom;
    const height = document.documentElement.clientHeight, width = document.documentElement.clientWidth;
    const seen = [], covered = [];
    for (const el of document.querySelectorAll(sel)) {
        const r = el.getBoundingClientRect();
        if (!r.width || !r.height) continue;  // not rendered (hidden)
        const x = r.left + r.width / 2, y = r.top + r.height / 2;
        if (y <= header || y >= height - 1 || x <= 0 || x >= width - 1) continue;  // inside the viewport
        seen.push(el);
        const hit = document.elementFromPoint(x, y);
        if (!(hit === el || el.contains(hit))) {
            const what = e => e ? e.tagName + '.' + [...e.classList].join('.') +
                (e.dataset.concurrency || e.name || Object.keys(e.dataset).join(',')) : 'nothing';
            covered.push(what(el) + ' under ' + what(hit));
        }
    }
    return {seen: seen.length, covered};
}"""


def _open(browser, site_server, size: str, scheme: str, query: str = ""):
    context = browser.new_context(viewport=WIDTHS[size], color_scheme=scheme)
    page = context.new_page()
    page.goto(site_server + query, wait_until="load")
    page.wait_for_selector(READY, timeout=20_000)
    assert page.evaluate("() => document.body.dataset.mdColorScheme") == SCHEMES[scheme]
    return context, page


def _scroll_through(page) -> tuple[int, list[str]]:
    """Scroll from above the simulator to below it in steps; every target seen, and each
    covering found (with its scroll position)."""
    top, bottom = page.evaluate("""() => {
        const r = document.querySelector('[data-simulator]').getBoundingClientRect();
        return [r.top + scrollY, r.bottom + scrollY];
    }""")
    seen, covered = 0, []
    for y in range(max(0, int(top) - 400), int(bottom), STEP):
        page.evaluate("y => window.scrollTo({top: y, behavior: 'instant'})", y)
        found = page.evaluate(COVERED, TARGETS)
        seen += found["seen"]
        covered += [f"at {y}px: {c}" for c in found["covered"]]
    return seen, covered


@pytest.mark.parametrize("setting", ["default", "unfit"])
@pytest.mark.parametrize("scheme", list(SCHEMES))
@pytest.mark.parametrize("size", list(WIDTHS))
def test_nothing_covers_a_control_a_ladder_row_or_a_readout(browser, site_server, size, scheme, setting):
    query = "" if setting == "default" else "?" + "&".join(f"{k}={v}" for k, v in UNFIT.items())
    context, page = _open(browser, site_server, size, scheme, query)
    try:
        if setting == "unfit":
            assert not bool(evaluate(**UNFIT).fits)
            assert page.locator("[data-simulator] [data-headline-fit]").is_visible()
        seen, covered = _scroll_through(page)
        # Every control, rung and readout was looked at, many times over.
        assert seen > 5 * page.locator(TARGETS).count(), seen
        assert covered == [], covered[:12]
    finally:
        context.close()


def test_on_a_phone_the_answer_sits_right_above_the_controls(browser, site_server):
    context, page = _open(browser, site_server, "phone", "light")
    gap = page.evaluate("""() => {
        const answer = document.querySelector('[data-simulator] .specsim__headline').getBoundingClientRect();
        const form = document.querySelector('[data-simulator] form').getBoundingClientRect();
        return form.top - answer.bottom;
    }""")
    assert 0 <= gap < 24, gap
    context.close()


@pytest.fixture
def page(browser, site_server):
    context = browser.new_context(viewport=WIDTHS["laptop"])
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.goto(site_server, wait_until="load")
    pg.wait_for_selector(READY, timeout=20_000)
    yield pg
    assert errors == [], errors
    context.close()


def _controls(page) -> dict[str, str]:
    return {name: control_value(page, name) for name in simulator_axes(SiteSettings())}


def test_the_try_line_names_controls_that_exist(page):
    line = page.text_content("[data-simulator] .specsim__try")
    labels = page.evaluate("""() => [...document.querySelectorAll('[data-simulator] form :is(label[for], legend)')]
        .map(e => e.textContent.trim())""")
    named = [label for label in labels if f"“{label}”" in line]
    assert line.startswith("Try this:") and len(named) >= 2, (line, labels)
    assert page.locator("[data-simulator] .specsim__try").is_visible()


def test_reset_returns_every_control_to_the_articles_setting(page):
    default = default_scenario(SiteSettings())
    expected = {name: str(getattr(default, name)) for name in simulator_axes(SiteSettings())}
    assert _controls(page) == expected
    setting = {"concurrency": 256, "context": 8192, "gamma": 7, "drafter": "eagle", "acceptance": "same",
               "alpha": 0.5, "engine": "vllm"}  # fmt: skip
    set_controls(page, setting)
    assert _controls(page) != expected and parse_qs(urlsplit(page.url).query)
    page.click("[data-simulator] [data-reset]")
    page.wait_for_selector(READY)
    assert _controls(page) == expected
    # The address no longer holds a setting: a reload opens the article's setting too.
    assert parse_qs(urlsplit(page.url).query) == {} and urlsplit(page.url).fragment == ""
    text = default_text(SiteSettings())
    assert page.text_content("[data-simulator] [data-readout=speedup]") == text["speedup"]
    assert page.text_content("[data-simulator] [data-log]") == text["log"]
    page.reload(wait_until="load")
    page.wait_for_selector(READY)
    assert _controls(page) == expected


def test_the_token_row_has_a_legend_on_screen(page):
    legend = page.locator("[data-simulator] [data-token-legend]")
    assert legend.is_visible()
    items = legend.locator("li")
    states = ("accepted", "rejected", "skipped", "emitted")
    assert items.count() == len(states)
    for i, state in enumerate(states):
        item = items.nth(i)
        assert item.is_visible() and item.locator(f".specsim__token.is-{state}").is_visible(), state
    text = legend.text_content()
    for words in ("accepted guess", "first rejected guess", "thrown away", "the target emits"):
        assert words in text, (words, text)
    # Each state looks different from the others, without colour words: compare their styles.
    looks = page.evaluate("""() => [...document.querySelectorAll('[data-token-legend] .specsim__token')].map(e => {
        const s = getComputedStyle(e);
        return [s.borderTopStyle, s.borderTopWidth, s.backgroundColor, s.textDecorationLine, s.fontWeight].join(' ');
    })""")
    assert len(set(looks)) == len(states), looks


def _verdict_colours(page) -> dict[str, str]:
    """The computed colours the headline's speedup takes for a gain and for a loss."""
    colours = {}
    for verdict, setting in (("faster", {"concurrency": 1}), ("slower", {"concurrency": 64})):
        set_controls(page, setting)
        colours[verdict] = page.evaluate(
            "() => getComputedStyle(document.querySelector('[data-simulator] .specsim__speedup')).color"
        )
    assert colours["faster"] != colours["slower"]
    return colours


def test_verdict_colours_mark_the_verdict_alone(page):
    colours = _verdict_colours(page)
    # The ladder's bars take the verdict's colours ...
    bars = page.evaluate("""() => Object.fromEntries(Object.entries({
        faster: '[data-ladder] [data-concurrency]:not(.is-loss):not(.is-even)', slower: '[data-ladder] .is-loss',
    }).map(([v, sel]) => [v, getComputedStyle(document.querySelector(sel + ' .specsim__bar')).backgroundColor]))""")
    assert bars == colours, (bars, colours)
    # ... and nothing else: not the token chips, not the focus ring.
    chips = page.evaluate("""() => [...document.querySelectorAll('[data-simulator] .specsim__token')].flatMap(e => {
        const s = getComputedStyle(e);
        return [s.color, s.backgroundColor, s.borderTopColor];
    })""")
    assert not set(chips) & set(colours.values()), chips
    page.focus("[data-ladder] [data-concurrency='4']")
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Tab")
    assert page.evaluate("() => document.activeElement.dataset.concurrency") == "4"
    ring = page.evaluate("() => getComputedStyle(document.activeElement).outlineColor")
    accent = page.evaluate(RESOLVED, "var(--md-accent-fg-color)")  # the site's pink focus ring elsewhere
    assert ring not in (*colours.values(), accent), (ring, colours, accent)


#: A CSS colour as the browser computes it (rgb(...)), resolved on an element in the page.
RESOLVED = """c => {
    const e = document.createElement('i');
    e.style.color = c;
    document.querySelector('[data-simulator]').append(e);
    const v = getComputedStyle(e).color;
    e.remove();
    return v;
}"""


def _bars(page) -> dict:
    return page.evaluate("""() => {
        const out = {};
        for (const stack of document.querySelectorAll('[data-simulator] [data-stack]')) {
            const track = stack.getBoundingClientRect();
            const segs = {};
            let end = track.left;
            for (const seg of stack.querySelectorAll('[data-seg]')) {
                const r = seg.getBoundingClientRect();
                segs[seg.dataset.seg] = r.width / track.width;
                if (r.width) end = Math.max(end, r.right);
            }
            out[stack.dataset.stack] = {segs, length: (end - track.left) / track.width};
        }
        return out;
    }""")


@pytest.mark.parametrize(
    "setting",
    [{}, {"concurrency": 64}, {"engine": "vllm", "concurrency": 16}, {"drafter": "ngram", "context": 512}, UNFIT],
    ids=["default", "loss", "vllm", "ngram", "unfit"],
)
def test_the_time_bars_are_the_models_shares(page, setting):
    full = {k: getattr(default_scenario(SiteSettings()), k) for k in simulator_axes(SiteSettings())} | setting
    set_controls(page, full)
    ev = evaluate(**full)
    plain_total = float(ev.base_time_parts.sum())
    spec_total = float(ev.spec_time_parts.sum()) / plain_total
    scale = max(1.0, spec_total)  # the longer bar fills its track
    bars = _bars(page)
    for mode, parts in (("plain", ev.base_time_parts), ("spec", ev.spec_time_parts)):
        shares = {p: float(np.ravel(parts)[i]) / plain_total for i, p in enumerate(TIME_PARTS)}
        for part, share in shares.items():
            assert bars[mode]["segs"][part] == pytest.approx(share / scale, abs=0.01), (setting, mode, part)
    # The speculative bar is longer than the plain one exactly where speculation loses time.
    longer = bars["spec"]["length"] > bars["plain"]["length"]
    assert longer == (spec_total > 1.0), (setting, bars)
    total = page.text_content("[data-simulator] [data-stacks] [data-part-total]")
    assert total == f"{100 * spec_total:.0f}%"
    # The table under the bars (their legend) lists every part either bar shows, with its values as text.
    shown = {p: (f"{100 * float(np.ravel(ev.base_time_parts)[i]) / plain_total:.0f}%",
                 f"{100 * float(np.ravel(ev.spec_time_parts)[i]) / plain_total:.0f}%")
             for i, p in enumerate(TIME_PARTS)}  # fmt: skip
    expected = {p: texts for p, texts in shown.items() if texts != ("0%", "0%")}
    rows = page.evaluate("""() => Object.fromEntries([...document.querySelectorAll('[data-simulator] [data-part]')]
        .filter(r => !r.hidden).map(r => [r.dataset.part,
            [r.querySelector('[data-part-plain]').textContent, r.querySelector('[data-part-spec]').textContent]]))""")
    assert rows == {p: list(t) for p, t in expected.items()}, setting


def test_a_readout_the_engine_does_not_define_says_so(page):
    idle = page.locator("[data-simulator] [data-engine-only=verify_idle]")
    value, note = idle.locator("[data-readout=verify_idle]"), idle.locator("[data-engine-note]")
    assert value.is_visible() and not note.is_visible()
    assert value.text_content() == BY_KEY["verify_idle"].format(float(evaluate().verify_idle))
    set_controls(page, {"engine": "vllm"})
    assert not value.is_visible() and note.is_visible()
    assert "not defined for this engine" in note.text_content()
    # The vLLM engine's time split shows arithmetic that memory does not hide: an idle share beside it would not hold.
    ev = evaluate(engine="vllm")
    assert float(np.ravel(ev.spec_time_parts)[TIME_PARTS.index("target_arithmetic")]) > 0
    set_controls(page, {"engine": "ideal"})
    assert value.is_visible() and not note.is_visible()


def test_each_engine_says_what_it_changes_beside_its_choice(page):
    for engine in ("ideal", "vllm"):
        radio = page.locator(f"[data-simulator] [name=engine][value={engine}]")
        note = page.locator("#" + radio.get_attribute("aria-describedby"))
        assert note.is_visible()
        text = note.text_content()
        assert "speedup" in text and "arithmetic" in text, text
        box, at = note.bounding_box(), radio.bounding_box()
        assert 0 <= box["y"] - at["y"] < 60, (box, at)  # right under its radio button


@pytest.mark.parametrize("drafter", simulator_axes(SiteSettings())["drafter"])
def test_the_drafters_sizes_are_shown_beside_its_ratios(page, drafter):
    set_controls(page, {"drafter": drafter})
    ev = evaluate(drafter=drafter)
    gib, kib = 2.0**30, 2.0**10
    weights = (f"{float(ev.draft_weight_bytes) / gib:,.2f} GiB of the target's "
               f"{float(ev.target_weight_bytes) / gib:,.2f} GiB")  # fmt: skip
    cache = (f"{float(ev.draft_kv_bytes_per_token) / kib:,.0f} KiB of the target's "
             f"{float(ev.target_kv_bytes_per_token) / kib:,.0f} KiB")  # fmt: skip
    for key, text in (("draft_weight_fraction", weights), ("draft_kv_fraction", cache)):
        size = page.locator(f"[data-simulator] [data-size={key}]")
        assert size.is_visible() and size.text_content() == text, (drafter, key)
        # Beside the ratio: in the same row as its value.
        row = page.locator(f"[data-simulator] dd:has([data-readout={key}])")
        assert row.locator(f"[data-size={key}]").count() == 1


def test_without_javascript_the_try_line_is_there_and_no_reset_is_offered(browser, site_server):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(site_server)
    assert page.locator("[data-simulator] .specsim__try").is_visible()
    assert page.locator("[data-simulator] [data-reset]").count() == 1
    assert not page.locator("[data-simulator] [data-reset]").is_visible()  # nothing would handle it
    context.close()
