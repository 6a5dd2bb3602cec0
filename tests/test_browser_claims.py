"""The article's claims against the simulator: every number of the prose that links to a
setting is followed, and the simulator at that setting must print the same readout (and, for a
speedup, give the same verdict as the sentence's claim)."""

from __future__ import annotations

from urllib.parse import urljoin

import pytest

from specmodel import formatting

pytestmark = pytest.mark.browser

READY = "[data-simulator][data-state=ready]"


def _number(text: str) -> str:
    """The number at the start of a readout: ``0.89x`` -> ``0.89``, ``310 tokens/s`` -> ``310``."""
    return text.strip().split(" ")[0].rstrip("x%")


def test_every_linked_number_of_the_article_is_what_the_simulator_shows_there(browser, site_server):
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.goto(site_server, wait_until="load")
    page.wait_for_selector(READY, timeout=20_000)
    links = page.eval_on_selector_all(
        "article a[data-readout-expected]",
        "els => els.map(e => [e.getAttribute('href'), e.getAttribute('data-readout-expected'), e.textContent])",
    )
    assert len(links) >= 25, "the article's linked numbers were not found"
    checked = set()
    for href, readout, text in links:
        if (href, readout) in checked:
            continue
        checked.add((href, readout))
        page.goto(urljoin(site_server, href), wait_until="load")
        page.wait_for_selector(READY, timeout=20_000)
        shown = page.text_content(f"[data-simulator] [data-readout={readout}]")
        assert _number(shown) == _number(text), (href, readout, shown, text)
        if readout == "speedup":
            said = formatting.VERDICTS[formatting.verdict(float(_number(text)))]
            assert page.text_content("[data-simulator] [data-verdict]") == said, (href, text)
    context.close()
