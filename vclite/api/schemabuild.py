"""Building blocks of the OpenAPI v3 schemas that describe vclite's kinds field by field, for `kubectl
explain`: typed nodes that carry a description, and `properties`, which turns a table of `Field` rows
into the `properties` of an object.

Every object keeps fields it does not name (`x-kubernetes-preserve-unknown-fields`), so a schema
never drops anything admission reads; values that take several JSON types are untyped
(`any_value`) or `int_or_string`. Structural, as a CRD requires. Pure data and pure functions.
"""
from __future__ import annotations

from typing import Any, Callable, Iterator, NamedTuple

Obj = dict[str, Any]


def obj(description: str, properties: Obj | None = None, required: list[str] | None = None) -> Obj:
    out: Obj = {"type": "object", "description": description, "x-kubernetes-preserve-unknown-fields": True}
    if properties:
        out["properties"] = properties
    if required:
        out["required"] = required
    return out


def string(description: str) -> Obj:
    return {"type": "string", "description": description}


def integer(description: str) -> Obj:
    return {"type": "integer", "description": description}


def boolean(description: str) -> Obj:
    return {"type": "boolean", "description": description}


def any_value(description: str) -> Obj:
    return {"description": description, "x-kubernetes-preserve-unknown-fields": True}


def array(description: str, items: Obj) -> Obj:
    return {"type": "array", "description": description, "items": items}


def int_or_string(description: str = "") -> Obj:
    out: Obj = {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]}
    if description:
        out["description"] = description
    return out


def map_of(description: str, values: Obj) -> Obj:
    """An object whose keys are names chosen by the user, each holding a `values`."""
    return {"type": "object", "description": description, "additionalProperties": values}


STRINGS: Obj = {"type": "string"}

# ---- tables ------------------------------------------------------------------------------------

# The shapes a Field takes, named as `kubectl explain` shows them.
STR, INT, BOOL = "string", "integer", "boolean"
OBJ = "Object"                      # its `fields` described; without fields, an open object
LIST = "[]Object"                   # a list of objects with these `fields`
STRS = "[]string"
MAP = "map[string]Object"           # name -> an object with these `fields`
INT_MAP = "map[string]integer"
STR_MAP = "map[string]string"
ARGS_MAP = "map[string][]string"    # name -> a list of arguments
QUANTITIES = "map[string]Quantity"  # resource name -> a quantity (`2`, `500m`, `1Gi`)


class Field(NamedTuple):
    """One row of a table: a field's name, shape and description; the fields inside an OBJ, LIST or
    MAP; whether the object holding it requires it."""
    name: str
    shape: str
    description: str
    fields: tuple[Field, ...] = ()
    required: bool = False


def _item(fields: tuple[Field, ...]) -> Obj:
    """A list item or map value: an object with these fields, described by the field holding it."""
    out: Obj = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    if fields:
        out["properties"] = properties(fields)
    required = [f.name for f in fields if f.required]
    if required:
        out["required"] = required
    return out


_SCALARS_AND_MAPS: dict[str, Callable[[str], Obj]] = {
    STR: string, INT: integer, BOOL: boolean,
    STRS: lambda d: array(d, dict(STRINGS)),
    INT_MAP: lambda d: map_of(d, {"type": "integer"}),
    STR_MAP: lambda d: map_of(d, dict(STRINGS)),
    ARGS_MAP: lambda d: map_of(d, {"type": "array", "items": dict(STRINGS)}),
    QUANTITIES: lambda d: map_of(d, int_or_string()),
}


def node(f: Field) -> Obj:
    """The schema of one row."""
    if f.shape == OBJ:
        return obj(f.description, properties(f.fields), [x.name for x in f.fields if x.required])
    if f.shape == LIST:
        return array(f.description, _item(f.fields))
    if f.shape == MAP:
        return map_of(f.description, _item(f.fields))
    if f.shape not in _SCALARS_AND_MAPS:
        raise ValueError(f"{f.name}: unknown shape {f.shape!r}")
    return _SCALARS_AND_MAPS[f.shape](f.description)


def properties(fields: tuple[Field, ...]) -> Obj:
    """The `properties` of an object whose fields are these rows (fresh dictionaries)."""
    return {f.name: node(f) for f in fields}


def open_to_placeholders(node: Obj) -> Obj:
    """`node` (fresh dictionaries) with every typed scalar also taking a string, so a flow placeholder
    (`replicas: "{{params.n}}"`) is stored as written: an integer becomes int-or-string, a boolean or
    number any value; nothing `required`. For a CRD, whose schema the API server enforces before any
    vclite admission can read the object: never stricter than that admission."""
    kind = node.get("type")
    if kind == "integer":
        return int_or_string(node.get("description", ""))
    if kind in ("boolean", "number"):
        return any_value(node.get("description", ""))
    out = {k: v for k, v in node.items() if k != "required"}
    if isinstance(node.get("properties"), dict):
        out["properties"] = {name: open_to_placeholders(sub) for name, sub in node["properties"].items()}
    if isinstance(node.get("items"), dict):
        out["items"] = open_to_placeholders(node["items"])
    if isinstance(node.get("additionalProperties"), dict):
        out["additionalProperties"] = open_to_placeholders(node["additionalProperties"])
    return out


def walk(schema: Obj, path: str) -> Iterator[tuple[str, Obj]]:
    """(path, node) of every node under `schema`: `[]` for an item, `{}` for a map value."""
    yield path, schema
    for name, sub in (schema.get("properties") or {}).items():
        yield from walk(sub, f"{path}.{name}")
    if "items" in schema:
        yield from walk(schema["items"], f"{path}[]")
    if isinstance(schema.get("additionalProperties"), dict):
        yield from walk(schema["additionalProperties"], f"{path}{{}}")


def structural_problems(node: Obj) -> list[str]:
    """What keeps one schema node from being structural, as a CRD's must be (empty: none)."""
    typed = "type" in node
    problems = []
    if not (typed or node.get("x-kubernetes-int-or-string") or node.get("x-kubernetes-preserve-unknown-fields")):
        problems.append("no type")
    if typed and node.get("x-kubernetes-int-or-string"):
        problems.append("a type and x-kubernetes-int-or-string")
    if "properties" in node and "additionalProperties" in node:
        problems.append("both properties and additionalProperties")
    if node.get("type") == "array" and "items" not in node:
        problems.append("an array without items")
    if node.get("type") == "object" and "additionalProperties" not in node \
            and not node.get("x-kubernetes-preserve-unknown-fields"):
        problems.append("an object that would drop the fields it does not name")
    problems += [f"required {name!r} is no property" for name in node.get("required", [])
                 if name not in (node.get("properties") or {})]
    return problems
