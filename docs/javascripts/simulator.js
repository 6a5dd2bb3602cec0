/* The simulator at the top of the article. Embedded in the page by the site build
 * (sitebuild/simulator/markup.py), right after the simulator's markup, so it runs as soon as
 * that part of the page has arrived, before anything else on the page is fetched or run.
 *
 * It looks every readout up in the data the build computed with specmodel and formats it;
 * nothing here computes a model quantity. The data is cut into slices, one small file per
 * engine, drafter, acceptance profile and alpha (the page's JSON description, #specsim-meta,
 * says where each quantity lies in a slice). The default setting's slice comes with the page,
 * so the first answer needs no request; any other setting needs one small file, and the slices
 * a reader is likely to need next are fetched while the browser is idle. Until the numbers for
 * the current controls are here, the readouts say so, and the reader's choices are kept. The
 * setting lives in the page URL (?concurrency=64&gamma=2...); Reset returns every control to the
 * article's setting and takes it out of the URL. The only arithmetic is drawing: the ladder's
 * log scale is chosen for the bars in view, and the time bars are scaled to the longer one. */
(function () {
  "use strict";

  var root = document.querySelector("[data-simulator]");
  if (!root || root.getAttribute("data-state")) return;
  var meta = JSON.parse(document.getElementById("specsim-meta").textContent);
  var form = root.querySelector("form");
  var base = new URL(root.getAttribute("data-src"), document.baseURI).href;
  var slices = {};
  var shown = null; /* the setting the readouts show */
  var wanted = null; /* the setting the controls ask for */
  var begun = performance.now();
  root.setAttribute("data-state", "loading");

  /* ---- data ------------------------------------------------------------------------ */

  var TYPES = { uint8: Uint8Array, uint16: Uint16Array, uint32: Uint32Array };

  function view(buffer, field) {
    /* The field's integers, stored byte plane by byte plane: put each element's bytes back. */
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

  function sliceName(setting) {
    return meta.slices.axes.map(function (a) { return meta.axes[a].indexOf(setting[a]); }).join("-") + ".bin.gz";
  }

  function load(setting) {
    /* The slice of ``setting``: fetched once, inflated by the browser's DecompressionStream. */
    var name = sliceName(setting);
    if (!slices[name]) {
      slices[name] = fetch(new URL(name, base).href)
        .then(function (r) {
          if (!r.ok) throw new Error("HTTP " + r.status + " for " + name);
          return new Response(r.body.pipeThrough(new DecompressionStream("gzip"))).arrayBuffer();
        })
        .then(function (buffer) { slices[name].buffer = buffer; return buffer; });
      slices[name].catch(function () { delete slices[name]; });
    }
    return slices[name];
  }

  /* The default setting's slice comes with the page (base64 of its plain bytes). */
  var first = document.getElementById("specsim-first");
  if (first && first.textContent) {
    var text = atob(first.textContent);
    var bytes = new Uint8Array(text.length);
    for (var i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
    slices[first.getAttribute("data-file")] = Promise.resolve(bytes.buffer);
    slices[first.getAttribute("data-file")].buffer = bytes.buffer;
  }

  function ready(setting) {
    var entry = slices[sliceName(setting)];
    return Boolean(entry && entry.buffer);
  }

  function at(field, setting, position) {
    /* The integer of ``field`` at ``setting`` (inner axes in the field's order, then a position). */
    var buffer = slices[sliceName(setting)].buffer;
    if (!field.values) field.values = {};
    var key = sliceName(setting);
    var values = field.values[key] || (field.values[key] = view(buffer, field));
    var flat = 0;
    field.axes.forEach(function (axis) {
      var all = meta.axes[axis];
      flat = flat * all.length + all.indexOf(setting[axis]);
    });
    if (field.positions) flat = flat * field.positions + (position || 0);
    return values[flat];
  }

  /* ---- formatting (no model arithmetic) ------------------------------------------- */

  function fixed(units, decimals, plain) {
    var digits = String(units);
    while (digits.length <= decimals) digits = "0" + digits;
    var whole = digits.slice(0, digits.length - decimals) || "0";
    var frac = decimals ? "." + digits.slice(digits.length - decimals) : "";
    return (plain ? whole : whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",")) + frac;
  }

  function readoutText(field, units) {
    var number = fixed(units, field.decimals);
    if (field.style === "times") return number + "x";
    if (field.style === "percent") return number + "%";
    return field.unit ? number + " " + field.unit : number;
  }

  function verdict(units) {
    /* faster / even / slower, read off the build's thresholds for printed speedups. */
    var v = meta.verdicts;
    return units >= v.faster_from ? "faster" : units <= v.slower_to ? "slower" : "even";
  }

  function valueText(name, value) {
    var words = meta.values[name];
    return words ? words[String(value)] : String(value);
  }

  /* ---- the controls and the address ------------------------------------------------- */

  function stops(el) {
    var list = el.getAttribute("data-stops");
    return list ? list.split(",").map(Number) : null;
  }

  function parseValue(name, raw) {
    var values = meta.axes[name];
    for (var i = 0; i < values.length; i++) {
      if (String(values[i]) === String(raw) || (typeof values[i] === "number" && Number(raw) === values[i])) {
        return values[i];
      }
    }
    return undefined;
  }

  function control(name) {
    return form.elements[name];
  }

  function controlValue(name) {
    var el = control(name);
    if (el instanceof RadioNodeList) return parseValue(name, el.value);
    var s = stops(el);
    return s ? s[Number(el.value)] : parseValue(name, el.value);
  }

  function changedByReader(name) {
    /* Whether the reader moved this control away from the page's default (before the script ran). */
    var el = control(name);
    if (el instanceof RadioNodeList) {
      return Array.prototype.some.call(el, function (r) { return r.checked !== r.defaultChecked; });
    }
    return el.value !== el.defaultValue;
  }

  function readForm() {
    var setting = {};
    meta.axis_order.forEach(function (name) {
      var value = controlValue(name);
      setting[name] = value === undefined ? meta.defaults[name] : value;
    });
    return setting;
  }

  function writeForm(setting) {
    meta.axis_order.forEach(function (name) {
      var el = control(name);
      if (el instanceof RadioNodeList) {
        Array.prototype.forEach.call(el, function (r) { r.checked = r.value === String(setting[name]); });
        return;
      }
      var s = stops(el);
      el.value = String(s ? s.indexOf(setting[name]) : setting[name]);
    });
    showValues(setting);
  }

  function showValues(setting) {
    root.querySelectorAll("[data-output]").forEach(function (out) {
      var name = out.getAttribute("data-output");
      var text = valueText(name, setting[name]);
      out.textContent = text;
      control(name).setAttribute("aria-valuetext", text);
    });
  }

  function fromQuery(search) {
    var params = new URLSearchParams(search);
    var setting = {};
    meta.axis_order.forEach(function (name) {
      var value = params.has(name) ? parseValue(name, params.get(name)) : undefined;
      setting[name] = value === undefined ? meta.defaults[name] : value;
    });
    return setting;
  }

  function toUrl(setting, push) {
    var params = new URLSearchParams(window.location.search);
    meta.axis_order.forEach(function (name) { params.set(name, String(setting[name])); });
    var url = window.location.pathname + "?" + params.toString() + "#simulator";
    if (push) window.history.pushState(null, "", url);
    else window.history.replaceState(window.history.state, "", url);
  }

  function clearUrl() {
    /* The address without the simulator's setting (and without its #simulator anchor). */
    var params = new URLSearchParams(window.location.search);
    meta.axis_order.forEach(function (name) { params.delete(name); });
    var query = params.toString();
    var hash = window.location.hash === "#simulator" ? "" : window.location.hash;
    window.history.replaceState(window.history.state, "", window.location.pathname + (query ? "?" + query : "") + hash);
  }

  function key(setting) {
    return meta.axis_order.map(function (n) { return n + "=" + setting[n]; }).join("&");
  }

  /* ---- rendering ------------------------------------------------------------------- */

  function renderReadouts(setting) {
    root.querySelectorAll("[data-readout]").forEach(function (el) {
      var name = el.getAttribute("data-readout");
      var field = meta.readouts[name];
      el.textContent = readoutText(field, at(field, setting));
    });
    var units = at(meta.readouts.speedup, setting);
    var said = verdict(units);
    var fit = at(meta.fits, setting);
    root.classList.toggle("is-loss", said === "slower");
    root.classList.toggle("is-even", said === "even");
    root.classList.toggle("is-unfit", !fit);
    root.querySelector("[data-verdict]").textContent = meta.verdicts.text[said];
    var unfit = root.querySelector("[data-headline-fit]");
    unfit.textContent = meta.rungs.unfit_headline;
    unfit.hidden = Boolean(fit);
    root.querySelector("[data-fits]").textContent = meta.fits.text[String(fit)];
    var rates = [];
    for (var j = 0; j < setting.gamma; j++) rates.push(fixed(at(meta.acceptance, setting, j), meta.acceptance.decimals));
    root.querySelector("[data-acceptance]").textContent = rates.join(", ");
    root.querySelectorAll("[data-part]").forEach(function (row) {
      var part = meta.parts[row.getAttribute("data-part")];
      var plain = at(part.plain, setting);
      var spec = at(part.spec, setting);
      row.querySelector("[data-part-plain]").textContent = fixed(plain, part.decimals) + "%";
      row.querySelector("[data-part-spec]").textContent = fixed(spec, part.decimals) + "%";
      row.hidden = plain === 0 && spec === 0;
    });
    var total = fixed(at(meta.parts_total, setting), meta.parts_total.decimals) + "%";
    root.querySelectorAll("[data-part-total]").forEach(function (el) { el.textContent = total; });
    root.querySelector("[data-best-gamma]").textContent = bestGammaText(setting);
    root.querySelector("[data-schedule]").textContent = scheduleLine(setting);
    renderSizes(setting);
    renderEngineOnly(setting);
    renderTime(setting);
  }

  function renderSizes(setting) {
    /* The drafter's and the target's sizes beside their ratio (GiB, KiB: the build's units). */
    root.querySelectorAll("[data-size]").forEach(function (el) {
      var fields = meta.sizes.fields[el.getAttribute("data-size")];
      el.textContent = meta.sizes.text
        .replace("{draft}", readoutText(fields.draft, at(fields.draft, setting)))
        .replace("{target}", readoutText(fields.target, at(fields.target, setting)));
    });
  }

  function renderEngineOnly(setting) {
    /* A readout the engine does not define is hidden, and a note says why (the build lists
     * the engines that define it). */
    root.querySelectorAll("[data-engine-only]").forEach(function (row) {
      var defined = meta.engine_only[row.getAttribute("data-engine-only")].indexOf(setting.engine) >= 0;
      row.querySelector("[data-readout]").hidden = !defined;
      row.querySelector("[data-engine-note]").hidden = defined;
    });
  }

  function renderTime(setting) {
    /* Two stacked bars, plain and speculative, of each part's share of a plain step (the plain
     * bar's whole is 100%), scaled so that the longer bar fills its track. */
    var total = at(meta.parts_total, setting);
    var whole = 100 * Math.pow(10, meta.parts_total.decimals);
    var scale = Math.max(whole, total);
    var stacks = root.querySelector("[data-stacks]");
    stacks.style.setProperty("--whole", ((100 * whole) / scale).toFixed(2) + "%");
    root.querySelectorAll("[data-stack]").forEach(function (stack) {
      var mode = stack.getAttribute("data-stack");
      stack.querySelectorAll("[data-seg]").forEach(function (seg) {
        var units = at(meta.parts[seg.getAttribute("data-seg")][mode], setting);
        seg.style.width = ((100 * units) / scale).toFixed(2) + "%";
        seg.hidden = units === 0;
      });
    });
  }

  function bestGammaText(setting) {
    /* The gamma the schedule runs at this load, with the speedup readout at that gamma, or why
     * it runs none (the build stored 0 where it turns speculation off). */
    var field = meta.best_gamma;
    var gamma = at(field, setting);
    if (!gamma) return at(meta.fits, setting) ? field.off.gain : field.off.memory;
    var speedup = meta.readouts.speedup;
    var units = at(speedup, Object.assign({}, setting, { gamma: gamma }));
    return field.text.replace("{gamma}", String(gamma)).replace("{speedup}", readoutText(speedup, units));
  }

  function scheduleLine(setting) {
    /* vLLM's schedule for this slice and context, written from the numbers the build stored:
     * how many ranges, num_speculative_tokens, then each range's low, high and gamma. */
    var field = meta.schedule;
    var text = field.template;
    var count = at(field, setting, 0);
    if (!count) return text.empty;
    var ranges = [];
    for (var k = 0; k < count; k++) {
      ranges.push(
        text.range[0] + at(field, setting, 2 + 3 * k) + text.range[1] + at(field, setting, 3 + 3 * k) +
          text.range[2] + at(field, setting, 4 + 3 * k)
      );
    }
    return text.start + at(field, setting, 1) + text.ranges + ranges.join(text.separator) + text.end;
  }

  function renderLadder(setting) {
    /* Rows of bars from the 1x line on a log scale chosen for the values in view. */
    var rungs = Array.prototype.slice.call(root.querySelectorAll("[data-ladder] [data-concurrency]"));
    var field = meta.readouts.speedup;
    var scale = Math.pow(10, field.decimals);
    var units = rungs.map(function (r) {
      return at(field, Object.assign({}, setting, { concurrency: Number(r.getAttribute("data-concurrency")) }));
    });
    var low = Math.min.apply(null, units.map(function (u) { return Math.max(u, 1) / scale; }).concat([1 / 1.25]));
    var high = Math.max.apply(null, units.map(function (u) { return u / scale; }).concat([1.25]));
    var lo = Math.log(low / 1.08);
    var span = Math.log(high * 1.08) - lo;
    var position = function (x) { return (100 * (Math.log(x) - lo)) / span; };
    var one = position(1);
    root.querySelector(".specsim__results").style.setProperty("--one", one.toFixed(1) + "%");
    rungs.forEach(function (rung, i) {
      var b = Number(rung.getAttribute("data-concurrency"));
      var here = Object.assign({}, setting, { concurrency: b });
      var u = units[i];
      var said = verdict(u);
      var fit = at(meta.fits, here);
      var end = position(Math.max(u, 1) / scale);
      var bar = rung.querySelector(".specsim__bar");
      bar.style.left = Math.min(one, end).toFixed(1) + "%";
      bar.style.width = Math.abs(end - one).toFixed(1) + "%";
      rung.querySelector(".specsim__value").textContent = readoutText(field, u);
      rung.classList.toggle("is-loss", said === "slower");
      rung.classList.toggle("is-even", said === "even");
      rung.classList.toggle("is-current", b === setting.concurrency);
      rung.classList.toggle("is-unfit", !fit);
      rung.setAttribute("aria-pressed", b === setting.concurrency ? "true" : "false");
      rung.setAttribute(
        "title",
        meta.rungs.title
          .replace("{sequences}", meta.rungs.sequences[String(b)])
          .replace("{speedup}", readoutText(field, u))
          .replace("{verdict}", meta.verdicts.text[said])
          .replace("{fit}", fit ? "" : meta.rungs.unfit)
      );
    });
  }

  function renderTokens(setting) {
    /* Draw how many guesses survive from the precomputed distribution of tokens per
     * iteration (a uniform draw against its cumulative table), then lay the row out. */
    var tokens = meta.tokens;
    var u = Math.random() * tokens.scale;
    var accepted = 0;
    while (accepted < setting.gamma && u >= at(tokens, setting, accepted)) accepted++;
    var row = root.querySelector("[data-tokens]");
    var chip = function (state, text) {
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

  function logLine(setting) {
    var fields = meta.log.fields;
    return meta.log.template
      .map(function (piece) {
        if (piece.text !== undefined) return piece.text;
        var field = fields[piece.slot];
        if (piece.slot === "per_position") {
          var rates = [];
          for (var j = 0; j < setting.gamma; j++) rates.push(fixed(at(field, setting, j), field.decimals, true));
          return rates.join(", ");
        }
        return fixed(at(field, setting), field.decimals, true);
      })
      .join("");
  }

  function render(setting) {
    var t = performance.now();
    renderReadouts(setting);
    renderLadder(setting);
    renderTokens(setting);
    root.querySelector("[data-log]").textContent = logLine(setting);
    shown = key(setting);
    root.setAttribute("data-shown", shown);
    root.querySelector(".specsim__headline").removeAttribute("aria-busy");
    root.setAttribute("data-update-ms", (performance.now() - t).toFixed(2));
    root.setAttribute("data-state", "ready");
  }

  function pending() {
    /* The numbers for the controls' setting are on their way: say so, never show stale ones
     * (the headline is busy meanwhile, so a screen reader announces only the answer). */
    root.setAttribute("data-state", "loading");
    root.querySelector(".specsim__headline").setAttribute("aria-busy", "true");
    root.querySelectorAll("[data-readout], [data-fits], [data-acceptance], [data-part-plain], [data-part-spec], [data-part-total], [data-best-gamma], [data-schedule], [data-size]")
      .forEach(function (el) { el.textContent = meta.pending; });
    root.querySelectorAll("[data-seg]").forEach(function (el) { el.style.width = "0"; });
    root.querySelectorAll("[data-ladder] .specsim__value").forEach(function (el) { el.textContent = meta.pending; });
    root.querySelector("[data-verdict]").textContent = "(loading the numbers for this setting)";
    root.querySelector("[data-log]").textContent = meta.pending;
  }

  function show(setting) {
    wanted = key(setting);
    showValues(setting);
    if (ready(setting)) {
      if (wanted !== shown || root.getAttribute("data-state") !== "ready") render(setting);
      return;
    }
    pending();
    load(setting).then(
      function () {
        var now = readForm();
        if (key(now) === key(setting)) render(setting);
      },
      function (error) {
        root.setAttribute("data-state", "failed");
        root.querySelector("[data-verdict]").textContent =
          "(the interactive simulator could not load its data: " + error.message + ")";
      }
    );
  }

  /* ---- prefetch -------------------------------------------------------------------- */

  function neighbours(setting) {
    /* The slices a reader moves to next, nearest first: the other engine, the other drafters
     * and profile, then the alphas outwards from the current one. */
    var out = [];
    ["engine", "drafter", "acceptance"].forEach(function (axis) {
      meta.axes[axis].forEach(function (v) {
        var next = {};
        next[axis] = v;
        out.push(Object.assign({}, setting, next));
      });
    });
    var alphas = meta.axes.alpha;
    var i = alphas.indexOf(setting.alpha);
    for (var d = 1; d < alphas.length; d++) {
      [i - d, i + d].forEach(function (j) {
        if (j >= 0 && j < alphas.length) out.push(Object.assign({}, setting, { alpha: alphas[j] }));
      });
    }
    return out;
  }

  function prefetch(setting) {
    var queue = neighbours(setting).filter(function (s) { return !slices[sliceName(s)]; });
    var idle = window.requestIdleCallback || function (f) { return setTimeout(f, 50); };
    var next = function () {
      var s = queue.shift();
      if (!s) return;
      (slices[sliceName(s)] ? Promise.resolve() : load(s)).then(function () { idle(next); }, function () {});
    };
    idle(next);
  }

  /* ---- wiring ---------------------------------------------------------------------- */

  function update(push) {
    var setting = readForm();
    toUrl(setting, push);
    show(setting);
  }

  /* The first setting: the address's, but a control the reader moved before this ran wins. */
  var start = fromQuery(window.location.search);
  meta.axis_order.forEach(function (name) {
    if (changedByReader(name)) {
      var value = controlValue(name);
      if (value !== undefined) start[name] = value;
    }
  });
  writeForm(start);
  if (key(start) !== root.getAttribute("data-shown") || window.location.search) toUrl(start, false);
  if (key(start) !== root.getAttribute("data-shown") && !ready(start)) pending();

  form.addEventListener("input", function () { update(false); });
  form.addEventListener("change", function () { update(false); });
  root.querySelectorAll("[data-ladder] [data-concurrency]").forEach(function (rung) {
    rung.addEventListener("click", function () {
      var setting = readForm();
      setting.concurrency = Number(rung.getAttribute("data-concurrency"));
      writeForm(setting);
      update(false);
    });
  });
  var reset = root.querySelector("[data-reset]");
  reset.hidden = false; /* a control of the script's: without it, nothing to reset */
  reset.addEventListener("click", function () {
    var setting = Object.assign({}, meta.defaults);
    writeForm(setting);
    clearUrl();
    show(setting);
  });
  root.querySelector("[data-resample]").addEventListener("click", function () {
    if (root.getAttribute("data-state") === "ready") renderTokens(readForm());
  });

  /* A link to a setting of the simulator (?concurrency=64#simulator, in the prose and the
   * figure captions) opens that setting here, without reloading the page. */
  document.addEventListener("click", function (event) {
    var link = event.target.closest && event.target.closest("a[href]");
    if (!link || event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey) return;
    var url = new URL(link.getAttribute("href"), window.location.href);
    if (url.pathname !== window.location.pathname || url.hash !== "#simulator") return;
    event.preventDefault();
    var setting = fromQuery(url.search);
    writeForm(setting);
    toUrl(setting, true);
    show(setting);
    root.scrollIntoView({ block: "start" });
  });
  window.addEventListener("popstate", function () {
    var setting = fromQuery(window.location.search);
    writeForm(setting);
    show(setting);
  });

  function usable() {
    root.setAttribute("data-ready-ms", (performance.now() - begun).toFixed(1));
    root.setAttribute("data-ready-at", performance.now().toFixed(1));
    document.dispatchEvent(new CustomEvent("specsim:ready"));
    prefetch(readForm());
  }
  show(start);
  if (ready(start)) usable();
  else load(start).then(usable, function () {});
})();
