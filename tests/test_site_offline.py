"""The built site is self-contained: no script, stylesheet, image or font from another host,
and every local link and asset exists."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

#: (tag, attribute) pairs that make the browser fetch something.
RESOURCE_ATTRS = {
    ("script", "src"),
    ("link", "href"),
    ("img", "src"),
    ("img", "srcset"),
    ("source", "src"),
    ("source", "srcset"),
    ("iframe", "src"),
    ("video", "src"),
    ("video", "poster"),
    ("audio", "src"),
    ("object", "data"),
    ("embed", "src"),
    ("input", "src"),
    ("track", "src"),
}
#: <link rel=...> values that name a document rather than load one.
NON_FETCHING_RELS = {"canonical", "alternate", "author", "license"}
CSS_URL = re.compile(r"url\(\s*['\"]?([^'\")]+)['\"]?\s*\)|@import\s+['\"]([^'\"]+)['\"]")


class _Refs(HTMLParser):
    def __init__(self):
        super().__init__()
        self.resources: list[str] = []
        self.links: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for t, a in RESOURCE_ATTRS:
            if t == tag and attrs.get(a):
                if tag == "link" and set((attrs.get("rel") or "").split()) & NON_FETCHING_RELS:
                    continue
                values = [v.strip().split(" ")[0] for v in attrs[a].split(",")] if a == "srcset" else [attrs[a]]
                self.resources += values
        if tag == "div" and "specfig" in (attrs.get("class") or "").split() and attrs.get("data-src"):
            self.resources.append(attrs["data-src"])  # a figure's JSON, which docs/javascripts/figures.js fetches
        if tag == "a" and attrs.get("href"):
            self.links.append(attrs["href"])
        if attrs.get("style"):
            self.resources += [m[0] or m[1] for m in CSS_URL.findall(attrs["style"])]


def _is_remote(url: str) -> bool:
    parts = urlsplit(url)
    return bool(parts.netloc) or parts.scheme in {"http", "https", "ftp"}


def _local_target(site: Path, page: Path, url: str) -> Path | None:
    parts = urlsplit(url)
    if parts.scheme in {"data", "mailto", "javascript", "blob"} or (not parts.path and not parts.netloc):
        return None
    base = page.parent if page.suffix else page
    target = (site / parts.path.lstrip("/")) if parts.path.startswith("/") else (base / unquote(parts.path))
    target = target.resolve()
    if target.is_dir() or url.endswith("/"):
        target = target / "index.html"
    return target


def _pages(site: Path):
    return sorted(site.rglob("*.html"))


def test_no_resource_from_another_host(built_site):
    offenders = []
    for page in _pages(built_site):
        parser = _Refs()
        parser.feed(page.read_text(encoding="utf-8"))
        offenders += [f"{page.relative_to(built_site)}: {u}" for u in parser.resources if _is_remote(u)]
    for css in built_site.rglob("*.css"):
        for m in CSS_URL.findall(css.read_text(encoding="utf-8", errors="replace")):
            url = m[0] or m[1]
            if _is_remote(url):
                offenders.append(f"{css.relative_to(built_site)}: {url}")
    assert offenders == []


def test_every_local_link_and_asset_exists(built_site):
    missing = []
    for page in _pages(built_site):
        parser = _Refs()
        parser.feed(page.read_text(encoding="utf-8"))
        for url in parser.resources + parser.links:
            if _is_remote(url):
                continue
            target = _local_target(built_site, page, url)
            if target is not None and not target.exists():
                missing.append(f"{page.relative_to(built_site)} -> {url}")
    for css in built_site.rglob("*.css"):
        for m in CSS_URL.findall(css.read_text(encoding="utf-8", errors="replace")):
            url = m[0] or m[1]
            if _is_remote(url) or url.startswith("data:"):
                continue
            target = _local_target(built_site, css, url)
            if target is not None and not target.exists():
                missing.append(f"{css.relative_to(built_site)} -> {url}")
    assert missing == []


def test_one_copy_of_plotly_for_the_whole_site(built_site):
    copies = [p for p in built_site.rglob("*.js") if "plotly" in p.name.lower()]
    assert [p.name for p in copies] == ["plotly-cartesian.min.js"]
    for page in _pages(built_site):
        assert page.read_text(encoding="utf-8").count("plotly-cartesian.min.js") <= 1


def test_figures_are_files_of_their_own_fetched_from_the_page(built_site):
    """The pages name each figure's JSON (data-src, relative to the page) instead of holding
    it; only the notebook's figure, made in the notebook, is inline. Each JSON is a figure and
    each figure links its data as CSV."""
    import json

    figures = 0
    for page in _pages(built_site):
        text = page.read_text(encoding="utf-8")
        srcs = re.findall(r'<div class="specfig"[^>]*data-src="([^"]+)"', text)
        if "notebook" not in page.parts:
            assert "data-figure=" not in text, page
        for src in srcs:
            target = _local_target(built_site, page, src)
            assert target is not None and target.suffix == ".json", (page, src)
            figure = json.loads(target.read_text(encoding="utf-8"))
            assert figure["data"] and figure["layout"]["height"] > 0
            csv = target.with_suffix(".csv")
            assert csv.is_file() and f'href="{src[: -len(".json")]}.csv"' in text, (page, src)
        figures += len(srcs)
    assert figures >= 23


def test_theme_loads_no_web_fonts(built_site):
    html = (built_site / "index.html").read_text(encoding="utf-8")
    assert "fonts.googleapis" not in html and "fonts.gstatic" not in html


@pytest.mark.parametrize(
    "url, remote",
    [
        ("https://cdn.example.com/x.js", True),
        ("//cdn.example.com/x.js", True),
        ("../assets/x.js", False),
        ("data:image/png;base64,AA", False),
    ],
)
def test_remote_detection(url, remote):
    assert _is_remote(url) is remote
