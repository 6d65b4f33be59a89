"""Bad benchmark files: each error names the line and the field, and nothing is written."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Annotation, Benchmark, Sample
from annotation.tests.benchmark_files import sample_line, write_benchmark

pytestmark = pytest.mark.django_db


def import_errors(path: Path) -> str:
    with pytest.raises(CommandError) as excinfo:
        call_command("import_benchmark", str(path), slug="bad", no_progress=True)
    return str(excinfo.value)


def assert_nothing_written() -> None:
    assert Benchmark.objects.count() == 0
    assert Sample.objects.count() == 0
    assert Annotation.objects.count() == 0


def good(uid: str) -> dict:
    return sample_line(uid)


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        pytest.param(
            [good("a"), '{"uid": "b", "image": "images/b.png",', good("c")],
            "line 2: not valid JSON: Expecting property name enclosed in double quotes",
            id="broken-json",
        ),
        pytest.param(
            [good("a"), {k: v for k, v in good("b").items() if k != "question"}],
            "line 2, field 'question': missing (required)",
            id="missing-field",
        ),
        pytest.param(
            # The image is 80x120; after the 90-degree rotation the frame is 120x80.
            [sample_line("a", regions=[[10, 10, 100, 90]])],
            "line 1, field 'regions[1]': [10, 10, 100, 90] lies outside the image (120x80 after the transform)",
            id="region-outside-image",
        ),
        pytest.param(
            [sample_line("a", regions=[[50, 10, 20, 40]])],
            "line 1, field 'regions[1]': [50, 10, 20, 40] is empty or inverted",
            id="region-inverted",
        ),
        pytest.param(
            [good("a"), good("b"), good("a")],
            "line 3, field 'uid': duplicate uid 'a': already used on line 1",
            id="duplicate-uid",
        ),
        pytest.param(
            [sample_line("a", options={"A": "two", "b2": "three"}, answer="A", answer_type="choice")],
            "line 1, field 'options': bad option letter 'b2': expected a single capital letter A-Z",
            id="bad-option-letter",
        ),
        pytest.param(
            [sample_line("a", options={"A": "two", "B": "three"}, answer="D", answer_type="choice")],
            "line 1, field 'answer': 'D' is not one of the option letters A, B",
            id="answer-not-an-option",
        ),
        pytest.param(
            [sample_line("a", toolchain=[{"tool": "magic_wand", "args": {}, "input": "img0", "output": "img1"}])],
            "line 1, field 'toolchain[1].tool': unknown tool 'magic_wand'",
            id="unknown-tool",
        ),
        pytest.param(
            [sample_line("a", toolchain=[{"tool": "rotate", "args": {"angle": 90}, "input": "img7", "output": "img1"}])],
            "line 1, field 'toolchain[1].input': 'img7' is not img0 or the output of an earlier call",
            id="dangling-reference",
        ),
        pytest.param(
            [sample_line("a", split="train")],
            "line 1, field 'split': expected 'dev' or 'test', got 'train'",
            id="bad-split",
        ),
        pytest.param(
            [sample_line("a", answer="many", answer_type="number")],
            "line 1, field 'answer': 'many' is not a number but answer_type is 'number'",
            id="number-answer-not-a-number",
        ),
        pytest.param(
            [sample_line("a", tolerance=-1)],
            "line 1, field 'tolerance': expected null or a non-negative number",
            id="negative-tolerance",
        ),
        pytest.param(
            [good("a"), "[1, 2, 3]"],
            "line 2: expected a JSON object, got a list",
            id="not-an-object",
        ),
    ],
)
def test_bad_benchmark_file_is_rejected_whole_with_line_and_field(tmp_path: Path, lines: list, expected: str) -> None:
    path = write_benchmark(tmp_path, lines)
    message = import_errors(path)
    assert "Nothing was imported" in message
    assert expected in message
    assert_nothing_written()


def test_missing_image_is_named(tmp_path: Path) -> None:
    path = write_benchmark(tmp_path, [good("a"), good("b")])
    (tmp_path / "images" / "b.png").unlink()
    message = import_errors(path)
    assert "1 of 2 samples have media not found (the first: line 2, field 'image': image file 'images/b.png' not found" in message
    assert_nothing_written()


def test_image_that_is_not_an_image_is_named(tmp_path: Path) -> None:
    path = write_benchmark(tmp_path, [good("a")])
    (tmp_path / "images" / "a.png").write_bytes(b"this is not a png")
    assert "line 1, field 'image': 'images/a.png' is not a readable image" in import_errors(path)


def test_tool_arguments_are_checked_against_the_registry(tmp_path: Path) -> None:
    chain = [{"tool": "zoom_in", "args": {"bbox": "everything"}, "input": "img0", "output": "img1"}]
    path = write_benchmark(tmp_path, [sample_line("a", toolchain=chain)])
    message = import_errors(path)
    assert "line 1, field 'toolchain[1].args': zoom_in:" in message
    assert "bbox" in message


def test_errors_are_capped_at_fifty_and_say_so(tmp_path: Path) -> None:
    path = write_benchmark(tmp_path, [sample_line(f"s{i}", split="train") for i in range(70)])
    message = import_errors(path)
    assert message.count("field 'split'") == 50
    assert "more errors were not listed" in message


def test_a_bad_reimport_leaves_the_previous_import_untouched(tmp_path: Path) -> None:
    first = write_benchmark(tmp_path / "v1", [good("a"), good("b")])
    call_command("import_benchmark", str(first), slug="bench", no_progress=True)
    second = write_benchmark(tmp_path / "v2", [sample_line("a", answer="4"), sample_line("b", split="nowhere")])
    with pytest.raises(CommandError):
        call_command("import_benchmark", str(second), slug="bench", no_progress=True)
    assert Sample.objects.get(uid="a").answer == "3"
    assert Sample.objects.count() == 2


def test_regions_after_a_free_angle_rotation_use_the_runners_canvas(tmp_path: Path) -> None:
    # An 80x120 image rotated by 30 degrees: the runner's canvas is ceil(80cos30 + 120sin30) = 130
    # wide and ceil(80sin30 + 120cos30) = 144 high, so a box reaching x = 130 fits and x = 131 does not.
    fits = sample_line("a", transform=[{"op": "rotate", "angle": 30}], regions=[[0, 0, 130, 144]])
    call_command("import_benchmark", str(write_benchmark(tmp_path / "ok", [fits])), slug="ok", no_progress=True)
    too_wide = sample_line("a", transform=[{"op": "rotate", "angle": 30}], regions=[[0, 0, 131, 144]])
    message = import_errors(write_benchmark(tmp_path / "bad", [too_wide]))
    assert "lies outside the image (130x144 after the transform)" in message
