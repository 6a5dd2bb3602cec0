/* Draws every figure of the site with the one local copy of plotly.js.
 *
 * A figure is <div class="specfig" data-figure="JSON"> holding the Plotly figure that
 * build_figures.py wrote. Drawing runs on every
 * page load, including Material's instant navigation (document$), and the text, grid and
 * reference traces (meta === "reference") follow the light or dark scheme. A figure is
 * drawn when it nears the viewport; data-state="rendered" marks it done.
 *
 * A figure under NARROW px wide (a phone) is drawn with the narrow variant its
 * layout.meta.narrow holds, computed by the site builder: "layout", attribute paths and
 * values as Plotly.relayout takes them ("legend.y", "annotations[1].text"), and "traces",
 * styles of the traces it lists. When the window is resized across the threshold the figure
 * is redrawn with the other variant, keeping the reader's choices; data-layout says which is
 * drawn. Nothing of the model is computed here. */
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

  /* Below this width (px) a figure is drawn with its narrow variant. */
  var NARROW = 600;
  var CONFIG = { responsive: true, displaylogo: false, displayModeBar: false };

  /* "annotations[1].font.size" -> ["annotations", 1, "font", "size"] */
  function pathKeys(path) {
    return path.split(".").reduce(function (keys, part) {
      var match = /^([^[]+)\[(\d+)\]$/.exec(part);
      return match ? keys.concat([match[1], Number(match[2])]) : keys.concat([part]);
    }, []);
  }

  function setPath(obj, path, value) {
    var keys = pathKeys(path);
    var node = obj;
    keys.slice(0, -1).forEach(function (key, i) {
      if (node[key] === undefined || node[key] === null) node[key] = typeof keys[i + 1] === "number" ? [] : {};
      node = node[key];
    });
    node[keys[keys.length - 1]] = value;
  }

  function wanted(el) {
    var width = el.clientWidth;
    var narrow = el._narrow && width && width < NARROW;
    return narrow ? "narrow" : "wide";
  }

  /* The figure as built (``figure``, or parsed again), with the narrow variant written into
   * it if asked for. */
  function variant(el, layout, figure) {
    figure = figure || JSON.parse(el.dataset.figure);
    var narrow = figure.layout.meta && figure.layout.meta.narrow;
    if (layout === "narrow" && narrow) {
      Object.keys(narrow.layout || {}).forEach(function (path) {
        setPath(figure.layout, path, narrow.layout[path]);
      });
      (narrow.traces || []).forEach(function (entry) {
        entry.indices.forEach(function (i) {
          Object.keys(entry.style).forEach(function (path) {
            setPath(figure.data[i], path, entry.style[path]);
          });
        });
      });
    }
    return figure;
  }

  /* Draw the figure with the given variant; on a figure already drawn, keep what the reader
   * chose (traces shown, slider step, menu button) and redraw it whole: Plotly leaves parts of
   * a menu or colour bar behind when their type or orientation changes in place. */
  function plot(el, layout, figure) {
    figure = variant(el, layout, figure);
    if (el.data) {
      figure.data.forEach(function (trace, i) {
        if (el.data[i] && el.data[i].visible !== undefined) trace.visible = el.data[i].visible;
      });
      ["sliders", "updatemenus"].forEach(function (key) {
        (figure.layout[key] || []).forEach(function (item, i) {
          var now = (el.layout[key] || [])[i];
          if (now && now.active !== undefined) item.active = now.active;
        });
      });
    }
    return Plotly.newPlot(el, figure.data, figure.layout, CONFIG)
      .then(function () {
        return applyTheme(el);
      })
      .then(function () {
        el.dataset.layout = layout;
      });
  }

  /* Switch a drawn figure to the variant its width asks for, if it is not drawn with it;
   * data-layout changes once the figure is redrawn. */
  function fit(el) {
    if (el.dataset.state !== "rendered" || el._fitting) return Promise.resolve();
    var want = wanted(el);
    if (el.dataset.layout === want) return Promise.resolve();
    el._fitting = true;
    var done = function () {
      el._fitting = false;
    };
    return plot(el, want).then(
      function () {
        done();
        return fit(el); // the width may have changed again meanwhile
      },
      function (error) {
        done();
        throw error;
      }
    );
  }

  function draw(el) {
    if (el.dataset.state) return Promise.resolve();
    el.dataset.state = "drawing";
    var figure = JSON.parse(el.dataset.figure);
    el._narrow = Boolean(figure.layout.meta && figure.layout.meta.narrow);
    return plot(el, wanted(el), figure).then(function () {
      el.dataset.state = "rendered";
      return fit(el); // the window may have been resized while drawing
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

  /* On resize (debounced), figures whose width crossed NARROW switch variant. */
  var resizeTimer = null;
  window.addEventListener("resize", function () {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(function () {
      document.querySelectorAll('.specfig[data-state="rendered"]').forEach(function (el) {
        fit(el).catch(function (error) {
          console.error(error);
        });
      });
    }, 150);
  });

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
