"""Every page of the built site reads as a page: its headings are headings (one h1, the page's
title; no line of prose turned into a heading), every page with sections has a table of
contents that lists them, and no page speaks of how the project itself is run (its task
notes, its make targets, its own issue numbers). Citations of upstream sources, such as
"vLLM issue #20780", are sources and stay."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Projects whose issues and pull requests the pages cite, by name or as ``owner/repository``.
UPSTREAM = r"(?:vLLM|SGLang|TensorRT-LLM|transformers|PyTorch|llama\.cpp|[\w.-]+/[\w.-]+)"
#: A citation of an upstream issue or pull request: the project, then "issue", "PR" or "pull
#: request", then one or more numbers ("vLLM issue #20780", "vllm-project/vllm PR #16035").
CITATION = re.compile(
    rf"(?<![\w/.-]){UPSTREAM}(?:'s)?\s+(?:issues?|PRs?|pull\s+requests?)\s+#\d+(?:(?:,\s*|,?\s+and\s+)#\d+)*", re.I
)
#: Words a reader of the domain cannot know, once every upstream citation is taken out: the name
#: of the project's own task notes, the make target of its fit, and any issue, pull request or "#"
#: number left, which can only be the project's own.
PROCESS = re.compile(r"\bbriefs?\b|\bmake\s+fit\b|\bissues?\s*#?\s*\d+|\bPRs?\s*#?\s*\d+|#\d+", re.I)
#: A heading that is a line of prose which began with a number ("#20780 as a ratio of ..." is
#: an h1 "20780 as a ratio of ..."); a numbered section ("1. One iteration") is not.
PROSE_HEADING = re.compile(r"^#?\d+(?:\s|$)")


def process_words(text: str) -> list[str]:
    """What in ``text`` speaks of the project's own process (:data:`PROCESS`), upstream
    citations (:data:`CITATION`) left out."""
    return PROCESS.findall(CITATION.sub(" ", text))


@pytest.mark.parametrize(
    "text",
    [
        "the TPOT table of vLLM issue #20780 as a ratio",
        "vllm-project/vllm PR #16035 (April 2025)",
        "vLLM PR #46112's micro-benchmark",
        "SGLang issue #1234 and vLLM pull request #5",
        "the issue's rows are all at one request",
        "vLLM issues #1, #2 and #3",
    ],
)
def test_an_upstream_citation_is_a_source(text):
    assert process_words(text) == []


@pytest.mark.parametrize(
    "text",
    ["as issue 22 asks", "fixed in #32", "see issue #7", "the brief says", "run `make fit` again", "PR 12 moved it"],
)
def test_the_projects_own_process_is_found(text):
    assert process_words(text)


class Page(HTMLParser):
    """What a built page shows: the headings of its article (level, id, text), the anchors its
    tables of contents link to, and the article's visible text."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.headings: list[tuple[int, str, str]] = []
        self.toc: set[str] = set()
        self.text: list[str] = []
        self._stack: list[tuple[str, bool]] = []  # tag, whether it opens a secondary table of contents
        self._heading: tuple[int, str, list[str]] | None = None
        self._in = {"article": 0, "toc": 0, "hidden": 0}
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        toc = tag == "nav" and "md-nav--secondary" in (a.get("class") or "")
        if tag not in {"br", "img", "input", "meta", "link", "hr", "source", "col", "wbr"}:
            self._stack.append((tag, toc))
        self._in["toc"] += toc
        self._in["article"] += tag == "article"
        self._in["hidden"] += tag in ("script", "style", "svg")
        if tag == "a" and self._in["toc"] and (a.get("href") or "").startswith("#"):
            self.toc.add((a.get("href") or "")[1:])
        if self._in["article"] and re.fullmatch(r"h[1-6]", tag):
            self._heading = (int(tag[1]), a.get("id") or "", [])
        self.text.append(" ")

    def handle_endtag(self, tag):
        while self._stack:
            open_tag, toc = self._stack.pop()
            self._in["toc"] -= toc
            self._in["article"] -= open_tag == "article"
            self._in["hidden"] -= open_tag in ("script", "style", "svg")
            if open_tag == tag:
                break
        if self._heading is not None and re.fullmatch(r"h[1-6]", tag):
            level, ident, parts = self._heading
            self.headings.append((level, ident, " ".join("".join(parts).replace("¶", "").split())))
            self._heading = None
        self.text.append(" ")

    def handle_data(self, data):
        if self._heading is not None:
            self._heading[2].append(data)
        if self._in["article"] and not self._in["hidden"]:
            self.text.append(data)


def pages(site: Path) -> dict[str, Page]:
    """Every page of the built site (its HTML files but the 404 page and the generated fragments)."""
    out = {}
    for path in sorted(site.rglob("*.html")):
        name = str(path.relative_to(site))
        if name == "404.html" or name.startswith(("generated/", "assets/")):
            continue
        out[name] = Page(path.read_text(encoding="utf-8"))
    return out


def broken_headings(page: Page) -> list[str]:
    """The page's headings that are not headings: an h1 but the page's one title (its first
    heading), and any heading that is a line of prose beginning with a number."""
    h1 = [text for level, _, text in page.headings if level == 1]
    found = [f"h1 {t!r} beside the title {h1[0]!r}" for t in h1[1:]] if h1 else ["no h1"]
    if h1 and page.headings[0][0] != 1:
        found.append(f"the title {h1[0]!r} is not the first heading")
    found += [f"h{level} {text!r}" for level, _, text in page.headings if PROSE_HEADING.match(text)]
    return found


def missing_from_toc(page: Page) -> list[str]:
    """The page's sections (h2 and h3) that its table of contents does not list."""
    return [f"h{level} {text!r}" for level, ident, text in page.headings if level in (2, 3) and ident not in page.toc]


def test_no_markdown_line_starts_a_heading_with_a_number():
    """A line of a page's prose that begins with "#" and a number ("#20780 as a ratio ...", a
    citation wrapped at the wrong place) is a heading to Markdown: outside code, none does."""
    found = []
    for path in sorted((ROOT / "docs").glob("*.md")):
        text = re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"), flags=re.S | re.M)
        found += [f"{path.name}: {line[:60]}" for line in text.splitlines() if re.match(r"#+\d", line)]
    assert found == []


def test_every_heading_is_a_heading(built_site):
    found = {name: broken for name, page in pages(built_site).items() if (broken := broken_headings(page))}
    assert found == {}


def test_every_page_with_sections_lists_them_in_its_table_of_contents(built_site):
    built = pages(built_site)
    assert any(level == 2 for level, _, _ in built["validation/index.html"].headings)
    found = {name: missing for name, page in built.items() if (missing := missing_from_toc(page))}
    assert found == {}
    for name, page in built.items():
        if any(level == 2 for level, _, _ in page.headings):
            assert page.toc, name


def test_no_page_speaks_of_the_projects_own_process(built_site):
    found = {name: words for name, page in pages(built_site).items() if (words := process_words("".join(page.text)))}
    assert found == {}
