"""The string encodings releases use for options, boxes, key steps and transforms (plain Python)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from annotation.releases.encoded import Unreadable, load_structure, parse_boxes, parse_key_steps, parse_options, parse_transform

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ('{"A": "red", "B": "blue"}', {"A": "red", "B": "blue"}),
        ("{'a': 'red', 'b': 'blue'}", {"A": "red", "B": "blue"}),
        ('["red", "blue", ""]', {"A": "red", "B": "blue"}),
        ("['A. red', 'B. blue']", {"A": "red", "B": "blue"}),
        ("A. red B. blue C. green", {"A": "red", "B": "blue", "C": "green"}),
        ("A) red\nB) blue", {"A": "red", "B": "blue"}),
        ("(A) red (B) blue", {"A": "red", "B": "blue"}),
        ("A: 3.5 B: 4", {"A": "3.5", "B": "4"}),
        ("", None),
        (float("nan"), None),
        ("[]", None),
    ],
)
def test_options_variants(value: object, expected: dict | None) -> None:
    assert parse_options(value) == expected


@pytest.mark.parametrize("value", ["red or blue", "B. blue A. red", "{'A': 'red', ", "[1, ", "{'AB': 'x'}"])
def test_options_that_cannot_be_read(value: str) -> None:
    with pytest.raises(Unreadable):
        parse_options(value)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("[1, 2, 3, 4]", [[1, 2, 3, 4]]),
        ("[[1, 2, 3, 4], [5, 6, 7, 8.5]]", [[1, 2, 3, 4], [5, 6, 7, 8.5]]),
        ("(1, 2, 3, 4)", [[1, 2, 3, 4]]),
        ("1, 2, 3, 4", [[1, 2, 3, 4]]),
        ('{"x1": 1, "y1": 2, "x2": 3, "y2": 4}', [[1, 2, 3, 4]]),
        ("[]", []),
        ("", []),
        (None, []),
    ],
)
def test_box_variants(value: object, expected: list) -> None:
    assert parse_boxes(value) == expected


@pytest.mark.parametrize("value", ["[1, 2, 3]", "somewhere left", "[[1, 2], [3, 4]]", "1, 2, 3"])
def test_boxes_that_cannot_be_read(value: str) -> None:
    with pytest.raises(Unreadable):
        parse_boxes(value)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ('["Find it.", "Read it."]', ["Find it.", "Read it."]),
        ("['1. Find it.', '2. Read it.']", ["Find it.", "Read it."]),
        ("1. Find it.\n2. Read it.", ["Find it.", "Read it."]),
        ("Step 1: Find it.\nStep 2: Read it.", ["Find it.", "Read it."]),
        ("- Find it.\n- Read it.", ["Find it.", "Read it."]),
        ("1. Find it. 2. Read it.", ["Find it.", "Read it."]),
        ('[{"step": 1, "text": "Find it."}]', ["Find it."]),
        ("Just look.", ["Just look."]),
        ("", []),
    ],
)
def test_key_step_variants(value: object, expected: list) -> None:
    assert parse_key_steps(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ('[{"op": "rotate", "angle": 90}]', [{"op": "rotate", "angle": 90}]),
        ("{'op': 'flip', 'direction': 'vertical'}", [{"op": "flip", "direction": "vertical"}]),
        ("rotate 90", [{"op": "rotate", "angle": 90}]),
        ("rotation_180", [{"op": "rotate", "angle": 180}]),
        ("270°", [{"op": "rotate", "angle": 270}]),
        ("rotate 90 clockwise", [{"op": "rotate", "angle": -90}]),
        ("horizontal_flip", [{"op": "flip", "direction": "horizontal"}]),
        ("vflip", [{"op": "flip", "direction": "vertical"}]),
        ("contrast 1.8", [{"op": "contrast", "alpha": 1.8}]),
        ("brightness -40", [{"op": "brightness", "beta": -40}]),
        ("gamma 0.5", [{"op": "gamma", "gamma": 0.5}]),
        ("rotate 90; contrast 1.5", [{"op": "rotate", "angle": 90}, {"op": "contrast", "alpha": 1.5}]),
        ("none", []),
        ("", []),
        ("low light", None),  # a label that cannot be mapped: kept in meta by the reader
        ("rotate 90, heavy blur", None),
    ],
)
def test_transform_variants(value: object, expected: list | None) -> None:
    assert parse_transform(value) == expected


def test_curly_quotes_are_repaired_and_said() -> None:
    assert load_structure("[\u201cCrop\u201d, \u201cFlip\u201d]", repair_quotes=True) == (["Crop", "Flip"], True)
    assert load_structure('["Crop"]', repair_quotes=True) == (["Crop"], False)
    with pytest.raises(Unreadable):
        load_structure("[\u201cCrop\u201d]")


def test_a_python_literal_is_never_evaluated() -> None:
    with pytest.raises(Unreadable):
        load_structure("__import__('os').system('echo owned')")


def test_the_readers_import_no_django() -> None:
    probe = (
        "import sys\n"
        "import annotation.releases, annotation.releases.adaptmmbench, annotation.releases.vlmevalkit\n"
        "import annotation.releases.vtcbench, annotation.releases.agentx, annotation.taxonomy\n"
        "apps = {'django', 'rest_framework', 'celery', 'evaluation', 'leaderboard', 'config'}\n"
        "print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in apps or m == 'annotation.models')))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""
