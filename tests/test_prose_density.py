"""How many numbers the article's prose carries: a sentence says what changes and why, and the
figure, table or readout beside it gives the value, so the running text of the article page
holds at most a few numbers per hundred words.

The prose is the text of the paragraphs and list items of the article, admonitions and
collapsible blocks included; figures and their captions, tables, code, mathematics, the
simulator, footnote back-links and the source a quoted number shows on a tap are not prose. A
number is a run of digits (thousands commas and a decimal part allowed) that stands alone: one
that follows a letter, a digit, a hyphen, a colon, "#" or "." is part of a name (Qwen3-0.6B,
H100, arXiv:2211.17192, PR #32374). A unit after it (1.9x, 45%, 16 GiB) does not make it two.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup, Tag

#: The most numbers per hundred words of prose the article page may carry.
MOST_PER_100_WORDS = 4.5
#: What is not prose, though a paragraph or a list item may sit inside it: besides figures, tables,
#: code, mathematics and the simulator, the source a quoted number carries for screen readers and
#: for a tap (hidden until then, as a footnote back-link is not read as prose either).
NOT_PROSE = (
    "figure, figcaption, table, pre, code, .arithmatex, .specsim, .footnote-backref, .quoted-source, script, style"
)
#: A number standing alone: not after a letter, a digit, "_", "-", ":", "#" or ".".
NUMBER = re.compile(r"(?<![\w\-:#.])(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?")
#: A word: a run of letters and digits.
WORD = re.compile(r"[^\W_]+")


def count_numbers(text: str) -> int:
    """The numbers standing alone in ``text`` (:data:`NUMBER`)."""
    return len(NUMBER.findall(text))


def count_words(text: str) -> int:
    """The words of ``text``: runs of letters and digits."""
    return len(WORD.findall(text))


def per_100_words(numbers: int, words: int) -> float:
    """Numbers per hundred words (0 for no words)."""
    return 100 * numbers / words if words else 0.0


def prose(html: str) -> list[str]:
    """The text of each paragraph and list item of the page's article (one not inside another),
    without what :data:`NOT_PROSE` names."""
    soup = BeautifulSoup(html, "html.parser")
    article = soup.select_one(".md-content article") or soup
    for part in article.select(NOT_PROSE):
        part.decompose()
    blocks = [el for el in article.find_all(["p", "li"]) if not el.find_parent(["p", "li"])]
    return [" ".join(el.get_text(" ").split()) for el in blocks if isinstance(el, Tag)]


def density(texts: list[str]) -> tuple[float, int, int]:
    """Numbers per hundred words over ``texts``, with the count of numbers and of words."""
    numbers = sum(count_numbers(t) for t in texts)
    words = sum(count_words(t) for t in texts)
    return per_100_words(numbers, words), numbers, words


@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        ("Qwen3-0.6B drafts for Qwen3-8B on one H100", 0),
        ("see arXiv:2211.17192 and vLLM PR #32374.", 0),
        ("it gains 1.93x at 64 sequences and 45% of 1,024", 4),
        ("a 16 GiB read, 2,048-token prompts, 0.5 ms", 3),
        ("γ = 4 (not 10)", 2),
        ("section_2 and x10", 0),
    ],
)
def test_a_number_is_a_run_of_digits_standing_alone(text, numbers):
    assert count_numbers(text) == numbers


def test_words_are_runs_of_letters_and_digits():
    assert count_words("It gains 1.93x at 64 sequences, Qwen3-0.6B's.") == 11
    assert per_100_words(3, 60) == 5.0 and per_100_words(0, 0) == 0.0


def test_prose_is_paragraphs_and_list_items_without_figures_tables_code_or_math():
    html = """<div class="md-content"><article>
    <p>One 1 <span class="arithmatex">\\(\\gamma = 4\\)</span> <code>x = 9</code>
    <span class="quoted">2x<span class="quoted-source"> (quoted from Chen et al. 2023)</span></span></p>
    <ul><li>Two 2 <p>three 3</p><ul><li>four 4</li></ul></li></ul>
    <details><summary>More</summary><p>five 5</p></details>
    <div class="admonition"><p>six 6</p></div>
    <figure><p>no 7</p><figcaption>no 8</figcaption></figure>
    <table><tr><td><p>no 9</p></td></tr></table>
    <div class="specsim"><p>no 10</p></div>
    <pre><code>no 11</code></pre>
    <div class="footnote"><ol><li><p>seven 12<a class="footnote-backref" href="#fnref:1">13</a></p></li></ol></div>
    </article></div><p>outside 14</p>"""
    texts = prose(html)
    assert texts == ["One 1 2x", "Two 2 three 3 four 4", "five 5", "six 6", "seven 12"]
    assert density(texts) == (8 / 15 * 100, 8, 15)


def test_the_article_carries_few_numbers_per_hundred_words(built_site: Path):
    rate, numbers, words = density(prose((built_site / "index.html").read_text(encoding="utf-8")))
    report = f"numbers per 100 words: {rate:.1f} (numbers {numbers}, words {words})"
    print(report)
    assert words > 2000, report  # the article, not an empty page
    assert rate <= MOST_PER_100_WORDS, report
