"""The type system of machine variables.

Scalars (`str`, `int`, `float`, `bool`), label sets (`enum`), `list[T]`,
`map[str, T]`, named records and `T?`. Types are values: structural equality,
except records and named enums, whose names are part of their identity.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

if TYPE_CHECKING:
    from skillc.runtime.jsonvalue import Object


@attrs.frozen
class Type:
    """Base of all types."""

    def __str__(self) -> str:
        return show(self)


@attrs.frozen
class StrT(Type):
    pass


@attrs.frozen
class IntT(Type):
    pass


@attrs.frozen
class FloatT(Type):
    pass


@attrs.frozen
class BoolT(Type):
    pass


@attrs.frozen
class EnumT(Type):
    """A fixed label set; `name` is set when declared with `enum NAME { … }`."""

    labels: tuple[str, ...]
    name: str | None = None


@attrs.frozen
class ListT(Type):
    item: Type


@attrs.frozen
class MapT(Type):
    """A string-keyed map."""

    value: Type


@attrs.frozen
class RecordT(Type):
    """A named record; fields in declaration order."""

    name: str
    fields: tuple[tuple[str, Type], ...]

    def field(self, name: str) -> Type | None:
        """The type of a field, or None."""
        for fname, ftype in self.fields:
            if fname == name:
                return ftype
        return None


@attrs.frozen
class OptionalT(Type):
    inner: Type


@attrs.frozen
class NoneT(Type):
    """The type of the `none` literal."""


@attrs.frozen
class AnyT(Type):
    """The item type of an empty list literal; fits any item type."""


@attrs.frozen
class ErrorT(Type):
    """The type of an expression that already produced a diagnostic; silences follow-ups."""


STR, INT, FLOAT, BOOL, NONE, ANY, ERROR = StrT(), IntT(), FloatT(), BoolT(), NoneT(), AnyT(), ErrorT()
BUILTINS: dict[str, Type] = {"str": STR, "int": INT, "float": FLOAT, "bool": BOOL}
SCALARS = (StrT, IntT, FloatT, BoolT, EnumT)


def show(t: Type) -> str:
    """The type as written in `.skm`."""
    if isinstance(t, StrT):
        return "str"
    if isinstance(t, IntT):
        return "int"
    if isinstance(t, FloatT):
        return "float"
    if isinstance(t, BoolT):
        return "bool"
    if isinstance(t, EnumT):
        return t.name or "enum { " + ", ".join(t.labels) + " }"
    if isinstance(t, ListT):
        return f"list[{show(t.item)}]"
    if isinstance(t, MapT):
        return f"map[str, {show(t.value)}]"
    if isinstance(t, RecordT):
        return t.name
    if isinstance(t, OptionalT):
        return f"{show(t.inner)}?"
    if isinstance(t, NoneT):
        return "none"
    if isinstance(t, AnyT):
        return "any"
    return "<error>"


def is_numeric(t: Type) -> bool:
    return isinstance(t, (IntT, FloatT))


def is_scalar(t: Type) -> bool:
    return isinstance(t, SCALARS)


def same_enum(a: Type, b: Type) -> bool:
    """Enums are interchangeable when their label sets are equal (names aside)."""
    return isinstance(a, EnumT) and isinstance(b, EnumT) and set(a.labels) == set(b.labels)


def assignable(src: Type, dst: Type) -> bool:
    """Can a value of type `src` be stored in a variable of type `dst`?"""
    if isinstance(src, ErrorT) or isinstance(dst, ErrorT) or src == dst:
        return True
    if isinstance(src, IntT) and isinstance(dst, FloatT):
        return True
    if same_enum(src, dst):
        return True
    if isinstance(dst, OptionalT):
        return isinstance(src, NoneT) or assignable(src, dst.inner)
    if isinstance(src, ListT) and isinstance(dst, ListT):
        return isinstance(src.item, AnyT) or assignable(src.item, dst.item)
    if isinstance(src, MapT) and isinstance(dst, MapT):
        return isinstance(src.value, AnyT) or assignable(src.value, dst.value)
    return False


def comparable(a: Type, b: Type) -> bool:
    """Can `a == b` be asked?"""
    if isinstance(a, (ErrorT, AnyT)) or isinstance(b, (ErrorT, AnyT)):
        return True
    if a == b or same_enum(a, b) or (is_numeric(a) and is_numeric(b)):
        return True
    if isinstance(a, OptionalT):
        return isinstance(b, NoneT) or comparable(a.inner, b)
    if isinstance(b, OptionalT):
        return isinstance(a, NoneT) or comparable(a, b.inner)
    if isinstance(a, ListT) and isinstance(b, ListT):
        return comparable(a.item, b.item)
    if isinstance(a, MapT) and isinstance(b, MapT):
        return comparable(a.value, b.value)
    return False


def searchable(haystack: Type, needle: Type) -> bool | None:
    """Can `needle in haystack` be asked? None when `haystack` cannot be searched at all.

    Lists are searched for an item, maps for a key (a `str`), strings for a substring.
    An optional needle is allowed only in a list of optionals.
    """
    hay = strip_optional(haystack)
    if isinstance(hay, ListT):
        return comparable(needle, hay.item)
    if isinstance(hay, (MapT, StrT)):
        return isinstance(needle, (StrT, ErrorT))
    if isinstance(hay, ErrorT):
        return True
    return None


def strip_optional(t: Type) -> Type:
    return t.inner if isinstance(t, OptionalT) else t


def json_schema(t: Type) -> Object:
    """The JSON Schema of a type (used for output contracts and exports)."""
    if isinstance(t, StrT):
        return {"type": "string"}
    if isinstance(t, IntT):
        return {"type": "integer"}
    if isinstance(t, FloatT):
        return {"type": "number"}
    if isinstance(t, BoolT):
        return {"type": "boolean"}
    if isinstance(t, EnumT):
        return {"type": "string", "enum": list(t.labels)}
    if isinstance(t, ListT):
        return {"type": "array", "items": json_schema(t.item)}
    if isinstance(t, MapT):
        return {"type": "object", "additionalProperties": json_schema(t.value)}
    if isinstance(t, RecordT):
        return {
            "type": "object",
            "properties": {name: json_schema(ft) for name, ft in t.fields},
            "required": [name for name, ft in t.fields if not isinstance(ft, OptionalT)],
            "additionalProperties": False,
        }
    if isinstance(t, OptionalT):
        return {"anyOf": [json_schema(t.inner), {"type": "null"}]}
    if isinstance(t, NoneT):
        return {"type": "null"}
    return {}
