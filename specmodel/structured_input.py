"""Structured text a user hands us (a YAML or TOML settings file, a JSON option), read within
one rule whatever its language: at most :data:`MAX_NESTING` levels of nesting and
:data:`MAX_ITEMS` values, no integer of more than :data:`MAX_DIGITS` digits, no key given
twice in one mapping (YAML and JSON would keep the last silently; TOML refuses it itself),
no YAML alias or tag beyond the safe loader's, and (JSON) no NaN or infinity; a nesting too
deep for the parser itself is refused the same way. A benchmark result (JSON, :data:`RESULT`)
is read within bounds of its own: per-request lists of any length (its reader's byte limit
bounds them), at most :data:`MAX_RESULT_NESTING` levels, and NaN, Infinity and numbers past a
float's range read as the floats ``json.dump`` wrote them from, for the fields a reader uses to
refuse by name (see :class:`Bounds`). Every error is one
:class:`~specmodel.errors.SpecModelError` line naming the input, echoing only an
:func:`excerpt` of it (the one excerpt every message uses; :mod:`specmodel.safe_input`, which
reads files and imports this module, passes it on).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from specmodel.errors import SpecModelError


def excerpt(text: object, limit: int = 60) -> str:
    """``repr`` of ``text`` cut to ``limit`` characters (``...`` marks the cut).

    >>> excerpt("x" * 100, 10)
    "'xxxxxx..."
    """
    shown = repr(text)
    return shown if len(shown) <= limit else shown[: limit - 3] + "..."


#: Deepest nesting of tables and lists in a configuration (a real one has 2 or 3 levels).
MAX_NESTING = 32
#: Most values (tables, lists, keys and scalars) in a configuration.
MAX_ITEMS = 100_000
#: Most digits of an integer in a configuration (2**63 has 19): larger is a typing slip.
MAX_DIGITS = 18
#: Deepest nesting of a benchmark result: vLLM's has 3 levels (the result, its ``itls``, one
#: request's inter-token latencies), SGLang's 5 (``server_info.internal_states[0].memory_usage``).
MAX_RESULT_NESTING = 16


@dataclass(frozen=True)
class Bounds:
    """What one kind of JSON input may hold: ``nesting`` levels; ``items`` values at most (None:
    no count, the reader's byte limit bounds them); with ``non_finite``, ``NaN``, ``Infinity``
    and ``-Infinity`` (what Python's ``json.dump`` writes for ``float('nan')`` and
    ``float('inf')``), a number past a float's range (``1e400``) and an integer of more than
    MAX_DIGITS digits read as a float NaN or infinity, which the fields a reader uses refuse by
    name (a field it does not use may hold one: vLLM writes ``--burstiness inf`` as
    ``Infinity``, SGLang an unlimited request rate so); without, each is refused at once.
    ``what`` names the kind in messages."""

    nesting: int
    items: int | None
    non_finite: bool
    what: str


#: A configuration (a file or an option): small and finite.
CONFIGURATION = Bounds(nesting=MAX_NESTING, items=MAX_ITEMS, non_finite=False, what="a configuration")
#: A serving-benchmark result: ``vllm bench serve --save-detailed`` keeps per-request lists
#: (256 requests of 512 tokens: 130,816 inter-token latencies and 256 generated texts).
RESULT = Bounds(nesting=MAX_RESULT_NESTING, items=None, non_finite=True, what="a benchmark result")


if TYPE_CHECKING:
    from yaml import SafeLoader as _LoaderBase
else:
    _LoaderBase = object  # PyYAML's loader joins in _no_alias_loader, when YAML is first read


class _Bounds(_LoaderBase):
    """What PyYAML's safe loader is given to refuse (:func:`_no_alias_loader`): aliases
    (``*name``: a handful of nested aliases expands to billions of nodes, the "billion laughs",
    and a configuration never needs one), nesting deeper than MAX_NESTING, more than MAX_ITEMS
    nodes, a key repeated in a mapping (YAML forbids it; PyYAML would keep the last value) and
    an integer of more than MAX_DIGITS digits."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        import yaml

        event = self.peek_event()
        if self.check_event(yaml.AliasEvent):
            raise yaml.constructor.ConstructorError(
                None, None, "aliases (*name) are not allowed in a configuration", event.start_mark
            )
        depth, self._items = getattr(self, "_depth", 0), getattr(self, "_items", 0) + 1
        if depth > MAX_NESTING or self._items > MAX_ITEMS:
            limit = (
                f"nests deeper than {MAX_NESTING} levels" if depth > MAX_NESTING else f"has over {MAX_ITEMS:,} values"
            )
            raise yaml.constructor.ConstructorError(None, None, f"the document {limit}", event.start_mark)
        self._depth = depth + 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth = depth

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        import yaml

        if isinstance(node, yaml.MappingNode):
            seen: set[Any] = set()
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    repeated = key in seen
                except TypeError:  # unhashable: PyYAML refuses it below
                    continue
                if repeated:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"key {excerpt(key)} appears twice in one mapping", key_node.start_mark
                    )
                seen.add(key)
        return super().construct_mapping(node, deep)

    def construct_bounded_int(self, node: Any) -> Any:
        import yaml

        if sum(c.isdigit() for c in str(node.value)) > MAX_DIGITS:
            raise yaml.constructor.ConstructorError(
                None, None, f"an integer of more than {MAX_DIGITS} digits", node.start_mark
            )
        return self.construct_yaml_int(node)


