"""One visual grammar for the figures, in headless Chromium at a phone's width and a desktop's:
each slider or menu of a figure is one native control above it (Plotly draws none of its own),
reached and operated with the keyboard and the pointer, and applying its step exactly as
Plotly would; numbers quoted from papers look different from the text around them in both
colour schemes and say their source without a hover; and the article's tables fit its column
at 1280 px (a table elsewhere that cannot fit has its key column first)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

WIDTHS = {"phone": 390, "desktop": 1280}
#: Pages with figures, and the figures on them that have a slider or a menu (at least these).
PAGES = {
    "": {"timeline", "roofline", "ladder", "breakdown", "gamma", "gamma-schedule", "breakeven"},
    "hardware/": {"hardware"},
}
OTHER_PAGES = ["beyond/", "validation/", "notebook/"]

#: For each figure: its id, how many sliders and menus its published JSON has, how many native
#: controls it shows, and how many of Plotly's own sliders and menus are drawn and visible.
COUNTS = """
async (el) => {
  const figure = el.dataset.src ? await (await fetch(el.dataset.src)).json() : JSON.parse(el.dataset.figure);
  const shown = (n) => { const r = n.getBoundingClientRect(); return r.width > 0 && r.height > 0 &&
    getComputedStyle(n).visibility !== 'hidden'; };
  const box = el.previousElementSibling && el.previousElementSibling.matches('.specfig-controls')
    ? el.previousElementSibling : null;
  const native = box ? [...box.querySelectorAll('input[type=range], select')].filter(shown).length : 0;
  const plotly = [...el.querySelectorAll('.slider-container, .updatemenu-container')].filter(shown).length;
  return {id: el.id.slice(4), json: (figure.layout.sliders || []).length + (figure.layout.updatemenus || []).length,
          native, plotly};
}
"""

#: The state a figure's controls set: each trace's visibility, and each slider's and menu's active step.
STATE = """el => ({
  visible: el.data.map(t => t.visible === undefined ? true : t.visible),
  active: [...(el.layout.sliders || []), ...(el.layout.updatemenus || [])].map(c => c.active),
})"""

#: What Plotly would show after step ``k`` of control ``n`` (sliders, then menus): each trace's
#: visibility once the step's restyle is applied to the figure as it is.
EXPECTED = """(el, [n, k]) => {
  const controls = [...(el.layout.sliders || []).map(s => s.steps),
                    ...(el.layout.updatemenus || []).map(m => m.buttons)];
  const step = controls[n][k];
  const now = el.data.map(t => t.visible === undefined ? true : t.visible);
  if (step.method !== 'restyle') return {method: step.method, visible: now};
  const visible = step.args[0].visible;
  const indices = step.args[1];
  const out = now.slice();
  if (indices === undefined) visible.forEach((v, i) => { out[i] = v; });
  else indices.forEach((i, j) => { out[i] = Array.isArray(visible) ? visible[j] : visible; });
  return {method: step.method, visible: out, steps: controls[n].length};
}"""


def render_all(page, timeout: int = 20_000) -> int:
    """Scroll every figure into view (each draws when near the viewport), wait until all are drawn."""
    figures = page.locator(".specfig")
    for i in range(figures.count()):
        figure = figures.nth(i)
        figure.scroll_into_view_if_needed()
        page.wait_for_function("el => el.dataset.state === 'rendered'", arg=figure.element_handle(), timeout=timeout)
    return figures.count()


@pytest.fixture(scope="module", params=list(WIDTHS))
def page(request, browser, site_server):
    """A page at a phone's or a desktop's width (light scheme), shared by this module's tests."""
    context = browser.new_context(viewport={"width": WIDTHS[request.param], "height": 900}, color_scheme="light")
    pg = context.new_page()
    pg.errors = []
    pg.on("pageerror", lambda e: pg.errors.append(str(e)))
    pg.on("console", lambda m: m.type == "error" and pg.errors.append(m.text))
    yield pg
    context.close()


