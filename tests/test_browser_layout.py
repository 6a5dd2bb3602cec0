"""Every figure fits the screen it is drawn on, at a phone's width (390 x 844) and a
desktop's (1280 x 800), on every page: from the boxes of the elements Plotly drew, no legend
covers a plot, no title, axis title, annotation, menu, slider or tick label leaves its figure,
none of them overlaps another (a label inside a plot may sit on the plot, not on a bar, a
marker or another label), and the text in heatmap cells is legible. A figure takes its
narrow layout under 600 px and switches back and forth as the window crosses that width; it
is as tall before it draws as after, and the native controls above it fit their rows. At a
phone's width, tables wrap and what still has to scroll sideways says so."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

VIEWPORTS = {"phone": {"width": 390, "height": 844}, "desktop": {"width": 1280, "height": 800}}
#: path -> minimum number of figures
PAGES = {"": 13, "hardware/": 1, "beyond/": 5, "validation/": 4, "model/": 0, "notebook/": 1}
NARROW = 600  # px: docs/javascripts/figures.js draws a figure narrower than this with its narrow layout

#: What is wrong with the layout of one drawn figure (``el``, a ``.specfig``), as sentences.
#: Boxes are getBoundingClientRect; two boxes overlap when they share more than TOL px each way.
CHECK = """
(el) => {
  const TOL = 2;
  const rect = (n) => { const r = n.getBoundingClientRect(); return {l: r.left, t: r.top, r: r.right, b: r.bottom}; };
  const area = (b) => Math.max(0, b.r - b.l) * Math.max(0, b.b - b.t);
  const overlap = (a, b) =>
    Math.min(a.r, b.r) - Math.max(a.l, b.l) > TOL && Math.min(a.b, b.b) - Math.max(a.t, b.t) > TOL;
  const inside = (a, f) => a.l >= f.l - TOL && a.r <= f.r + TOL && a.t >= f.t - TOL && a.b <= f.b + TOL;
  const centred = (a, p) => {
    const x = (a.l + a.r) / 2, y = (a.t + a.b) / 2;
    return x >= p.l && x <= p.r && y >= p.t && y <= p.b;
  };
  const show = (b) => `[${Math.round(b.l)},${Math.round(b.t)} ${Math.round(b.r)},${Math.round(b.b)}]`;
  const figure = rect(el.querySelector('.svg-container'));
  const plots = [...el.querySelectorAll('.draglayer .nsewdrag')].map(rect);

  // What sits around (or, for a label, inside) the plots. axis: the axis a title names.
  const items = [];
  const add = (kind, name, box, axis) => { if (area(box) > 0) items.push({kind, name, box, axis}); };
  el.querySelectorAll('.infolayer .legend > rect.bg').forEach((n) => add('legend', 'the legend', rect(n)));
  el.querySelectorAll('.infolayer text').forEach((n) => {
    const m = /^(g|[xy][0-9]*)title$/.exec(n.getAttribute('class') || '');
    if (m && n.textContent.trim()) add('title', `title "${n.textContent}"`, rect(n), m[1]);
  });
  el.querySelectorAll('.infolayer .annotation').forEach((n) => {
    const box = rect(n.querySelector('.annotation-text-g') || n);
    const kind = plots.some((p) => centred(box, p)) ? 'label' : 'annotation';
    add(kind, `${kind} "${n.textContent}"`, box);
  });
  el.querySelectorAll('.infolayer .colorbar').forEach((n) => add('colorbar', 'the colour bar', rect(n)));
  el.querySelectorAll('.menulayer .updatemenu-container').forEach((n) => add('menu', 'the menu', rect(n)));
  el.querySelectorAll('.slider-container').forEach((n) => add('slider', 'the slider', rect(n)));

  const ticks = [];
  el.querySelectorAll('.cartesianlayer .subplot').forEach((subplot) => {
    const m = /(x[0-9]*)(y[0-9]*)/.exec(subplot.getAttribute('class'));
    [['xaxislayer-above', m[1]], ['yaxislayer-above', m[2]]].forEach(([layer, axis]) => {
      subplot.querySelectorAll(`.${layer} text`).forEach((n) => {
        const box = rect(n);
        const slanted = /rotate/.test(n.getAttribute('transform') || '');
        if (area(box) > 0 && n.textContent) ticks.push({axis, slanted, name: `tick label "${n.textContent}"`, box});
      });
    });
  });

  const problems = [];
  const width = document.documentElement.clientWidth;
  if (figure.l < -TOL || figure.r > width + TOL) problems.push(`the figure ${show(figure)} is wider than the window`);
  for (const it of [...items, ...ticks]) {
    if (!inside(it.box, figure)) problems.push(`${it.name} ${show(it.box)} leaves the figure ${show(figure)}`);
  }
  for (const it of items) {
    if (it.kind === 'label') continue;
    for (const p of plots) if (overlap(it.box, p)) problems.push(`${it.name} ${show(it.box)} covers a plot ${show(p)}`);
    for (const tick of ticks) {
      if (tick.axis !== it.axis && overlap(it.box, tick.box)) problems.push(`${it.name} overlaps the ${tick.name}`);
    }
  }
  for (let i = 0; i < items.length; i++) {
    for (let j = i + 1; j < items.length; j++) {
      const [a, b] = [items[i], items[j]];
      if (overlap(a.box, b.box)) problems.push(`${a.name} ${show(a.box)} overlaps ${b.name} ${show(b.box)}`);
    }
  }
  // Slanted tick labels clear each other where their (upright) boxes still meet.
  const level = ticks.filter((tick) => !tick.slanted);
  for (let i = 0; i < level.length; i++) {
    for (let j = i + 1; j < level.length; j++) {
      const [a, b] = [level[i], level[j]];
      if (overlap(a.box, b.box)) problems.push(`${a.name} ${show(a.box)} overlaps ${b.name} ${show(b.box)}`);
    }
  }
  const marks = [...el.querySelectorAll(
    '.barlayer .point path, .scatterlayer .points path, .scatterlayer .textpoint text')].map(rect);
  for (const it of items) {
    if (it.kind !== 'label') continue;
    const mark = marks.find((m) => area(m) > 0 && overlap(it.box, m));
    if (mark) problems.push(`${it.name} ${show(it.box)} sits on a bar or marker ${show(mark)}`);
  }
  // The text of a trace (values over bars and markers) lies in its plot, not cut off at its edge.
  el.querySelectorAll('.scatterlayer .textpoint text, .barlayer .bartext').forEach((n) => {
    const box = rect(n);
    if (area(box) > 0 && !plots.some((p) => inside(box, p))) {
      problems.push(`text "${n.textContent}" ${show(box)} leaves its plot`);
    }
  });
  const sizes = [...el.querySelectorAll('.heatmaplayer text')].map((n) => parseFloat(getComputedStyle(n).fontSize));
  if (sizes.length && Math.min(...sizes) < 9) problems.push(`heatmap cell text of ${Math.min(...sizes)} px`);
  return [...new Set(problems)];
}
"""


#: What is wrong with the native controls figures.js puts above a figure (``el``): a row that
#: leaves the window, or a label, input or value that leaves its row (each row has the height
#: the page reserved for it).
CONTROLS = """
(el) => {
  const box = el.previousElementSibling;
  if (!box || !box.matches('.specfig-controls')) return [];
  const width = document.documentElement.clientWidth, problems = [];
  for (const row of box.children) {
    const r = row.getBoundingClientRect();
    if (r.left < -2 || r.right > width + 2) problems.push('a control row leaves the window');
    for (const part of row.children) {
      const b = part.getBoundingClientRect();
      if (b.left < r.left - 2 || b.right > r.right + 2 || b.top < r.top - 2 || b.bottom > r.bottom + 2)
        problems.push(`the control's ${part.tagName.toLowerCase()} leaves its row`);
    }
  }
  return problems;
}
"""


@pytest.fixture(scope="module", params=list(VIEWPORTS))
def viewport(request, browser, site_server):
    """One browser context per viewport, shared by the pages; yields (name, page)."""
    context = browser.new_context(viewport=VIEWPORTS[request.param], color_scheme="light")
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    page.on("console", lambda m: m.type == "error" and page.errors.append(m.text))
    yield request.param, page
    context.close()


def drawn(page, figure, timeout: int = 20_000):
    """Scroll a figure into view and wait until it is drawn."""
    figure.scroll_into_view_if_needed()
    page.wait_for_function("el => el.dataset.state === 'rendered'", arg=figure.element_handle(), timeout=timeout)
    return figure


def wait_for_layout(page, selector: str, layout: str, timeout: int = 10_000):
    page.wait_for_function(
        "([s, l]) => document.querySelector(s).dataset.layout === l", arg=[selector, layout], timeout=timeout
    )


@pytest.mark.parametrize("path", list(PAGES))
def test_every_figure_fits_its_screen(viewport, site_server, path):
    name, page = viewport
    page.errors.clear()
    page.goto(site_server + path, wait_until="load")
    figures = page.locator(".specfig")
    assert figures.count() >= PAGES[path]
    problems, layouts = {}, {}
    for i in range(figures.count()):
        figure = drawn(page, figures.nth(i))
        fid = figure.get_attribute("id")
        found = figure.evaluate(CHECK) + figure.evaluate(CONTROLS)
        if found:
            problems[fid] = found
        width, has_variant = figure.evaluate("el => [el.clientWidth, !!(el.layout.meta && el.layout.meta.narrow)]")
        if has_variant:
            layouts[fid] = (figure.get_attribute("data-layout"), "narrow" if width < NARROW else "wide")
    assert problems == {}, f"{name} {path or 'index'}"
    assert {fid: got for fid, (got, want) in layouts.items() if got != want} == {}
    if name == "phone":
        assert all(got == "narrow" for got, _ in layouts.values())
    assert page.errors == []


def test_figures_switch_layout_when_the_window_crosses_the_threshold(browser, site_server):
    context = browser.new_context(viewport=VIEWPORTS["desktop"], color_scheme="light")
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(site_server, wait_until="load")
    ids = ["#fig-memory", "#fig-ladder", "#fig-breakeven"]
    for fid in ids:
        drawn(page, page.locator(fid))
        wait_for_layout(page, fid, "wide")
    state = """el => JSON.stringify({height: el.layout.height, legend: el.layout.legend, margin: el.layout.margin,
        menus: (el.layout.updatemenus || []).map(m => m.type || 'dropdown'), y: el.layout.yaxis.domain,
        sizes: el.data.map(t => t.textfont && t.textfont.size)})"""
    wide = {fid: page.locator(fid).evaluate(state) for fid in ids}
    page.set_viewport_size(VIEWPORTS["phone"])
    for fid in ids:
        wait_for_layout(page, fid, "narrow")
        assert page.locator(fid).evaluate(state) != wide[fid]
        assert drawn(page, page.locator(fid)).evaluate(CHECK) == []
    assert page.locator("#fig-breakeven-control-0").is_visible()
    page.set_viewport_size(VIEWPORTS["desktop"])
    for fid in ids:
        wait_for_layout(page, fid, "wide")
        assert page.locator(fid).evaluate(state) == wide[fid]
        assert drawn(page, page.locator(fid)).evaluate(CHECK) == []
    assert errors == []
    context.close()


def test_the_drafter_menu_is_a_select_within_reach_on_a_phone(browser, site_server):
    context = browser.new_context(viewport=VIEWPORTS["phone"], color_scheme="light")
    page = context.new_page()
    page.goto(site_server, wait_until="load")
    figure = drawn(page, page.locator("#fig-breakeven"))
    wait_for_layout(page, "#fig-breakeven", "narrow")
    select = page.locator("#fig-breakeven-control-0")
    box, own = figure.bounding_box(), select.bounding_box()
    assert select.locator("option").count() == 5
    assert own["x"] >= box["x"] - 1 and own["x"] + own["width"] <= box["x"] + box["width"] + 1
    assert own["height"] >= 24
    select.select_option("2")
    page.wait_for_function("el => el.layout.updatemenus[0].active === 2", arg=figure.element_handle())
    shown = figure.evaluate("el => el.data.filter(t => t.type === 'heatmap' && t.visible === true).map(t => t.name)")
    assert shown == ["n-gram lookup"]
    context.close()


#: What is cut off on the page at its width: every table cell, code block, notebook cell and
#: formula whose content reaches past the right edge of the box that shows it. Each must be in
#: a box that scrolls sideways and says so (data-scroll="... right" and a visible "scroll"
#: label, docs/javascripts/a11y.js and extra.css), or the page itself is wider than the window.
CUT_OFF = """
() => {
  const clips = (n) => /auto|scroll|hidden|clip/.test(getComputedStyle(n).overflowX);
  const edge = (box) => box.getBoundingClientRect().left + box.clientLeft + box.clientWidth;
  const label = (box) => ['::before', '::after'].map((p) => getComputedStyle(box, p)).find((s) =>
    /scroll/.test(s.content) && s.display !== 'none' && s.visibility === 'visible' && parseFloat(s.opacity) > 0);
  const problems = [];
  const width = document.documentElement.clientWidth;
  const page = document.documentElement.scrollWidth;
  if (page > width + 1) problems.push(`the page is ${page} px wide`);
  const items = document.querySelectorAll(
    '.md-content td, .md-content th, .md-content pre > code, .md-content .highlight-ipynb, .md-content div.arithmatex');
  let checked = 0;
  for (const el of items) {
    if (!el.getClientRects().length) continue;
    checked++;
    const what = `${el.tagName.toLowerCase()} "${el.textContent.trim().slice(0, 40)}"`;
    // The box that cuts the content off: the element itself if its content overflows it, else
    // the nearest ancestor that clips and whose visible right edge the element passes.
    let box = null;
    if (clips(el) && el.scrollWidth > el.clientWidth + 1) box = el;
    const right = el.getBoundingClientRect().right;
    for (let n = el.parentElement; !box && n && n !== document.body; n = n.parentElement) {
      if (clips(n) && right > edge(n) + 1) box = n;
    }
    if (!box) {
      if (right > width + 1) problems.push(`${what} runs off the page`);
      continue;
    }
    if (box.scrollLeft + box.clientWidth >= box.scrollWidth - 1) continue;  // scrolled to its end: not hidden
    if (!/right/.test(box.getAttribute('data-scroll') || '')) {
      problems.push(`${what} is cut off in a box that does not say it scrolls`);
    } else if (!label(box)) problems.push(`${what} is cut off and the scroll hint of its box is not shown`);
  }
  return {checked, problems: [...new Set(problems)]};
}
"""
TEXT_PAGES = ["", "hardware/", "beyond/", "validation/", "model/", "notebook/", "cli/"]
NO_TABLES = {"beyond/"}  # figures and prose only
WRAPS = "() => [...document.querySelectorAll('.md-typeset__scrollwrap')]"


@pytest.mark.parametrize("path", TEXT_PAGES)
def test_tables_and_code_on_a_phone_wrap_or_say_they_scroll(browser, site_server, path):
    context = browser.new_context(viewport=VIEWPORTS["phone"], color_scheme="light")
    page = context.new_page()
    try:
        page.goto(site_server + path, wait_until="load")
        page.wait_for_timeout(500)  # a11y.js marks what scrolls after the page event
        found = page.evaluate(CUT_OFF)
        assert found["checked"] > 0 or path in NO_TABLES
        assert found["problems"] == [], f"/{path} at 390 px"
    finally:
        context.close()


def test_narrow_tables_wrap_and_a_wide_one_scrolls_with_a_hint_that_follows(browser, site_server):
    """At 390 px the hardware table and the validation page's four-column tables fit by
    wrapping (they scrolled before); the 60-row table still scrolls, and its hint says which way."""
    context = browser.new_context(viewport=VIEWPORTS["phone"], color_scheme="light")
    page = context.new_page()
    try:
        widths = WRAPS + ".map(w => w.scrollWidth - w.clientWidth)"
        page.goto(site_server + "hardware/", wait_until="load")
        assert all(extra <= 1 for extra in page.evaluate(widths))
        page.goto(site_server + "validation/", wait_until="load")
        page.wait_for_timeout(500)
        extras = page.evaluate(widths)
        assert all(extra <= 1 for extra in extras[:4]), extras
        wide = page.locator(".md-typeset__scrollwrap").nth(extras.index(max(extras)))
        assert wide.get_attribute("data-scroll") == "right"
        assert "scroll →" in wide.evaluate("el => getComputedStyle(el, '::before').content")
        wide.evaluate("el => { el.scrollLeft = el.scrollWidth; }")
        page.wait_for_function("el => el.getAttribute('data-scroll') === 'left'", arg=wide.element_handle())
        assert "← scroll" in wide.evaluate("el => getComputedStyle(el, '::before').content")
    finally:
        context.close()


@pytest.mark.parametrize("width", [VIEWPORTS["phone"]["width"], VIEWPORTS["desktop"]["width"]])
@pytest.mark.parametrize("path", ["", "hardware/", "beyond/", "validation/"])
def test_figures_reserve_their_space_before_they_draw(browser, site_server, path, width):
    """Each figure (with its controls and caption) is as tall before it draws as once drawn,
    so the page does not jump: measured with figures.js held back (an empty script), then drawn."""
    heights = "() => Object.fromEntries([...document.querySelectorAll('.specfig-figure')].map(f => [f.id, HEIGHT(f)]))"
    heights = heights.replace("HEIGHT(f)", "Math.round(f.getBoundingClientRect().height)")
    context = browser.new_context(viewport={"width": width, "height": 844}, color_scheme="light")
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.route("**/javascripts/figures.js", lambda route: route.fulfill(body="", content_type="text/javascript"))
        page.goto(site_server + path, wait_until="load")
        before = page.evaluate(heights)
        assert page.locator(".specfig[data-state]").count() == 0
        page.unroute("**/javascripts/figures.js")
        page.goto(site_server + path, wait_until="load")
        figures = page.locator(".specfig")
        for i in range(figures.count()):
            drawn(page, figures.nth(i))
        after = page.evaluate(heights)
        assert before and before == after, f"{width} px {path or 'index'}"
        assert errors == []
    finally:
        context.close()
