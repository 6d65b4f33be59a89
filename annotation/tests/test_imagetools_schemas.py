"""Every tool's schema: valid JSON Schema, its example valid, and every kind of bad argument
refused with a message naming the argument."""

from __future__ import annotations

import pytest
from jsonschema import Draft202012Validator

from annotation.imagetools import REGISTRY, validate_args

TOOLS = sorted(REGISTRY)
PROPERTIES = [(name, prop) for name in TOOLS for prop in REGISTRY[name].schema["properties"]]
REQUIRED = [(name, arg) for name in TOOLS for arg in REGISTRY[name].schema.get("required", [])]


def _bounded(kind: str):
    for name, prop in PROPERTIES:
        schema = REGISTRY[name].schema["properties"][prop]
        if kind in schema or kind in schema.get("items", {}):
            yield name, prop


def _example_without(name: str, prop: str) -> dict:
    return {k: v for k, v in REGISTRY[name].example.items() if k != prop}


@pytest.mark.parametrize("name", TOOLS)
def test_schema_is_valid_json_schema_and_closed(name):
    schema = REGISTRY[name].schema
    Draft202012Validator.check_schema(schema)
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    for prop, spec in schema["properties"].items():
        assert spec.get("description"), f"{name}.{prop} has no description"
        if "default" in spec:
            assert not list(Draft202012Validator({**spec}).iter_errors(spec["default"])), prop


@pytest.mark.parametrize("name", TOOLS)
def test_example_is_valid(name):
    assert validate_args(name, REGISTRY[name].example) == []


@pytest.mark.parametrize("name", TOOLS)
def test_unknown_argument_is_named(name):
    errors = validate_args(name, {**REGISTRY[name].example, "bogus_arg": 1})
    assert errors and errors[0].startswith('argument "bogus_arg" is unknown')


@pytest.mark.parametrize(("name", "prop"), PROPERTIES)
def test_wrong_type_is_named(name, prop):
    errors = validate_args(name, {**_example_without(name, prop), prop: {"nested": 1}})
    assert any(e.startswith(f'argument "{prop}": expected ') for e in errors), errors


@pytest.mark.parametrize(("name", "prop"), [
    (n, p) for n, p in PROPERTIES
    if REGISTRY[n].schema["properties"][p]["type"] in ("number", "integer")])
def test_text_for_a_number_is_named(name, prop):
    errors = validate_args(name, {**_example_without(name, prop), prop: "abc"})
    kind = "an integer" if REGISTRY[name].schema["properties"][prop]["type"] == "integer" \
        else "a number"
    assert f'argument "{prop}": expected {kind}, got "abc"' in errors


@pytest.mark.parametrize(("name", "prop"), list(_bounded("minimum")))
def test_below_the_minimum_is_named(name, prop):
    spec = REGISTRY[name].schema["properties"][prop]
    value = [-10**7] * spec["minItems"] if spec["type"] == "array" or "items" in spec else (
        spec["minimum"] - 1)
    errors = validate_args(name, {**_example_without(name, prop), prop: value})
    assert any(e.startswith(f'argument "{prop}"') and "below the minimum" in e for e in errors), \
        errors


@pytest.mark.parametrize(("name", "prop"), list(_bounded("maximum")))
def test_above_the_maximum_is_named(name, prop):
    spec = REGISTRY[name].schema["properties"][prop]
    value = [10**9] * spec["minItems"] if spec["type"] == "array" or "items" in spec else (
        spec["maximum"] + 1)
    errors = validate_args(name, {**_example_without(name, prop), prop: value})
    assert any(e.startswith(f'argument "{prop}"') and "above the maximum" in e for e in errors), \
        errors


@pytest.mark.parametrize(("name", "prop"), [
    (n, p) for n, p in PROPERTIES if "enum" in REGISTRY[n].schema["properties"][p]])
def test_value_outside_the_choices_is_named(name, prop):
    errors = validate_args(name, {**_example_without(name, prop), prop: 9999})
    errors += validate_args(name, {**_example_without(name, prop), prop: "no_such_choice"})
    assert any(e.startswith(f'argument "{prop}"') for e in errors)
    assert len([e for e in errors if e.startswith(f'argument "{prop}"')]) == 2


@pytest.mark.parametrize(("name", "prop"), REQUIRED)
def test_missing_required_argument_is_named(name, prop):
    errors = validate_args(name, _example_without(name, prop))
    assert f'argument "{prop}" is missing (it is required)' in errors


def test_defaults_are_not_required():
    assert validate_args("binarize", {}) == []
    assert validate_args("histogram_eq", {"mode": "clahe"}) == []


def test_box_length_and_order():
    assert validate_args("zoom_in", {"bbox": [1, 2, 3]}) == [
        'argument "bbox": expected exactly 4 items, got 3']
    assert validate_args("zoom_in", {"bbox": [50, 0, 10, 10]}) == [
        'argument "bbox": x2 (10) must be greater than x1 (50)']
    assert validate_args("zoom_in", {"bbox": [0, "a", 10, 10]}) == [
        'argument "bbox": item 2: expected a number, got "a"']


def test_booleans_are_not_numbers_and_arguments_must_be_an_object():
    assert validate_args("rotate", {"angle": True}) == [
        'argument "angle": expected a number, got true']
    assert validate_args("rotate", [90]) == ["arguments must be a JSON object, got [90]"]


def test_lenient_spellings_models_use():
    assert validate_args("histogram_eq", {"mode": "CLAHE"}) == []
    assert validate_args("gradients", {"mode": "Sobel-X"}) == []
    assert validate_args("floodfill", {"x": 1, "y": 2, "loDiff": 5, "upDiff": 5,
                                       "newVal": [0, 0, 0]}) == []
    assert validate_args("line_detect", {"minLineLength": 10, "maxLineGap": 3}) == []
    assert validate_args("template_match", {"template": "img1",
                                            "method": "cv2.TM_CCOEFF_NORMED"}) == []
    assert validate_args("zoom_in", {"bbox_2d": [1, 2, 30, 40]}) == []
    assert validate_args("zoom_in", {"bbox": [1, 2, 30, 40], "bbox_2d": [1, 2, 30, 40]}) == [
        'argument "bbox_2d": give either "bbox" or "bbox_2d", not both']


def test_several_problems_are_all_reported_in_argument_order():
    errors = validate_args("morphology", {"op": "squash", "kernel_size": 99, "extra": 1})
    assert [e.split('"')[1] for e in errors] == ["op", "kernel_size", "extra"]
