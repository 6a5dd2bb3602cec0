"""Benchmark: the article on a slow phone network and on a fast one, as a reader meets it.

Serves the built site with gzip, as GitHub Pages serves it, and loads the article in
Chromium throttled through the DevTools protocol (Network.emulateNetworkConditions with the
cache disabled, Emulation.setCPUThrottlingRate) at two settings:

* Slow 4G: 400 ms latency, 500 kbit/s down, 4x CPU slowdown (the issue's setting);
* Fast 4G: DevTools' preset, 165 ms latency (60 ms x 2.75), 8.1 Mbit/s down, 4x CPU.

For each it prints, as the median of several loads: first contentful paint; the simulator
usable (``data-state="ready"``: the answer for the address's setting is shown and the controls
respond); the bytes transferred before that; and an engine switch (from choosing the vLLM
engine to its answer), once right after the simulator is usable and once after the page
has been idle a few seconds. It also prints the network floor: the least time the bytes
before usable take at that bandwidth, plus one latency for the page and one for the data.
Targets: usable within 3 s on Slow 4G, within 1 s on Fast 4G.

    python benchmarks/bench_load.py            # builds the site first
    python benchmarks/bench_load.py --site site --loads 5
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import build_site, free_port, launch, serve_gzip  # noqa: E402

NETWORKS = {
    "Slow 4G": {"latency": 400, "download": 500_000 / 8, "upload": 500_000 / 8, "cpu": 4, "target": 3.0},
    "Fast 4G": {"latency": 60 * 2.75, "download": 9e6 / 8 * 0.9, "upload": 1.5e6 / 8 * 0.9, "cpu": 4, "target": 1.0},
}

# In the page: when the simulator became usable, the paint, and every resource's bytes and end.
TIMINGS = """() => {
  const sim = document.querySelector('[data-simulator]');
  const ready = Number(sim.getAttribute('data-ready-at'));
  const paint = performance.getEntriesByName('first-contentful-paint')[0];
  const nav = performance.getEntriesByType('navigation')[0];
  const before = performance.getEntriesByType('resource').filter(r => r.responseEnd <= ready);
  const bytes = before.reduce((s, r) => s + r.transferSize, 0) + nav.transferSize;
  return {ready, fcp: paint ? paint.startTime : NaN, bytes, requests: before.length + 1,
          names: before.map(r => r.name.split('/').slice(-2).join('/'))};
}"""

SWITCH = """async () => {
  const sim = document.querySelector('[data-simulator]');
  const radio = sim.querySelector('[name=engine][value=vllm]');
  const start = performance.now();
  radio.click();
  await new Promise(resolve => {
    const done = () => sim.getAttribute('data-state') === 'ready'
      && sim.getAttribute('data-shown').includes('engine=vllm');
    if (done()) return resolve();
    new MutationObserver((_, obs) => { if (done()) { obs.disconnect(); resolve(); } })
      .observe(sim, {attributes: true});
  });
  return performance.now() - start;
}"""


def measure(browser, base: str, network: dict, idle_ms: int) -> dict:
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    page = context.new_page()
    cdp = context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send("Network.setCacheDisabled", {"cacheDisabled": True})
    cdp.send("Network.emulateNetworkConditions", {
        "offline": False, "latency": network["latency"], "downloadThroughput": network["download"],
        "uploadThroughput": network["upload"],
    })  # fmt: skip
    cdp.send("Emulation.setCPUThrottlingRate", {"rate": network["cpu"]})
    page.goto(base, wait_until="commit")
    page.wait_for_selector("[data-simulator][data-state=ready]", timeout=120_000)
    out = page.evaluate(TIMINGS)
    if idle_ms:
        page.wait_for_timeout(idle_ms)
    out["switch"] = page.evaluate(SWITCH)
    context.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, help="a built site (default: build one)")
    parser.add_argument("--loads", type=int, default=3)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        site = args.site
        if site is None:
            site = Path(tmp) / "site"
            build_site(site, port)
        with serve_gzip(site, port) as base, sync_playwright() as p:
            browser = launch(p)
            for name, network in NETWORKS.items():
                runs = [measure(browser, base, network, 0) for _ in range(args.loads)]
                idle = [measure(browser, base, network, 5000)["switch"] for _ in range(max(1, args.loads // 2))]
                ready = statistics.median(r["ready"] for r in runs) / 1000
                fcp = statistics.median(r["fcp"] for r in runs) / 1000
                nbytes = statistics.median(r["bytes"] for r in runs)
                floor = 2 * network["latency"] / 1000 + nbytes / network["download"]
                print(f"{name}: {network['latency']:.0f} ms latency, {network['download'] * 8 / 1e3:,.0f} kbit/s, "
                      f"{network['cpu']}x CPU (median of {args.loads} loads, cache off, gzip)")  # fmt: skip
                print(f"  first contentful paint   {fcp:6.2f} s")
                print(f"  simulator usable         {ready:6.2f} s   target < {network['target']:.0f} s")
                print(f"  bytes before usable      {nbytes:9,.0f} in {runs[0]['requests']} requests "
                      f"({', '.join(runs[0]['names'])})")  # fmt: skip
                print(
                    f"  network floor            {floor:6.2f} s   (the latency of the page and of its stylesheets, and "
                    "those bytes at the bandwidth; transfers overlap latencies, so a load can beat it)"
                )
                print(f"  engine switch            {statistics.median(r['switch'] for r in runs) / 1000:6.2f} s "
                      f"right after usable, {statistics.median(idle) / 1000:.2f} s after 5 s idle")  # fmt: skip
            browser.close()


if __name__ == "__main__":
    main()