@pytest.mark.parametrize("path", [*PAGES, *OTHER_PAGES])
def test_each_slider_and_menu_is_one_visible_native_control_and_plotly_draws_none(page, site_server, path):
    page.errors.clear()
    page.goto(site_server + path, wait_until="load")
    assert render_all(page) > 0
    counts = [page.locator(".specfig").nth(i).evaluate(COUNTS) for i in range(page.locator(".specfig").count())]
    assert {c["id"] for c in counts if c["json"]} >= PAGES.get(path, set())
    assert [c for c in counts if c["native"] != c["json"] or c["plotly"]] == []
    assert page.errors == []


def _controls(page, figure):
    """The native controls of a figure: (id, tag) of each, sliders first, then menus."""
    return figure.evaluate(
        "el => [...el.previousElementSibling.querySelectorAll('input[type=range], select')].map(c => [c.id, c.tagName])"
    )


def _choose(page, control: str, tag: str, k: int, steps: int, keyboard: bool) -> None:
    """Pick step ``k`` of ``steps`` of a native control with the keyboard (Home, then the arrow
    keys) or the pointer (a menu's option; a click at either end of a slider's rail)."""
    if keyboard:
        page.focus(f"#{control}")
        page.keyboard.press("Home")
        for _ in range(k):
            page.keyboard.press("ArrowDown" if tag == "SELECT" else "ArrowRight")
    elif tag == "SELECT":
        page.select_option(f"#{control}", str(k))
    else:
        assert k in (0, steps - 1), "a click picks an end of the rail"
        box = page.locator(f"#{control}").bounding_box()
        x = box["x"] + 2 if k == 0 else box["x"] + box["width"] - 2
        page.mouse.click(x, box["y"] + box["height"] / 2)


def _operations(start: int, steps: int, tag: str) -> list[tuple[int, bool]]:
    """(step, by keyboard) to try on a control whose step ``start`` is active: the next step by
    keyboard, then another by the pointer (an end of a slider's rail)."""
    first = (start + 1) % steps
    if tag == "SELECT":
        return [(first, True), ((first + 1) % steps, False)]
    return [(first, True), (0 if first else steps - 1, False)]


@pytest.mark.parametrize("path", list(PAGES))
def test_operating_each_native_control_changes_the_figure_as_plotly_would(page, site_server, path):
    """Each control, by keyboard and by pointer: the figure shows what the step's restyle shows
    (applied by hand to the figure as it was), the step is marked active, and the control shows it."""
    page.errors.clear()
    page.goto(site_server + path, wait_until="load")
    render_all(page)
    for fid in sorted(PAGES[path]):
        figure = page.locator(f"#fig-{fid}")
        figure.scroll_into_view_if_needed()
        el = figure.element_handle()
        for n, (control, tag) in enumerate(_controls(page, figure)):
            state = figure.evaluate(STATE)
            steps = figure.evaluate(EXPECTED, [n, 0])["steps"]
            for k, keyboard in _operations(state["active"][n], steps, tag):
                expected = figure.evaluate(EXPECTED, [n, k])
                assert expected["method"] == "restyle", (fid, n)
                _choose(page, control, tag, k, steps, keyboard)
                page.wait_for_function(
                    "([el, n, k]) => [...(el.layout.sliders || []), ...(el.layout.updatemenus || [])][n].active === k",
                    arg=[el, n, k],
                    timeout=5_000,
                )
                after = figure.evaluate(STATE)
                assert after["visible"] == expected["visible"] != state["visible"], (fid, n, k, keyboard)
                assert page.locator(f"#{control}").evaluate("c => c.value") == str(k)
                state = after
    assert page.errors == []


def test_a_native_slider_is_a_range_input_whose_arrow_keys_redraw_the_figure(page, site_server):
    page.goto(site_server, wait_until="load")
    figure = page.locator("#fig-ladder")
    render_all(page)
    figure.scroll_into_view_if_needed()
    before = figure.evaluate(STATE)
    page.focus("#fig-ladder-control-0")
    page.keyboard.press("ArrowLeft")
    page.wait_for_function(
        "([el, a]) => el.layout.sliders[0].active === a", arg=[figure.element_handle(), before["active"][0] - 1]
    )
    after = figure.evaluate(STATE)
    assert after["visible"] != before["visible"]
    assert sum(map(bool, after["visible"])) == sum(map(bool, before["visible"]))
    text = page.locator("#fig-ladder-control-0").get_attribute("aria-valuetext")
    label = figure.evaluate(f"el => el.layout.sliders[0].steps[{after['active'][0]}].label")
    assert text == label


