"""Benchmark: site build time and the article page's first-load weight.

Prints the time of build_figures.py and of ``mkdocs build`` (target: under 60 s together on
2 cores), then loads the article in headless Chromium from a local server and prints every
byte it fetched on first load, by resource type (target: under 4 MB uncompressed).

    python benchmarks/bench_site.py
"""

from __future__ import annotations

import collections
import functools
import http.server
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")


def timed(cmd: list[str], env: dict) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def first_load(site: Path, port: int) -> collections.Counter:
    from playwright.sync_api import sync_playwright

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), functools.partial(Quiet, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sizes: collections.Counter = collections.Counter()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu",
                                                                          "--disable-background-networking"])
            page = browser.new_page()
            responses = []
            page.on("response", lambda response: responses.append(response))
            page.goto(f"http://127.0.0.1:{port}/", wait_until="networkidle")
            page.wait_for_function("() => [...document.querySelectorAll('.specfig')].every(e => e.dataset.state === 'rendered')")
            for r in responses:
                body = r.body()
                sizes[r.request.resource_type] += len(body)
            browser.close()
    finally:
        server.shutdown()
    return sizes


def main() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "SITE_URL": f"http://127.0.0.1:{port}/"}
    with tempfile.TemporaryDirectory() as tmp:
        site = Path(tmp) / "site"
        t_figures = timed([sys.executable, "build_figures.py"], env)
        t_mkdocs = timed([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)], env)
        print(f"cores available        {os.cpu_count()}")
        print(f"build_figures.py       {t_figures:6.2f} s")
        print(f"mkdocs build --strict  {t_mkdocs:6.2f} s (includes executing the notebook)")
        print(f"total                  {t_figures + t_mkdocs:6.2f} s   target < 60 s")
        sizes = first_load(site, port)
    print("article first load, uncompressed bytes by resource type:")
    for kind, size in sizes.most_common():
        print(f"  {kind:<12} {size:>11,}")
    total = sum(sizes.values())
    print(f"  {'total':<12} {total:>11,}  ({total / 2**20:.2f} MiB)   target < 4 MB (4,000,000 bytes)")


if __name__ == "__main__":
    main()
