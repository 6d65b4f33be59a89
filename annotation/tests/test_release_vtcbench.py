"""VTC-Bench's two TSVs with images by path: whole samples, name-only chains, curly quotes, the
files' differences, the paper's tiers by --domain-of."""

from __future__ import annotations

from pathlib import Path

import pytest

from annotation.models import Domain, Sample
from annotation.tests import release_files
from annotation.tests.release_files import image_bytes, write_tsv

pytestmark = pytest.mark.django_db

PLAIN_COLUMNS = ["index", "id", "category", "image", "question", "answer", "A", "B", "C", "D"]
GT_COLUMNS = PLAIN_COLUMNS + ["model_tools_gt"]
TIERS = ["ocr=Perception", "perceptual=Perception", "attention=Perception", "measure=Estimation", "color=Estimation",
         "counting=Estimation", "chart=Reasoning", "math=Reasoning", "spatial=Reasoning"]  # fmt: skip


def run_import(*paths: Path, **kwargs: object) -> tuple[str, str]:
    return release_files.run_import(*paths, slug="vtc", **kwargs)


def import_errors(*paths: Path, **kwargs: object) -> str:
    return release_files.import_errors(*paths, slug="vtc", **kwargs)


def vtc_row(index: int, uid: str, category: str, **overrides: object) -> dict:
    row = {
        "index": index, "id": uid, "category": category, "image": f"images/{category}/{uid}.jpg",
        "question": f"What does the sign in {uid} say?", "answer": "A", "A": "stop", "B": "go", "C": "", "D": "",
        "model_tools_gt": '["Rotate", "Zoom in", "Histogram Eq"]',
    }  # fmt: skip
    row.update(overrides)
    return row


def write_repo(tmp_path: Path, gt_rows: list[dict], plain_rows: list[dict] | None = None) -> Path:
    """The repository's layout: data/*.tsv, images under data/images/<task>/<id>.jpg."""
    data = tmp_path / "repo" / "data"
    for row in gt_rows + (plain_rows or []):
        path = data / row["image"]
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            path.write_bytes(image_bytes("PNG" if row["id"].endswith("p") else "JPEG", shade=len(row["id"])))
    write_tsv(data / "VTC-Bench_GTToolChain.tsv", GT_COLUMNS, gt_rows)
    if plain_rows is not None:
        write_tsv(data / "VTC-Bench.tsv", PLAIN_COLUMNS, plain_rows)
    return tmp_path / "repo"


def test_the_gt_file_imports_whole_samples_with_name_only_chains(tmp_path: Path) -> None:
    repo = write_repo(tmp_path, [
        vtc_row(7, "ocr_001", "ocr"),
        vtc_row(3, "math_002p", "math", answer="12.5", A="", B="", model_tools_gt='["Draw Line", "Measure Area"]'),
        vtc_row(5, "count_003", "counting", answer="\u4e09", A="", B="", model_tools_gt="[]"),
    ])  # fmt: skip
    out, _ = run_import(repo / "data" / "VTC-Bench_GTToolChain.tsv")
    assert "3 created" in out
    ocr = Sample.objects.select_related("category__domain").get(uid="ocr_001")
    assert (ocr.options, ocr.answer, ocr.answer_type, ocr.split) == ({"A": "stop", "B": "go"}, "A", "choice", "test")
    assert ocr.meta["index"] == "7" and ocr.category.name == "ocr" and ocr.category.domain.name == "All"
    chain = [c.as_dict() for c in ocr.annotations.get().tool_calls.all()]
    assert [c["tool"] for c in chain] == ["rotate", "zoom_in", "histogram_eq"]  # display names through the aliases
    assert all("args" not in c for c in chain), chain  # names only: counted, never run
    math = Sample.objects.get(uid="math_002p")
    assert (math.answer, math.answer_type, math.options) == ("12.5", "number", None)
    assert math.image.name.endswith(".png")  # a .jpg that is a PNG, stored as what it is
    count = Sample.objects.get(uid="count_003")
    assert (count.answer, count.answer_type) == ("\u4e09", "text") and not count.annotations.get().tool_calls.exists()


