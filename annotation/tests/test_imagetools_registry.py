"""The registry's contents and the names models emit."""

from __future__ import annotations

import pytest

from annotation.imagetools import MODULES, REGISTRY, resolve_tool_name, validate_args

VTC_BY_MODULE = {
    "geometry": ["rotate", "crop", "resize", "flip", "translate", "pyramid"],
    "enhancement": ["convert_color", "adjust_brightness", "histogram_eq", "binarize", "morphology",
                    "blur", "denoise", "sharpen", "inpaint", "color_filter", "flood_fill"],
    "feature_extraction": ["edge_detect", "line_detect", "circle_detect", "gradients",
                           "template_match", "watershed", "grabcut", "connected_components",
                           "frequency_transform"],
    "drawing": ["draw_contours", "measure_area", "measure_perimeter", "approx_polygon",
                "draw_line", "draw_circle"],
}
ADAPT = ["zoom_in", "contrast", "brightness", "gamma", "draw_aux_line", "draw_bbox", "draw_text"]
MEASURING = {"color_filter", "flood_fill", "edge_detect", "line_detect", "circle_detect",
             "template_match", "watershed", "grabcut", "connected_components", "draw_contours",
             "measure_area", "measure_perimeter", "approx_polygon", "zoom_in", "draw_aux_line"}

VTC_DISPLAY_NAMES = {
    "Rotate": "rotate", "Crop": "crop", "Resize": "resize", "Flip": "flip",
    "Translate": "translate", "Image Pyramid": "pyramid", "Convert Color": "convert_color",
    "Adjust Brightness": "adjust_brightness", "Histogram Eq": "histogram_eq",
    "Binarize": "binarize", "Morphology": "morphology", "Blur": "blur", "Denoise": "denoise",
    "Sharpen": "sharpen", "Inpaint": "inpaint", "Color Filter": "color_filter",
    "Flood Fill": "flood_fill", "Edge Detect": "edge_detect", "Line Detect": "line_detect",
    "Circle Detect": "circle_detect", "Compute Gradients": "gradients",
    "Template Match": "template_match", "Watershed": "watershed", "GrabCut": "grabcut",
    "Connected Components": "connected_components", "Frequency Transform": "frequency_transform",
    "Draw Contours": "draw_contours", "Measure Area": "measure_area",
    "Measure Perimeter": "measure_perimeter", "Approximate Polygon": "approx_polygon",
    "Draw Line": "draw_line", "Draw Circle": "draw_circle",
}
VTC_FUNCTIONS = {
    "colorspace": "convert_color", "convertscaleabs": "adjust_brightness",
    "histogram": "histogram_eq", "threshold": "binarize", "inrange_color": "color_filter",
    "floodfill": "flood_fill", "canny": "edge_detect", "hough_lines": "line_detect",
    "hough_circles": "circle_detect", "gradients": "gradients",
    "connected_components_with_stats": "connected_components", "dft": "frequency_transform",
    "contours": "draw_contours", "contour_area": "measure_area", "arc_length": "measure_perimeter",
    "approx_poly": "approx_polygon", "zoom_in": "zoom_in",
}
MODEL_NAMES = {
    "image_zoom_in_tool": "zoom_in", "Zoom in": "zoom_in", "ZOOM-IN": "zoom_in",
    "  zoom_in ": "zoom_in", "crop_image": "crop", "Crop Image": "crop",
    "draw_auxiliary_line": "draw_aux_line", "draw_rectangle": "draw_bbox", "put_text": "draw_text",
    "adjust_gamma": "gamma", "adjust_contrast": "contrast",
}


def test_vtc_bench_has_its_32_operations_in_their_modules():
    for module, names in VTC_BY_MODULE.items():
        assert [n for n, t in REGISTRY.items() if t.module == module] == names
    assert sum(len(v) for v in VTC_BY_MODULE.values()) == 32
    assert [n for n, t in REGISTRY.items() if t.module == "adapt"] == ADAPT
    assert set(MODULES) == {t.module for t in REGISTRY.values()}


def test_measuring_tools_are_flagged():
    assert {n for n, t in REGISTRY.items() if t.measures} == MEASURING


@pytest.mark.parametrize(("given", "canonical"), [*VTC_DISPLAY_NAMES.items(),
                                                  *VTC_FUNCTIONS.items(), *MODEL_NAMES.items()])
def test_names_models_emit_resolve(given, canonical):
    assert resolve_tool_name(given) == canonical


def test_every_canonical_name_resolves_to_itself_and_nonsense_to_none():
    for name in REGISTRY:
        assert resolve_tool_name(name) == name
        assert resolve_tool_name(name.upper().replace("_", " ")) == name
    assert resolve_tool_name("teleport") is None
    assert resolve_tool_name(None) is None  # type: ignore[arg-type]


def test_validate_args_knows_aliases_and_suggests_for_typos():
    assert validate_args("Zoom in", {"bbox": [0, 0, 10, 10]}) == []
    assert validate_args("zoom_inn", {}) == ['unknown tool "zoom_inn"; did you mean "zoom_in"?']
    assert validate_args("teleport", {}) == ['unknown tool "teleport"']


def test_tools_are_described():
    for tool in REGISTRY.values():
        assert tool.description.endswith(".") and len(tool.description) < 220


def test_vtcbench_agent_names_resolve_and_their_calls_are_checked_by_our_schemas() -> None:
    from annotation.imagetools import REGISTRY, resolve_tool_name, validate_args
    from annotation.imagetools.agent_names import VTCBENCH_AGENT

    assert resolve_tool_name("opencv_crop") == "crop"
    assert resolve_tool_name("opencv_threshold") == "binarize"
    assert resolve_tool_name("opencv_colorspace_gray") == "convert_color"
    assert sum(len(a) for a in VTCBENCH_AGENT.values()) == 34  # of their 35: opencv_features has no tool here
    assert resolve_tool_name("opencv_features") is None
    assert "opencv_crop" in REGISTRY["crop"].aliases
    assert validate_args("opencv_crop", REGISTRY["crop"].example) == []
