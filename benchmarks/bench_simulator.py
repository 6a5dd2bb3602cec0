"""Benchmark: the simulator in headless Chromium, served from localhost.

Prints the size of the simulator's data file (target: under 1 MB uncompressed), the time
from navigation to the simulator being interactive (target: under 1.5 s), and the time
from a control change to every readout, the ladder and the token row being updated and
painted (target: median under 50 ms).

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
  const form = document.querySelector('[data-simulator] form');
  const el = form.elements[name];
  const start = performance.now();
  if (el instanceof RadioNodeList) { for (const r of el) r.checked = r.value === String(value); }
  else { el.value = String(value); }
  el.dispatchEvent ? el.dispatchEvent(new Event('change', {bubbles: true}))
                   : form.dispatchEvent(new Event('change', {bubbles: true}));
  const handled = performance.now();
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  return [handled - start, performance.now() - start];
}"""


def main() -> None:
    from playwright.sync_api import sync_playwright

    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        site = Path(tmp) / "site"
        build_site(site, port)
        data_bytes = sum(
            (site / "generated" / "data" / name).stat().st_size for name in ("simulator.json", "simulator.bin.gz")
        )
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
            page.wait_for_timeout(1000)
            axes = page.evaluate(
                "() => fetch(document.querySelector('[data-simulator]').dataset.src)"
                ".then(r => r.json()).then(d => d.axes)"
            )
            rng = random.Random(0)
            handled, painted = [], []
            for _ in range(200):
                name = rng.choice(list(axes))
                h, t = page.evaluate(CHANGE, [name, rng.choice(axes[name])])
                handled.append(h)
                painted.append(t)
            browser.close()

    print(f"simulator data (json + bin)    {data_bytes:,} bytes   target < 1 MB (1,000,000 bytes)")
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


if __name__ == "__main__":
    main()
