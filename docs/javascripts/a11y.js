/* Keyboard access to content that scrolls: a wide table, a notebook's code cell or output, a
 * long formula. A region that scrolls can be reached with Tab (and then scrolled with the
 * arrow keys) and is announced with a name. Material does this for its own code blocks only.
 *
 * Content that scrolls sideways also says so to the eye: data-scroll on the scrolling element
 * holds "right" while more is hidden to the right, "left" while more is hidden to the left
 * (or both), and extra.css shows a label ("scroll →") and, on code, a fade at that edge.
 *
 * Whether an element scrolls depends on the width of the window, so it is checked again
 * when the element or its content changes size; an element that stops scrolling leaves the
 * tab order again and loses its hint. Runs on every page load (and on Material's document$
 * where the theme provides it). */
(function () {
  "use strict";
  var CANDIDATES = ".md-content div, .md-content pre, .md-content table";
  /* What scrolls sideways and gets a visible hint (Material's code blocks have their own
   * tabindex and name, so they are hinted here but not named). */
  var HINTED =
    ".md-content .md-typeset__scrollwrap, .md-content pre > code, .md-content .highlight-ipynb, " +
    ".md-content .jp-OutputArea-output, .md-content div.arithmatex";
  var MARK = "data-a11y-scroll";
  var HINT = "data-scroll";
  var observer = null;

  function scrolls(el) {
    return /auto|scroll/.test(getComputedStyle(el).overflowX + " " + getComputedStyle(el).overflowY);
  }

  function overflows(el) {
    var style = getComputedStyle(el);
    var x = /auto|scroll/.test(style.overflowX) && el.scrollWidth > el.clientWidth + 1;
    var y = /auto|scroll/.test(style.overflowY) && el.scrollHeight > el.clientHeight + 1;
    return x || y;
  }

  /* "Scrollable table: <the heading above it>", unique on the page (landmarks need distinct names). */
  var names = new Set();
  function heading(el) {
    var found = "";
    document.querySelectorAll(".md-content h1, .md-content h2, .md-content h3, .md-content h4").forEach(function (h) {
      if (h.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING) found = h.textContent;
    });
    return found.replace(/\u00b6/g, "").replace(/\s+/g, " ").trim();
  }
  function name(el) {
    var kind = "content";
    if (el.matches("table") || el.querySelector("table")) kind = "table";
    else if (el.matches(".arithmatex") || el.querySelector(".katex")) kind = "formula";
    else if (el.matches("pre, .highlight-ipynb, .highlight") || el.querySelector("pre, code")) kind = "code";
    var title = heading(el);
    var base = "Scrollable " + kind + (title ? ": " + title : "");
    var label = base;
    for (var n = 2; names.has(label); n++) label = base + " (" + n + ")";
    names.add(label);
    return label;
  }

  /* MARK lists the attributes this script added, so that only those are taken away again. */
  function update(el) {
    var marked = el.hasAttribute(MARK);
    if (overflows(el)) {
      if (marked || el.hasAttribute("tabindex")) return; /* ours already, or the theme's own */
      var added = ["tabindex"];
      el.setAttribute("tabindex", "0");
      if (!el.hasAttribute("role")) {
        el.setAttribute("role", "region");
        added.push("role");
      }
      if (!el.hasAttribute("aria-label") && !el.hasAttribute("aria-labelledby")) {
        el.setAttribute("aria-label", name(el));
        added.push("aria-label");
      }
      el.setAttribute(MARK, added.join(" "));
    } else if (marked) {
      el.getAttribute(MARK).split(" ").forEach(function (attr) {
        if (attr === "aria-label") names.delete(el.getAttribute(attr));
        el.removeAttribute(attr);
      });
      el.removeAttribute(MARK);
    }
  }

  /* The sideways hint: which edges hide more content, as data-scroll. */
  function hint(el) {
    var more = el.scrollWidth - el.clientWidth;
    var state = "";
    if (more > 1 && /auto|scroll/.test(getComputedStyle(el).overflowX)) {
      var edges = [];
      if (el.scrollLeft > 1) edges.push("left");
      if (el.scrollLeft < more - 1) edges.push("right");
      state = edges.join(" ");
    }
    if (state) {
      if (el.getAttribute(HINT) !== state) el.setAttribute(HINT, state);
    } else if (el.hasAttribute(HINT)) {
      el.removeAttribute(HINT);
    }
  }
  function onScroll(event) {
    hint(event.currentTarget);
  }

  function check(el) {
    if (el.matches(CANDIDATES)) update(el);
    if (el.matches(HINTED)) hint(el);
  }

  function scan() {
    if (observer) observer.disconnect();
    names = new Set();
    document.querySelectorAll("[" + MARK + "~=aria-label]").forEach(function (el) {
      names.add(el.getAttribute("aria-label"));
    });
    var scrollers = [];
    document.querySelectorAll(CANDIDATES + ", " + HINTED).forEach(function (el) {
      if (scrolls(el)) scrollers.push(el);
    });
    scrollers.forEach(function (el) {
      check(el);
      if (el.matches(HINTED)) {
        el.removeEventListener("scroll", onScroll);
        el.addEventListener("scroll", onScroll, { passive: true });
      }
    });
    if (!("ResizeObserver" in window)) return;
    var owner = new Map();
    observer = new ResizeObserver(function (entries) {
      entries.forEach(function (entry) {
        (owner.get(entry.target) || []).forEach(check);
      });
    });
    function watch(target, el) {
      if (!owner.has(target)) {
        owner.set(target, []);
        observer.observe(target);
      }
      owner.get(target).push(el);
    }
    scrollers.forEach(function (el) {
      /* The element itself (the window's width) and its content (KaTeX typesets later). */
      watch(el, el);
      if (el.firstElementChild) watch(el.firstElementChild, el);
    });
  }

  /* After the theme has wrapped the page's tables (it does so on the same page event): on the
   * page as loaded, and on each page Material's document$ announces. */
  function later() {
    setTimeout(scan, 0);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", later);
  else later();
  if (typeof document$ !== "undefined") document$.subscribe(later);
})();
