/* Math with the local copy of KaTeX (pymdownx.arithmatex in generic mode emits \( \) and \[ \]).
 *
 * KaTeX (its stylesheet, its script and the auto-render extension) is loaded by this script,
 * not by the page: on the article it waits until the simulator has its first answer
 * ("specsim:ready"), so that typesetting never competes with the simulator for a slow
 * connection; on every other page it loads at once. The math is typeset when it arrives. */
(function () {
  "use strict";
  var here = document.currentScript.src;
  var VENDOR = new URL("../assets/vendor/katex/", here).href;
  var loading = null;

  function script(src) {
    return new Promise(function (resolve, reject) {
      var el = document.createElement("script");
      el.src = src;
      el.onload = resolve;
      el.onerror = function () { reject(new Error("could not load " + src)); };
      document.head.appendChild(el);
    });
  }

  function load() {
    if (!loading) {
      var css = document.createElement("link");
      css.rel = "stylesheet";
      css.href = VENDOR + "katex.min.css";
      document.head.appendChild(css);
      loading = script(VENDOR + "katex.min.js").then(function () {
        return script(VENDOR + "contrib/auto-render.min.js");
      });
    }
    return loading;
  }

  function render() {
    var math = document.querySelectorAll(".arithmatex");
    if (!math.length) return;
    load().then(function () {
      math.forEach(function (el) {
        renderMathInElement(el, {
          delimiters: [
            { left: "\\(", right: "\\)", display: false },
            { left: "\\[", right: "\\]", display: true },
          ],
          throwOnError: false,
        });
      });
      document.documentElement.setAttribute("data-math", "typeset");
    });
  }

  function start() {
    var sim = document.querySelector("[data-simulator]");
    if (sim && sim.getAttribute("data-state") !== "ready" && sim.getAttribute("data-state") !== "failed") {
      var done = false;
      var go = function () { if (!done) { done = true; render(); } };
      document.addEventListener("specsim:ready", go, { once: true });
      setTimeout(go, 8000); /* should the simulator's data never come */
      return;
    }
    render();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
