"""Declared tools (validated, never run), name-only reference chains, VTC-Bench's display names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from annotation import benchmark_fields as bf
from annotation.imagetools import resolve_tool_name
from annotation.models import Benchmark, ReferenceToolCall
from annotation.services import benchmark_export, benchmark_manifest
from annotation.tests.benchmark_files import sample_line, write_benchmark

# VTC-Bench's 32 operations as its paper names them (spec/tools.md), and the agent's "Zoom in",
# which its reference chains also use.
VTC_DISPLAY_NAMES = {
    "Rotate": "rotate", "Crop": "crop", "Resize": "resize", "Flip": "flip", "Translate": "translate",
    "Image Pyramid": "pyramid", "Convert Color": "convert_color", "Adjust Brightness": "adjust_brightness",
    "Histogram Eq": "histogram_eq", "Binarize": "binarize", "Morphology": "morphology", "Blur": "blur",
    "Denoise": "denoise", "Sharpen": "sharpen", "Inpaint": "inpaint", "Color Filter": "color_filter",
    "Flood Fill": "flood_fill", "Edge Detect": "edge_detect", "Line Detect": "line_detect",
    "Circle Detect": "circle_detect", "Compute Gradients": "gradients", "Template Match": "template_match",
    "Watershed": "watershed", "GrabCut": "grabcut", "Connected Components": "connected_components",
    "Frequency Transform": "frequency_transform", "Draw Contours": "draw_contours",
    "Measure Area": "measure_area", "Measure Perimeter": "measure_perimeter",
    "Approximate Polygon": "approx_polygon", "Draw Line": "draw_line", "Draw Circle": "draw_circle",
    "Zoom in": "zoom_in",
}  # fmt: skip

OCR = {
    "name": "OCR",
    "description": "Read the text in an image.",
    "args_schema": {
        "type": "object",
        "properties": {"image": {"type": "string"}, "lang": {"type": "string", "enum": ["en", "zh"]}},
        "required": ["image"],
        "additionalProperties": False,
    },
}
# An Agent-X toolmeta.json entry, in its own shape (inputs/outputs), written for this test.
CALCULATOR_TOOLMETA = {
    "name": "Calculator",
    "description": "Evaluate an arithmetic expression.",
    "inputs": [{"type": "text", "name": "expression", "description": "e.g. 2 * (3 + 4)", "optional": False},
               {"type": "int", "name": "digits", "description": "rounding", "optional": True}],
    "outputs": [{"type": "text", "name": "result", "description": "the value", "optional": False}],
}


def errors_of(value: object, registry: bf.ToolRegistryView | None = None) -> tuple[list | None, list[str]]:
    problems: list[str] = []
    chain = bf.parse_toolchain(value, registry or bf.default_registry_view(),
                               lambda field, message: problems.append(f"{field}: {message}"))
    return chain, problems


# ---- the registry's aliases ------------------------------------------------------------------


def test_every_vtc_display_name_resolves_ignoring_case_and_spaces() -> None:
    assert len(VTC_DISPLAY_NAMES) == 33
    for display, canonical in VTC_DISPLAY_NAMES.items():
        for spelling in (display, display.upper(), display.lower().replace(" ", ""), display.replace(" ", "_"),
                         f"  {display} "):
            assert resolve_tool_name(spelling) == canonical, spelling


# ---- name-only chains ------------------------------------------------------------------------


def test_a_chain_of_bare_names_becomes_name_only_calls() -> None:
    assert errors_of(["Crop", "Flip", "Resize"]) == ([{"tool": "crop"}, {"tool": "flip"}, {"tool": "resize"}], [])
    assert errors_of([{"tool": "Histogram Eq"}, {"tool": "zoom in"}]) == (
        [{"tool": "histogram_eq"}, {"tool": "zoom_in"}], [])


def test_a_name_only_chain_names_its_unknown_tool() -> None:
    chain, problems = errors_of(["Crop", "Teleport"])
    assert chain is None
    assert problems == ["toolchain[2]: unknown tool 'Teleport' (see GET /api/v1/tools/)"]


def test_a_bare_name_among_full_calls_is_refused_with_the_step() -> None:
    chain, problems = errors_of([{"tool": "rotate", "args": {"angle": 90}}, "Crop"])
    assert chain is None
    assert problems == ["toolchain[2]: expected an object with a 'tool' name (a chain of bare tool names is "
                        "fine, but then every entry must be one)"]


def test_a_call_with_arguments_is_still_a_full_call() -> None:
    # One call with args makes the chain runnable: the bare {"tool": "flip"} then runs with defaults.
    chain, problems = errors_of([{"tool": "rotate", "args": {"angle": 90}}, {"tool": "flip"}])
    assert problems == []
    assert chain == [{"tool": "rotate", "args": {"angle": 90}, "input": "img0", "output": "img1"},
                     {"tool": "flip", "args": {}, "input": "img1", "output": "img2"}]


# ---- declared tools in a chain ---------------------------------------------------------------


def declared_view() -> bf.ToolRegistryView:
    from annotation.declared_tools import declared_from_dicts

    return bf.default_registry_view(declared_from_dicts([OCR]))


def test_a_declared_tool_call_is_validated_against_its_schema() -> None:
    view = declared_view()
    chain, problems = errors_of([{"tool": "ocr", "args": {"image": "img0"}}], view)
    assert problems == []
    assert chain == [{"tool": "OCR", "args": {"image": "img0"}, "input": "img0", "output": "img1"}]
    _, problems = errors_of([{"tool": "OCR", "args": {"lang": "fr"}}], view)
    assert problems == ['toolchain[1].args: OCR: argument "image" is missing (it is required)']
    _, problems = errors_of([{"tool": "OCR", "args": {"image": "img0", "lang": "fr"}}], view)
    assert problems == ['toolchain[1].args: OCR: argument "lang": "fr" is not one of "en", "zh"']


def test_an_unknown_tool_message_lists_the_declared_ones() -> None:
    _, problems = errors_of([{"tool": "WebSearch", "args": {}}], declared_view())
    assert problems == ["toolchain[1].tool: unknown tool 'WebSearch': neither a registry tool (see GET "
                        "/api/v1/tools/) nor one this benchmark declares (OCR)"]


def test_registry_tools_still_run_beside_declared_ones() -> None:
    chain, problems = errors_of([{"tool": "Zoom in", "args": {"bbox": [0, 0, 5, 5]}}, {"tool": "OCR", "args": {"image": "img1"}}],
                                declared_view())
    assert problems == []
    assert [c["tool"] for c in chain] == ["zoom_in", "OCR"]


# ---- import: the manifest's tools, name-only chains stored and exported ----------------------


def write_manifest(folder: Path, tools: list) -> None:
    (folder / "benchmark.json").write_text(json.dumps({"name": "Declared", "tools": tools}), encoding="utf-8")


def import_errors(path: Path) -> str:
    with pytest.raises(CommandError) as excinfo:
        call_command("import_benchmark", str(path), slug="bad", no_progress=True)
    return str(excinfo.value)


@pytest.mark.django_db
def test_import_stores_declared_tools_and_a_chain_calling_them(tmp_path: Path) -> None:
    write_manifest(tmp_path, ["zoom_in", OCR, CALCULATOR_TOOLMETA])
    write_benchmark(tmp_path, [sample_line("a", toolchain=[
        {"tool": "zoom_in", "args": {"bbox": [10, 10, 60, 40]}},
        {"tool": "ocr", "args": {"image": "img1"}},
        {"tool": "calculator", "args": {"expression": "2 + 3"}, "input": "img1"},
    ])])
    call_command("import_benchmark", str(tmp_path), slug="decl", no_progress=True)
    benchmark = Benchmark.objects.get(slug="decl")
    assert benchmark.tools == ["zoom_in"]
    assert [t["name"] for t in benchmark.declared_tools] == ["OCR", "Calculator"]
    calc = benchmark.declared_tools[1]["args_schema"]
    assert calc["required"] == ["expression"]
    assert calc["properties"]["digits"]["type"] == "integer"
    calls = list(ReferenceToolCall.objects.order_by("position").values_list("tool", "input_ref", "output_ref"))
    assert calls == [("zoom_in", "img0", "img1"), ("OCR", "img1", "img2"), ("Calculator", "img1", "img3")]
    # The export's manifest gives the declarations back, so the file imports again as it was.
    assert benchmark_manifest(benchmark)["tools"] == ["zoom_in", *benchmark.declared_tools]
    benchmark_export(benchmark=benchmark, out=tmp_path / "out")
    call_command("import_benchmark", str(tmp_path / "out"), slug="again", no_progress=True)
    again = Benchmark.objects.get(slug="again")
    assert (again.tools, again.declared_tools) == (benchmark.tools, benchmark.declared_tools)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("tools", "toolchain", "expected"),
    [
        pytest.param(["zoom_in", OCR], [{"tool": "OCR", "args": {"image": "img0", "img": "img0"}}],
                     "line 1, field 'toolchain[1].args': OCR: argument \"img\" is unknown; this tool accepts: image, lang",
                     id="declared-call-bad-argument"),
        pytest.param([CALCULATOR_TOOLMETA], [{"tool": "Calculator", "args": {"digits": 2}}],
                     "line 1, field 'toolchain[1].args': Calculator: argument \"expression\" is missing (it is required)",
                     id="toolmeta-call-missing-argument"),
        pytest.param([{"name": "OCR", "args_schema": {"type": "object", "properties": {"x": {"type": "nonsense"}}}}], None,
                     "benchmark.json, field 'tools[1].args_schema': not a valid JSON Schema",
                     id="bad-schema"),
        pytest.param([{"name": "OCR", "args_schema": {"type": "array"}}], None,
                     "benchmark.json, field 'tools[1].args_schema': expected a JSON Schema of an object",
                     id="schema-not-an-object"),
        pytest.param([{"description": "no name"}], None,
                     "benchmark.json, field 'tools[1].name': expected a name of 1-64 letters",
                     id="declaration-without-name"),
        pytest.param([OCR, {**OCR, "name": "ocr"}], None,
                     "benchmark.json, field 'tools[2].name': 'ocr' is declared twice",
                     id="declared-twice"),
        pytest.param([CALCULATOR_TOOLMETA | {"inputs": [{"type": "text"}]}], None,
                     "benchmark.json, field 'tools[1].inputs[1]': expected an object with a 'name'",
                     id="toolmeta-input-without-name"),
        pytest.param(["WebSearch"], None,
                     "benchmark.json, field 'tools': unknown tool 'WebSearch' (see GET /api/v1/tools/); to declare a "
                     "tool the registry does not run, give an object {name, description, args_schema}",
                     id="unknown-string-tool"),
        pytest.param([7], None,
                     "benchmark.json, field 'tools[1]': expected a tool name or an object {name, description, args_schema}",
                     id="not-a-name-nor-object"),
    ],
)
def test_bad_declarations_and_calls_name_the_field(tmp_path: Path, tools: list, toolchain: list | None,
                                                   expected: str) -> None:
    write_manifest(tmp_path, tools)
    write_benchmark(tmp_path, [sample_line("a", toolchain=toolchain)])
    assert expected in import_errors(tmp_path)
    assert Benchmark.objects.count() == 0


@pytest.mark.django_db
def test_a_name_only_chain_is_stored_and_exported_as_names(tmp_path: Path) -> None:
    write_benchmark(tmp_path, [sample_line("a", toolchain=["Crop", "Flip", "Histogram Eq"])])
    call_command("import_benchmark", str(tmp_path), slug="vtc", no_progress=True)
    rows = list(ReferenceToolCall.objects.order_by("position"))
    assert [(r.tool, r.name_only, r.args) for r in rows] == [("crop", True, {}), ("flip", True, {}),
                                                             ("histogram_eq", True, {})]
    out = tmp_path / "out"
    call_command("export_benchmark", "vtc", str(out))
    line = json.loads((out / "benchmark.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert line["toolchain"] == [{"tool": "crop"}, {"tool": "flip"}, {"tool": "histogram_eq"}]
    # Importing the export again changes nothing.
    call_command("import_benchmark", str(out), slug="vtc", no_progress=True)
    assert [r.as_dict() for r in ReferenceToolCall.objects.order_by("position")] == line["toolchain"]


def test_the_published_line_schema_takes_a_name_only_chain_as_the_importer_does() -> None:
    import jsonschema

    schema = json.loads((Path(__file__).resolve().parents[2] / "docs" / "schemas" / "benchmark-line.schema.json").read_text())
    validator = jsonschema.Draft202012Validator(schema)
    for chain in (["Crop", "Flip"], [{"tool": "Crop"}, {"tool": "Flip"}]):
        line = sample_line("a", toolchain=chain)
        assert not list(validator.iter_errors(line))
        assert errors_of(chain) == ([{"tool": "crop"}, {"tool": "flip"}], [])
    assert list(validator.iter_errors(sample_line("a", toolchain=[""])))
    assert errors_of([""])[1] == ["toolchain[1]: expected a tool name, got an empty string"]
    assert errors_of([{"tool": 7}])[1] == ["toolchain[1]: expected a tool name, got a number"]


@pytest.mark.django_db
def test_the_tools_api_lists_a_benchmarks_declared_tools(tmp_path: Path) -> None:
    from rest_framework.test import APIClient

    write_manifest(tmp_path, ["zoom_in", OCR])
    write_benchmark(tmp_path, [sample_line("a", toolchain=None)])
    call_command("import_benchmark", str(tmp_path), slug="agentish", no_progress=True)
    plain = APIClient().get("/api/v1/tools/").json()
    rows = APIClient().get("/api/v1/tools/", {"benchmark": "agentish"}).json()
    assert rows[:len(plain)] == plain and len(rows) == len(plain) + 1
    assert rows[-1] == {"name": "OCR", "module": "declared", "description": "Read the text in an image.",
                        "measures": False, "aliases": [], "schema": OCR["args_schema"], "example": {}}
    assert APIClient().get("/api/v1/tools/", {"benchmark": "nope"}).status_code == 404
