"""MkDocs hook: search results read as text, not LaTeX.

Material's search indexes the pages' text, in which math is still LaTeX source
(``\\(\\gamma = 4\\)``). After the build, this hook rewrites the index's text: the math
delimiters go, common commands become their symbols (``\\gamma`` to γ), and the braces and
backslashes of the rest are dropped.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

SYMBOLS = {
    "alpha": "α", "beta": "β", "gamma": "γ", "eta": "η", "infty": "∞", "to": "→", "le": "≤", "ge": "≥",
    "approx": "≈", "times": "×", "cdot": "·", "sum": "Σ", "prod": "Π", "max": "max", "min": "min",
    "dots": "…", "ldots": "…", "mid": "|", "quad": " ", "qquad": " ", "xrightarrow": "→", "operatorname": "",
    "text": "", "frac": "", "left": "", "right": "", "lambda": "λ", "mu": "μ",
}  # fmt: skip
DELIMITERS = re.compile(r"\\[()\[\]]")
COMMAND = re.compile(r"\\([A-Za-z]+)")
FRACTION = re.compile(r"\\frac\{([^{}]*)\}\{([^{}]*)\}")


def plain(text: str) -> str:
    """LaTeX source in ``text`` as readable plain text.

    >>> plain(r"at \\(\\gamma = 4\\), \\(E[X] = \\frac{1}{1 - \\alpha}\\)")
    'at γ = 4, E[X] = 1/(1 - α)'
    """
    text = DELIMITERS.sub("", text)
    for _ in range(3):  # innermost fractions first
        text = FRACTION.sub(lambda m: _fraction(m.group(1), m.group(2)), text)
    text = COMMAND.sub(lambda m: SYMBOLS.get(m.group(1), m.group(1)), text)
    return re.sub(r"[{}]", "", text).replace("\\,", " ").replace("\\;", " ")


def _fraction(numerator: str, denominator: str) -> str:
    """``a/b``, with parentheses around a part that is more than one term."""

    def part(text: str) -> str:
        return f"({text})" if re.search(r"[\s+\-]", text.strip()) else text.strip()

    return f"{part(numerator)}/{part(denominator)}"


def on_post_build(config, **kwargs):
    index = Path(config["site_dir"]) / "search" / "search_index.json"
    if not index.is_file():
        return
    data = json.loads(index.read_text(encoding="utf-8"))
    for doc in data.get("docs", []):
        for key in ("title", "text"):
            if isinstance(doc.get(key), str):
                doc[key] = plain(doc[key])
    index.write_text(json.dumps(data, separators=(",", ":"), ensure_ascii=False), encoding="utf-8")
