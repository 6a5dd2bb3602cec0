"""Numbers the rendered article states, checked against the model computed here."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from specmodel import evaluate


class _Text(HTMLParser):
    def __init__(self):
        super().__init__()
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self._skip += 1

    def handle_endtag(self, tag):
        if tag in ("script", "style"):
            self._skip -= 1

    def handle_data(self, data):
        if not self._skip:
            self.parts.append(data)


@pytest.fixture(scope="module")
def article(built_site) -> str:
    parser = _Text()
    parser.feed((built_site / "index.html").read_text(encoding="utf-8"))
    return re.sub(r"\s+", " ", "".join(parser.parts))


def _num(text: str) -> float:
    return float(text.replace(",", ""))


def _matches(shown: str, value: float) -> bool:
    """``shown`` is ``value`` printed to the precision ``shown`` has."""
    decimals = len(shown.split(".")[1]) if "." in shown else 0
    return abs(_num(shown) - value) <= 0.5 * 10**-decimals + 1e-12


def test_one_sequence_throughputs_and_speedup(article):
    m = re.search(r"runs at ([\d,]+) tokens/s against ([\d,]+) for plain decoding, ([\d.]+)x", article)
    assert m, "sentence with the one-sequence throughputs not found"
    ev = evaluate(concurrency=1)
    assert _matches(m.group(1), float(ev.spec_tokens_per_s))
    assert _matches(m.group(2), float(ev.base_tokens_per_s))
    assert _matches(m.group(3), float(ev.speedup))


def test_speedup_at_64_and_1024_sequences(article):
    m64 = re.search(r"but the speedup is ([\d.]+)x: (\d+)% slower", article)
    m1024 = re.search(r"At 1,024 sequences it is ([\d.]+)x", article)
    assert m64 and m1024
    s64 = float(evaluate(concurrency=64).speedup)
    assert _matches(m64.group(1), s64)
    assert _matches(m64.group(2), 100 * (1 - s64))
    assert _matches(m1024.group(1), float(evaluate(concurrency=1024).speedup))


def test_verify_pass_figures(article):
    m = re.search(
        r"moves ([\d.]+) GiB and does ([\d.]+) TFLOP: ([\d.]+) ms of memory time against ([\d.]+) ms", article
    )
    assert m
    ev = evaluate()
    assert _matches(m.group(1), float(ev.verify_bytes) / 2**30)
    assert _matches(m.group(2), float(ev.verify_flops) / 1e12)
    assert _matches(m.group(3), float(ev.verify_memory_time) * 1e3)
    assert _matches(m.group(4), float(ev.verify_compute_time) * 1e3)


def test_idle_shares(article):
    m = re.search(r"(\d+)% at one sequence, (\d+)% at 32, (\d+)% at 64 and (\d+)% at 1,024", article)
    assert m
    for shown, b in zip(m.groups(), (1, 32, 64, 1024)):
        assert _matches(shown, 100 * float(evaluate(concurrency=b).verify_idle)), b


def test_gamma_ladder(article):
    m = re.search(
        r"speedup is ([\d.]+)x at γ=1, ([\d.]+)x at 3, ([\d.]+)x at 4, ([\d.]+)x at 6 and ([\d.]+)x at 10",
        article.replace("\\(\\gamma = 1\\)", "γ=1"),
    )
    assert m
    for shown, g in zip(m.groups(), (1, 3, 4, 6, 10)):
        assert _matches(shown, float(evaluate(gamma=g).speedup)), g


def test_bigger_draft(article):
    m = re.search(r"falls from ([\d.]+)x to ([\d.]+)x", article)
    assert m
    assert _matches(m.group(2), float(evaluate(drafter="qwen3-1.7b").speedup))


def test_the_reachable_batch_with_and_without_the_draft(article):
    m = re.search(
        r"one card holds ([\d,]+) sequences decoding plainly but only ([\d,]+) with the draft: (\d+)% fewer", article
    )
    assert m, "capacity sentence not found"
    ev = evaluate(context=2048)
    assert int(_num(m.group(1))) == int(ev.max_concurrency_without_draft)
    assert int(_num(m.group(2))) == int(ev.max_concurrency)
    assert _matches(m.group(3), 100 * (1 - float(ev.max_concurrency) / float(ev.max_concurrency_without_draft)))


def test_which_of_the_articles_scenarios_do_not_fit(article):
    m = re.search(r"From ([\d,]+) sequences at a 2,048-token prompt, target and draft need more than one card", article)
    assert m
    b = int(_num(m.group(1)))
    assert not bool(evaluate(concurrency=b).fits) and bool(evaluate(concurrency=b // 2).fits)
    m = re.search(
        r"The 64 sequences at 8,192 tokens of the previous section need ([\d,.]+) GiB: also more than one "
        r"card",
        article,
    )
    ev = evaluate(concurrency=64, context=8192)
    assert m and _matches(m.group(1), float(ev.memory_required_bytes) / 2**30) and not bool(ev.fits)


def test_the_head_keeps_its_speedup_at_64_sequences(article):
    m = re.search(r"drafting takes (\d+)%, and speculation still pays: ([\d.]+)x", article)
    assert m
    ev = evaluate(concurrency=64, drafter="eagle")
    assert _matches(m.group(1), 100 * float(ev.draft_share)) and _matches(m.group(2), float(ev.speedup))
    assert float(ev.speedup) > 1 > float(evaluate(concurrency=64).speedup)