@pytest.fixture(params=["light", "dark"])
def scheme_page(request, browser, site_server):
    """The article in the light or the dark scheme (the reader's system preference), at 1280 px."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme=request.param)
    pg = context.new_page()
    pg.goto(site_server, wait_until="load")
    yield request.param, pg
    context.close()


QUOTED = """() => [...document.querySelectorAll('.md-content .quoted')].map(q => {
  const own = getComputedStyle(q), text = getComputedStyle(q.parentElement.closest('p, li, td, th'));
  const source = q.querySelector('.quoted-source');
  return {text: q.textContent, color: own.color, parent: text.color,
          line: own.textDecorationLine, style: own.textDecorationStyle, parentLine: text.textDecorationLine,
          source: source ? source.textContent.trim() : null,
          hidden: source ? source.getBoundingClientRect().width <= 1 : null,
          focusable: q.tabIndex >= 0};
})"""


def test_quoted_numbers_look_different_from_their_paragraph_in_both_schemes(scheme_page):
    scheme, page = scheme_page
    assert page.evaluate("() => document.body.getAttribute('data-md-color-scheme')") == (
        "slate" if scheme == "dark" else "default"
    )
    quoted = page.evaluate(QUOTED)
    assert len(quoted) >= 5  # the papers' numbers, and the sentence that explains the style
    for q in quoted:
        assert q["color"] != q["parent"] or q["line"] != q["parentLine"], q
        assert q["color"] != q["parent"] and "underline" in q["line"] and q["style"] == "dotted", q


def test_a_quoted_number_says_its_source_without_a_hover(scheme_page):
    """The source is text of the number's own (hidden, read by screen readers) and shows in a
    box when the number is focused, as a tap or the Tab key does."""
    _, page = scheme_page
    quoted = [q for q in page.evaluate(QUOTED) if q["source"] is not None]
    assert len(quoted) >= 5
    assert all(q["source"].startswith("(quoted from ") and q["hidden"] and q["focusable"] for q in quoted), quoted
    first = page.locator(".md-content p .quoted[tabindex]").first
    first.focus()
    box = first.locator(".quoted-source").bounding_box()
    viewport = page.viewport_size
    assert box and box["width"] > 100 and box["height"] > 10
    assert box["x"] >= 0 and box["x"] + box["width"] <= viewport["width"]
    assert box["y"] >= 0 and box["y"] + box["height"] <= viewport["height"]


#: Each table's scroll wrapper: how much wider its table is than the box, and the table's first
#: column (header and cells), for the key check.
TABLES = """() => [...document.querySelectorAll('.md-content .md-typeset__scrollwrap')].map(w => {
  const table = w.querySelector('table');
  const rows = table ? [...table.querySelectorAll('tbody tr')] : [];
  return {over: w.scrollWidth - w.clientWidth, head: table ? table.querySelector('th').textContent.trim() : '',
          first: rows.map(r => r.cells[0] ? r.cells[0].textContent.trim() : '')};
})"""


def is_key(first: list[str]) -> bool:
    """Whether a first column is the table's key: a value in every row, no two rows alike."""
    return bool(first) and all(first) and len(set(first)) == len(first)


def test_the_key_check_tells_a_key_from_a_repeated_column():
    assert is_key(["qwen3-8b", "qwen3-1.7b"])
    assert not is_key(["issue #20780", "issue #20780"])
    assert not is_key(["1", ""])
    assert not is_key([])


@pytest.mark.parametrize("path", ["", "hardware/", "validation/", "model/", "cli/"])
def test_tables_fit_the_column_at_1280_px_or_put_their_key_first(browser, site_server, path):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme="light")
    page = context.new_page()
    try:
        page.goto(site_server + path, wait_until="load")
        tables = page.evaluate(TABLES)
        assert tables or path == "cli/"
        scrolling = [t for t in tables if t["over"] > 1]
        if path == "":
            assert scrolling == [], "a table of the article is wider than its column at 1280 px"
        assert [t["head"] for t in scrolling if not is_key(t["first"])] == []
    finally:
        context.close()
