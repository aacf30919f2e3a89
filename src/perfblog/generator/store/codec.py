"""JSON read and written from the frozen dataclasses themselves: each field of the result format is
declared once, as a typed field, and what reads it, checks it and writes it follows from its type.

Reading checks every value against its field's type hint and raises ``ResultFormatError`` naming the
first bad field by its path (``cells[2].outputs[0].text``), so a malformed or hostile result file never
surfaces as a KeyError deep in a build. Every field is required on disk (the writer writes them all; an
older format gets its new fields from a migration in ``schema``), and a field the class does not have
is refused: it would be lost when the result is written back. A number is kept as written (an integer
in a ``float`` field stays an integer), so a committed file writes back byte for byte and its digest
holds.

Types: ``str``, ``int``, ``float``, ``bool``, ``None``, unions (``X | None``), ``Literal`` strings,
string enums, ``tuple[X, ...]``, ``list[X]``, ``dict[str, X]``/``Mapping[str, X]``, nested dataclasses,
and tagged unions of dataclasses (``tagged``). A check a type cannot say (an image's file name, a row as
long as the columns) is declared on its field: ``field(metadata=check(fn))``.

Why not a library: none is installed that fits (cattrs and pydantic would be new dependencies), and
what the format needs beyond them is most of this module: numbers kept as written, the one error
class with the field's path, tagged unions and checks across fields.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from enum import Enum
from typing import Any, Literal, TypeVar, get_args, get_origin, get_type_hints

from perfblog.generator.errors import ResultFormatError

T = TypeVar("T")

#: A recorded scalar: what ``record.glue`` and table cells hold.
Scalar = None | bool | int | float | str

#: A field's check: the decoded value and its object's decoded fields; raises ``Invalid`` when it fails.
Check = Callable[[Any, Mapping[str, Any]], None]

_CHECK = "check"
_STORED = "stored"


class Invalid(Exception):
    """What a field's check raises: ``message``, and ``at`` the place below the field (``[0]``, ``.x``).
    Never leaves the codec: ``read`` turns it into a ``ResultFormatError`` with the field's path."""

    def __init__(self, message: str, at: str = "") -> None:
        super().__init__(message)
        self.message, self.at = message, at


def check(fn: Check) -> dict[str, Any]:
    """A field's ``metadata`` that runs ``fn`` once every field of its object is read (so a check may
    compare fields: a table's rows with its columns)."""
    return {_CHECK: fn}


#: A field's ``metadata`` for what is not stored: set when the file is read (``Result.intact``).
NOT_STORED: Mapping[str, Any] = types.MappingProxyType({_STORED: False})

#: The variants of tagged unions: class -> (the key that names the variant on disk, its name there).
_TAGS: dict[type, tuple[str, str]] = {}


def tagged(key: str, variants: Mapping[str, type[T]]) -> Mapping[str, type[T]]:
    """Register a tagged union: each class of ``variants`` is written with ``key`` set to its name, and a
    union of them is read by that key. Returns ``variants``, the registry of the union's kinds."""
    for name, cls in variants.items():
        _TAGS[cls] = (key, name)
    return variants


# --- reading ---------------------------------------------------------------------------------------------


def decode(hint: Any, data: object, where: str) -> Any:
    """``data`` (parsed JSON) as a value of type ``hint``; ``where`` is its path in the document."""
    origin = get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return _union(get_args(hint), data, where)
    if origin is Literal or (isinstance(hint, type) and issubclass(hint, Enum)):
        choices = [c.value for c in hint] if origin is None else list(get_args(hint))
        if data not in choices or not isinstance(data, str):
            _expect(data, where, _either(repr(c) for c in choices))
        return data if origin is Literal else hint(data)
    if dataclasses.is_dataclass(hint):
        return read(hint, data, where)  # type: ignore[arg-type]
    if origin in (tuple, list):
        item, *rest = get_args(hint)
        if origin is tuple and rest != [Ellipsis]:
            raise TypeError(f"{hint}: only tuple[X, ...] is supported")
        _require(data, list, where)
        return origin(decode(item, x, f"{where}[{i}]") for i, x in enumerate(data))  # type: ignore[attr-defined]
    if origin in (dict, Mapping):
        _require(data, dict, where)
        return {key: decode(get_args(hint)[1], value, f"{where}.{key}") for key, value in data.items()}  # type: ignore[attr-defined]
    if hint in _SCALARS:
        if not _is_a(data, hint):
            _expect(data, where, _NAMES[hint])
        return data
    raise TypeError(f"{where}: no JSON reading for {hint!r}")


def read(cls: type[T], data: object, where: str, **unstored: Any) -> T:
    """An object of dataclass ``cls``; ``unstored`` gives the fields that are not stored."""
    _require(data, dict, where)
    assert isinstance(data, dict)
    expected: list[str] = []
    if cls in _TAGS:
        key, name = _TAGS[cls]
        _tag(data, where, key, [name])
        expected.append(key)
    values: dict[str, Any] = {}
    hints = _hints(cls)
    for f in _stored(cls):
        if f.name not in data:
            raise ResultFormatError(_at(where, f.name), "missing")
        values[f.name] = decode(hints[f.name], data[f.name], _at(where, f.name))
        expected.append(f.name)
    for f in _stored(cls):
        if _CHECK in f.metadata:
            try:
                f.metadata[_CHECK](values[f.name], values)
            except Invalid as bad:
                raise ResultFormatError(_at(where, f.name) + bad.at, bad.message) from None
    unknown = sorted(set(data) - set(expected))
    if unknown:
        raise ResultFormatError(_at(where, unknown[0]), "unknown field")
    return cls(**values, **unstored)


