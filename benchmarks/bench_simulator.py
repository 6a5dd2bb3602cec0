"""Benchmark: the simulator in headless Chromium, served from localhost.

Prints the size of the simulator's data file (target: under 1 MB uncompressed), the time
from navigation to the simulator being interactive (target: under 1.5 s), and the time
from a control change to every readout, the ladder and the token row being updated and
painted (target: median under 50 ms).

    python benchmarks/bench_simulator.py            # builds the site first
"""

from __future__ import annotations

import functools
import http.server
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]

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
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "SITE_URL": f"http://127.0.0.1:{port}/"}
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        site = Path(tmp) / "site"
        subprocess.run([sys.executable, "build_figures.py"], cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)
        subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)], cwd=ROOT, env=env,
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        data_bytes = (site / "generated" / "data" / "simulator.json").stat().st_size

        class Quiet(http.server.SimpleHTTPRequestHandler):
            def log_message(self, *args):
                pass

        server = http.server.ThreadingHTTPServer(("127.0.0.1", port), functools.partial(Quiet, directory=str(site)))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
                ready = []
                for _ in range(5):
                    page = browser.new_page()
                    page.goto(f"http://127.0.0.1:{port}/")
                    page.wait_for_selector("[data-simulator][data-state=ready]")
                    ready.append(float(page.get_attribute("[data-simulator]", "data-ready-ms")))
                    page.close()
                page = browser.new_page()
                page.goto(f"http://127.0.0.1:{port}/")
                page.wait_for_selector("[data-simulator][data-state=ready]")
                page.wait_for_timeout(1000)
                axes = page.evaluate("() => fetch(document.querySelector('[data-simulator]').dataset.src).then(r => r.json()).then(d => d.axes)")
                rng = random.Random(0)
                handled, painted = [], []
                for _ in range(200):
                    name = rng.choice(list(axes))
                    h, t = page.evaluate(CHANGE, [name, rng.choice(axes[name])])
                    handled.append(h)
                    painted.append(t)
                browser.close()
        finally:
            server.shutdown()

    print(f"simulator data file            {data_bytes:,} bytes   target < 1 MB (1,000,000 bytes)")
    print(f"interactive after navigation   median {statistics.median(ready):.0f} ms over 5 loads "
          f"(max {max(ready):.0f} ms)   target < 1500 ms")
    print(f"control change -> updated      median {statistics.median(handled):.2f} ms, "
          f"p95 {sorted(handled)[int(0.95 * len(handled))]:.2f} ms (event handler: readouts, ladder, token row, log)")
    print(f"control change -> painted      median {statistics.median(painted):.2f} ms, "
          f"p95 {sorted(painted)[int(0.95 * len(painted))]:.2f} ms   target median < 50 ms")


if __name__ == "__main__":
    main()