@cache
def _no_alias_loader() -> Any:
    """PyYAML's safe loader with :class:`_Bounds`' refusals, made once, when YAML is first read
    (importing PyYAML costs every command's start-up otherwise)."""
    import yaml

    loader: Any = type("_NoAliasLoader", (_Bounds, yaml.SafeLoader), {})
    loader.add_constructor("tag:yaml.org,2002:int", loader.construct_bounded_int)
    return loader


def load_yaml_text(text: str, where: str) -> Any:
    """YAML without aliases, as plain Python data, within the module's bounds; a one-line error otherwise."""
    import yaml

    try:
        data = yaml.load(text, Loader=_no_alias_loader())  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) if isinstance(exc, yaml.constructor.ConstructorError) else None
        at = f" (line {mark.line + 1})" if mark is not None else ""
        said = " ".join(str(problem).split())[:120] if problem else excerpt(first, 120)
        raise SpecModelError(f"{where} is not valid YAML{at}: {said}") from None
    check_shape(data, where)
    return data


def load_json_text(text: str, where: str, limit: int, bounds: Bounds = CONFIGURATION) -> Any:
    """JSON text (at most ``limit`` characters) as plain Python data, within ``bounds``
    (:class:`Bounds`; a configuration's by default): no key repeated in an object (the json
    module would keep the last); for a configuration no NaN or infinity and no integer of more
    than MAX_DIGITS digits; a one-line error naming ``where`` otherwise.

    >>> load_json_text('{"a": [1, 2.5]}', "--x", 100)
    {'a': [1, 2.5]}
    >>> load_json_text('[NaN, 1e400, -Infinity]', "r.json", 100, RESULT)
    [nan, inf, -inf]
    """
    if len(text) > limit:
        raise SpecModelError(f"{where} is {len(text):,} characters long; at most {limit:,} are read")
    finite = not bounds.non_finite
    try:
        data = json.loads(
            text, object_pairs_hook=lambda pairs: _unique(pairs, where),
            parse_int=lambda s: _json_int(s, where, finite),
            # float() reads 1e400 as inf, as non_finite asks: the hook (a call per number) is left out
            parse_float=(lambda s: _json_float(s, where)) if finite else float,
            parse_constant=lambda s: _json_constant(s, where, finite),
        )  # fmt: skip
    except json.JSONDecodeError as exc:
        raise SpecModelError(f"{where} is not valid JSON: {exc.msg} at character {exc.pos}") from None
    except (RecursionError, MemoryError):
        raise SpecModelError(f"{where} nests deeper than {bounds.nesting} levels") from None
    check_shape(data, where, bounds)
    return data