def _union(members: tuple[Any, ...], data: object, where: str) -> Any:
    """A value of one of ``members``: the one that takes this JSON kind (a tagged union by its tag)."""
    takers = [m for m in members if _takes(m, data)]
    if not takers:
        _expect(data, where, _either(dict.fromkeys(_name(m) for m in _ordered(members))))
    variants = {_TAGS[m][1]: m for m in takers if m in _TAGS}
    if len(variants) > 1:
        assert isinstance(data, dict)
        key = _TAGS[takers[0]][0]
        return read(variants[_tag(data, where, key, list(variants))], data, where)
    for member in takers[:-1]:  # int | float: the first that reads it
        try:
            return decode(member, data, where)
        except ResultFormatError:
            continue
    return decode(takers[-1], data, where)


def _tag(data: dict[str, Any], where: str, key: str, names: list[str]) -> str:
    if key not in data:
        raise ResultFormatError(_at(where, key), "missing")
    if data[key] not in names or not isinstance(data[key], str):
        _expect(data[key], _at(where, key), _either(repr(n) for n in names))
    return data[key]


def _takes(hint: Any, data: object) -> bool:
    """Whether a value of type ``hint`` can be written as ``data``'s JSON kind."""
    origin = get_origin(hint)
    if origin in (tuple, list):
        return isinstance(data, list)
    if origin in (dict, Mapping) or dataclasses.is_dataclass(hint):
        return isinstance(data, dict)
    if origin is Literal or (isinstance(hint, type) and issubclass(hint, Enum)):
        return isinstance(data, str)
    return _is_a(data, hint)


_SCALARS = (str, int, float, bool, type(None))
_NAMES = {str: "a string", int: "an integer", float: "a number", bool: "true or false",
          type(None): "null", dict: "an object", list: "a list"}
#: How a union names its members, in this order: "a number, a string, true/false or null".
_ORDER = ("a number", "an integer", "a string", "true/false", "a list", "an object", "null")


def _name(hint: Any) -> str:
    origin = get_origin(hint)
    if hint in (int, float) or hint is bool:
        return {int: "an integer", float: "a number", bool: "true/false"}[hint]
    if origin in (tuple, list):
        return "a list"
    if origin in (dict, Mapping) or dataclasses.is_dataclass(hint):
        return "an object"
    return "null" if hint is type(None) else "a string"


def _ordered(members: Iterable[Any]) -> list[Any]:
    found = list(members)
    if int in found and float in found:  # an integer is a number: name it once
        found.remove(int)
    return sorted(found, key=lambda m: _ORDER.index(_name(m)))


def _either(names: Iterable[str]) -> str:
    names = list(names)
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def _require(data: object, kind_: type, where: str) -> None:
    if not isinstance(data, kind_):
        _expect(data, where, _NAMES[kind_])


def _expect(data: object, where: str, expected: str) -> typing.NoReturn:
    found = repr(data) if isinstance(data, str) and "'" in expected else kind(data)
    raise ResultFormatError(where or "result", f"expected {expected}, got {found}")


def _is_a(value: object, hint: Any) -> bool:
    if isinstance(value, bool) or hint is bool:
        return isinstance(value, bool) and hint is bool  # JSON true is not a number here
    if hint is float:
        return isinstance(value, int | float)
    return isinstance(value, hint)


def _at(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return get_type_hints(cls)


@functools.cache
def _stored(cls: type) -> tuple[dataclasses.Field[Any], ...]:
    return tuple(f for f in dataclasses.fields(cls) if f.metadata.get(_STORED, True))


def kind(value: object) -> str:
    """What JSON kind ``value`` is, for messages ("an object", "null")."""
    return _NAMES.get(type(value), type(value).__name__)


# --- writing ---------------------------------------------------------------------------------------------


def write(value: Any) -> Any:
    """``value`` as JSON data: a dataclass as an object of its stored fields (and its tag), an enum as its
    value, a tuple as a list, a mapping as an object."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        tag = dict([_TAGS[type(value)]]) if type(value) in _TAGS else {}
        return {**tag, **{f.name: write(getattr(value, f.name)) for f in _stored(type(value))}}
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, tuple | list):
        return [write(item) for item in value]
    if isinstance(value, Mapping):
        return {key: write(item) for key, item in value.items()}
    return value


class Json:
    """The JSON methods of a class of the format (a frozen dataclass), for its callers: the runner's
    provenance, a snippet's hashes, a record a chart is drawn from."""

    @classmethod
    def from_json(cls: type[T], data: object, where: str = "") -> T:
        return read(cls, data, where)

    def to_json(self) -> dict[str, Any]:
        return write(self)
