"""Benchmark: site build time and the article page's first-load weight.

Prints the time of build_figures.py and of ``mkdocs build`` (target: under 60 s together on
2 cores), then loads the article in headless Chromium from a local server, scrolls through
it so that every figure is drawn, and prints every byte fetched, by resource type (target:
under 4 MB uncompressed).

    python benchmarks/bench_site.py
"""

from __future__ import annotations

import collections
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import build_site, draw_every_figure, free_port, launch, serve  # noqa: E402


def first_load(base: str) -> collections.Counter:
    from playwright.sync_api import sync_playwright

    sizes: collections.Counter = collections.Counter()
    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page()
        responses = []
        page.on("response", lambda response: responses.append(response))
        page.goto(base, wait_until="networkidle")
        page.wait_for_selector("[data-simulator][data-state=ready]")
        draw_every_figure(page)
        for r in responses:
            sizes[r.request.resource_type] += len(r.body())
        browser.close()
    return sizes


def main() -> None:
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        site = Path(tmp) / "site"
        t_figures, t_mkdocs = build_site(site, port)
        print(f"cores available        {os.cpu_count()}")
        print(f"build_figures.py       {t_figures:6.2f} s")
        print(f"mkdocs build --strict  {t_mkdocs:6.2f} s (includes executing the notebook)")
        print(f"total                  {t_figures + t_mkdocs:6.2f} s   target < 60 s")
        with serve(site, port) as base:
            sizes = first_load(base)
    print("article first load (every figure drawn), uncompressed bytes by resource type:")
    for kind, size in sizes.most_common():
        print(f"  {kind:<12} {size:>11,}")
    total = sum(sizes.values())
    print(f"  {'total':<12} {total:>11,}  ({total / 2**20:.2f} MiB)   target < 4 MB (4,000,000 bytes)")


if __name__ == "__main__":
    main()