def _unique(pairs: list[tuple[str, Any]], where: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise SpecModelError(f"{where}: key {excerpt(key)} appears twice in one object; give each key once")
        out[key] = value
    return out


def _json_int(text: str, where: str, finite: bool) -> int | float:
    """An integer literal; one of more than MAX_DIGITS digits is refused (``finite``) or read
    as an infinity of its sign (never handed to ``int``, whose time grows with the digits)."""
    digits = len(text.lstrip("-"))
    if digits <= MAX_DIGITS:
        return int(text)
    if finite:
        raise SpecModelError(f"{where}: an integer of {digits:,} digits; at most {MAX_DIGITS} are read")
    return -math.inf if text.startswith("-") else math.inf


def _json_float(text: str, where: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise SpecModelError(f"{where}: the number {excerpt(text, 30)} is too large to be a finite number")
    return value


def _json_constant(text: str, where: str, finite: bool) -> float:
    """``NaN``, ``Infinity`` or ``-Infinity``: the float ``json.dump`` wrote it from, or refused (``finite``)."""
    if finite:
        raise SpecModelError(f"{where}: {text} is not a number JSON allows; give a finite number")
    return float(text)


def check_shape(data: Any, where: str, bounds: Bounds = CONFIGURATION) -> None:
    """Refuse parsed data nested deeper than ``bounds.nesting``, with more than ``bounds.items``
    values or an integer of more than MAX_DIGITS digits (walked without recursion, so any
    depth is refused cleanly)."""
    _scalar_bounds(data, where)
    stack, items, limit = [(data, 0)] if isinstance(data, dict | list | tuple) else [], 1, bounds.items or math.inf
    while stack:  # only containers are stacked; their scalars are counted and checked in place
        item, depth = stack.pop()
        if depth >= bounds.nesting:
            raise SpecModelError(f"{where} nests deeper than {bounds.nesting} levels")
        children = (*item.keys(), *item.values()) if isinstance(item, dict) else item
        items += len(children)
        if items > limit:
            raise SpecModelError(f"{where} has over {bounds.items:,} values; {bounds.what} has far fewer")
        if set(map(type, children)) <= _PLAIN_SCALARS:  # a list of floats or texts: nothing to check one by one
            continue
        for child in children:
            if isinstance(child, dict | list | tuple):
                stack.append((child, depth + 1))
            elif isinstance(child, int):
                _scalar_bounds(child, where)


#: The kinds of value :func:`check_shape` need not look at one by one (an integer's digits it must).
_PLAIN_SCALARS = frozenset({str, float, bool, type(None)})


def _scalar_bounds(item: Any, where: str) -> None:
    """Refuse an integer of more than MAX_DIGITS digits (a container or any other value passes)."""
    if isinstance(item, int) and not isinstance(item, bool) and abs(item) >= 10**MAX_DIGITS:
        raise SpecModelError(f"{where}: an integer of more than {MAX_DIGITS} digits; is it a typing slip?")


def load_toml_text(text: str, where: str) -> Any:
    """TOML as plain Python data, within the module's bounds (tomllib refuses a key given
    twice; the message quotes the line); a one-line error otherwise.

    >>> load_toml_text("[a]\\nb = 1\\n", "c.toml")
    {'a': {'b': 1}}
    """
    import tomllib

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SpecModelError(f"{where} is not valid TOML: {_toml_problem(str(exc), text)}") from None
    except (RecursionError, MemoryError):
        raise SpecModelError(f"{where} nests deeper than {MAX_NESTING} levels") from None
    except ValueError:  # Python's limit on the digits of an integer
        raise SpecModelError(f"{where}: an integer of more than {MAX_DIGITS} digits; is it a typing slip?") from None
    check_shape(data, where)
    return data


def _toml_problem(message: str, text: str) -> str:
    """tomllib's message, short, with the line it names quoted (``Cannot overwrite a value (at
    line 3, column 21)`` does not say which key was given twice; the line does).

    >>> _toml_problem("Cannot overwrite a value (at line 2, column 5)", "a = 1\\na = 2\\n")
    "Cannot overwrite a value (at line 2, column 5): 'a = 2'"
    """
    first = " ".join(message.split())[:120]
    number = re.search(r"at line ([0-9]+),", first)
    lines = text.splitlines()
    if number and 0 < int(number.group(1)) <= len(lines):
        return f"{first}: {excerpt(lines[int(number.group(1)) - 1].strip())}"
    return first