def test_the_repository_folder_and_the_papers_tiers(tmp_path: Path) -> None:
    repo = write_repo(tmp_path, [vtc_row(1, "a", "ocr"), vtc_row(2, "b", "measure"), vtc_row(3, "c", "chart"),
                                 vtc_row(4, "d", "spatial")])
    out, _ = run_import(repo, domain_of=TIERS)
    assert "Perception: 1\n    ocr: 1\n  Estimation: 1\n    measure: 1\n  Reasoning: 2\n    chart: 1\n    spatial: 1" in out
    assert set(Domain.objects.values_list("name", flat=True)) == {"Perception", "Estimation", "Reasoning"}


def test_curly_quotes_are_repaired_with_a_warning(tmp_path: Path) -> None:
    repo = write_repo(tmp_path, [
        vtc_row(1, "a", "ocr", model_tools_gt="[\u201cCrop\u201d, \u201cFlip\u201d]"),
        vtc_row(2, "b", "ocr", model_tools_gt="[\u2018Binarize\u2019]"),
        vtc_row(3, "c", "ocr"),
    ])  # fmt: skip
    _, err = run_import(repo / "data" / "VTC-Bench_GTToolChain.tsv")
    assert "2 model_tools_gt list(s) in VTC-Bench_GTToolChain.tsv used curly quotes and were repaired (rows 1, 2)" in err
    tools = [c.tool for c in Sample.objects.get(uid="a").annotations.get().tool_calls.all()]
    assert tools == ["crop", "flip"]


def test_both_files_report_their_differences_and_the_gt_file_is_used(tmp_path: Path) -> None:
    gt = [vtc_row(1, "a", "ocr", answer="B"), vtc_row(2, "b", "ocr"), vtc_row(3, "only_gt", "ocr")]
    plain = [vtc_row(1, "a", "ocr", answer="A"), vtc_row(2, "b", "ocr", question="Another wording?"),
             vtc_row(4, "only_plain", "ocr")]
    repo = write_repo(tmp_path, gt, [{k: v for k, v in r.items() if k != "model_tools_gt"} for r in plain])
    _, err = run_import(repo / "data" / "VTC-Bench.tsv", repo / "data" / "VTC-Bench_GTToolChain.tsv")
    assert "importing VTC-Bench_GTToolChain.tsv (the file the authors' evaluation reads)" in err
    assert "1 id(s) only in VTC-Bench.tsv (not imported): only_plain" in err
    assert "1 id(s) only in VTC-Bench_GTToolChain.tsv: only_gt" in err
    assert "1 shared id(s) have a different answer in the two files: a" in err
    assert "1 shared id(s) have a different question in the two files: b" in err
    assert sorted(Sample.objects.values_list("uid", flat=True)) == ["a", "b", "only_gt"]
    assert Sample.objects.get(uid="a").answer == "B"


