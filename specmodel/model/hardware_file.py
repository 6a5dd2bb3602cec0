"""An accelerator in a file of its own: one TOML table named by the card's key, with the fields of
:class:`specmodel.model.specs.Hardware` (SI units, each number with its ``unit`` and ``source``),
the same schema as a table of ``data/hardware.toml``, so a card moves between the two unchanged.

:func:`load_hardware_file` reads one within the safe-input rules (:mod:`specmodel.safe_input`:
size limit, UTF-8 text, TOML within :mod:`specmodel.structured_input`'s bounds; one table; an
unknown field refused naming it) and registers it (:func:`specmodel.model.specs.add_hardware`),
so that every command then finds it by its key.
"""

from __future__ import annotations

import re
from pathlib import Path

from specmodel.errors import SpecModelError
from specmodel.model.profile_file import read_one_table
from specmodel.model.specs import Hardware, add_hardware
from specmodel.safe_input import path_text, validated

#: A card's key: what ``--hardware`` then names it by (lower case, digits, ``-`` and ``_``).
KEY_PATTERN = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}")


def read_hardware_file(path: str | Path, option: str = "--hardware-file") -> Hardware:
    """The card in ``path``: exactly one table, its name the card's key, its fields validated as
    a :class:`Hardware`; one line naming ``option`` and the file otherwise."""
    source = f"{option} {path_text(path)}"
    key, fields = read_one_table(path, source, "card")
    if "key" in fields:
        raise SpecModelError(f"{source}: 'key' is the table's name, [{key}], not a field; remove it")
    return validated(Hardware, {"key": key, **fields}, source)


def load_hardware_file(path: str | Path, option: str = "--hardware-file") -> str:
    """Read the card in ``path`` (:func:`read_hardware_file`) and register it
    (:func:`specmodel.model.specs.add_hardware`: a catalogue key holding other values is
    refused); returns its key, which ``--hardware`` and :func:`specmodel.model.specs.get_hardware`
    then accept."""
    hw = read_hardware_file(path, option)
    try:
        return add_hardware(hw)
    except SpecModelError as exc:
        raise SpecModelError(f"{option} {path_text(path)}: {exc}") from None
