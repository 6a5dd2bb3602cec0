"""MkDocs hook: put the model's output into the prose.

In every Markdown page:

* ``{{ name }}`` becomes the text of number ``name`` in docs/generated/numbers.json;
* ``{{ figure:id }}`` becomes the figure fragment docs/generated/figures/<id>.html;
* ``{{ table:name }}`` becomes the table docs/generated/tables/<name>.md;
* ``{{ output:name }}`` becomes the command output docs/generated/outputs/<name>.txt;
* ``{{ html:name }}`` becomes the HTML block docs/generated/html/<name>.html.

An unknown name, or a missing generated folder, fails the build with a message that says
what was wrong and what exists. build_figures.py writes the generated folder.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from mkdocs.exceptions import PluginError

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


def _number(name: str, where: str, linked: bool) -> str:
    try:
        entry = _state["numbers"][name]
    except KeyError:
        raise PluginError(f"{where}: unknown number {{{{ {name} }}}}; see docs/generated/numbers.json") from None
    if linked and entry.get("link") is not None:
        return f'[{entry["text"]}](?{entry["link"]}#simulator "Open this setting in the simulator")'
    return entry["text"]


def _numbered_figure(fragment: str, number: int, linked: bool) -> str:
    """The figure with "Figure N." before its caption and, on the simulator's page, a link to
    the simulator at the setting the figure shows."""
    setting = SETTING.search(fragment)
    link = ""
    if linked and setting is not None:
        query = f"?{setting.group(1)}" if setting.group(1) else "?"
        link = f' <a class="specfig-open" href="{query}#simulator">Open this setting in the simulator.</a>'
    return CAPTION.sub(lambda m: f"<figcaption><strong>Figure {number}.</strong> {m.group(1)}{link}</figcaption>",
                       fragment, count=1)  # fmt: skip


def on_page_markdown(markdown, page, **kwargs):
    where = page.file.src_uri
    linked = where == SIMULATOR_PAGE
    figures = iter(range(1, 1000))

    def replace(match: re.Match) -> str:
        kind, name = match.group(1), match.group(2)
        if kind == "figure":
            return _numbered_figure(_fragment(kind, name, where), next(figures), linked)
        if kind:
            return _fragment(kind, name, where)
        return _number(name, where, linked)

    return PLACEHOLDER.sub(replace, markdown)
