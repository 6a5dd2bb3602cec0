"""Reading what a user hands us, within bounds: files of limited size, YAML without aliases.

Every reader here raises :class:`~specmodel.errors.SpecModelError` with one line that names
the input and never echoes more than a short excerpt of it.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from specmodel.errors import SpecModelError

#: Largest configuration or table file read whole (bytes): far above any real one.
MAX_TEXT_BYTES = 1 << 20


_Record = TypeVar("_Record", bound=BaseModel)


def excerpt(text: object, limit: int = 60) -> str:
    """``repr`` of ``text`` cut to ``limit`` characters (``...`` marks the cut).

    >>> excerpt("x" * 100, 10)
    "'xxxxxx..."
    """
    shown = repr(text)
    return shown if len(shown) <= limit else shown[: limit - 3] + "..."


def read_limited_bytes(path: Path, where: str, limit: int = MAX_TEXT_BYTES) -> bytes:
    """The bytes of ``path``, at most ``limit`` of them; a one-line error if it is missing,
    a folder, unreadable, larger than the limit, empty or binary (NUL bytes)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except FileNotFoundError:
        raise SpecModelError(f"{where}: no such file") from None
    except IsADirectoryError:
        raise SpecModelError(f"{where} is a folder, not a file") from None
    except OSError as exc:
        raise SpecModelError(f"{where} cannot be read: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise SpecModelError(f"{where} is larger than {limit:,} bytes; is it the right file?")
    if not data.strip():
        raise SpecModelError(f"{where} is empty")
    nul = data.find(b"\x00")
    if nul >= 0:
        raise SpecModelError(f"{where} is a binary file (NUL byte at offset {nul}), not text")
    return data


def read_limited_text(path: Path, where: str, limit: int = MAX_TEXT_BYTES) -> str:
    """:func:`read_limited_bytes` decoded as UTF-8 (a one-line error naming the line otherwise)."""
    data = read_limited_bytes(path, where, limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise SpecModelError(f"{where} line {line}: not UTF-8 text (byte {exc.start}); is it a binary file?") from None


class _NoAliasLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing aliases (``*name``): a handful of nested aliases expands
    to billions of nodes (the "billion laughs"), and a configuration never needs one."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.constructor.ConstructorError(
                None, None, "aliases (*name) are not allowed in a configuration", event.start_mark
            )
        return super().compose_node(parent, index)


def load_yaml_text(text: str, where: str) -> Any:
    """YAML without aliases, as plain Python data; a one-line error otherwise."""
    try:
        return yaml.load(text, Loader=_NoAliasLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        mark = getattr(exc, "problem_mark", None)
        at = f" (line {mark.line + 1})" if mark is not None else ""
        raise SpecModelError(f"{where} is not valid YAML{at}: {excerpt(first, 120)}") from None


def validated_records(records: Iterable[dict[str, Any]], record_type: type[_Record], where: str) -> list[_Record]:
    """Each CSV record (numbered from line 2, after the header) validated as ``record_type``;
    the first bad one is one line naming the line, the field, the value and what is wrong."""
    rows = []
    for number, record in enumerate(records, start=2):
        try:
            rows.append(record_type.model_validate(record))
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(x) for x in err["loc"])
            raise SpecModelError(f"{where} line {number}: {field} {excerpt(err.get('input'))}: {err['msg']}") from None
    return rows
