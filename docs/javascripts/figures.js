/* Draws every figure of the site with the one local copy of plotly.js.
 *
 * A figure is <div class="specfig" data-figure="JSON"> holding the Plotly figure that
 * build_figures.py wrote. Drawing runs on every
 * page load, including Material's instant navigation (document$), and the text, grid and
 * reference traces (meta === "reference") follow the light or dark scheme. A figure is
 * drawn when it nears the viewport; data-state="rendered" marks it done. */
(function () {
  "use strict";

  /* The site's single copy of plotly.js, next to this script's folder. */
  var PLOTLY_URL = new URL("../assets/vendor/plotly/plotly-cartesian.min.js", document.currentScript.src).href;
  var plotlyLoading = null;

  function loadPlotly() {
    if (!plotlyLoading) {
      plotlyLoading = new Promise(function (resolve, reject) {
        if (window.Plotly) return resolve(window.Plotly);
        var script = document.createElement("script");
        script.src = PLOTLY_URL;
        script.async = true;
        script.onload = function () {
          resolve(window.Plotly);
        };
        script.onerror = function () {
          plotlyLoading = null;
          reject(new Error("could not load " + PLOTLY_URL));
        };
        document.head.appendChild(script);
      });
    }
    return plotlyLoading;
  }

  function palette() {
    var style = getComputedStyle(document.body);
    var get = function (name, fallback) {
      return style.getPropertyValue(name).trim() || fallback;
    };
    return {
      text: get("--md-default-fg-color", "#333"),
      muted: get("--md-default-fg-color--light", "#666"),
      grid: get("--md-default-fg-color--lightest", "rgba(128,128,128,0.25)"),
    };
  }

  function axisNames(layout) {
    return Object.keys(layout).filter(function (k) {
      return /^[xy]axis\d*$/.test(k);
    });
  }

  function themeLayout(layout, colors) {
    var patch = { "font.color": colors.text, "legend.font.color": colors.text };
    axisNames(layout).forEach(function (axis) {
      patch[axis + ".gridcolor"] = colors.grid;
      patch[axis + ".linecolor"] = colors.muted;
      patch[axis + ".tickfont.color"] = colors.text;
      patch[axis + ".title.font.color"] = colors.text;
    });
    (layout.sliders || []).forEach(function (_, i) {
      patch["sliders[" + i + "].font.color"] = colors.text;
      patch["sliders[" + i + "].currentvalue.font.color"] = colors.text;
    });
    (layout.annotations || []).forEach(function (a, i) {
      if (!a.font || !a.font.color) patch["annotations[" + i + "].font.color"] = colors.text;
    });
    return patch;
  }

  function referenceTraces(data) {
    var indices = [];
    data.forEach(function (trace, i) {
      if (trace.meta === "reference") indices.push(i);
    });
    return indices;
  }

  function applyTheme(el) {
    var colors = palette();
    var refs = referenceTraces(el.data);
    var update = Plotly.relayout(el, themeLayout(el.layout, colors));
    if (refs.length) {
      update = update.then(function () {
        return Plotly.restyle(el, { "line.color": colors.muted }, refs);
      });
    }
    return update.then(function () {
      el.dataset.theme = document.body.getAttribute("data-md-color-scheme") || "default";
    });
  }

  function draw(el) {
    if (el.dataset.state) return Promise.resolve();
    el.dataset.state = "drawing";
    var figure = JSON.parse(el.dataset.figure);
    var config = { responsive: true, displaylogo: false, displayModeBar: false };
    return Plotly.newPlot(el, figure.data, figure.layout, config)
      .then(function () {
        return applyTheme(el);
      })
      .then(function () {
        el.dataset.state = "rendered";
      });
  }

  /* Figures are drawn when they come near the viewport, one per frame, so that drawing
   * ten figures never holds up the page (or the simulator) on first load. */
  var queue = [];
  var scheduled = false;

  function pump() {
    scheduled = false;
    var el = queue.shift();
    if (!el) return;
    loadPlotly()
      .then(function () {
        return draw(el);
      })
      .then(schedule, function (error) {
        el.dataset.state = "failed";
        console.error(error);
        schedule();
      });
  }

  function schedule() {
    if (!scheduled && queue.length) {
      scheduled = true;
      window.requestAnimationFrame(function () {
        setTimeout(pump, 0);
      });
    }
  }

  var observer =
    "IntersectionObserver" in window
      ? new IntersectionObserver(
          function (entries) {
            entries.forEach(function (entry) {
              if (entry.isIntersecting) {
                observer.unobserve(entry.target);
                queue.push(entry.target);
              }
            });
            schedule();
          },
          { rootMargin: "400px 0px" }
        )
      : null;

  function drawAll() {
    document.querySelectorAll(".specfig").forEach(function (el) {
      if (el.dataset.state) return;
      if (observer) observer.observe(el);
      else queue.push(el);
    });
    schedule();
  }

  function rethemeAll() {
    document.querySelectorAll('.specfig[data-state="rendered"]').forEach(applyTheme);
  }

  if (typeof document$ !== "undefined") {
    document$.subscribe(drawAll);
  } else {
    document.addEventListener("DOMContentLoaded", drawAll);
  }
  new MutationObserver(rethemeAll).observe(document.body, {
    attributes: true,
    attributeFilter: ["data-md-color-scheme"],
  });
})();
