"""The model page's notation table, from the package's one notation (``specmodel.notation``,
``specmodel/data/notation.toml``): ``{{ table:notation }}`` in docs/model.md."""

from __future__ import annotations

from specmodel.notation import notation


def markdown_row(cells: tuple[str, ...]) -> str:
    """A Markdown table row, an empty cell written ``| |``.

    >>> markdown_row(("a", "b", ""))
    '| a | b | |'
    """
    return "|" + "|".join(f" {cell} " if cell else " " for cell in cells) + "|"


def notation_table() -> str:
    """Every symbol of the notation with its meaning and unit, in the data file's order."""
    head = ["| symbol | meaning | unit |", "| --- | --- | --- |"]
    return "\n".join(head + [markdown_row((row.symbol, row.meaning, row.unit)) for row in notation()])
