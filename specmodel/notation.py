r"""The project's one notation: each symbol with its meaning, unit and the name the code gives
it, read from ``data/notation.toml``. The model page shows it as its table (``{{ table:notation
}}``, written by ``sitebuild.notation``), and the docstrings of :mod:`specmodel.model` write
these symbols (``gamma``, ``w``, ``Q_v``, ``N_g``, ...), naming an engine's own parameters
in backticks beside them.
"""

from __future__ import annotations

import tomllib
from collections import Counter
from functools import cache
from importlib import resources

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from specmodel.errors import SpecModelError

#: The data file, in ``specmodel.data``.
NOTATION_FILE = "notation.toml"


class NotationRow(BaseModel):
    r"""One row of the table: ``symbol`` as the page writes it (``\(w, Q_v\)``: one symbol or
    several, separated by ", "), its ``meaning`` (Markdown, as the page shows it), ``unit``
    ("" for a pure number) and ``code``, each of its symbols that the code names -> that name
    (a Scenario or Architecture field, or a constant)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    symbol: str = Field(pattern=r"^\\\(.+\\\)$")
    meaning: str = Field(min_length=1)
    unit: str
    code: dict[str, str] = Field(default_factory=dict)

    @property
    def symbols(self) -> tuple[str, ...]:
        r"""The row's symbols, each as LaTeX without ``\( \)``.

        >>> NotationRow(symbol=r"\(w, Q_v\)", meaning="tree", unit="").symbols
        ('w', 'Q_v')
        """
        return tuple(self.symbol[2:-2].split(", "))

    @model_validator(mode="after")
    def _code_names_own_symbols(self) -> NotationRow:
        strangers = sorted(set(self.code) - set(self.symbols))
        if strangers:
            raise ValueError(f"code names {strangers}, which are not symbols of {self.symbol}")
        return self


def parse_notation(text: str) -> tuple[NotationRow, ...]:
    r"""The rows of a notation file's text (``[[row]]`` tables), in order; a symbol given twice
    is an error.

    >>> parse_notation("[[row]]\nsymbol = '\\(B\\)'\nmeaning = 'sequences'\nunit = ''")[0].symbols
    ('B',)
    """
    try:
        data = tomllib.loads(text)
        if set(data) != {"row"}:
            raise SpecModelError(f"data/{NOTATION_FILE} must hold [[row]] tables only, not {sorted(data)}")
        rows = tuple(NotationRow(**row) for row in data["row"])
    except (tomllib.TOMLDecodeError, ValidationError, TypeError) as exc:
        raise SpecModelError(f"data/{NOTATION_FILE} is invalid: {exc}") from exc
    twice = sorted(s for s, n in Counter(s for row in rows for s in row.symbols).items() if n > 1)
    if twice:
        raise SpecModelError(f"data/{NOTATION_FILE} gives these symbols more than once: {', '.join(twice)}")
    return rows


@cache
def notation() -> tuple[NotationRow, ...]:
    """The project's notation, every row of ``data/notation.toml`` in the page's order."""
    return parse_notation(resources.files("specmodel.data").joinpath(NOTATION_FILE).read_text(encoding="utf-8"))


__all__ = ["NotationRow", "notation", "parse_notation"]