def test_the_plain_file_alone_imports_without_chains(tmp_path: Path) -> None:
    repo = write_repo(tmp_path, [], [{k: v for k, v in vtc_row(1, "a", "color").items() if k != "model_tools_gt"}])
    (repo / "data" / "VTC-Bench_GTToolChain.tsv").unlink()
    out, err = run_import(repo / "data" / "VTC-Bench.tsv")
    assert "1 created" in out and "has no model_tools_gt column" in err


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        pytest.param({"model_tools_gt": "[Crop, Flip"},
                     "row 2 of VTC-Bench_GTToolChain.tsv, field 'model_tools_gt': cannot read", id="chain"),
        pytest.param({"model_tools_gt": "[1, 2]"}, "field 'model_tools_gt': expected a list of tool names", id="chain-not-names"),
        pytest.param({"model_tools_gt": '["Teleport"]'},
                     "row 2 of VTC-Bench_GTToolChain.tsv, field 'toolchain[1]': unknown tool 'Teleport'", id="unknown-tool"),
        pytest.param({"image": "images/ocr/nowhere.jpg"}, "row 2 of VTC-Bench_GTToolChain.tsv, field 'image'", id="image"),
        pytest.param({"answer": "E"}, "field 'answer': 'E' is not one of the option letters A, B", id="answer"),
    ],
)
def test_bad_rows_are_named(tmp_path: Path, overrides: dict, expected: str) -> None:
    repo = write_repo(tmp_path, [vtc_row(1, "a", "ocr"), vtc_row(2, "b", "ocr")])
    tsv = repo / "data" / "VTC-Bench_GTToolChain.tsv"
    write_tsv(tsv, GT_COLUMNS, [vtc_row(1, "a", "ocr"), vtc_row(2, "b", "ocr", **overrides)])
    assert expected in import_errors(tsv)


def test_more_than_fifty_bad_rows_are_capped(tmp_path: Path) -> None:
    rows = ([vtc_row(i, f"r{i}", "ocr", model_tools_gt="[oops") for i in range(30)]
            + [vtc_row(100 + i, "", "ocr") for i in range(30)])
    repo = write_repo(tmp_path, [r for r in rows if r["id"]])
    tsv = repo / "data" / "VTC-Bench_GTToolChain.tsv"
    write_tsv(tsv, GT_COLUMNS, rows)
    message = import_errors(tsv)
    assert message.count("field 'model_tools_gt'") == 30 and message.count("field 'uid': missing") == 20
    assert "more errors were not listed" in message


def test_a_tsv_of_another_kind_names_the_formats(tmp_path: Path) -> None:
    path = write_tsv(tmp_path / "stuff.tsv", ["a", "b"], [{"a": 1, "b": 2}])
    assert "stuff.tsv: this is a TSV file; import it with --format vlmevalkit or vtcbench" in import_errors(path)
    assert "stuff.tsv: a TSV without VTC-Bench's columns (missing answer, category, id, image, question)" in import_errors(
        path, format="vtcbench"
    )


def test_images_elsewhere_are_found_with_images_dir(tmp_path: Path) -> None:
    repo = write_repo(tmp_path, [vtc_row(1, "a", "ocr")])
    (repo / "data" / "images").rename(tmp_path / "elsewhere")
    assert "row 1 of VTC-Bench_GTToolChain.tsv, field 'image'" in import_errors(repo / "data" / "VTC-Bench_GTToolChain.tsv")
    (tmp_path / "media").mkdir()
    (tmp_path / "elsewhere").rename(tmp_path / "media" / "images")
    out, _ = run_import(repo / "data" / "VTC-Bench_GTToolChain.tsv", images=tmp_path / "media")
    assert "1 created" in out


def test_a_gold_answer_spelled_nan_is_a_name_but_nan_and_none_are_empty(tmp_path: Path) -> None:
    """pandas, which the authors' code reads the TSV with, takes `nan`, `NaN`, `None` for empty, and `Nan`
    (a name: the city of Nan, a surname) for text."""
    for empty in ("nan", "NaN", "None"):
        repo = write_repo(tmp_path / empty, [vtc_row(1, "ocr_e", "ocr", answer=empty, A="", B="")])
        assert f"the cell reads {empty!r}, which is read as empty" in import_errors(
            repo / "data" / "VTC-Bench_GTToolChain.tsv")
    repo = write_repo(tmp_path, [vtc_row(1, "ocr_nan", "ocr", answer="Nan", A="", B="")])
    out, _ = run_import(repo / "data" / "VTC-Bench_GTToolChain.tsv")
    assert "1 created" in out
    assert Sample.objects.get(uid="ocr_nan").answer == "Nan"
