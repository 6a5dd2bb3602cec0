/* The simulator at the top of the article.
 *
 * Looks every readout up in the data files that build_figures.py computes with specmodel
 * (generated/data/simulator.json and one binary per engine) and formats it; nothing here
 * computes a model quantity. Each stored quantity is an integer in units of its displayed
 * precision, over only the axes it depends on; the words (verdicts, tooltips) come from the
 * data too. The setting lives in the page URL (?concurrency=64&gamma=2...). */
(function () {
  "use strict";

  var metaCache = {};

  /* ---- decoding ---------------------------------------------------------------------- */

  var TYPES = { uint8: Uint8Array, uint16: Uint16Array, uint32: Uint32Array };

  function view(buffer, field) {
    /* The field's integers, stored byte plane by byte plane (all lowest bytes, then the
     * next, ...): put each element's bytes back together. Decoding only, no model. */
    var Type = TYPES[field.dtype];
    var size = Type.BYTES_PER_ELEMENT;
    var n = field.length;
    var bytes = new Uint8Array(buffer, field.offset, n * size);
    if (size === 1) return bytes;
    var out = new Type(n);
    for (var k = 0; k < n; k++) {
      var value = 0;
      for (var b = size - 1; b >= 0; b--) value = value * 256 + bytes[b * n + k];
      out[k] = value;
    }
    return out;
  }

  function fetchOk(url) {
    return fetch(url).then(function (r) {
      if (!r.ok) throw new Error("simulator data: HTTP " + r.status + " for " + url);
      return r;
    });
  }

  function parts(data) {
    /* Every stored array of the data, with the engine file it lives in. */
    var out = [];
    var add = function (field) {
      if (field.by_engine) Object.keys(field.by_engine).forEach(function (e) { out.push(field.by_engine[e]); });
      else out.push(field);
    };
    Object.keys(data.readouts).forEach(function (k) { add(data.readouts[k]); });
    Object.keys(data.log.fields).forEach(function (k) { add(data.log.fields[k]); });
    ["bottom", "top", "height", "verdict"].forEach(function (k) { add(data.ladder[k]); });
    add(data.fits);
    return out;
  }

  function loadMeta(url) {
    if (!metaCache[url]) {
      metaCache[url] = fetchOk(url).then(function (r) { return r.json(); }).then(function (data) {
        data.base = url;
        data.files = {};
        return data;
      });
    }
    return metaCache[url];
  }

  function loadFile(data, engine) {
    /* One engine's binary, inflated by the browser's own DecompressionStream, and the views
     * of every array it holds. The default engine's file holds everything shared. */
    if (!data.files[engine]) {
      var url = new URL(data.binaries[engine], data.base).href;
      data.files[engine] = fetchOk(url)
        .then(function (r) {
          return new Response(r.body.pipeThrough(new DecompressionStream("gzip"))).arrayBuffer();
        })
        .then(function (buffer) {
          parts(data).forEach(function (part) {
            if (part.file === engine) part.values = view(buffer, part);
          });
          return data;
        });
    }
    return data.files[engine];
  }

  function loadFor(data, engine) {
    return Promise.all([loadFile(data, data.defaults.engine), loadFile(data, engine)]);
  }

  function loaded(data, engine) {
    var field = data.readouts.speedup.by_engine[engine];
    return Boolean(field && field.values && data.fits.values);
  }

  /* ---- lookup and formatting (no model arithmetic) ------------------------------------ */

  function part(field, setting) {
    return field.by_engine ? field.by_engine[setting.engine] : field;
  }

  function index(data, axes, setting, trailing) {
    var flat = 0;
    axes.forEach(function (axis) {
      var values = data.axes[axis];
      flat = flat * values.length + values.indexOf(setting[axis]);
    });
    return trailing ? flat * trailing : flat;
  }

  function fixed(units, decimals, plain) {
    /* An integer count of 10^-decimals units as text, with thousands separators unless
     * ``plain`` (vLLM's printf-style numbers have none). */
    var digits = String(units);
    while (digits.length <= decimals) digits = "0" + digits;
    var whole = digits.slice(0, digits.length - decimals) || "0";
    var frac = decimals ? "." + digits.slice(digits.length - decimals) : "";
    return (plain ? whole : whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",")) + frac;
  }

  function readoutText(meta, units) {
    var number = fixed(units, meta.decimals);
    if (meta.style === "times") return number + "x";
    if (meta.style === "percent") return number + "%";
    return meta.unit ? number + " " + meta.unit : number;
  }

  function lookup(data, key, setting) {
    var field = data.readouts[key];
    return part(field, setting).values[index(data, field.axes, setting)];
  }

  function fits(data, setting) {
    /* 1 if the scenario fits in memory, 0 if not (precomputed). */
    return data.fits.values[index(data, data.fits.axes, setting)];
  }

  function verdict(data, units) {
    /* "slower", "even" or "faster": decided at build time for every printable speedup. */
    return data.verdicts.keys[data.ladder.verdict.values[units]];
  }

  function rungTitle(data, concurrency, units, fit) {
    /* The rung's tooltip, from the template and the words in the data. */
    var r = data.rungs;
    return r.title
      .replace("{sequences}", r.sequences[String(concurrency)])
      .replace("{speedup}", readoutText(data.readouts.speedup, units))
      .replace("{verdict}", data.verdicts.text[verdict(data, units)])
      .replace("{fit}", fit ? "" : r.unfit);
  }

  function logLine(data, setting) {
    var fields = data.log.fields;
    return data.log.template
      .map(function (piece) {
        if (piece.text !== undefined) return piece.text;
        var field = fields[piece.slot];
        var values = part(field, setting).values;
        if (piece.slot === "per_position") {
          var start = index(data, field.axes, setting, field.positions);
          var rates = [];
          for (var j = 0; j < setting.gamma; j++) rates.push(fixed(values[start + j], field.decimals, true));
          return rates.join(", ");
        }
        return fixed(values[index(data, field.axes, setting)], field.decimals, true);
      })
      .join("");
  }

  /* ---- state ------------------------------------------------------------------------- */

  function parseValue(data, name, raw) {
    var values = data.axes[name];
    for (var i = 0; i < values.length; i++) {
      if (String(values[i]) === String(raw) || (typeof values[i] === "number" && Number(raw) === values[i])) {
        return values[i];
      }
    }
    return undefined;
  }

  function readForm(root, data) {
    var form = root.querySelector("form");
    var setting = {};
    data.axis_order.forEach(function (name) {
      var element = form.elements[name];
      var raw = element.value !== undefined ? element.value : "";
      var value = parseValue(data, name, raw);
      setting[name] = value === undefined ? data.defaults[name] : value;
    });
    return setting;
  }

  function writeForm(root, data, setting) {
    var form = root.querySelector("form");
    data.axis_order.forEach(function (name) {
      var element = form.elements[name];
      if (element instanceof RadioNodeList) {
        Array.prototype.forEach.call(element, function (radio) {
          radio.checked = radio.value === String(setting[name]);
        });
      } else {
        element.value = String(setting[name]);
      }
    });
  }

  function fromUrl(data) {
    var params = new URLSearchParams(window.location.search);
    var setting = {};
    data.axis_order.forEach(function (name) {
      var value = params.has(name) ? parseValue(data, name, params.get(name)) : undefined;
      setting[name] = value === undefined ? data.defaults[name] : value;
    });
    return setting;
  }

  function toUrl(data, setting) {
    var params = new URLSearchParams(window.location.search);
    data.axis_order.forEach(function (name) {
      params.set(name, String(setting[name]));
    });
    var url = window.location.pathname + "?" + params.toString() + window.location.hash;
    window.history.replaceState(window.history.state, "", url);
  }

  /* ---- rendering --------------------------------------------------------------------- */

  function renderReadouts(root, data, setting) {
    root.querySelectorAll("[data-readout]").forEach(function (el) {
      var key = el.getAttribute("data-readout");
      el.textContent = readoutText(data.readouts[key], lookup(data, key, setting));
    });
    var said = verdict(data, lookup(data, "speedup", setting));
    var fit = fits(data, setting);
    root.classList.toggle("is-loss", said === "slower");
    root.classList.toggle("is-unfit", !fit);
    root.querySelector("[data-verdict]").textContent = data.verdicts.text[said];
    var unfit = root.querySelector("[data-headline-fit]");
    unfit.textContent = data.rungs.unfit_headline;
    unfit.hidden = Boolean(fit);
    root.querySelector("[data-fits]").textContent = data.fits.text[String(fit)];
    root.querySelectorAll("[data-output]").forEach(function (el) {
      el.textContent = String(setting[el.getAttribute("data-output")]);
    });
  }

  function renderLadder(root, data, setting) {
    var speedup = data.readouts.speedup;
    var ladder = data.ladder;
    var color = data.colors.drafters[setting.drafter];
    root.querySelectorAll("[data-ladder] [data-concurrency]").forEach(function (rung) {
      var b = Number(rung.getAttribute("data-concurrency"));
      var here = Object.assign({}, setting, { concurrency: b });
      var units = lookup(data, "speedup", here);
      var fit = fits(data, here);
      var said = verdict(data, units);
      var loss = said === "slower";
      /* Bar geometry is looked up too: tenths of a percent of the ladder, from the data. */
      var bar = rung.querySelector(".specsim__bar");
      bar.style.bottom = fixed(ladder.bottom.values[units], 1, true) + "%";
      bar.style.height = fixed(ladder.height.values[units], 1, true) + "%";
      bar.style.background = loss ? data.colors.loss : said === "even" ? data.colors.even : color;
      var value = rung.querySelector(".specsim__value");
      value.textContent = readoutText(speedup, units);
      value.style.bottom = fixed(ladder.top.values[units], 1, true) + "%";
      rung.classList.toggle("is-loss", loss);
      rung.classList.toggle("is-current", b === setting.concurrency);
      rung.classList.toggle("is-unfit", !fit);
      var title = rungTitle(data, b, units, fit);
      /* The tooltip; the button's name is its visible text (speedup and concurrency), which
       * the tooltip then describes. */
      rung.setAttribute("title", title);
      rung.setAttribute("aria-pressed", b === setting.concurrency ? "true" : "false");
    });
  }

  function renderTokens(root, data, setting) {
    /* Draw how many guesses survive from the precomputed distribution of tokens per
     * iteration (a uniform draw against its cumulative table), then lay the row out. */
    var tokens = data.tokens;
    var start = index(data, tokens.axes, setting, tokens.positions);
    var u = Math.random();
    var accepted = 0;
    while (accepted < setting.gamma && u >= tokens.cdf[start + accepted]) accepted++;
    var row = root.querySelector("[data-tokens]");
    var chip = function (state, text) {
      /* A chip from the page's own <template> for its state (the markup has one source). */
      var node = root.querySelector('template[data-chip="' + state + '"]').content.firstElementChild.cloneNode(true);
      node.textContent = text;
      return node;
    };
    var chips = [];
    for (var j = 0; j < setting.gamma; j++) {
      chips.push(chip(j < accepted ? "accepted" : j === accepted ? "rejected" : "skipped", tokens.words[j]));
    }
    chips.push(chip("emitted", accepted === setting.gamma ? "bonus token" : "correction"));
    row.replaceChildren.apply(row, chips);
    row.setAttribute("data-accepted", String(accepted));
  }

  function render(root, data, setting) {
    var started = performance.now();
    renderReadouts(root, data, setting);
    renderLadder(root, data, setting);
    renderTokens(root, data, setting);
    root.querySelector("[data-log]").textContent = logLine(data, setting);
    root.setAttribute("data-update-ms", (performance.now() - started).toFixed(2));
    root.setAttribute("data-setting", data.axis_order.map(function (n) { return n + "=" + setting[n]; }).join("&"));
  }

  function show(root, data, setting) {
    /* Render now if this engine's numbers are here; else say so, fetch them and render the
     * setting the form holds once they arrive. */
    if (loaded(data, setting.engine)) {
      root.setAttribute("data-state", "ready");
      render(root, data, setting);
      return;
    }
    root.setAttribute("data-state", "loading");
    root.querySelector("[data-verdict]").textContent = "(loading this engine's numbers)";
    loadFor(data, setting.engine).then(function () {
      show(root, data, readForm(root, data));
    });
  }

  /* ---- wiring ------------------------------------------------------------------------ */

  function init() {
    var root = document.querySelector("[data-simulator]");
    if (!root || root.getAttribute("data-state")) return;
    root.setAttribute("data-state", "loading");
    var form = root.querySelector("form");
    var touched = false;
    var early = function () { touched = true; };
    form.addEventListener("input", early);
    form.addEventListener("change", early);
    loadMeta(new URL(root.getAttribute("data-src"), document.baseURI).href)
      .then(function (data) {
        /* A control changed before the data arrived wins over the address's setting. */
        var first = fromUrl(data);
        return loadFor(data, first.engine).then(function () { return [data, first]; });
      })
      .then(function (loadedParts) {
        var data = loadedParts[0];
        form.removeEventListener("input", early);
        form.removeEventListener("change", early);
        var setting = touched ? readForm(root, data) : loadedParts[1];
        writeForm(root, data, setting);
        if (touched) toUrl(data, setting);
        var update = function () {
          var next = readForm(root, data);
          toUrl(data, next);
          show(root, data, next);
        };
        form.addEventListener("input", update);
        form.addEventListener("change", update);
        root.querySelectorAll("[data-ladder] [data-concurrency]").forEach(function (rung) {
          rung.addEventListener("click", function () {
            form.elements.concurrency.value = rung.getAttribute("data-concurrency");
            update();
          });
        });
        root.querySelector("[data-resample]").addEventListener("click", function () {
          renderTokens(root, data, readForm(root, data));
        });
        show(root, data, setting);
        root.setAttribute("data-ready-ms", performance.now().toFixed(1));
      })
      .catch(function (error) {
        root.setAttribute("data-state", "failed");
        root.querySelector("[data-verdict]").textContent = "(the interactive simulator could not load its data: " + error.message + ")";
      });
  }

  /* Start at once (this script runs at the end of the page body), and again after each of
   * Material's instant navigations. */
  init();
  if (typeof document$ !== "undefined") document$.subscribe(init);
  else document.addEventListener("DOMContentLoaded", init);
})();
