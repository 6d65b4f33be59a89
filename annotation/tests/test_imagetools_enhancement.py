"""Enhancement tools on images whose answer is known."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from annotation.imagetools import ToolArgumentError

from .imagetools_helpers import call, canvas


def test_convert_color_values():
    blue = canvas(10, 10, (255, 0, 0))  # BGR
    assert call("convert_color", blue, space="gray").image.shape == (10, 10)
    assert int(call("convert_color", blue, space="gray").image[0, 0]) == 29  # 0.114 * 255
    red = canvas(10, 10, (0, 0, 255))
    assert tuple(call("convert_color", red, space="hsv").image[0, 0]) == (0, 255, 255)
    assert call("convert_color", canvas(4, 4, 255), space="lab").image[0, 0, 0] == 255
    gray = np.full((5, 5), 77, np.uint8)
    assert call("convert_color", gray, space="hsv").image.shape == (5, 5, 3)


def test_adjust_brightness_is_convert_scale_abs():
    out = call("adjust_brightness", canvas(4, 4, 50), alpha=2, beta=10).image
    assert int(out[0, 0, 0]) == 110
    assert int(call("adjust_brightness", canvas(4, 4, 200), alpha=2, beta=0).image[0, 0, 0]) == 255


@pytest.mark.parametrize(("mode", "gain"), [("equalize", 3), ("clahe", 2)])
def test_histogram_equalisation_stretches_a_low_contrast_image(mode, gain):
    rng = np.random.default_rng(0)
    image = rng.integers(100, 121, (120, 160), dtype=np.uint8)
    out = call("histogram_eq", image, mode=mode).image
    assert out.std() > gain * image.std()
    colour = cv2.merge([image, image, image])
    out3 = call("histogram_eq", colour, mode=mode).image
    assert out3.shape == colour.shape and out3.std() > gain * colour.std()


def test_clahe_clip_limit_bounds_the_stretch():
    rng = np.random.default_rng(0)
    image = rng.integers(100, 121, (120, 160), dtype=np.uint8)
    gentle = call("histogram_eq", image, mode="clahe", clip_limit=1.0).image
    strong = call("histogram_eq", image, mode="clahe", clip_limit=8.0).image
    assert image.std() < gentle.std() < strong.std()


def _bimodal() -> np.ndarray:
    rng = np.random.default_rng(1)
    image = np.full((100, 100), 60, np.int16)
    image[20:80, 20:80] = 190
    return np.clip(image + rng.normal(0, 12, image.shape), 0, 255).astype(np.uint8)


def test_otsu_gives_two_values_and_finds_the_square():
    out = call("binarize", _bimodal(), mode="otsu")
    assert set(np.unique(out.image).tolist()) == {0, 255}
    assert 60 < out.measurements["threshold"] < 190
    assert out.image[50, 50] == 255 and out.image[5, 5] == 0
    assert abs(np.count_nonzero(out.image) - 3600) < 40


def test_fixed_threshold_and_invert():
    ramp = np.tile(np.arange(256, dtype=np.uint8), (4, 1))
    out = call("binarize", ramp, mode="binary", threshold_value=100).image
    assert out[0, 100] == 0 and out[0, 101] == 255
    inv = call("binarize", ramp, mode="binary", threshold_value=100, invert=True).image
    assert inv[0, 100] == 255 and inv[0, 101] == 0


@pytest.mark.parametrize("mode", ["adaptive_mean", "adaptive_gaussian"])
def test_adaptive_threshold_reads_text_under_uneven_light(mode):
    light = np.tile(np.linspace(60, 250, 300), (100, 1)).astype(np.uint8)
    image = light.copy()
    image[40:60, 20:280:20] = (light[40:60, 20:280:20] * 0.5).astype(np.uint8)  # dark strokes
    out = call("binarize", image, mode=mode, block_size=15, c=5, invert=True).image
    assert set(np.unique(out).tolist()) <= {0, 255}
    assert out[50, 20:280:20].min() == 255          # every stroke found, dark and bright side
    assert np.count_nonzero(out[:30]) == 0          # plain background stays background


def test_even_block_size_is_refused():
    with pytest.raises(ToolArgumentError, match='argument "block_size": must be odd'):
        call("binarize", canvas(), mode="adaptive_mean", block_size=10)


def _dot() -> np.ndarray:
    image = np.zeros((21, 21), np.uint8)
    image[10, 10] = 255
    return image


def test_morphology_operations():
    assert np.count_nonzero(call("morphology", _dot(), op="dilate", kernel_size=3).image) == 9
    assert np.count_nonzero(call("morphology", _dot(), op="dilate", kernel_size=3,
                                 iterations=2).image) == 25
    block = np.zeros((21, 21), np.uint8)
    block[5:10, 5:10] = 255
    assert np.count_nonzero(call("morphology", block, op="erode", kernel_size=3).image) == 9
    speck = block.copy()
    speck[15, 15] = 255
    opened = call("morphology", speck, op="open", kernel_size=3).image
    assert opened[15, 15] == 0 and np.count_nonzero(opened) == 25
    holed = block.copy()
    holed[7, 7] = 0
    assert call("morphology", holed, op="close", kernel_size=3).image[7, 7] == 255
    cross = call("morphology", _dot(), op="dilate", kernel_size=3, kernel_shape="cross").image
    assert np.count_nonzero(cross) == 5


def test_blur_methods():
    impulse = np.zeros((9, 9), np.uint8)
    impulse[4, 4] = 90
    average = call("blur", impulse, method="average", ksize=3).image
    assert int(average[3, 3]) == 10 and int(average[4, 4]) == 10
    assert call("blur", impulse, method="median", ksize=3).image.max() == 0
    gaussian = call("blur", impulse, method="gaussian", ksize=5).image
    assert 0 < gaussian[4, 4] < 90 and gaussian[4, 6] > 0
    rng = np.random.default_rng(2)
    noisy = np.clip(128 + rng.normal(0, 20, (60, 60, 3)), 0, 255).astype(np.uint8)
    assert call("blur", noisy, method="bilateral", ksize=9).image.std() < noisy.std() * 0.7


def test_even_kernel_is_refused():
    with pytest.raises(ToolArgumentError, match='argument "ksize": must be odd, got 4'):
        call("blur", canvas(), ksize=4)


def test_denoise_flattens_noise():
    rng = np.random.default_rng(4)
    noisy = np.clip(128 + rng.normal(0, 20, (64, 64, 3)), 0, 255).astype(np.uint8)
    out = call("denoise", noisy, h=20).image
    assert out.std() < noisy.std() / 2.5
    gray = noisy[:, :, 0].copy()
    assert call("denoise", gray, h=20).image.std() < gray.std() / 2.5


def test_sharpen_steepens_an_edge_and_leaves_flat_areas():
    edge = np.zeros((20, 40), np.uint8)
    edge[:, 20:] = 200
    soft = cv2.GaussianBlur(edge, (0, 0), 2)
    out = call("sharpen", soft, amount=1.5, sigma=2).image
    assert np.abs(np.diff(out[10].astype(int))).max() > np.abs(np.diff(soft[10].astype(int))).max()
    assert out[10, 2] == soft[10, 2] and out[10, 38] == soft[10, 38]


def test_inpaint_by_colour_removes_a_scribble():
    image = canvas(80, 60, (128, 128, 128))
    cv2.line(image, (10, 30), (70, 30), (0, 0, 255), 3)  # red in BGR
    out = call("inpaint", image, color="red", tolerance=20)
    assert out.measurements["repaired_pixels"] == int(np.count_nonzero(image[:, :, 2] == 255))
    assert np.abs(out.image.astype(int) - 128).max() < 10


def test_inpaint_by_box():
    image = canvas(80, 60, (128, 128, 128))
    image[20:30, 30:40] = 255
    out = call("inpaint", image, bbox=[30, 20, 40, 30]).image
    assert np.abs(out.astype(int) - 128).max() < 10


def test_inpaint_needs_exactly_one_area():
    with pytest.raises(ToolArgumentError, match='argument "bbox"'):
        call("inpaint", canvas())
    with pytest.raises(ToolArgumentError, match='argument "bbox"'):
        call("inpaint", canvas(), bbox=[0, 0, 5, 5], color="red")


def _swatches() -> np.ndarray:
    image = canvas(90, 30, (255, 255, 255))
    image[:, 0:30] = (0, 0, 255)    # red
    image[:, 30:60] = (0, 255, 0)   # green
    image[:, 60:90] = (255, 0, 0)   # blue
    return image


def test_color_filter_hsv_finds_exactly_the_green_swatch():
    out = call("color_filter", _swatches(), colorspace="hsv", lower=[50, 100, 100],
               upper=[70, 255, 255])
    assert out.measurements["pixels"] == 900
    assert out.image[:, 30:60].min() == 255 and np.count_nonzero(out.image[:, :30]) == 0


def test_color_filter_hue_wraps_around_red_and_rgb_bounds():
    out = call("color_filter", _swatches(), lower=[170, 100, 100], upper=[10, 255, 255])
    assert out.measurements["pixels"] == 900 and out.image[0, 0] == 255
    rgb = call("color_filter", _swatches(), colorspace="rgb", lower=[0, 0, 200],
               upper=[50, 50, 255], output="masked")
    assert rgb.measurements["pixels"] == 900
    assert tuple(rgb.image[0, 70]) == (255, 0, 0) and tuple(rgb.image[0, 0]) == (0, 0, 0)


def test_color_filter_bounds_are_checked():
    with pytest.raises(ToolArgumentError, match='argument "upper": item 2'):
        call("color_filter", canvas(), lower=[0, 200, 0], upper=[10, 100, 255])
    with pytest.raises(ToolArgumentError, match='argument "lower": item 1: hue 200'):
        call("color_filter", canvas(), lower=[200, 0, 0], upper=[10, 255, 255])


def test_flood_fill_fills_exactly_the_enclosed_area():
    image = canvas(100, 80, (255, 255, 255))
    cv2.rectangle(image, (20, 10), (70, 50), (0, 0, 0), 1)  # 1-pixel black frame
    out = call("flood_fill", image, x=40, y=30, new_val=[0, 0, 255])
    assert out.measurements["area"] == 49 * 39
    assert out.measurements["bbox"] == [21, 11, 70, 50]
    assert tuple(out.image[30, 40]) == (255, 0, 0)  # BGR of RGB blue
    assert tuple(out.image[5, 5]) == (255, 255, 255)


def test_flood_fill_seed_outside_the_image():
    with pytest.raises(ToolArgumentError, match='argument "x": 500 is outside the image width 200'):
        call("flood_fill", canvas(), x=500, y=0)


@pytest.mark.parametrize("mode", ["clahe", "equalize"])
@pytest.mark.parametrize(("height", "width", "tiles"), [(1, 1, 8), (7, 13, 8), (99, 301, 5),
                                                        (480, 640, 8), (257, 129, 64)])
def test_equalize_in_place_is_the_plain_ycrcb_round_trip(mode, height, width, tiles):
    from annotation.imagetools.enhancement import equalize

    rng = np.random.default_rng(height * width)
    image = cv2.GaussianBlur(rng.integers(0, 256, (height, width, 3), dtype=np.uint8), (0, 0), 2)
    before = image.copy()
    apply = cv2.createCLAHE(clipLimit=2.0, tileGridSize=(tiles, tiles)).apply \
        if mode == "clahe" else cv2.equalizeHist
    ycc = cv2.cvtColor(image, cv2.COLOR_BGR2YCrCb)
    cv2.insertChannel(apply(cv2.extractChannel(ycc, 0)), ycc, 0)
    expected = cv2.cvtColor(ycc, cv2.COLOR_YCrCb2BGR)
    assert np.array_equal(equalize(image, mode, 2.0, tiles), expected)
    assert np.array_equal(image, before)  # the input is left alone
