"""JSON Schemas for tool arguments: small builders, validation with messages a person can act on,
and default filling.

Each tool's schema is a plain JSON Schema (draft 2020-12) object with `additionalProperties:
false`, so it can be served as is by the API and used by any other JSON Schema validator. The
messages name the argument first (`argument "bbox": expected exactly 4 items, got 3`).
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from annotation.imagetools.errors import ToolArgumentError
from annotation.imagetools.schema_compiled import _as_declared
from annotation.imagetools.schema_compiled import compile_arguments as compile_arguments  # re-exported
from annotation.imagetools.schema_compiled import compile_defaults as compile_defaults  # re-exported

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"

# Colours are RGB (what people and models say), never OpenCV's BGR; see colors.py.
COLOR_DESCRIPTION = 'RGB colour: [r, g, b] with 0-255 values, a name ("red") or "#rrggbb"'


def integer(description: str, *, minimum: int | None = None, maximum: int | None = None,
            default: int | None = None) -> dict:
    return _scalar("integer", description, minimum, maximum, default)


def number(description: str, *, minimum: float | None = None, maximum: float | None = None,
           default: float | None = None, exclusive_minimum: float | None = None) -> dict:
    schema = _scalar("number", description, minimum, maximum, default)
    if exclusive_minimum is not None:
        schema["exclusiveMinimum"] = exclusive_minimum
    return schema


def boolean(description: str, *, default: bool | None = None) -> dict:
    return _scalar("boolean", description, None, None, default)


def choice(description: str, values: list[str], *, default: str | None = None) -> dict:
    schema: dict[str, Any] = {"type": "string", "enum": list(values), "description": description}
    if default is not None:
        schema["default"] = default
    return schema


def integer_choice(description: str, values: list[int], *, default: int | None = None) -> dict:
    schema: dict[str, Any] = {"type": "integer", "enum": list(values), "description": description}
    if default is not None:
        schema["default"] = default
    return schema


def text(description: str, *, max_length: int, default: str | None = None) -> dict:
    schema: dict[str, Any] = {"type": "string", "minLength": 1, "maxLength": max_length,
                              "description": description}
    if default is not None:
        schema["default"] = default
    return schema


# `format` is an annotation (JSON Schema does not check unknown formats): "bbox" and "color" tell
# a form builder, such as the annotator's workbench, to offer a box tool or a colour picker.

def bbox(description: str = "box [x1, y1, x2, y2] in pixels of the input image") -> dict:
    return {"type": "array", "items": {"type": "number", "minimum": 0, "maximum": 1_000_000},
            "minItems": 4, "maxItems": 4, "format": "bbox", "description": description}


def triple(description: str, *, maximum: int = 255) -> dict:
    return {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": maximum},
            "minItems": 3, "maxItems": 3, "description": description}


def color(description: str = COLOR_DESCRIPTION, *, default: str | list[int] | None = None) -> dict:
    # A name or a hex string is checked by colors.parse_color (a JSON Schema pattern plus an
    # enum of names would make the error messages unreadable).
    schema: dict[str, Any] = {"type": ["array", "string"],
                              "items": {"type": "integer", "minimum": 0, "maximum": 255},
                              "minItems": 3, "maxItems": 3, "maxLength": 32, "format": "color",
                              "description": description}
    if default is not None:
        schema["default"] = default
    return schema


def coordinate(description: str, *, minimum: int = -100_000, maximum: int = 100_000,
               default: int | None = None) -> dict:
    return integer(description, minimum=minimum, maximum=maximum, default=default)


def arguments(properties: dict[str, dict], *, required: tuple[str, ...] = ()) -> dict:
    """The schema of a tool's argument object."""
    unknown = set(required) - set(properties)
    if unknown:
        raise ValueError(f"required arguments without a schema: {sorted(unknown)}")
    schema: dict[str, Any] = {"$schema": JSON_SCHEMA_DIALECT, "type": "object",
                              "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = list(required)
    return schema


def _scalar(kind: str, description: str, minimum: Any, maximum: Any, default: Any) -> dict:
    schema: dict[str, Any] = {"type": kind, "description": description}
    if minimum is not None:
        schema["minimum"] = minimum
    if maximum is not None:
        schema["maximum"] = maximum
    if default is not None:
        schema["default"] = default
    return schema


# --- validation ---------------------------------------------------------------------------

_TYPE_WORDS = {"number": "a number", "integer": "an integer", "string": "a string",
               "boolean": "true or false", "array": "a list", "object": "an object", "null": "null"}


def schema_errors(schema: dict, args: Any, validator: Draft202012Validator | None = None,
                  ) -> list[ToolArgumentError]:
    """Every problem of `args` against `schema`, one per argument, in argument order."""
    if not isinstance(args, dict):
        return [ToolArgumentError(None, f"arguments must be a JSON object, got {_shown(args)}")]
    validator = validator or Draft202012Validator(schema)
    properties = schema.get("properties", {})
    found: dict[str, ToolArgumentError] = {}
    for error in validator.iter_errors(args):
        for problem in _translate(error, args, properties):
            found.setdefault(problem.argument or "", problem)
    order = {name: i for i, name in enumerate(properties)}
    return sorted(found.values(), key=lambda p: (order.get(p.argument or "", len(order)),
                                                 p.argument or ""))


def _translate(error: ValidationError, args: dict, properties: dict) -> list[ToolArgumentError]:
    path = list(error.absolute_path)
    if not path:
        if error.validator == "required":
            return [ToolArgumentError(name, "is missing (it is required)")
                    for name in error.validator_value if name not in args]
        if error.validator == "additionalProperties":
            accepted = f"this tool accepts: {', '.join(properties)}" if properties else \
                "this tool takes no arguments"
            return [ToolArgumentError(name, f"is unknown; {accepted}")
                    for name in args if name not in properties]
        return [ToolArgumentError(None, error.message)]
    argument = str(path[0])
    where = "".join(f" item {index + 1}" for index in path[1:] if isinstance(index, int))
    prefix = f"{where.strip()}: " if where else ""
    return [ToolArgumentError(argument, prefix + _detail(error))]


def _detail(error: ValidationError) -> str:
    value, rule = error.instance, error.validator_value
    match error.validator:
        case "type":
            kinds = rule if isinstance(rule, list) else [rule]
            expected = " or ".join(str(_TYPE_WORDS.get(k, k)) for k in kinds)
            return f"expected {expected}, got {_shown(value)}"
        case "minimum":
            return f"{_shown(value)} is below the minimum {rule}"
        case "maximum":
            return f"{_shown(value)} is above the maximum {rule}"
        case "exclusiveMinimum":
            return f"{_shown(value)} must be greater than {rule}"
        case "exclusiveMaximum":
            return f"{_shown(value)} must be less than {rule}"
        case "enum":
            return f"{_shown(value)} is not one of {', '.join(_shown(v) for v in rule)}"
        case "minItems" | "maxItems":
            low, high = error.schema.get("minItems"), error.schema.get("maxItems")
            if low is not None and low == high:
                return f"expected exactly {low} items, got {len(value)}"
            bound = "at least" if error.validator == "minItems" else "at most"
            return f"expected {bound} {rule} items, got {len(value)}"
        case "minLength":
            return "must not be empty" if rule == 1 else f"must have at least {rule} characters"
        case "maxLength":
            return f"is too long ({len(value)} characters, at most {rule})"
        case _:
            return str(error.message)


def _shown(value: Any) -> str:
    try:
        shown = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        shown = repr(value)
    return shown if len(shown) <= 60 else shown[:57] + "..."


# --- normalisation and defaults -----------------------------------------------------------

_FOLD = re.compile(r"[\s\-]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])([A-Z])")


def snake_case_keys(schema: dict, args: dict) -> dict:
    """OpenCV's camelCase argument names (loDiff, minLineLength) are read as the snake_case
    ones the schemas use."""
    properties = schema.get("properties", {})
    out = dict(args)
    for name in args:
        if name in properties or not isinstance(name, str):
            continue
        snake = _CAMEL.sub(r"_\1", name).lower()
        if snake in properties and snake not in args:
            out[snake] = out.pop(name)
    return out


def fold_choices(schema: dict, args: dict) -> dict:
    """Enum values are matched case-insensitively, with spaces and hyphens read as underscores
    ("Sobel-X" is "sobel_x"); values that still match nothing are left for the validator."""
    properties = schema.get("properties", {})
    out = dict(args)
    for name, value in args.items():
        choices = properties.get(name, {}).get("enum")
        if choices and isinstance(value, str) and value not in choices:
            folded = _FOLD.sub("_", value.strip().lower())
            if folded in choices:
                out[name] = folded
    return out


def with_defaults(schema: dict, args: dict) -> dict:
    """`args` (already valid) with every missing default filled in, integers as int."""
    out = dict(args)
    for name, prop in schema.get("properties", {}).items():
        if name not in out and "default" in prop:
            out[name] = copy.deepcopy(prop["default"])
        if name in out:
            out[name] = _as_declared(prop, out[name])
    return out
