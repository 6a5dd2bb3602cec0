"""MkDocs hook: put the model's output into the prose.

In every Markdown page:

* ``{{ name }}`` becomes the text of number ``name`` in docs/generated/numbers.json;
* a block ``{% claim name %} ... {% endclaim %}`` becomes the branch of its wording that the
  outcome the build computed for claim ``name`` picks (docs/generated/claims.json), with its
  numbers in place (the blocks' grammar: :mod:`sitebuild.claims.prose`);
* ``{{ figure:id }}`` becomes the figure fragment docs/generated/figures/<id>.html, its
  links to the figure's JSON and CSV (published in docs/generated/figdata/) made relative to
  the page, so that the site works wherever it is served;
* ``{{ table:name }}`` becomes the table docs/generated/tables/<name>.md;
* ``{{ output:name }}`` becomes the command output docs/generated/outputs/<name>.txt;
* ``{{ html:name }}`` becomes the HTML block docs/generated/html/<name>.html.

An unknown name, or a missing generated folder, fails the build with a message that says
what was wrong and what exists. build_figures.py writes the generated folder.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.utils import get_relative_url

PLACEHOLDER = re.compile(r"\{\{\s*(?:(figure|table|output|html):)?([A-Za-z0-9_\-]+)\s*\}\}")
KINDS = {
    "figure": ("figures", ".html"),
    "table": ("tables", ".md"),
    "output": ("outputs", ".txt"),
    "html": ("html", ".html"),
}
_state: dict = {}


def on_config(config, **kwargs):
    generated = Path(config["docs_dir"]) / "generated"
    numbers = generated / "numbers.json"
    if not numbers.is_file():
        raise PluginError(f"{numbers} is missing: run `python build_figures.py` before `mkdocs build`")
    _state["generated"] = generated
    _state["numbers"] = json.loads(numbers.read_text(encoding="utf-8"))
    claims = generated / "claims.json"
    if not claims.is_file():
        raise PluginError(f"{claims} is missing: run `python build_figures.py` before `mkdocs build`")
    _state["claims"] = json.loads(claims.read_text(encoding="utf-8"))
    return config


def _fragment(kind: str, name: str, where: str) -> str:
    folder, suffix = KINDS[kind]
    path = _state["generated"] / folder / f"{name}{suffix}"
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in (_state["generated"] / folder).glob(f"*{suffix}")))
        raise PluginError(f"{where}: unknown {kind} {name!r}; known: {known}")
    text = path.read_text(encoding="utf-8").strip()
    return text if kind == "output" else "\n\n" + text + "\n\n"


#: The page that holds the simulator: there, numbers and figure captions link to it.
SIMULATOR_PAGE = "index.md"
CAPTION = re.compile(r"<figcaption>(.*?)</figcaption>", re.S)
SETTING = re.compile(r'<figure class="specfig-figure"[^>]*data-simulator-setting="([^"]*)"')


def _render(entry: dict, linked: bool) -> str:
    """A number as the page prints it: linked to the simulator at its setting on the
    simulator's page (with the readout it shows there, for the browser tests), marked as a
    quotation if it is quoted from a paper, else its text.

    A quotation is styled apart from the text (docs/stylesheets/extra.css) and carries its
    source as text of its own, hidden but read by screen readers, which the page shows when the
    quotation is focused (a tap, or the keyboard: it takes focus) or hovered."""
    if entry.get("quoted"):
        source = html.escape(entry["quoted"], quote=False)
        hidden = f'<span class="quoted-source"> (quoted from {source})</span>'
        return f'<span class="quoted" tabindex="0">{entry["text"]}{hidden}</span>'
    if linked and entry.get("link") is not None:
        expect = f'{{: data-readout-expected="{entry["readout"]}" }}' if entry.get("readout") else ""
        return f'[{entry["text"]}](?{entry["link"]}#simulator "Open this setting in the simulator"){expect}'
    return entry["text"]


def _number(name: str, where: str, linked: bool) -> str:
    try:
        entry = _state["numbers"][name]
    except KeyError:
        raise PluginError(f"{where}: unknown number {{{{ {name} }}}}; see docs/generated/numbers.json") from None
    return _render(entry, linked)


def _claim(name: str, body: str, where: str, linked: bool) -> str:
    """Claim ``name`` as its block ``body`` words the outcome the build computed, with each of
    its values rendered like a number."""
    from sitebuild.claims.core import ClaimError
    from sitebuild.claims.prose import sentence

    try:
        entry = _state["claims"][name]
    except KeyError:
        known = ", ".join(sorted(_state["claims"]))
        raise PluginError(f"{where}: unknown claim {name!r}; known: {known}") from None
    values = entry["values"]
    texts = {k: v["text"] for k, v in values.items()}
    try:
        return sentence(name, entry["outcomes"], texts, body, lambda value: _render(values[value], linked))
    except ClaimError as e:
        raise PluginError(f"{where}: {e}") from None


#: The figure's files as the fragment names them, relative to the site's root (sitebuild.build.FIGDATA).
FIGDATA = re.compile(r'(data-src|href)="(generated/figdata/[^"]+)"')
DATA_LINK = '<a class="specfig-data"'


def _relative(fragment: str, page_url: str) -> str:
    """The fragment with its links to the figure's files relative to the page at ``page_url``
    ("" for the home page, "beyond/" for another with directory URLs)."""
    return FIGDATA.sub(lambda m: f'{m.group(1)}="{get_relative_url(m.group(2), page_url)}"', fragment)


def _numbered_figure(fragment: str, number: int, linked: bool) -> str:
    """The figure with "Figure N." before its caption and, on the simulator's page, a link to
    the simulator at the setting the figure shows (before the link to the figure's data)."""
    setting = SETTING.search(fragment)
    link = ""
    if linked and setting is not None:
        query = f"?{setting.group(1)}" if setting.group(1) else "?"
        link = f' <a class="specfig-open" href="{query}#simulator">Open this setting in the simulator.</a>'

    def caption(m: re.Match) -> str:
        text = m.group(1)
        at = text.find(DATA_LINK)
        text = text + link if at < 0 else text[:at].rstrip() + link + " " + text[at:]
        return f"<figcaption><strong>Figure {number}.</strong> {text}</figcaption>"

    return CAPTION.sub(caption, fragment, count=1)


def on_page_markdown(markdown, page, **kwargs):
    from sitebuild.claims.core import ClaimError
    from sitebuild.claims.prose import worded_page

    where = page.file.src_uri
    linked = where == SIMULATOR_PAGE
    figures = iter(range(1, 1000))
    try:
        markdown = worded_page(markdown, lambda name, body: _claim(name, body, where, linked))
    except ClaimError as e:
        raise PluginError(f"{where}: {e}") from None

    def replace(match: re.Match) -> str:
        kind, name = match.group(1), match.group(2)
        if kind == "figure":
            return _numbered_figure(_relative(_fragment(kind, name, where), page.url), next(figures), linked)
        if kind:
            return _fragment(kind, name, where)
        return _number(name, where, linked)

    return PLACEHOLDER.sub(replace, markdown)
