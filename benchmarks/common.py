"""What the site benchmarks share: build the site for a local address, serve it, open
Chromium, draw every figure."""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def build_site(site: Path, port: int) -> tuple[float, float]:
    """build_figures.py and ``mkdocs build --strict`` for http://127.0.0.1:<port>/; their
    wall-clock times in seconds."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "SITE_URL": f"http://127.0.0.1:{port}/"}
    times = []
    for cmd in (
        [sys.executable, "build_figures.py"],
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
    ):
        start = time.perf_counter()
        subprocess.run(cmd, cwd=ROOT, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return times[0], times[1]


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@contextlib.contextmanager
def serve(site: Path, port: int):
    """The built site on http://127.0.0.1:<port>/ while the block runs."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), functools.partial(_Quiet, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        server.shutdown()
        server.server_close()


def launch(playwright):
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)


def draw_every_figure(page) -> None:
    """Scroll each figure into view (they draw near the viewport) and wait for all."""
    figures = page.locator(".specfig")
    for i in range(figures.count()):
        figures.nth(i).scroll_into_view_if_needed()
        page.wait_for_function("el => el.dataset.state === 'rendered'", arg=figures.nth(i).element_handle())
