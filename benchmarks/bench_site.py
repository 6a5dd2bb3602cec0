"""Benchmark: site build time and the article page's first-load weight.

Prints the time of build_figures.py and of ``mkdocs build`` (target: under 60 s together on
2 cores), then loads the article in headless Chromium from a local server, scrolls through
it so that every figure is drawn, and prints every byte fetched, by resource type (target:
under 4 MB uncompressed). Last, it saves screenshots of the article's top (the simulator) and
of each numbered figure at a phone's width (390 px) and a laptop's (1280 px), in the light and
the dark scheme, to ``out/screenshots/`` for a reader's eye.

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


SCREENSHOTS = Path(__file__).resolve().parents[1] / "out" / "screenshots"
WIDTHS = {"phone": (390, 844), "laptop": (1280, 800)}


def screenshots(base: str, folder: Path) -> list[Path]:
    """The simulator and every figure of the article at each width and colour scheme."""
    from playwright.sync_api import sync_playwright

    folder.mkdir(parents=True, exist_ok=True)
    written = []
    with sync_playwright() as p:
        browser = launch(p)
        for width_name, (width, height) in WIDTHS.items():
            for scheme in ("light", "dark"):
                page = browser.new_page(viewport={"width": width, "height": height}, color_scheme=scheme)
                page.goto(base, wait_until="networkidle")
                page.wait_for_selector("[data-simulator][data-state=ready]")
                draw_every_figure(page)
                shots = {"simulator": page.locator("[data-simulator]")}
                for figure in page.locator(".specfig").all():
                    shots[figure.get_attribute("id") or "figure"] = figure
                for name, locator in shots.items():
                    path = folder / f"{width_name}-{scheme}-{name}.png"
                    locator.scroll_into_view_if_needed()
                    locator.screenshot(path=str(path))
                    written.append(path)
                page.close()
        browser.close()
    return written


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
            shots = screenshots(base, SCREENSHOTS)
    print("article first load (every figure drawn), uncompressed bytes by resource type:")
    for kind, size in sizes.most_common():
        print(f"  {kind:<12} {size:>11,}")
    total = sum(sizes.values())
    print(f"  {'total':<12} {total:>11,}  ({total / 2**20:.2f} MiB)   target < 4 MB (4,000,000 bytes)")
    print(f"screenshots            {len(shots)} PNG files in {SCREENSHOTS}")


if __name__ == "__main__":
    main()
