"""An engine profile in a file of its own (``--engine-profile PROFILE.toml``): one TOML table
named by the profile's key, with the fields of :class:`specmodel.model.engines.EngineProfile`
(SI units, seconds) and, when it was fitted, its ``fit`` provenance and its ``domain`` (the
targets, cards, drafters, GPUs, batches and engine versions its runs cover,
:class:`specmodel.model.engines.ProfileDomain`) as sub-tables; the same schema as a table of
``data/engines.toml`` (a file's key may not be a built-in engine's, so a table copied from
there is renamed). A profile without a
``domain`` table (written before profiles recorded one) still reads: its domain is then
unknown, and the commands say so (:func:`specmodel.model.domain.outside_domain`).

``specmodel fit-engine`` writes one (:func:`profile_text`); ``point``, ``sweep``, ``advise``
and the site builder read one (:func:`load_profile`), and use it as an engine of that key.

A profile file never takes the key of a built-in engine (``ideal``, ``vllm``: the tables of
``data/engines.toml``), whatever it holds: ``point`` or ``sweep --engine vllm`` always means
the public profile, and a file's own engine is always named by its own key
(:func:`check_profile_key`). The site builder's ``engine_profile`` setting is the one place a
file stands in for ``vllm``, because that setting says so; there too the file's own key must
not be a built-in one.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from specmodel.errors import SpecModelError
from specmodel.model.engines import EngineProfile, engine_catalog
from specmodel.records import as_mapping
from specmodel.safe_input import excerpt, path_text, read_limited_text, validated
from specmodel.structured_input import load_toml_text

#: A profile's key: what ``--engine`` then names it by (lower case, digits, ``-`` and ``_``).
KEY_PATTERN = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}")


def load_profile(path: str | Path, where: str = "--engine-profile") -> EngineProfile:
    """The engine profile in ``path``: exactly one table, its name the profile's key, its
    fields validated as an :class:`EngineProfile`; one line naming the file otherwise."""
    source = f"{where} {path_text(path)}"
    key, fields = read_one_table(path, source, "profile")
    check_profile_key(key, f"{source}: the table's name")
    return validated(EngineProfile, {"key": key, **fields}, source)


def check_profile_key(key: str, where: str) -> None:
    """Refuse ``key`` for a profile of one's own unless it is a key (a-z, 0-9, - and _) that no
    built-in engine has: a file never silently replaces ``ideal`` or ``vllm``."""
    if not KEY_PATTERN.fullmatch(key):
        raise SpecModelError(f"{where} {excerpt(key)} is not a profile key (a-z, 0-9, - and _)")
    builtin = engine_catalog()
    if key in builtin:
        raise SpecModelError(
            f"{where} {key!r} is the key of a built-in engine ({', '.join(builtin)}), which a profile file "
            f"cannot replace; name it otherwise, e.g. [{key}-mine]"
        )


def read_one_table(path: str | Path, source: str, what: str) -> tuple[str, dict[str, Any]]:
    """The one table of the TOML file ``path`` (an engine profile, a card): its name, a key of
    a-z, 0-9, - and _, and its fields; one line naming ``source`` otherwise."""
    data = load_toml_text(read_limited_text(Path(path), source), source)
    tables = [k for k, v in data.items() if isinstance(v, dict)]
    if len(tables) != 1 or len(data) != 1:
        raise SpecModelError(
            f"{source} must hold exactly one table, [KEY], the {what} (it holds {len(data)} top-level "
            f"entr{'y' if len(data) == 1 else 'ies'}: {excerpt(', '.join(map(str, data)), 80)})"
        )
    key = tables[0]
    if not KEY_PATTERN.fullmatch(key):
        raise SpecModelError(f"{source}: the table's name {excerpt(key)} is not a {what} key (a-z, 0-9, - and _)")
    return key, data[key]


def profile_text(profile: EngineProfile, comment: str = "") -> str:
    """The TOML text of ``profile`` (:func:`load_profile` reads it back equal): its fields
    but ``key`` and those left at None, then ``[KEY.fit]`` and its sub-tables, then
    ``[KEY.domain]``. ``comment``: lines written first, as TOML comments. A built-in
    engine's key is refused here as on reading (:func:`check_profile_key`)."""
    check_profile_key(profile.key, "the profile key")
    head = [f"# {line}".rstrip() for line in comment.splitlines()]
    fields = as_mapping(profile, {"key", "fit", "domain"}, omit_none=True)
    lines = [*head, f"[{profile.key}]", *(f"{k} = {toml_value(v)}" for k, v in fields.items())]
    if profile.fit is not None:
        lines += _table(f"{profile.key}.fit", as_mapping(profile.fit, omit_none=True))
    if profile.domain is not None:
        lines += _table(f"{profile.key}.domain", as_mapping(profile.domain))
    return "\n".join(lines) + "\n"


def _table(name: str, values: dict[str, Any]) -> list[str]:
    """``[name]`` with its scalar and list values, then a sub-table per dict value."""
    lines = ["", f"[{name}]"]
    lines += [f"{k} = {toml_value(v)}" for k, v in values.items() if not isinstance(v, dict)]
    for k, v in values.items():
        if isinstance(v, dict):
            lines += _table(f"{name}.{k}", v)
    return lines


def toml_value(value: Any, significant: int | None = None) -> str:
    """A TOML literal for a string, a bool, a number (floats in their shortest exact form, so
    a profile reads back equal, or to ``significant`` digits where given; inf as ``inf``) or a
    list of these.

    >>> toml_value(["a", 1, 0.1, float("inf"), True])
    '["a", 1, 0.1, inf, true]'
    >>> toml_value([0.00132456789, 2.0], significant=3)
    '[0.00132, 2]'
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, tuple | list):
        return "[" + ", ".join(toml_value(v, significant) for v in value) + "]"
    if isinstance(value, float):
        if value in (float("inf"), float("-inf")):
            return "inf" if value > 0 else "-inf"
        return repr(value) if significant is None else f"{value:.{significant}g}"
    return str(value)
