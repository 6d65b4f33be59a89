"""AdaptMMBench's parquet release: the whole sample comes through, and each quirk of releases.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from annotation.models import Benchmark, Domain, Sample
from annotation.tests import release_files
from annotation.tests.release_files import adapt_row, image_bytes, write_adapt_parquet

pytestmark = pytest.mark.django_db


def run_import(*paths: Path, **kwargs: object) -> tuple[str, str]:
    return release_files.run_import(*paths, slug="adapt", **kwargs)


def import_errors(*paths: Path, **kwargs: object) -> str:
    return release_files.import_errors(*paths, slug="adapt", **kwargs)


def sample(uid: str) -> Sample:
    return Sample.objects.select_related("category__domain").get(uid=uid)


def approved(uid: str) -> dict:
    from annotation.services import annotation_payload_from_db

    return annotation_payload_from_db(sample(uid).annotations.get())


def test_five_parquet_files_in_a_folder_import_whole_samples(tmp_path: Path) -> None:
    write_adapt_parquet(tmp_path / "AdaptMMBench_ocr.parquet", [adapt_row(
        "ocr-1", transform="rotate 90", bbox="[[5, 5, 40, 30], [10, 40, 50, 70]]",
        key_step="1. Rotate the chart upright.\n2. Read the bar.",
    )])  # fmt: skip
    write_adapt_parquet(tmp_path / "AdaptMMBench_realworld.parquet", [adapt_row(
        "rw-1", domain=None, category="counting", options="['two', 'three', 'four']", answer="three",
        transform='[{"op": "flip", "direction": "vertical"}]', bbox="(1, 2, 30, 40)",
        key_step="['Count the cups.']",
    )])  # fmt: skip
    write_adapt_parquet(tmp_path / "AdaptMMBench_math.parquet", [adapt_row(
        "m-1", domain="Math", category="geometry", options="A. 30 degrees B. 45 degrees C. 60 degrees", answer="C",
        transform="contrast 1.8", bbox="", key_step="1. Find the angle. 2. Compare it.",
    )])  # fmt: skip
    write_adapt_parquet(tmp_path / "AdaptMMBench_gui.parquet",
                        [adapt_row("g-1", domain="GUI", category="web", options=None, answer="Submit")])
    write_adapt_parquet(tmp_path / "AdaptMMBench_knowledge.parquet", [adapt_row(
        "k-1", domain="knowledge", category="physics", options="{'a': 'up', 'b': 'down'}", answer="b", transform="low light",
    )])  # fmt: skip
    out, err = run_import(tmp_path)
    assert "5 created" in out
    # realworld came from the file name; the domains are the file's own words.
    assert set(Domain.objects.values_list("name", flat=True)) == {"ocr", "realworld", "Math", "GUI", "knowledge"}

    ocr = sample("ocr-1")
    assert (ocr.question, ocr.options, ocr.answer, ocr.answer_type) == (
        "What colour is the box in ocr-1?", {"A": "red", "B": "blue"}, "B", "choice",
    )
    assert (ocr.width, ocr.height, ocr.split, ocr.source) == (80, 60, "test", "AdaptMMBench")
    assert ocr.meta["textproblem"] == "Text-only variant of ocr-1" and ocr.meta["type_label"] == "1"
    assert ocr.meta["textoptions"] == "A. red B. blue" and ocr.meta["transform_label"] == "rotate 90"
    with ocr.image.open("rb") as handle:
        assert handle.read() == image_bytes(shade=5)
    assert approved("ocr-1") == {
        "transform": [{"op": "rotate", "angle": 90}],
        "regions": [[5, 5, 40, 30], [10, 40, 50, 70]],  # in the 60x80 frame after the rotation
        "key_steps": [("Rotate the chart upright.", "human", True), ("Read the bar.", "human", True)],
        "toolchain": [],
    }
    rw = sample("rw-1")
    assert rw.options == {"A": "two", "B": "three", "C": "four"} and rw.answer == "B"  # answer given as option text
    assert approved("rw-1")["transform"] == [{"op": "flip", "direction": "vertical"}]
    assert approved("rw-1")["regions"] == [[1, 2, 30, 40]]
    m = sample("m-1")
    assert m.options == {"A": "30 degrees", "B": "45 degrees", "C": "60 degrees"}
    assert approved("m-1")["transform"] == [{"op": "contrast", "alpha": 1.8}]
    assert [s[0] for s in approved("m-1")["key_steps"]] == ["Find the angle.", "Compare it."]
    g = sample("g-1")
    assert (g.options, g.answer_type, g.answer) == (None, "text", "Submit")
    k = sample("k-1")
    assert (k.options, k.answer) == ({"A": "up", "B": "down"}, "B")
    # The unmapped label: imported without E, raw text kept, named in a warning.
    assert approved("k-1")["transform"] == [] and k.meta["transform_label"] == "low light"
    assert "1 sample(s) have a transform label that could not be mapped" in err and "k-1" in err


def test_several_parquet_paths_at_once(tmp_path: Path) -> None:
    a = write_adapt_parquet(tmp_path / "AdaptMMBench_ocr.parquet", [adapt_row("a")])
    b = write_adapt_parquet(tmp_path / "AdaptMMBench_gui.parquet", [adapt_row("b", domain="gui", category="web")])
    out, _ = run_import(a, b)
    assert "2 created" in out and "ocr: 1" in out and "gui: 1" in out


def test_an_image_struct_with_a_path_only_and_a_jpg_that_is_a_png(tmp_path: Path) -> None:
    (tmp_path / "imgs").mkdir()
    (tmp_path / "imgs" / "p.jpg").write_bytes(image_bytes("PNG"))  # a .jpg that is really a PNG
    (tmp_path / "imgs" / "w.jpg").write_bytes(image_bytes("WEBP"))  # and one that is a WebP
    rows = [adapt_row("p", image={"bytes": None, "path": "imgs/p.jpg"}),
            adapt_row("w", image={"bytes": image_bytes("WEBP"), "path": "w.jpg"})]
    out, _ = run_import(write_adapt_parquet(tmp_path / "AdaptMMBench_ocr.parquet", rows))
    assert sample("p").image.name.endswith(".png") and sample("w").image.name.endswith(".webp")


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        pytest.param({"options": "{'A': 'red', "},
                     "row 2 of AdaptMMBench_ocr.parquet, field 'options': cannot read", id="options"),
        pytest.param({"options": "red or blue"},
                     "field 'options': cannot read 'red or blue': expected options as", id="options-text"),
        pytest.param({"bbox": "[1, 2, 3]"},
                     "row 2 of AdaptMMBench_ocr.parquet, field 'bbox': cannot read '[1, 2, 3]'", id="bbox"),
        pytest.param({"key_step": "[1, 2]"}, "field 'key_step': cannot read '[1, 2]': a step that is not text", id="key_step"),
        pytest.param({"transform": "[{'op': 'rotate', "}, "field 'transform': cannot read", id="transform"),
        pytest.param({"image": {"bytes": b"not an image", "path": "x.png"}},
                     "field 'image': the image bytes of x.png: not an image or video", id="image-bytes"),
        pytest.param({"image": {"bytes": None, "path": "missing.png"}},
                     "row 2 of AdaptMMBench_ocr.parquet, field 'image': image file 'missing.png' not found under",
                     id="image-path"),
        pytest.param({"bbox": "[50, 5, 40, 30]"},
                     "row 2 of AdaptMMBench_ocr.parquet, field 'regions[1]': [50, 5, 40, 30] is empty or inverted",
                     id="validator"),
        pytest.param({"answer": "C"},
                     "row 2 of AdaptMMBench_ocr.parquet, field 'answer': 'C' is not one of the option letters A, B",
                     id="answer"),
    ],
)
def test_what_cannot_be_read_is_named_by_row_and_field(tmp_path: Path, overrides: dict, expected: str) -> None:
    path = write_adapt_parquet(tmp_path / "AdaptMMBench_ocr.parquet", [adapt_row("ok"), adapt_row("bad", **overrides)])
    assert expected in import_errors(path)


def test_more_than_fifty_bad_rows_are_capped(tmp_path: Path) -> None:
    rows = [{**adapt_row(f"r{i}"), "uid": None} for i in range(60)] + [adapt_row(f"b{i}", bbox="[1]") for i in range(60)]
    message = import_errors(write_adapt_parquet(tmp_path / "AdaptMMBench_ocr.parquet", rows))
    assert message.count("field 'uid': missing (required)") == 50
    assert "row 50 of AdaptMMBench_ocr.parquet, field 'uid'" in message
    assert "more errors were not listed" in message


def test_a_parquet_without_the_columns_is_named(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"x": [1]}), tmp_path / "other.parquet")
    message = import_errors(tmp_path / "other.parquet")
    assert "other.parquet: a parquet file without AdaptMMBench's columns (missing answer, image, question, uid" in message
    assert Benchmark.objects.count() == 0


def test_a_damaged_parquet_is_named(tmp_path: Path) -> None:
    (tmp_path / "AdaptMMBench_ocr.parquet").write_bytes(b"PAR1" + b"\x00garbage" * 10)
    assert "AdaptMMBench_ocr.parquet is not a readable parquet file" in import_errors(tmp_path / "AdaptMMBench_ocr.parquet")
