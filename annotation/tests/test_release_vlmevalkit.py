"""VLMEvalKit dataset TSVs (MMReason and the like): whole samples, the quirks, the bad files."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from annotation.models import Domain, Sample
from annotation.tests import release_files
from annotation.tests.release_files import b64_image, image_bytes, write_tsv

pytestmark = pytest.mark.django_db

COLUMNS = ["index", "image", "question", "hint", "A", "B", "C", "D", "answer", "category", "l2-category", "split"]


def run_import(*paths: Path, **kwargs: object) -> tuple[str, str]:
    return release_files.run_import(*paths, slug="vlm", **kwargs)


def import_errors(*paths: Path, **kwargs: object) -> str:
    return release_files.import_errors(*paths, slug="vlm", **kwargs)


def row(index: int, **overrides: object) -> dict:
    base = {
        "index": index, "image": b64_image(shade=index), "question": f"Which shape is largest in picture {index}?",
        "hint": "", "A": "circle", "B": "square", "C": "", "D": "nan", "answer": "A",
        "category": "shapes", "l2-category": "Perception", "split": "dev",
    }  # fmt: skip
    base.update(overrides)
    return base


def test_a_tsv_imports_whole_samples_with_shared_images(tmp_path: Path) -> None:
    path = write_tsv(tmp_path / "MMTiny.tsv", COLUMNS, [
        row(10, hint="Look at the edges."),
        row(11, image="10", question="Which is smallest?", answer="B", split="test"),  # shares row 10's image
        row(12, A="", B="", answer="42", category="arithmetic", **{"l2-category": "Reasoning"}),
    ])  # fmt: skip
    out, _ = run_import(path)
    assert "3 created" in out
    a = Sample.objects.select_related("category__domain").get(uid="10")
    assert (a.options, a.answer, a.answer_type, a.split) == ({"A": "circle", "B": "square"}, "A", "choice", "dev")
    assert (a.category.name, a.category.domain.name) == ("shapes", "Perception")
    assert a.meta == {"hint": "Look at the edges."} and a.source == "MMTiny.tsv"
    b = Sample.objects.get(uid="11")
    assert b.image_sha256 == a.image_sha256 and b.split == "test"
    with b.image.open("rb") as handle:
        assert handle.read() == image_bytes(shade=10)
    c = Sample.objects.get(uid="12")
    assert (c.options, c.answer_type, c.answer) == (None, "number", "42")
    assert "Perception: 2\n    shapes: 2\n  Reasoning: 1\n    arithmetic: 1" in out


def test_without_a_split_column_every_sample_is_test_so_no_answer_is_published(tmp_path: Path) -> None:
    # Dev answers are public (docs/security.md): a release that does not say its split must not hand them out.
    columns = [c for c in COLUMNS if c != "split"]
    rows = [{k: v for k, v in row(i).items() if k != "split"} for i in (1, 2)]
    run_import(write_tsv(tmp_path / "MMNoSplit.tsv", columns, rows))
    assert sorted(Sample.objects.values_list("uid", "split")) == [("1", "test"), ("2", "test")]


def test_an_answer_written_as_a_lowercase_letter_in_brackets_is_that_option(tmp_path: Path) -> None:
    path = write_tsv(tmp_path / "ds.tsv", COLUMNS, [row(1, answer="(b)"), row(2, answer="b."), row(3, answer="(A)")])
    out, _ = run_import(path)
    assert "3 created" in out
    assert sorted(Sample.objects.values_list("uid", "answer", "answer_type")) == [
        ("1", "B", "choice"), ("2", "B", "choice"), ("3", "A", "choice")]


def test_mmreason_disciplines_are_one_level_and_domain_of_groups_them(tmp_path: Path) -> None:
    columns = ["index", "image", "question", "answer", "discipline"]
    rows = [
        {"index": 1, "image": b64_image(), "question": "q1", "answer": "3", "discipline": "Math"},
        {"index": 2, "image": b64_image(), "question": "q2", "answer": "x", "discipline": "Social Sciences"},
        {"index": 3, "image": b64_image(), "question": "q3", "answer": "y", "discipline": "social-sciences"},
    ]
    out, _ = run_import(write_tsv(tmp_path / "MMReason.tsv", columns, rows))
    assert "All: 3\n    Math: 1\n    Social Sciences: 2" in out
    Sample.objects.all().delete()
    Domain.objects.all().delete()
    out, _ = run_import(write_tsv(tmp_path / "MMReason.tsv", columns, rows),
                        domain_of=["Math=STEM", "social sciences=Humanities"])
    assert "STEM: 1\n    Math: 1\n  Humanities: 2\n    Social Sciences: 2" in out


def test_image_path_instead_of_base64(tmp_path: Path) -> None:
    (tmp_path / "imgs").mkdir()
    (tmp_path / "imgs" / "a.jpg").write_bytes(image_bytes("WEBP"))  # a .jpg that is a WebP
    columns = ["index", "image_path", "question", "answer", "category"]
    out, _ = run_import(write_tsv(tmp_path / "ds.tsv", columns,
                                  [{"index": 1, "image_path": "imgs/a.jpg", "question": "q", "answer": "a", "category": "c"}]))
    assert Sample.objects.get(uid="1").image.name.endswith(".webp")


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        pytest.param({"image": "99"},
                     "row 2 of ds.tsv, field 'image': '99' is short, so it names another row's index, but no row",
                     id="dangling-reference"),
        pytest.param({"image": "!" * 80}, "row 2 of ds.tsv, field 'image': the base64 image is not base64", id="bad-base64"),
        pytest.param({"image": "aGVsbG8gd29ybGQgaGVsbG8gd29ybGQgaGVsbG8gd29ybGQgaGVsbG8gd29ybGQgaGVsbG8gd29ybGQ="},
                     "field 'image': the base64 image is not an image or video", id="not-an-image"),
        pytest.param({"answer": "E"}, "row 2 of ds.tsv, field 'answer': 'E' is not one of the option letters A, B", id="answer"),
        pytest.param({"question": ""}, "row 2 of ds.tsv, field 'question': missing (required)", id="question"),
        pytest.param({"image": "['" + "a" * 80},
                     "row 2 of ds.tsv, field 'image': starts like a list but is not one", id="broken-list"),
    ],
)
def test_bad_rows_are_named(tmp_path: Path, overrides: dict, expected: str) -> None:
    path = write_tsv(tmp_path / "ds.tsv", COLUMNS, [row(1), row(2, **overrides)])
    assert expected in import_errors(path)


def test_a_tsv_without_the_columns_is_named(tmp_path: Path) -> None:
    path = write_tsv(tmp_path / "ds.tsv", ["index", "question", "image"], [{"index": 1, "question": "q", "image": "x"}])
    assert "ds.tsv: a TSV without VLMEvalKit's columns (missing answer" in import_errors(path, format="vlmevalkit")


def test_more_than_fifty_bad_rows_are_capped(tmp_path: Path) -> None:
    rows = [row(i, image="9999") for i in range(30)] + [row(100 + i, question="") for i in range(30)]
    message = import_errors(write_tsv(tmp_path / "ds.tsv", COLUMNS, rows))
    assert message.count("field 'image'") == 30 and message.count("field 'question'") == 20
    assert "more errors were not listed" in message


def test_round_trip_ours_to_vlmevalkit_tsv_and_back(tmp_path: Path) -> None:
    from annotation.services import annotation_payload_from_db
    from annotation.tests.test_export_vlmevalkit import build

    build(tmp_path)
    call_command("export_benchmark", "built", str(tmp_path / "b.tsv"), "--format", "vlmevalkit", stdout=StringIO())
    run_import(tmp_path / "b_MCQ.tsv", tmp_path / "b_OpenEnded.tsv")

    def state(slug: str) -> dict:
        out = {}
        for s in Sample.objects.filter(benchmark__slug=slug).select_related("category__domain"):
            if s.uid == "v6":  # a video goes out as its frames (VLMEvalKit has no video): compared below
                continue
            ann = annotation_payload_from_db(s.annotations.get())
            out[s.uid] = (s.question, s.options, s.answer, s.answer_type, s.tolerance, s.split, s.aux_line, s.source,
                          s.meta, s.category.slug, s.category.domain.slug, s.image_sha256, ann)  # fmt: skip
        return out

    assert state("vlm") == state("built")
    video = Sample.objects.get(benchmark__slug="vlm", uid="v6")
    assert video.media.count() > 1  # the video's sampled frames, as several images


def test_a_release_import_counts_its_rows_in_the_progress_bar(tmp_path: Path) -> None:
    from io import StringIO

    err = StringIO()
    path = write_tsv(tmp_path / "ds.tsv", COLUMNS, [row(1), row(2)])
    call_command("import_benchmark", str(path), slug="vlm", stdout=StringIO(), stderr=err)
    assert "validating: 100%" in err.getvalue() and "2/2 [" in err.getvalue() and "rows" in err.getvalue()


def test_several_datasets_at_once_get_prefixed_uids(tmp_path: Path) -> None:
    columns = ["index", "image", "question", "answer", "category"]
    one = write_tsv(tmp_path / "ChartQA_TEST.tsv", columns,
                    [{"index": 1, "image": b64_image(), "question": "q", "answer": "3", "category": "bars"}])
    two = write_tsv(tmp_path / "OCRBench.tsv", columns,
                    [{"index": 1, "image": b64_image(), "question": "q", "answer": "x", "category": "text"}])
    out, _ = run_import(one, two)
    assert sorted(Sample.objects.values_list("uid", flat=True)) == ["ChartQA_TEST:1", "OCRBench:1"]
    assert "ChartQA_TEST: 1\n    bars: 1\n  OCRBench: 1\n    text: 1" in out


def test_an_mmreason_tsv_marks_the_benchmark_mmreason_shaped_and_others_not(tmp_path: Path) -> None:
    from annotation.models import Benchmark

    columns = ["index", "image", "question", "answer", "discipline"]
    run_import(write_tsv(tmp_path / "MMReason.tsv", columns, [
        {"index": 1, "image": b64_image(), "question": "q1", "answer": "3", "discipline": "Math"}]))
    assert Benchmark.objects.get(slug="vlm").figures == ["mmreason"]  # its step score is labelled MMReason's
    release_files.run_import(write_tsv(tmp_path / "MMTiny.tsv", COLUMNS, [row(1)]), slug="other")
    assert Benchmark.objects.get(slug="other").figures == []
