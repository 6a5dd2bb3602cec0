/* Keyboard access to content that scrolls: a wide table, a notebook's code cell or output, a
 * long formula. A region that scrolls can be reached with Tab (and then scrolled with the
 * arrow keys) and is announced with a name. Material does this for its own code blocks only.
 *
 * Whether an element scrolls depends on the width of the window, so it is checked again
 * when the element or its content changes size; an element that stops scrolling leaves the
 * tab order again. Runs on every page, including pages reached by instant navigation. */
(function () {
  "use strict";
  var CANDIDATES = ".md-content div, .md-content pre, .md-content table";
  var MARK = "data-a11y-scroll";
  var observer = null;

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

  function scan() {
    if (observer) observer.disconnect();
    names = new Set();
    document.querySelectorAll("[" + MARK + "~=aria-label]").forEach(function (el) {
      names.add(el.getAttribute("aria-label"));
    });
    var scrollers = [];
    document.querySelectorAll(CANDIDATES).forEach(function (el) {
      var style = getComputedStyle(el);
      if (/auto|scroll/.test(style.overflowX + " " + style.overflowY)) scrollers.push(el);
    });
    scrollers.forEach(update);
    if (!("ResizeObserver" in window)) return;
    var owner = new Map();
    observer = new ResizeObserver(function (entries) {
      entries.forEach(function (entry) {
        (owner.get(entry.target) || []).forEach(update);
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

  /* After the theme has wrapped the page's tables (it does so on the same page event). */
  function later() {
    setTimeout(scan, 0);
  }
  if (typeof document$ !== "undefined") document$.subscribe(later);
  else document.addEventListener("DOMContentLoaded", later);
})();
