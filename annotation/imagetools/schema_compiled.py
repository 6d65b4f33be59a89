"""The compiled fast path of argument checking (split from ``schema``): each tool's argument
schema turned once into a plain-Python predicate and a default filler.

``schema`` re-exports ``compile_arguments`` and ``compile_defaults``; it stays the reference
(jsonschema), which words every error.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

# --- compiled fast path --------------------------------------------------------------------
#
# jsonschema costs tens of microseconds per call; the scorer validates every tool call of a
# prediction file. `compile_arguments` turns an argument schema built by `arguments()` into a
# plain-Python predicate that answers "valid" only when jsonschema would too (same type rules:
# bool is not a number, 3.0 is an integer; same range and length comparisons). Anything it is
# not sure of answers "not proven", and the caller asks jsonschema, which also words the errors.

_NUMBER_TYPES = (int, float)
_IGNORED = frozenset({"description", "default", "format"})
_PROPERTY_KEYWORDS = frozenset({"type", "minimum", "maximum", "exclusiveMinimum", "enum",
                                "minLength", "maxLength", "items", "minItems", "maxItems"})
_ITEM_KEYWORDS = frozenset({"type", "minimum", "maximum"})
_TOP_KEYWORDS = frozenset({"$schema", "type", "properties", "additionalProperties", "required"})


class _Unsupported(Exception):
    """A schema keyword the fast path does not implement: that schema is left to jsonschema."""


def compile_arguments(schema: dict) -> Callable[[dict], bool] | None:
    """A predicate `ok(args)`: True only if `args` (a dict) is valid against `schema`; False means
    "ask jsonschema". None if the schema uses something the fast path does not know.

    The predicate is generated as one Python function (as dataclasses generate `__init__`):
    per argument one dict lookup and an inline test of the common case (an int in range, a
    known choice), then the exact test of the kind for anything else; unknown keys are caught
    by counting."""
    try:
        if set(schema) - _TOP_KEYWORDS or schema.get("type") != "object" \
                or schema.get("additionalProperties") is not False:
            raise _Unsupported
        compiled = [(name, *_compile_property(prop))
                    for name, prop in schema["properties"].items()]
        required = set(schema.get("required", ()))
        if required - set(schema["properties"]) or \
                not all(type(name) is str for name, _, _, _ in compiled):
            raise _Unsupported
    except (_Unsupported, AttributeError, KeyError, TypeError):
        return None
    namespace: dict[str, Any] = {"MISSING": _MISSING}
    lines = ["def ok(args):", "    get = args.get", "    seen = 0"]
    for i, (name, shortcut, test, constants) in enumerate(compiled):
        namespace[f"N{i}"], namespace[f"T{i}"] = name, test
        for key, value in constants.items():
            namespace[f"{key}{i}"] = value
        condition = f"T{i}(v)" if shortcut is None else \
            f"({shortcut.format(i=i)}) or T{i}(v)"
        lines += [f"    v = get(N{i}, MISSING)",
                  "    if v is not MISSING:",
                  "        seen += 1",
                  f"        if not ({condition}):",
                  "            return False"]
        if name in required:
            lines += ["    else:", "        return False"]
    lines.append("    return seen == len(args)")  # no key outside the properties
    exec("\n".join(lines), namespace)  # noqa: S102  (source built above from the schema's shape)
    ok: Callable[[dict], bool] = namespace["ok"]
    return ok


_MISSING = object()


def _compile_property(prop: dict) -> tuple[str | None, Callable[[Any], bool], dict]:
    """(an inline expression over `v` that implies validity, or None; the exact test; the
    constants the expression names, suffixed with the property's index `{i}`)."""
    keys = set(prop) - _IGNORED
    if keys - _PROPERTY_KEYWORDS:
        raise _Unsupported
    kinds = prop["type"]
    kinds = [kinds] if isinstance(kinds, str) else list(kinds)
    if not kinds or len(set(kinds)) != len(kinds):
        raise _Unsupported
    if "enum" in prop and kinds not in (["string"], ["integer"]):
        raise _Unsupported
    tests = tuple(_compile_kind(kind, prop) for kind in kinds)
    if len(tests) == 1:
        test = tests[0]
    elif len(tests) == 2:
        first, second = tests

        def either(value: Any) -> bool:
            return first(value) or second(value)
        test = either
    else:
        def any_of(value: Any) -> bool:
            return any(t(value) for t in tests)
        test = any_of
    shortcuts, constants = [], {}
    for kind in kinds:
        shortcut, more = _shortcut(kind, prop)
        if shortcut is None:  # a kind without one: that kind's values all go through T
            continue
        shortcuts.append(shortcut)
        constants.update(more)
    if not shortcuts:
        return None, test, constants
    return " or ".join(f"({s})" for s in shortcuts), test, constants


def _shortcut(kind: str, prop: dict) -> tuple[str | None, dict]:
    """An inline expression over `v` for the common values of one kind: True implies valid
    (False only means "run the exact test")."""
    low, high = _bound(prop.get("minimum")), _bound(prop.get("maximum"))
    above = _bound(prop.get("exclusiveMinimum"))
    match kind:
        case "integer" if low is not None and high is not None:
            shortcut, constants = "type(v) is int and L{i} <= v <= H{i}", {"L": low, "H": high}
            if "enum" in prop:
                shortcut += " and v in E{i}"
                constants["E"] = frozenset(prop["enum"])
        case "number" if low is not None and high is not None:
            # For an int or a float, `low <= v <= high` holds exactly when jsonschema finds v
            # neither below the minimum nor above the maximum (a NaN fails it and goes to T).
            shortcut = "(type(v) is float or type(v) is int) and L{i} <= v <= H{i}"
            constants = {"L": low, "H": high}
        case "string":
            shortest, longest = prop.get("minLength", 0), prop.get("maxLength")
            shortcut, constants = "type(v) is str", {}
            if shortest or longest is not None:
                shortcut += " and S{i} <= len(v) <= X{i}"
                constants = {"S": shortest, "X": float("inf") if longest is None else longest}
            if "enum" in prop:
                shortcut += " and v in E{i}"
                constants["E"] = frozenset(prop["enum"])
        case "boolean":
            return "v is True or v is False", {}
        case _:
            return None, {}
    if above is not None and kind in ("integer", "number"):
        shortcut = f"({shortcut}) and v > A{{i}}"
        constants["A"] = above
    return shortcut, constants


def _compile_kind(kind: str, prop: dict) -> Callable[[Any], bool]:
    match kind:
        case "integer" | "number":
            return _compile_number(kind, prop.get("minimum"), prop.get("maximum"),
                                   prop.get("exclusiveMinimum"), prop.get("enum"))
        case "string":
            return _compile_string(prop.get("minLength"), prop.get("maxLength"), prop.get("enum"))
        case "boolean":
            return lambda value: value is True or value is False
        case "array":
            return _compile_array(prop)
    raise _Unsupported


def _bound(value: Any) -> Any:
    if value is not None and type(value) not in _NUMBER_TYPES:
        raise _Unsupported
    return value


def _compile_number(kind: str, low: Any, high: Any, above: Any,
                    enum: list | None) -> Callable[[Any], bool]:
    """The exact test of an integer or number: jsonschema's type rule (bool is not a number,
    3.0 is an integer) and its comparisons, in its form (a NaN passes them as it does there).
    Anything but an exact int or float (numpy scalars, Decimal) is left to jsonschema."""
    low, high, above = _bound(low), _bound(high), _bound(above)
    if enum is not None:
        if kind != "integer" or not all(type(v) is int for v in enum):
            raise _Unsupported
        allowed = frozenset(enum)
        in_range = _compile_number(kind, low, high, above, None)
        # An exact int that is one of the choices (3.0 is left to jsonschema).
        return lambda value: type(value) is int and value in allowed and in_range(value)
    integer = kind == "integer"

    def test(value: Any) -> bool:
        kind_of = type(value)
        if kind_of is float:
            if integer and not value.is_integer():
                return False
        elif kind_of is not int:
            return False
        if low is not None and value < low:
            return False
        if high is not None and value > high:
            return False
        return above is None or not value <= above

    return test


def _compile_string(shortest: Any, longest: Any, enum: list | None) -> Callable[[Any], bool]:
    if enum is not None and not all(type(v) is str for v in enum):
        raise _Unsupported
    allowed = None if enum is None else frozenset(enum)
    shortest = 0 if shortest is None else shortest
    longest = float("inf") if longest is None else longest
    if type(shortest) is not int or type(longest) not in _NUMBER_TYPES:
        raise _Unsupported

    def test(value: Any) -> bool:
        return type(value) is str and shortest <= len(value) <= longest and \
            (allowed is None or value in allowed)

    return test


def _compile_array(prop: dict) -> Callable[[Any], bool]:
    fewest, most = prop.get("minItems", 0), prop.get("maxItems")
    if type(fewest) is not int or (most is not None and type(most) is not int):
        raise _Unsupported
    most = float("inf") if most is None else most
    items = prop.get("items")
    if items is None:
        return lambda value: type(value) is list and fewest <= len(value) <= most
    if not isinstance(items, dict) or set(items) - _IGNORED - _ITEM_KEYWORDS \
            or items.get("type") not in ("integer", "number"):
        raise _Unsupported
    low, high = _bound(items.get("minimum")), _bound(items.get("maximum"))
    item = _compile_number(items["type"], low, high, None, None)
    number = items["type"] == "number"
    if low is None or high is None:
        low, high = float("-inf"), float("inf")  # the shortcut below then defers to `item`

    def test(value: Any) -> bool:
        if type(value) is not list or not fewest <= len(value) <= most:
            return False
        for each in value:
            kind_of = type(each)
            # Shortcut: an int (or, for numbers, a float) inside the bounds.
            if (kind_of is int or (number and kind_of is float)) and low <= each <= high:
                continue
            if not item(each):
                return False
        return True

    return test


def compile_defaults(schema: dict) -> Callable[[dict], dict]:
    """`with_defaults(schema, ·)` generated as one function: the same dict (keys in the same
    order, defaults copied, floats given for integers made int) with the per-property work
    decided once."""
    namespace: dict[str, Any] = {"MISSING": _MISSING, "deepcopy": copy.deepcopy}
    lines = ["def fill(args):", "    out = dict(args)"]
    for i, (name, prop) in enumerate(schema.get("properties", {}).items()):
        integer = prop.get("type") == "integer"
        integer_items = isinstance(prop.get("items"), dict) and \
            prop["items"].get("type") == "integer"
        if "default" not in prop and not integer and not integer_items:
            continue
        namespace[f"N{i}"] = name
        lines.append(f"    v = out.get(N{i}, MISSING)")
        if "default" in prop:
            default = _as_declared(prop, copy.deepcopy(prop["default"]))
            namespace[f"D{i}"] = default
            if default is None or type(default) in (int, float, str, bool):
                fresh = f"D{i}"
            elif type(default) is list and all(type(v) in (int, float, str, bool)
                                               for v in default):
                fresh = f"list(D{i})"
            else:
                fresh = f"deepcopy(D{i})"
            lines += ["    if v is MISSING:", f"        out[N{i}] = {fresh}"]
        else:
            lines += ["    if v is MISSING:", "        pass"]
        branch = "elif"
        # _as_declared, inline
        if integer:
            lines += [f"    {branch} isinstance(v, float):", f"        out[N{i}] = int(v)"]
        if integer_items:
            lines += [f"    {branch} isinstance(v, list):",
                      f"        out[N{i}] = [int(x) if isinstance(x, float) else x for x in v]"]
    lines.append("    return out")
    exec("\n".join(lines), namespace)  # noqa: S102  (source built above from the schema's shape)
    fill: Callable[[dict], dict] = namespace["fill"]
    return fill


def _as_declared(prop: dict, value: Any) -> Any:
    # JSON Schema accepts 3.0 as an integer; the tools get a real int.
    kinds = prop.get("type")
    if kinds == "integer" and isinstance(value, float):
        return int(value)
    if isinstance(value, list) and prop.get("items", {}).get("type") == "integer":
        return [int(v) if isinstance(v, float) else v for v in value]
    return value
