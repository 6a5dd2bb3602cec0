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
    _state["numbers"] = {k: v["text"] for k, v in json.loads(numbers.read_text(encoding="utf-8")).items()}
    return config


def _fragment(kind: str, name: str, where: str) -> str:
    folder, suffix = KINDS[kind]
    path = _state["generated"] / folder / f"{name}{suffix}"
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in (_state["generated"] / folder).glob(f"*{suffix}")))
        raise PluginError(f"{where}: unknown {kind} {name!r}; known: {known}")
    text = path.read_text(encoding="utf-8").strip()
    return text if kind == "output" else "\n\n" + text + "\n\n"


def on_page_markdown(markdown, page, **kwargs):
    where = page.file.src_uri

    def replace(match: re.Match) -> str:
        kind, name = match.group(1), match.group(2)
        if kind:
            return _fragment(kind, name, where)
        try:
            return _state["numbers"][name]
        except KeyError:
            raise PluginError(f"{where}: unknown number {{{{ {name} }}}}; see docs/generated/numbers.json") from None

    return PLACEHOLDER.sub(replace, markdown)
