/* Math with the local copy of KaTeX (pymdownx.arithmatex in generic mode emits \( \) and \[ \]). */
(function () {
  "use strict";
  function render() {
    if (typeof renderMathInElement === "undefined") return;
    document.querySelectorAll(".arithmatex").forEach(function (el) {
      renderMathInElement(el, {
        delimiters: [
          { left: "\\(", right: "\\)", display: false },
          { left: "\\[", right: "\\]", display: true },
        ],
        throwOnError: false,
      });
    });
  }
  /* Rendered when the browser is idle (at most a second later), so that typesetting never
   * delays the page's first interaction. */
  function later() {
    if ("requestIdleCallback" in window) window.requestIdleCallback(render, { timeout: 1000 });
    else setTimeout(render, 0);
  }
  if (typeof document$ !== "undefined") document$.subscribe(later);
  else document.addEventListener("DOMContentLoaded", later);
})();
