"""A running vLLM server read over HTTP: two scrapes of ``/metrics`` a window apart and its
``/v1/models``, with the standard library only (``urllib.request``).

Two scrapes appended make one exposition text (:func:`live_exposition`) that the readers of
``--metrics`` take as the increase between them (:func:`~specmodel.vllm.prometheus.parse_exposition`,
:func:`~specmodel.vllm.deployment.deployment_from_exposition`): rates over the window, not
totals since the server started. Bounded: each request has a timeout and a deadline, a
body is read to at most ``max_bytes``; the whole takes about ``window_s`` + 3 timeouts at
most. Every failure (a URL that is no server's, connection refused, a timeout, an HTTP error,
an answer that is not vLLM's) is one line.
"""

from __future__ import annotations

import http.client
import math
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass

from specmodel.errors import SpecModelError
from specmodel.safe_input import excerpt
from specmodel.vllm.deployment import ServerDeployment, deployment_from_exposition, deployment_from_models, merged
from specmodel.vllm.prometheus import exposition_samples

#: Largest answer read (bytes): vLLM's /metrics is ~100 KB, /v1/models far less.
MAX_ANSWER_BYTES = 16 * 2**20
#: Longest window between the two scrapes (s).
MAX_WINDOW_S = 3600.0
_CHUNK = 2**16


@dataclass(frozen=True)
class LiveServer:
    """What a server answered: the base URL, the two ``/metrics`` texts and the Unix times
    (s) each was read, and the ``/v1/models`` text."""

    url: str
    first_metrics: str
    second_metrics: str
    models: str
    first_time_s: float
    second_time_s: float


def server_url(url: str) -> str:
    """``url`` checked as a server's base URL (http or https, a host, an optional port, no
    path beyond ``/``, no query), without its trailing ``/``; else one line.

    >>> server_url("http://127.0.0.1:8000/")
    'http://127.0.0.1:8000'
    """
    allowed = "give http://HOST[:PORT] or https://HOST[:PORT]"
    try:
        parts = urllib.parse.urlsplit(url.strip())
        port = parts.port  # raises ValueError on a bad port
    except ValueError:
        raise SpecModelError(f"server URL {excerpt(url)} has a bad port; {allowed}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise SpecModelError(f"server URL {excerpt(url)} is not http(s)://HOST; {allowed}")
    if parts.path not in ("", "/") or parts.query or parts.fragment or parts.username or parts.password:
        raise SpecModelError(f"server URL {excerpt(url)} has a path, query or user; {allowed} (no path)")
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"{parts.scheme}://{host}" + (f":{port}" if port is not None else "")


def _failure(url: str, exc: BaseException, timeout_s: float) -> SpecModelError:
    """One line saying why ``url`` gave no answer."""
    reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
    if isinstance(reason, TimeoutError | socket.timeout):
        return SpecModelError(f"{url}: no answer within {timeout_s:g} s (timeout); is the server busy or elsewhere?")
    if isinstance(reason, ConnectionRefusedError):
        return SpecModelError(f"{url}: connection refused; is a vLLM server listening there?")
    return SpecModelError(f"{url}: unreachable ({excerpt(str(reason), 80)})")


def _get(url: str, timeout_s: float, max_bytes: int) -> str:
    """The text ``url`` answers, read within ``timeout_s`` per read and a deadline of 2
    ``timeout_s`` for the whole answer, at most ``max_bytes``; one line on any failure."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # the server itself, never a proxy
    deadline, chunks, size = time.monotonic() + 2 * timeout_s, [], 0
    try:
        with opener.open(urllib.request.Request(url, headers={"Accept": "text/plain, application/json"}),
                         timeout=timeout_s) as answer:  # fmt: skip
            while chunk := answer.read(min(_CHUNK, max_bytes + 1 - size)):
                chunks.append(chunk)
                size += len(chunk)
                if size > max_bytes:
                    raise SpecModelError(f"{url}: the answer is larger than {max_bytes:,} bytes; is it a vLLM server?")
                if time.monotonic() > deadline:
                    raise TimeoutError
    except urllib.error.HTTPError as exc:
        exc.close()  # the error holds the answer's connection
        raise SpecModelError(f"{url}: HTTP status {exc.code} {excerpt(str(exc.reason), 60)}") from None
    except (urllib.error.URLError, OSError) as exc:  # TimeoutError and connection errors are OSErrors
        raise _failure(url, exc, timeout_s) from None
    except http.client.HTTPException as exc:
        raise SpecModelError(f"{url}: not an HTTP answer ({type(exc).__name__})") from None
    try:
        return b"".join(chunks).decode("utf-8")
    except UnicodeDecodeError:
        raise SpecModelError(f"{url}: the answer is not UTF-8 text") from None


def _metrics(url: str, timeout_s: float, max_bytes: int) -> str:
    """``/metrics``, checked to be Prometheus text holding ``vllm:`` series."""
    text = _get(url, timeout_s, max_bytes)
    try:
        if any(name.startswith("vllm:") for _, name, _, _ in exposition_samples(text, url)):
            return text
    except SpecModelError:
        pass
    raise SpecModelError(f"{url}: the answer is not Prometheus text with vllm: series; is it a vLLM server?")


def scrape_server(url: str, window_s: float, timeout_s: float = 5.0, max_bytes: int = MAX_ANSWER_BYTES) -> LiveServer:
    """Read a live vLLM server: ``/metrics``, again ``window_s`` seconds later, then
    ``/v1/models`` (checked to be vLLM's, :func:`~specmodel.vllm.deployment.deployment_from_models`)."""
    base = server_url(url)
    if not (math.isfinite(window_s) and 0 <= window_s <= MAX_WINDOW_S):
        raise SpecModelError(f"window {window_s!r} s is not 0 to {MAX_WINDOW_S:g} s")
    if not (math.isfinite(timeout_s) and 0 < timeout_s <= 600):
        raise SpecModelError(f"timeout {timeout_s!r} s is not above 0 and at most 600 s")
    first = _metrics(f"{base}/metrics", timeout_s, max_bytes)
    first_time = time.time()
    time.sleep(window_s)
    second = _metrics(f"{base}/metrics", timeout_s, max_bytes)
    second_time = time.time()
    models = _get(f"{base}/v1/models", timeout_s, max_bytes)
    deployment_from_models(models, f"{base}/v1/models")
    return LiveServer(base, first, second, models, first_time, second_time)


def live_exposition(server: LiveServer) -> str:
    """The two scrapes as one appended exposition text: read as ``--metrics`` is, it gives
    the increase between them (the rates over the window)."""
    return server.first_metrics.rstrip("\n") + "\n" + server.second_metrics


def live_deployment(server: LiveServer, model_name: str | None = None) -> ServerDeployment:
    """What the server's two scrapes and ``/v1/models`` state, merged."""
    scraped = deployment_from_exposition(live_exposition(server), f"{server.url}/metrics (2 scrapes)", model_name)
    return merged(scraped, deployment_from_models(server.models, f"{server.url}/v1/models"))
