"""The compiled fast path of argument validation gives exactly what the jsonschema path gives:
the same filled arguments (values and types) for a valid call, the same messages otherwise.
Randomised over every tool, with values chosen at and around each schema's edges."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from annotation.imagetools import REGISTRY, resolve_tool_name, validate_args
from annotation.imagetools.schema import (
    compile_arguments,
    compile_defaults,
    with_defaults,
)

TOOLS = sorted(REGISTRY)


def test_defaults_filled_as_with_defaults():
    for name in TOOLS:
        schema = REGISTRY[name].schema
        fill = compile_defaults(schema)
        for args in ({}, dict(REGISTRY[name].example),
                     dict.fromkeys(schema["properties"], 2.0),
                     {p: [1.0, 2, 3.0] for p in schema["properties"]}):
            filled, expected = fill(args), with_defaults(schema, args)
            assert _tagged(filled) == _tagged(expected)
            for key, value in filled.items():  # defaults are copies, never shared
                if isinstance(value, list) and key not in args:
                    assert value is not schema["properties"][key]["default"]


def _tagged(value):
    """A comparable form that tells 1 from 1.0 and True, and NaN from nothing."""
    if isinstance(value, dict):
        return ("dict", [(k, _tagged(v)) for k, v in value.items()])
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [_tagged(v) for v in value])
    if isinstance(value, float) and math.isnan(value):
        return ("float", "nan")
    return (type(value).__name__, value)


def _outcome(call):
    try:
        filled, errors = call()
    except Exception as error:  # noqa: BLE001  the paths must fail alike too
        return ("raised", type(error).__name__, str(error))
    return (_tagged(filled), [str(e) for e in errors])


def _values(prop: dict, rng: random.Random) -> list:
    out: list = [None, True, False, "", "abc", "Abc", {"nested": 1}, [], [1, 2], 0, -1, 1.5,
                 3.0, float("nan"), float("inf"), -float("inf"), np.int64(3), np.float32(2.0)]
    for key in ("minimum", "maximum", "exclusiveMinimum"):
        if key in prop:
            edge = prop[key]
            out += [edge, edge - 1, edge + 1, edge - 0.5, edge + 0.5, float(edge)]
    if "default" in prop:
        out.append(prop["default"])
    for choice in prop.get("enum", []):
        out += [choice]
        if isinstance(choice, str):
            out += [choice.upper(), choice.replace("_", "-").title(), f" {choice} "]
        else:
            out += [float(choice), choice + 1]
    if "maxLength" in prop:
        out += ["x" * prop["maxLength"], "x" * (prop["maxLength"] + 1), "red", " Red", "#00ff00",
                "#0f0", "chartreuse"]
    if "items" in prop:
        low = prop["items"].get("minimum", 0)
        high = prop["items"].get("maximum", 255)
        for size in (prop.get("minItems", 1) - 1, prop.get("minItems", 1),
                     prop.get("maxItems", 4), prop.get("maxItems", 4) + 1):
            for _ in range(3):
                pool = [low, high, low - 1, high + 1, 1.5, 2.0, True, "1", None,
                        rng.randint(int(low), int(min(high, 10_000))), float("nan")]
                out.append([rng.choice(pool) if rng.random() < 0.3 else
                            rng.randint(int(low), int(min(high, 10_000)))
                            for _ in range(max(0, size))])
        out += [(1, 2, 3, 4), [10, 20, 5, 40], [10.5, 20, 30.25, 40]]
    return out


def _random_args(name: str, rng: random.Random) -> dict:
    tool = REGISTRY[name]
    properties = tool.schema["properties"]
    args = dict(tool.example) if rng.random() < 0.6 else {}
    for prop, spec in properties.items():
        roll = rng.random()
        if roll < 0.35:
            args[prop] = rng.choice(_values(spec, rng))
        elif roll < 0.45:
            args.pop(prop, None)
    roll = rng.random()
    if roll < 0.05:
        args["bogus"] = 1
    elif roll < 0.10 and properties:  # camelCase spelling of an argument
        prop = rng.choice(list(properties))
        parts = prop.split("_")
        if len(parts) > 1 and prop in args:
            args[parts[0] + "".join(p.title() for p in parts[1:])] = args.pop(prop)
    elif roll < 0.20:  # Qwen's box, or VTC's x/y/width/height form
        box = [rng.randint(0, 300), rng.randint(0, 300)]
        box += [box[0] + rng.randint(-5, 200), box[1] + rng.randint(-5, 200)]
        args[rng.choice(["bbox_2d", "bbox"])] = box if rng.random() < 0.8 else box[:3]
    elif roll < 0.25:
        args.update(x=rng.randint(0, 100), y=rng.randint(0, 100), width=rng.randint(0, 50),
                    height=rng.choice([10, 0, "5", 2.0]))
    return args


@pytest.mark.parametrize("name", TOOLS)
def test_every_schema_compiles(name):
    assert compile_arguments(REGISTRY[name].schema) is not None
    assert REGISTRY[name]._fast is not None


@pytest.mark.parametrize("name", TOOLS)
def test_fast_path_agrees_with_jsonschema(name):
    rng = random.Random(name)
    tool = REGISTRY[name]
    valid = 0
    for _ in range(600):
        args = _random_args(name, rng)
        fast = _outcome(lambda args=args: tool.problems(args))
        slow = _outcome(lambda args=args: tool._problems(args))
        assert fast == slow, args
        valid += fast[0] != ("NoneType", None) and fast[0] != "raised"
    assert valid > 0  # the fast path was exercised on valid calls too


@pytest.mark.parametrize("name", TOOLS)
def test_example_takes_the_fast_path(name):
    tool = REGISTRY[name]
    ok = compile_arguments(tool.schema)
    example = tool.example
    if tool.normalize:
        example = tool.normalize(example)
    assert ok(example)
    assert tool.problems(tool.example) == tool._problems(tool.example)


def test_compiled_check_follows_jsonschema_types():
    ok = compile_arguments(REGISTRY["rotate"].schema)
    assert ok({"angle": 90}) and ok({"angle": 90.0}) and ok({"angle": -360})
    assert not ok({"angle": True}) and not ok({"angle": "90"}) and not ok({})
    assert not ok({"angle": 90, "bogus": 1}) and not ok({"angle": 90, 1: 2})
    zoom = compile_arguments(REGISTRY["zoom_in"].schema)
    assert zoom({"bbox": [1, 2, 3.5, 4]}) and not zoom({"bbox": [1, 2, 3]})
    assert not zoom({"bbox": (1, 2, 3, 4)}) and not zoom({"bbox": [1, 2, 3, True]})
    assert not zoom({"bbox": [1, 2, 3, 4], "scale": 0}) and zoom({"bbox": [1, 2, 3, 4], "scale": 8})
    assert validate_args("zoom_in", {"bbox": [1, 2, 3, 4], "scale": 0}) == [
        'argument "scale": 0 must be greater than 0']


def test_unsupported_schema_is_left_to_jsonschema():
    assert compile_arguments({"type": "object", "properties": {"a": {"type": "integer"}},
                              "additionalProperties": False, "anyOf": []}) is None
    assert compile_arguments({"type": "object", "properties": {"a": {"pattern": "x",
                                                                     "type": "string"}},
                              "additionalProperties": False}) is None


def test_resolve_tool_name_memo_matches():
    for spelling in ("Zoom in", "zoom-in", "ZOOM_IN", "nonsense", "zoom in", "Zoom in"):
        assert resolve_tool_name(spelling) == resolve_tool_name(spelling)
    assert resolve_tool_name("Zoom in") == "zoom_in"
    assert resolve_tool_name("nonsense") is None
    assert resolve_tool_name(None) is None and resolve_tool_name(["x"]) is None
