/* Draws every figure of the site with the one local copy of plotly.js.
 *
 * A figure is <div class="specfig" data-src="URL"> (or, in a notebook's output,
 * <div class="specfig" data-figure="JSON">): the Plotly figure that build_figures.py wrote,
 * published as a file of its own and fetched, with plotly.js, when the figure nears the
 * viewport; data-state="rendered" marks it drawn ("failed" if it could not be). The space it
 * takes is reserved by the page's CSS before it draws. The text, grid and reference traces
 * (meta === "reference") follow the light or dark scheme. Runs on every page load (and on
 * Material's document$ where the theme provides it).
 *
 * A figure under NARROW px wide (a phone) is drawn with the narrow variant its
 * layout.meta.narrow holds, computed by the site builder: "layout", attribute paths and
 * values as Plotly.relayout takes them ("legend.y", "annotations[1].text"), and "traces",
 * styles of the traces it lists. When the window is resized across the threshold the figure
 * is redrawn with the other variant, keeping the reader's choices; data-layout says which is
 * drawn.
 *
 * Each slider and menu of a figure's layout is one native control above the plot, aligned
 * with the plot's left edge: a range input for a slider (labelled with the slider's prefix, its
 * step labels as aria-valuetext), a select for a menu (labelled with the menu's name), both
 * reached with the keyboard as with the pointer. Plotly does not draw its own (they are set
 * invisible before the figure is drawn, and take no room in its layout); a native control
 * applies a step or button exactly as Plotly's would (its method and arguments), then marks it
 * active in the layout, so that a redraw keeps it. Nothing of the model is computed here. */
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

  /* The figure's JSON text: written into the page, or fetched once from data-src (a URL
   * relative to the page). */
  function source(el) {
    if (!el._source) {
      if (el.dataset.figure) {
        el._source = Promise.resolve(el.dataset.figure);
      } else {
        var url = new URL(el.dataset.src, document.baseURI).href;
        el._source = fetch(url).then(function (response) {
          if (!response.ok) throw new Error("could not load " + url + ": HTTP " + response.status);
          return response.text();
        });
        el._source.catch(function () {
          el._source = null; // tried again when the figure is next drawn
        });
      }
    }
    return el._source;
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

  /* [layout key, key of its steps] of a figure's sliders and menus. */
  var KINDS = [
    ["sliders", "steps"],
    ["updatemenus", "buttons"],
  ];

  /* Below this width (px) a figure is drawn with its narrow variant (extra.css reserves the
   * narrow variant's height under the same width). */
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

  /* The figure as built (``figure``, or parsed again from its JSON), with the narrow variant
   * written into it if asked for, and its sliders and menus hidden: the page draws them. */
  function variant(el, layout, figure) {
    figure = figure || JSON.parse(el._json);
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
    KINDS.forEach(function (pair) {
      (figure.layout[pair[0]] || []).forEach(function (item) {
        item.visible = false;
      });
    });
    return figure;
  }

  /* ---- Native controls for the figure's sliders and menus ---- */

  /* The name a control is labelled with: a slider's current-value prefix, a menu's name. */
  function controlName(kind, item) {
    var name = kind === "sliders" ? (item.currentvalue && item.currentvalue.prefix) || item.name : item.name;
    return String(name || (kind === "sliders" ? "step" : "show")).replace(/[\s:]+$/, "");
  }

  function stepLabel(step, k) {
    return step && step.label !== undefined ? String(step.label) : String(k + 1);
  }

  /* Create the controls above the figure (once), one per slider and menu of its layout. */
  function createControls(el) {
    var specs = [];
    KINDS.forEach(function (pair) {
      (el.layout[pair[0]] || []).forEach(function (_, i) {
        specs.push({ kind: pair[0], steps: pair[1], index: i });
      });
    });
    if (!specs.length) return;
    var box = document.createElement("div");
    box.className = "specfig-controls";
    specs.forEach(function (spec, n) {
      var row = document.createElement("div");
      row.className = "specfig-control";
      var id = el.id + "-control-" + n;
      spec.label = document.createElement("label");
      spec.label.htmlFor = id;
      row.appendChild(spec.label);
      if (spec.kind === "sliders") {
        spec.input = document.createElement("input");
        spec.input.type = "range";
        spec.input.min = "0";
        spec.input.step = "1";
        spec.input.addEventListener("input", function () {
          choose(el, spec, Number(spec.input.value));
        });
        /* The value as text beside the slider; screen readers get it from aria-valuetext. */
        spec.value = document.createElement("span");
        spec.value.className = "specfig-control-value";
        spec.value.setAttribute("aria-hidden", "true");
      } else {
        spec.input = document.createElement("select");
        spec.input.addEventListener("change", function () {
          choose(el, spec, Number(spec.input.value));
        });
      }
      spec.input.id = id;
      row.appendChild(spec.input);
      if (spec.value) row.appendChild(spec.value);
      box.appendChild(row);
    });
    el.parentNode.insertBefore(box, el);
    el._controls = specs;
  }

  /* Show in the controls what the figure shows: names, steps and the active one of each. */
  function syncControls(el) {
    (el._controls || []).forEach(function (spec) {
      var item = (el.layout[spec.kind] || [])[spec.index];
      if (!item) return;
      var steps = item[spec.steps] || [];
      var active = item.active === undefined || item.active < 0 ? 0 : item.active;
      var name = controlName(spec.kind, item);
      if (spec.label.textContent !== name) spec.label.textContent = name;
      if (spec.kind === "sliders") {
        spec.input.max = String(Math.max(0, steps.length - 1));
        spec.input.value = String(active);
        spec.input.setAttribute("aria-valuetext", stepLabel(steps[active], active));
        spec.value.textContent = stepLabel(steps[active], active);
      } else {
        var labels = steps.map(stepLabel);
        var options = Array.prototype.map.call(spec.input.options, function (o) {
          return o.textContent;
        });
        if (options.join("\n") !== labels.join("\n")) {
          spec.input.textContent = "";
          labels.forEach(function (label, k) {
            var option = document.createElement("option");
            option.value = String(k);
            option.textContent = label;
            spec.input.appendChild(option);
          });
        }
        spec.input.value = String(active);
      }
    });
  }

  /* Apply step (or button) k of a control as Plotly's own control would (the step's method
   * with its arguments), then mark it active in the layout. One change at a time, in the order
   * the reader made them. */
  function choose(el, spec, k) {
    el._choosing = (el._choosing || Promise.resolve())
      .then(function () {
        var item = (el.layout[spec.kind] || [])[spec.index];
        var step = item && (item[spec.steps] || [])[k];
        if (!step) return null;
        var method = step.method && step.method !== "skip" ? Plotly[step.method] : null;
        var args = JSON.parse(JSON.stringify(step.args || []));
        return Promise.resolve(method ? method.apply(Plotly, [el].concat(args)) : null).then(function () {
          var patch = {};
          patch[spec.kind + "[" + spec.index + "].active"] = k;
          return Plotly.relayout(el, patch);
        });
      })
      .then(
        function () {
          syncControls(el);
        },
        function (error) {
          console.error(error);
        }
      );
    return el._choosing;
  }

  /* The left and right margins of the plot area, in px, as Plotly laid it out. */
  function plotMargins(el) {
    var size = el._fullLayout && el._fullLayout._size;
    return size ? { left: Math.round(size.l), right: Math.round(size.r) } : null;
  }

  /* Line the controls up with the plot's left and right edges (extra.css pads them so). */
  function alignControls(el) {
    var box = el._controls && el._controls[0].label.closest(".specfig-controls");
    var margins = plotMargins(el);
    if (box && margins) {
      box.style.setProperty("--specfig-plot-left", margins.left + "px");
      box.style.setProperty("--specfig-plot-right", margins.right + "px");
    }
  }

  /* After each draw: the controls exist, show the figure's state, and stay lined up with its
   * plot whenever Plotly lays it out again (a new width; each draw starts without listeners). */
  function wireControls(el) {
    if (!el._controls) createControls(el);
    if (!el._controls) return;
    alignControls(el);
    el.on("plotly_afterplot", function () {
      alignControls(el);
    });
    syncControls(el);
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
        wireControls(el);
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
    return source(el).then(function (text) {
      el._json = text;
      var figure = JSON.parse(text);
      el._narrow = Boolean(figure.layout.meta && figure.layout.meta.narrow);
      return plot(el, wanted(el), figure).then(function () {
        el.dataset.state = "rendered";
        return fit(el); // the window may have been resized while drawing
      });
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
    Promise.all([loadPlotly(), source(el)])
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

  function enqueue(el) {
    if (queue.indexOf(el) >= 0) return;
    source(el).catch(function () {}); // start fetching now; pump reports a failure
    queue.push(el);
  }

  var observer =
    "IntersectionObserver" in window
      ? new IntersectionObserver(
          function (entries) {
            entries.forEach(function (entry) {
              if (entry.isIntersecting) {
                observer.unobserve(entry.target);
                enqueue(entry.target);
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
      else enqueue(el);
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

  /* On the page as loaded, and on each page Material's document$ announces (if the theme
   * swaps pages in place); drawAll leaves figures already seen alone. */
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", drawAll);
  else drawAll();
  if (typeof document$ !== "undefined") document$.subscribe(drawAll);
  new MutationObserver(rethemeAll).observe(document.body, {
    attributes: true,
    attributeFilter: ["data-md-color-scheme"],
  });
})();
