"""A static file server for the browser tests: the built site on 127.0.0.1 at a port."""

from __future__ import annotations

import contextlib
import functools
import http.server
import sys
import threading
from pathlib import Path


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


class _QuietServer(http.server.ThreadingHTTPServer):
    """A file server that says nothing when the browser drops a connection it no longer needs
    (a page left, a figure's data no longer wanted): that is the browser's right, not a fault."""

    def handle_error(self, request, client_address):
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


@contextlib.contextmanager
def serving(directory: Path, port: int):
    """``directory`` served on http://127.0.0.1:<port>/ while the block runs."""
    server = _QuietServer(("127.0.0.1", port), functools.partial(_QuietHandler, directory=str(directory)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()
