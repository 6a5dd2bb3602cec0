"""A live vLLM server read over HTTP, against small servers on 127.0.0.1 (no other network)."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from specmodel.errors import SpecModelError
from specmodel.vllm.live import live_deployment, live_exposition, scrape_server, server_url
from specmodel.vllm.prometheus import parse_exposition

MODEL = "Qwen/Qwen3-8B"
CARD = {"id": MODEL, "object": "model", "created": 1, "owned_by": "vllm", "root": MODEL, "parent": None}
MODELS = {"object": "list", "data": [{**CARD, "max_model_len": 40960, "permission": []}]}


def exposition(n: int) -> str:
    """A scrape after ``n`` scrapes before it: every counter has grown by 100 drafts."""
    labels = f'engine="0",model_name="{MODEL}"'
    drafts = 1000 + 100 * n
    lines = [
        f"vllm:num_requests_running{{{labels}}} {8 + n}.0",
        f"vllm:spec_decode_num_drafts_total{{{labels}}} {drafts}.0",
        f"vllm:spec_decode_num_draft_tokens_total{{{labels}}} {3 * drafts}.0",
        f"vllm:spec_decode_num_accepted_tokens_total{{{labels}}} {drafts + drafts // 2}.0",
        f'vllm:spec_decode_num_accepted_tokens_per_pos_total{{{labels},position="0"}} {drafts * 7 // 10}.0',
        f'vllm:spec_decode_num_accepted_tokens_per_pos_total{{{labels},position="1"}} {drafts * 5 // 10}.0',
        f'vllm:spec_decode_num_accepted_tokens_per_pos_total{{{labels},position="2"}} {drafts * 3 // 10}.0',
    ]
    return "\n".join(lines) + "\n"


def handler(kind: str) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        scrapes = 0

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            if kind == "silent":
                time.sleep(3)
                return
            status, body, ctype = 200, "", "text/plain"
            if kind == "html":
                body, ctype = "<html><body>Welcome</body></html>", "text/html"
            elif kind == "error":
                status, body = 500, "Internal Server Error"
            elif self.path == "/metrics":
                body = exposition(type(self).scrapes)
                type(self).scrapes += 1
            elif self.path == "/v1/models":
                body, ctype = json.dumps(MODELS), "application/json"
            else:
                status = 404
            data = body.encode()
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    return Handler


@contextmanager
def serving(kind: str) -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler(kind))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_two_scrapes_give_the_increase_between_them():
    with serving("vllm") as url:
        server = scrape_server(url + "/", window_s=0.1, timeout_s=2)
    assert server.url == url and server.second_time_s >= server.first_time_s + 0.1
    counters = parse_exposition(live_exposition(server), "live", None)
    assert counters.num_drafts == 100 and counters.accepted_per_position == (70, 50, 30)  # rates, not totals
    deployment = live_deployment(server)
    assert deployment.running is not None and deployment.running.value == (8.0, 9.0)
    assert deployment.served_model_name is not None and deployment.served_model_name.value == MODEL
    assert deployment.max_model_len is not None and deployment.max_model_len.value == 40960


def test_a_server_that_never_answers_times_out_within_a_bound():
    with serving("silent") as url:
        start = time.monotonic()
        with pytest.raises(SpecModelError, match="no answer within 0.5 s"):
            scrape_server(url, window_s=0, timeout_s=0.5)
        assert time.monotonic() - start < 10


@pytest.mark.parametrize(
    "kind, needle", [("html", "not Prometheus text with vllm: series"), ("error", "HTTP status 500")]
)
def test_an_answer_that_is_not_vllms_is_refused(kind, needle):
    with serving(kind) as url, pytest.raises(SpecModelError, match=needle) as err:
        scrape_server(url, window_s=0, timeout_s=2)
    assert "\n" not in str(err.value)


def test_a_closed_port_is_refused():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(SpecModelError, match="connection refused|unreachable"):
        scrape_server(f"http://127.0.0.1:{port}", window_s=0, timeout_s=1)


def test_an_answer_too_large_is_refused():
    with serving("vllm") as url, pytest.raises(SpecModelError, match="larger than 100 bytes"):
        scrape_server(url, window_s=0, timeout_s=2, max_bytes=100)


@pytest.mark.parametrize("url", ["ftp://host", "http://", "http://host/metrics", "http://host:99999", "localhost:8000",
                                 "http://host/?q=1"])  # fmt: skip
def test_urls_that_are_no_server_base_are_refused(url):
    with pytest.raises(SpecModelError, match="give http://HOST"):
        server_url(url)


def test_advise_reads_a_live_server_end_to_end(capsys):
    """``advise --url``: the acceptance of the window between the two scrapes, the model and the
    running requests the server states, max_model_len from /v1/models; the card and the GPUs,
    which no endpoint states, from the options."""
    from specmodel.cli import main

    with serving("vllm") as url:
        status = main(["advise", "--url", url, "--window", "0.1", "--hardware", "h100-sxm", "--tensor-parallel", "1",
                       "--drafter", "qwen3-0.6b", "--json"])  # fmt: skip
    out = json.loads(capsys.readouterr().out)
    assert status == 0
    assert out["target"] == "qwen3-8b" and out["concurrency"] in (8, 9)
    assert out["per_position_acceptance"] == pytest.approx([0.7, 0.5, 0.3])  # the increase: 70, 50, 30 of 100
    assert out["running_requests"]["min"] == 8 and out["running_requests"]["max"] == 9
    assert out["sources"]["max_model_len"].startswith("40960 (") and "/v1/models" in out["sources"]["max_model_len"]
    assert "/v1/models" in out["sources"]["model"] and "--drafter" in out["sources"]["drafter"]


def test_advise_against_a_server_that_is_not_vllm_is_one_line(capsys):
    from specmodel.cli import main

    with serving("html") as url:
        status = main(["advise", "--url", url, "--window", "0", "--hardware", "h100-sxm", "--drafter", "ngram"])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and err.startswith("specmodel: error:")
