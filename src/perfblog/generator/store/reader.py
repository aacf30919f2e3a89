"""Reading a JSON document field by field: every value checked against the type the format says, and a
``ResultFormatError`` naming the first bad field (``cells[2].outputs[0].text``) and what was found."""

from __future__ import annotations

from typing import Any

from perfblog.generator.errors import ResultFormatError

#: A recorded scalar: what ``record.glue`` and table cells hold.
Scalar = None | bool | int | float | str


class Reader:
    """One JSON object being read, with its place in the document for messages."""

    def __init__(self, data: object, where: str) -> None:
        if not isinstance(data, dict):
            raise ResultFormatError(where or "result", f"expected an object, got {kind(data)}")
        self.data = data
        self.where = where
        self._read: set[str] = set()

    def path(self, key: str) -> str:
        return f"{self.where}.{key}" if self.where else key

    def get(self, key: str, *types: type, nullable: bool = False) -> Any:
        """The value of ``key``, which must be present and of one of ``types`` (or null if ``nullable``)."""
        value = self.raw(key)
        if value is None and nullable:
            return None
        if not is_a(value, types):
            expected = " or ".join(NAMES.get(t, t.__name__) for t in types)
            raise ResultFormatError(self.path(key), f"expected {expected}, got {kind(value)}")
        return value

    def raw(self, key: str) -> object:
        """The value of ``key``, which must be present, whatever its type (the caller checks it)."""
        self._read.add(key)
        if key not in self.data:
            raise ResultFormatError(self.path(key), "missing")
        return self.data[key]

    def text(self, key: str, nullable: bool = False) -> Any:
        return self.get(key, str, nullable=nullable)

    def number(self, key: str, nullable: bool = False) -> Any:
        return self.get(key, int, float, nullable=nullable)

    def obj(self, key: str, nullable: bool = False) -> Reader | None:
        value = self.get(key, dict, nullable=nullable)
        return None if value is None else Reader(value, self.path(key))

    def mapping(self, key: str, value_type: type) -> dict[str, Any]:
        """An object whose values all have ``value_type`` (hashes, MIME data)."""
        found = self.get(key, dict)
        for name, value in found.items():
            if not is_a(value, (value_type,)):
                raise ResultFormatError(f"{self.path(key)}.{name}",
                                        f"expected {NAMES.get(value_type, value_type.__name__)}, "
                                        f"got {kind(value)}")
        return dict(found)

    def items(self, key: str) -> list[Reader]:
        """A list of objects."""
        found = self.get(key, list)
        return [Reader(item, f"{self.path(key)}[{i}]") for i, item in enumerate(found)]

    def scalars(self, key: str, value: object | None = None, where: str | None = None) -> tuple[Scalar, ...]:
        found = self.get(key, list) if value is None else value
        where = where or self.path(key)
        if not isinstance(found, list):
            raise ResultFormatError(where, f"expected a list, got {kind(found)}")
        for i, item in enumerate(found):
            scalar(item, f"{where}[{i}]")
        return tuple(found)

    def done(self) -> None:
        """Refuse fields this schema does not have: they would be lost when the result is written back."""
        unknown = sorted(set(self.data) - self._read)
        if unknown:
            raise ResultFormatError(self.path(unknown[0]), "unknown field")


NAMES = {str: "a string", int: "an integer", float: "a number", bool: "true or false", dict: "an object",
          list: "a list"}


def is_a(value: object, types: tuple[type, ...]) -> bool:
    if isinstance(value, bool):
        return bool in types  # JSON true is not a number here
    return isinstance(value, types)


def kind(value: object) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "true or false", int: "an integer",
            float: "a number", type(None): "null"}.get(type(value), type(value).__name__)


def scalar(value: object, where: str) -> Scalar:
    if value is not None and not isinstance(value, (bool, int, float, str)):
        raise ResultFormatError(where, f"expected a number, string, true/false or null, got {kind(value)}")
    return value  # type: ignore[return-value]
