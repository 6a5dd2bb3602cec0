"""Benchmark: the simulator in headless Chromium, served from localhost.

Prints the size of the simulator's data: one slice (what the first answer needs; target:
under 50 kB compressed) and all of them; the time from navigation to the simulator being
interactive on localhost (target: under 1.5 s; throttled networks: bench_load.py), and the
time from a control change to every readout, the ladder and the token row being updated and
painted (target: median under 50 ms), with the slices the change needs already loaded.

    python benchmarks/bench_simulator.py            # builds the site first
"""

from __future__ import annotations

import random
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import build_site, free_port, launch, serve  # noqa: E402

# One control change, timed in the page: the change event's handler runs synchronously,
# then two animation frames make sure the new state has been laid out and painted.
CHANGE = """async ([name, value]) => {
  const sim = document.querySelector('[data-simulator]');
  const form = sim.querySelector('form');
  const el = form.elements[name];
  const start = performance.now();
  if (el instanceof RadioNodeList) { for (const r of el) r.checked = r.value === String(value); }
  else if (el.dataset.stops) { el.value = String(el.dataset.stops.split(',').map(Number).indexOf(value)); }
  else { el.value = String(value); }
  form.dispatchEvent(new Event('change', {bubbles: true}));
  const handled = performance.now();
  await new Promise(resolve => {
    const done = () => sim.getAttribute('data-state') === 'ready';
    if (done()) return resolve();
    new MutationObserver((_, obs) => { if (done()) { obs.disconnect(); resolve(); } }).observe(sim, {attributes: true});
  });
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  return [handled - start, performance.now() - start];
}"""
#: Axes inside a slice (a change needs no new data) and across slices (a change may fetch one).
INSIDE = ("concurrency", "context", "gamma")
ACROSS = ("drafter", "acceptance", "alpha", "engine")


def main() -> None:
    from playwright.sync_api import sync_playwright

    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        site = Path(tmp) / "site"
        build_site(site, port)
        slices = sorted((site / "generated" / "data" / "sim").glob("*.bin.gz"))
        slice_bytes = [f.stat().st_size for f in slices]
        with serve(site, port) as base, sync_playwright() as p:
            browser = launch(p)
            ready = []
            for _ in range(5):
                page = browser.new_page()
                page.goto(base)
                page.wait_for_selector("[data-simulator][data-state=ready]")
                ready.append(float(page.get_attribute("[data-simulator]", "data-ready-ms")))
                page.close()
            page = browser.new_page()
            page.goto(base)
            page.wait_for_selector("[data-simulator][data-state=ready]")
            axes = page.evaluate("() => JSON.parse(document.getElementById('specsim-meta').textContent).axes")
            rng = random.Random(0)
            handled, painted = [], []
            for _ in range(200):
                name = rng.choice(INSIDE)
                h, t = page.evaluate(CHANGE, [name, rng.choice(axes[name])])
                handled.append(h)
                painted.append(t)
            across = []
            for _ in range(20):
                name = rng.choice(ACROSS)
                across.append(page.evaluate(CHANGE, [name, rng.choice(axes[name])])[1])
            browser.close()

    print(f"simulator data, one slice      median {statistics.median(slice_bytes):,.0f} bytes gzipped "
          f"(max {max(slice_bytes):,})   target < 50 kB")  # fmt: skip
    print(f"simulator data, all slices     {sum(slice_bytes):,} bytes in {len(slices)} files (fetched as needed)")
    print(
        f"interactive after navigation   median {statistics.median(ready):.0f} ms over 5 loads "
        f"(max {max(ready):.0f} ms)   target < 1500 ms"
    )
    print(
        f"control change -> updated      median {statistics.median(handled):.2f} ms, "
        f"p95 {sorted(handled)[int(0.95 * len(handled))]:.2f} ms (event handler: readouts, ladder, token row, log)"
    )
    print(
        f"control change -> painted      median {statistics.median(painted):.2f} ms, "
        f"p95 {sorted(painted)[int(0.95 * len(painted))]:.2f} ms   target median < 50 ms"
    )
    print(
        f"change of slice -> painted     median {statistics.median(across):.2f} ms over 20 changes of drafter, "
        "profile, alpha or engine (localhost; a slice not prefetched yet is fetched)"
    )


if __name__ == "__main__":
    main()
