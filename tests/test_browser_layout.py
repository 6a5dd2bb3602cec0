"""Every figure fits the screen it is drawn on, at a phone's width (390 x 844) and a
desktop's (1280 x 800), on every page: from the boxes of the elements Plotly drew, no legend
covers a plot, no title, axis title, annotation, menu, slider or tick label leaves its figure,
none of them overlaps another (a label inside a plot may sit on the plot, not on a bar, a
marker or another label), and the text in heatmap cells is legible. A figure takes its
narrow layout under 600 px and switches back and forth as the window crosses that width."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

VIEWPORTS = {"phone": {"width": 390, "height": 844}, "desktop": {"width": 1280, "height": 800}}
#: path -> minimum number of figures
PAGES = {"": 13, "hardware/": 1, "beyond/": 5, "validation/": 2, "model/": 0, "notebook/": 1}
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
        found = figure.evaluate(CHECK)
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
    assert page.locator("#fig-breakeven").evaluate("el => el.layout.updatemenus[0].type") == "dropdown"
    page.set_viewport_size(VIEWPORTS["desktop"])
    for fid in ids:
        wait_for_layout(page, fid, "wide")
        assert page.locator(fid).evaluate(state) == wide[fid]
        assert drawn(page, page.locator(fid)).evaluate(CHECK) == []
    assert errors == []
    context.close()


def test_the_drafter_menu_is_a_dropdown_within_reach_on_a_phone(browser, site_server):
    context = browser.new_context(viewport=VIEWPORTS["phone"], color_scheme="light")
    page = context.new_page()
    page.goto(site_server, wait_until="load")
    figure = drawn(page, page.locator("#fig-breakeven"))
    wait_for_layout(page, "#fig-breakeven", "narrow")
    figure.locator(".updatemenu-header-group").click()
    buttons = figure.locator(".updatemenu-dropdown-button-group .updatemenu-dropdown-button")
    buttons.first.wait_for()
    box = figure.bounding_box()
    options = [buttons.nth(i).bounding_box() for i in range(buttons.count())]
    assert len(options) == 5
    assert all(o["x"] >= box["x"] - 1 and o["x"] + o["width"] <= box["x"] + box["width"] + 1 for o in options)
    buttons.nth(2).click()
    shown = figure.evaluate("el => el.data.filter(t => t.type === 'heatmap' && t.visible === true).map(t => t.name)")
    assert shown == ["n-gram lookup"]
    context.close()
