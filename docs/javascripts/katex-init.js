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
  if (typeof document$ !== "undefined") document$.subscribe(render);
  else document.addEventListener("DOMContentLoaded", render);
})();
