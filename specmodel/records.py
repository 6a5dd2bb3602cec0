"""Typed records: frozen dataclasses whose type hints state what each field allows, validated
by pydantic where data comes from outside.

A record's fields carry their rules in their hints: ``annotated_types`` constraints
(``Annotated[int, Ge(1)]``), :data:`STRICT` for a field that takes no coercion (``"8"`` is no
integer, ``true`` no number), and the record's ``__post_init__`` for rules across fields.
Data from a user (a config.json, a card or profile file, a site configuration) becomes a
record through :func:`validate`, which checks every rule with pydantic; pydantic is imported
there and only there, so that a command that reads nothing but the packaged catalogues
starts without it. The packaged catalogues (``specmodel/data/*.toml``) are built by
:func:`structure`, which nests tables into records and runs the cross-field rules; that
:func:`validate` gives the same records from them is a test of the package
(``tests/test_catalogue.py``).

A record built directly in Python (``Scenario(concurrency=8)``) runs its cross-field rules
only; :func:`specmodel.evaluate` validates every scenario it is given, and every other record
reaches the model from a catalogue or through :func:`validate`.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Hashable, Mapping
from functools import cache
from typing import Annotated, Any, TypeVar

_R = TypeVar("_R")


class _Strict:
    """pydantic metadata: the field takes values of its own type only (an int or a float for a
    float), never a string or a boolean coerced. pydantic asks for the schema through its
    documented ``__get_pydantic_core_schema__`` hook, so defining it needs no pydantic import."""

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
        return {**handler(source), "strict": True}

    def __repr__(self) -> str:
        return "STRICT"


#: A field that takes no coercion (see :class:`_Strict`).
STRICT = _Strict()
StrictInt = Annotated[int, STRICT]
StrictFloat = Annotated[float, STRICT]
StrictStr = Annotated[str, STRICT]
StrictBool = Annotated[bool, STRICT]


class Record:
    """Base of every record: unknown names are refused, and NaN and infinity are no values
    (a record whose field may be infinite says so in its own ``__pydantic_config__``). A
    record whose fields have defaults that depend on other fields completes its data in a
    static method ``prepared(data) -> data``, which :func:`structure` and pydantic both run
    first."""

    __pydantic_config__: typing.ClassVar[dict[str, Any]] = {"extra": "forbid", "allow_inf_nan": False}

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        """pydantic's schema of the record, run after ``prepared`` where the record has one."""
        schema = handler(source)
        if getattr(cls, "prepared", None) is None:
            return schema
        from pydantic_core import core_schema

        return core_schema.no_info_before_validator_function(lambda data: prepared(cls, data), schema)


@cache
def _adapter(record_type: Any) -> Any:
    """pydantic's validator of ``record_type``, built once."""
    from pydantic import TypeAdapter

    return TypeAdapter(record_type)


def prepared(record_type: type, data: Any) -> Any:
    """``data`` as the record's ``prepared`` static method completes it (a default that
    depends on other fields), or as it is."""
    prepare = getattr(record_type, "prepared", None)
    return prepare(data) if prepare is not None and isinstance(data, Mapping) else data


def validate(record_type: type[_R], data: Any) -> _R:
    """``data`` (a mapping, nested mappings for nested records) as a ``record_type``, every rule
    checked; a ``pydantic.ValidationError`` lists what is wrong (one-line errors for a user are
    :func:`specmodel.safe_input.validated`'s)."""
    result: _R = _adapter(typing.cast(Hashable, record_type)).validate_python(data)
    return result


def as_mapping(record: Any, exclude: typing.Collection[str] = (), omit_none: bool = False) -> dict[str, Any]:
    """The record's fields by name, values as they are (nested records stay records), less
    ``exclude`` and, with ``omit_none``, less the fields left at None."""
    values = {f.name: getattr(record, f.name) for f in dataclasses.fields(record) if f.name not in exclude}
    return {k: v for k, v in values.items() if v is not None} if omit_none else values


@cache
def field_hints(record_type: Any, extras: bool = False) -> dict[str, Any]:
    """The record's resolved field types by name (its fields only, no class variable);
    ``extras`` keeps the ``Annotated`` rules."""
    hints = typing.get_type_hints(record_type, include_extras=extras)
    return {f.name: hints[f.name] for f in dataclasses.fields(record_type)}


def field_rules(record_type: type, name: str) -> tuple[Any, ...]:
    """The ``Annotated`` metadata of the field ``name`` (its constraints), of the field's type
    or, for ``X | None``, of X.

    >>> from specmodel.model.scenario import Scenario
    >>> field_rules(Scenario, "concurrency"), field_rules(Scenario, "tensor_parallel")[1:]
    ((STRICT, Ge(ge=1), Le(le=65536)), (Ge(ge=1), Le(le=64)))
    """
    hint = field_hints(record_type, True)[name]
    if typing.get_origin(hint) in (types.UnionType, typing.Union):
        members = [a for a in typing.get_args(hint) if a is not type(None)]
        hint = members[0] if len(members) == 1 else hint
    return tuple(getattr(hint, "__metadata__", ()))


def structure(record_type: type[_R], data: Mapping[str, Any]) -> _R:
    """A record from trusted packaged data: nested tables become nested records, arrays
    tuples, whole numbers in a float field floats; nothing else is converted or checked but
    the record's own cross-field rules."""
    hints = field_hints(typing.cast(Hashable, record_type))
    values = prepared(record_type, data)
    return record_type(**{name: _converted(hints[name], value) for name, value in values.items()})


def _converted(hint: Any, value: Any) -> Any:
    """``value`` as the type ``hint`` holds it (see :func:`structure`)."""
    if value is None:
        return None
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (types.UnionType, typing.Union):
        members = [a for a in args if a is not type(None)]
        return _converted(members[0], value) if len(members) == 1 else value
    if dataclasses.is_dataclass(hint) and isinstance(value, Mapping):
        return structure(typing.cast(type, hint), value)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_converted(args[0], v) for v in value)
        return tuple(_converted(a, v) for a, v in zip(args, value, strict=True))
    if origin is dict:
        return {k: _converted(args[1], v) for k, v in value.items()}
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value
