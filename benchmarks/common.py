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


class _QuietServer(http.server.ThreadingHTTPServer):
    """A file server that says nothing when the browser drops a connection it no longer needs
    (a page left, a figure's data no longer wanted): that is the browser's right, not a fault."""

    def handle_error(self, request, client_address):
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


@contextlib.contextmanager
def serve(site: Path, port: int, handler: type[http.server.SimpleHTTPRequestHandler] = _Quiet):
    """The built site on http://127.0.0.1:<port>/ while the block runs, served by ``handler``
    (the benchmarks' and the browser tests' server)."""
    server = _QuietServer(("127.0.0.1", port), functools.partial(handler, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        server.shutdown()
        server.server_close()


#: What GitHub Pages compresses on the fly (Content-Encoding: gzip), by file suffix; other files
#: (images, fonts, the simulator's .bin.gz slices) go as they are.
GZIPPED = {".html", ".css", ".js", ".json", ".svg", ".txt", ".xml", ".csv", ".map"}


class _Gzip(_Quiet):
    """A static server that gzips text responses for a client that accepts it, as GitHub
    Pages does (it serves with HTTP/2; this server speaks HTTP/1.1, so each request pays the
    latency a throttled browser adds)."""

    def send_head(self):  # type: ignore[override]
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            path = path / "index.html"
        accepts = "gzip" in self.headers.get("Accept-Encoding", "")
        if not (accepts and path.is_file() and path.suffix in GZIPPED):
            return super().send_head()
        import gzip
        import io

        body = gzip.compress(path.read_bytes(), compresslevel=6, mtime=0)
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        return io.BytesIO(body)


def serve_gzip(site: Path, port: int):
    """The built site on http://127.0.0.1:<port>/, text gzipped as GitHub Pages serves it."""
    return serve(site, port, _Gzip)


def launch(playwright):
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)


def draw_every_figure(page) -> None:
    """Scroll each figure into view (they draw near the viewport) and wait for all."""
    figures = page.locator(".specfig")
    for i in range(figures.count()):
        figures.nth(i).scroll_into_view_if_needed()
        page.wait_for_function("el => el.dataset.state === 'rendered'", arg=figures.nth(i).element_handle())
