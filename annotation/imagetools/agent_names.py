"""The names VTC-Bench's own agent gives our tools (its eval_config lists 35 `opencv_*` function names),
registered as aliases so a results file from their harness counts its calls against the right tool
(metrics.md section 14). Arguments are still checked against our schemas: a call is valid when they are.

`opencv_features` (keypoint detection: Harris, SIFT, ORB ...) has no tool here and stays unknown.
"""

from __future__ import annotations

from annotation.imagetools.registry import add_aliases

VTCBENCH_AGENT: dict[str, tuple[str, ...]] = {
    "approx_polygon": ("opencv_approx_poly",),
    "measure_perimeter": ("opencv_arc_length",),
    "blur": ("opencv_blur",),
    "edge_detect": ("opencv_canny",),
    "convert_color": ("opencv_colorspace_gray", "opencv_colorspace_hsv", "opencv_colorspace_lab"),
    "connected_components": ("opencv_connected_components_with_stats",),
    "measure_area": ("opencv_contour_area",),
    "draw_contours": ("opencv_contours",),
    "adjust_brightness": ("opencv_convertscaleabs",),
    "crop": ("opencv_crop",),
    "denoise": ("opencv_denoise",),
    "frequency_transform": ("opencv_dft",),
    "draw_circle": ("opencv_draw_circle",),
    "draw_line": ("opencv_draw_line",),
    "flip": ("opencv_flip",),
    "flood_fill": ("opencv_floodfill",),
    "grabcut": ("opencv_grabcut",),
    "gradients": ("opencv_gradients",),
    "histogram_eq": ("opencv_histogram",),
    "circle_detect": ("opencv_hough_circles",),
    "line_detect": ("opencv_hough_lines",),
    "inpaint": ("opencv_inpaint",),
    "color_filter": ("opencv_inrange_color",),
    "morphology": ("opencv_morphology",),
    "pyramid": ("opencv_pyramid",),
    "resize": ("opencv_resize",),
    "rotate": ("opencv_rotate",),
    "template_match": ("opencv_template_match",),
    "binarize": ("opencv_threshold",),
    "translate": ("opencv_translate",),
    "watershed": ("opencv_watershed",),
    "zoom_in": ("opencv_zoom_in",),
}

for _name, _aliases in VTCBENCH_AGENT.items():
    add_aliases(_name, *_aliases)
