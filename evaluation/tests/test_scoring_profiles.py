"""A benchmark's scoring profile end to end (metrics.md section 13): set by the release's reader,
by the manifest or by `import_benchmark --scoring`; changed by staff in the admin, which re-scores
the submissions and records the profile and a new scorer version in every result.
The rules themselves: evaluation/tests/test_metrics_profiles.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError

from annotation.benchmark_format import SCORING_PROFILES
from annotation.models import Benchmark, ScoringProfile
from annotation.tests import release_files
from annotation.tests.benchmark_files import sample_line, write_benchmark
from annotation.tests.release_files import b64_image, write_tsv
from annotation.tests.test_release_vtcbench import vtc_row, write_repo
from evaluation import services
from evaluation.metrics import PROFILES
from evaluation.models import PredictionResult
from evaluation.reports import scorer_version
from evaluation.tests.submission_helpers import jsonl, upload

pytestmark = pytest.mark.django_db


def test_the_profile_names_agree_everywhere() -> None:
    assert tuple(PROFILES) == tuple(SCORING_PROFILES) == tuple(ScoringProfile.values)


def test_each_release_reader_sets_its_authors_profile_and_scoring_overrides_it(tmp_path: Path) -> None:
    repo = write_repo(tmp_path, [vtc_row(1, "ocr_001", "ocr")])
    out, _ = release_files.run_import(repo / "data" / "VTC-Bench_GTToolChain.tsv", slug="vtc")
    assert Benchmark.objects.get(slug="vtc").scoring == "vtcbench" and "Scoring profile: vtcbench" in out
    release_files.run_import(repo / "data" / "VTC-Bench_GTToolChain.tsv", slug="vtc2", scoring="generic")
    assert Benchmark.objects.get(slug="vtc2").scoring == "generic"

    columns = ["index", "image", "question", "answer", "A", "B"]
    tsv = write_tsv(tmp_path / "MMTiny.tsv", columns,
                    [{"index": 1, "image": b64_image(), "question": "q", "answer": "A", "A": "x", "B": "y"}])
    release_files.run_import(tsv, slug="vlm")
    assert Benchmark.objects.get(slug="vlm").scoring == "vlmevalkit"
    mmr = write_tsv(tmp_path / "MMReason.tsv", ["index", "image", "question", "answer", "discipline"],
                    [{"index": 1, "image": b64_image(), "question": "q", "answer": "3", "discipline": "Math"}])
    release_files.run_import(mmr, slug="mmr")
    assert Benchmark.objects.get(slug="mmr").scoring == "mmreason"


def test_the_manifest_declares_a_profile_and_a_reimport_without_one_keeps_it(tmp_path: Path) -> None:
    path = write_benchmark(tmp_path / "a", [sample_line("s1")], manifest={"name": "A", "scoring": "vlmevalkit"})
    release_files.run_import(path, slug="a")
    assert Benchmark.objects.get(slug="a").scoring == "vlmevalkit"
    path = write_benchmark(tmp_path / "b", [sample_line("s1")], manifest={"name": "A"})
    release_files.run_import(path, slug="a")
    assert Benchmark.objects.get(slug="a").scoring == "vlmevalkit"
    bad = write_benchmark(tmp_path / "c", [sample_line("s1")], manifest={"name": "A", "scoring": "paper"})
    with pytest.raises(CommandError, match="unknown scoring profile 'paper'"):
        release_files.run_import(bad, slug="c")


def _admin_form_data(response: Any) -> dict[str, Any]:
    """What the admin's change form would post back unchanged (the form and its inlines)."""
    forms = [response.context["adminform"].form]
    for inline in response.context["inline_admin_formsets"]:
        forms += [inline.formset.management_form, *inline.formset.forms]
    data: dict[str, Any] = {}
    for form in forms:
        for bound in form:
            value = bound.value()
            if value is None or value is False:
                continue
            data[bound.html_name] = "on" if value is True else value
    return data


def test_staff_change_the_profile_in_the_admin_and_every_result_is_rescored_by_it(
        tmp_path: Path, admin_client, django_capture_on_commit_callbacks) -> None:
    lines = [sample_line("s1", answer="1800", answer_type="text", regions=[], transform=[]),
             sample_line("s2", answer="Paris", answer_type="text", regions=[], transform=[])]
    release_files.run_import(write_benchmark(tmp_path, lines), slug="tiny")
    bench = Benchmark.objects.get(slug="tiny")
    owner = get_user_model().objects.create_user("ada", "ada@example.org", "pw")
    content = jsonl([{"sample_id": "s1", "mode": "text", "answer": "18007"},
                     {"sample_id": "s2", "mode": "text", "answer": "paris"}])
    with django_capture_on_commit_callbacks(execute=True):
        sub = services.submission_create(benchmark=bench, owner=owner, file=upload(content), model_name="m1")
    sub.refresh_from_db()
    assert sub.status == "done" and sub.results["scoring"] == "generic"
    assert sub.scorer_version == scorer_version("generic")
    assert not PredictionResult.objects.get(submission=sub, sample__uid="s1").correct  # 18007 is not 1800 here

    url = f"/admin/annotation/benchmark/{bench.pk}/change/"
    data = _admin_form_data(admin_client.get(url))
    data["scoring"] = "vtcbench"
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(url, data)
    assert response.status_code == 302, response.content.decode()[:2000]
    bench.refresh_from_db()
    sub.refresh_from_db()
    assert bench.scoring == "vtcbench"
    assert sub.status == "done" and sub.results["scoring"] == "vtcbench"
    assert sub.scorer_version == scorer_version("vtcbench") != scorer_version("generic")
    assert sub.scorer_version.endswith("+vtcbench")
    assert PredictionResult.objects.get(submission=sub, sample__uid="s1").correct  # their substring rule
    assert sub.results["modes"]["text"]["accuracy"]["overall"]["count"] == 2


def test_a_submission_asking_for_the_authors_full_pipeline_leaves_their_judges_rows_undecided(
        tmp_path: Path) -> None:
    """`submit --full-pipeline` under vtcbench with the offline judge: what VTC-Bench's rule calls wrong goes
    to their judge, so it is undecided, not wrong; without the flag (their exact matching) it is wrong."""
    import json
    from io import StringIO

    from django.core.management import call_command

    repo = write_repo(tmp_path, [vtc_row(1, "ocr_001", "ocr"), vtc_row(2, "ocr_002", "ocr")])
    release_files.run_import(repo / "data" / "VTC-Bench_GTToolChain.tsv", slug="vtc")
    get_user_model().objects.create_user("vera", "v@example.org", "pw")
    preds = tmp_path / "p.jsonl"
    preds.write_bytes(jsonl([{"sample_id": "ocr_001", "mode": "text", "answer": "A"},
                             {"sample_id": "ocr_002", "mode": "text", "answer": "(A)"}]))
    overall = {}
    for flag in ((), ("--full-pipeline",)):
        out = StringIO()
        call_command("submit", "vtc", str(preds), "--model", f"m{len(flag)}", "--user", "vera", "--sync", *flag,
                     stdout=out)
        overall[bool(flag)] = json.loads(out.getvalue().split("\n", 1)[1])["modes"]["text"]["accuracy"]["overall"]
    assert (overall[False]["value"], overall[False].get("reason")) == (0.5, None)
    assert overall[True]["value"] is None
    assert overall[True]["reason"] == "1 of 2 rows need an LLM judge; 1 right of the 1 decided (100.0%)"
    assert list(PredictionResult.objects.filter(submission__full_pipeline=True).order_by("sample__uid")
                .values_list("decided_by", flat=True)) == ["rule", "undecided"]


def test_an_mmreason_result_file_with_no_worker_reads_needs_an_llm_judge_and_its_extraction_decides(
        tmp_path: Path, client) -> None:
    """Issue 34's "done when", end to end: an MMReason benchmark imported from its TSV, VLMEvalKit's result file
    (replies "... The answer is 7.") submitted with `submit --format vlmevalkit --public --sync` and no worker,
    read on the board and in leaderboard.json: "needs an LLM judge", never 0.0 %. With their extraction file
    (`*_extract.xlsx`), the decided rows are those their exact-match step accepts, and no others."""
    import io
    import json

    from django.core.management import call_command
    from openpyxl import Workbook

    gold = {1: "7", 2: "-2", 3: "3/2", 4: "B"}
    tsv = write_tsv(tmp_path / "MMReason.tsv", ["index", "image", "question", "answer", "discipline"],
                    [{"index": i, "image": b64_image(), "question": f"q{i}", "answer": a, "discipline": "Math"}
                     for i, a in gold.items()])
    release_files.run_import(tsv, slug="mmr")
    assert Benchmark.objects.get(slug="mmr").scoring == "mmreason"
    get_user_model().objects.create_user("mira", "m@example.org", "pw")

    def result_file(name: str, extract: dict[int, str | None] | None) -> Path:
        book = Workbook()
        book.active.append(["index", "question", "answer", "prediction"] + (["extract"] if extract else []))
        for i, a in gold.items():
            reply = f"Working through it step by step. The answer is {a}."
            book.active.append([i, f"q{i}", a, reply] + ([extract[i]] if extract else []))
        path = tmp_path / name
        book.save(path)
        return path

    def submitted(path: Path, model: str) -> dict:
        out = io.StringIO()
        call_command("submit", "mmr", str(path), "--format", "vlmevalkit", "--model", model, "--user", "mira",
                     "--public", "--sync", stdout=out)
        rows = client.get("/b/mmr/leaderboard.json").json()["rows"]
        return next(r for r in rows if r["model"] == model)

    plain = submitted(result_file("M_MMReason.xlsx", None), "M")
    assert plain["text"]["value"] is None  # not 0.0 with the interval [0, 0]
    assert plain["text"]["reason"] == "4 of 4 rows need an LLM judge; none decided"
    board = client.get("/b/mmr/").content.decode()
    assert "not available: 4 of 4 rows need an LLM judge; none decided" in board
    assert ">0.0 " not in board and ">0.0<" not in board  # no figure of 0.0 anywhere on the row

    # their judge's extraction: 7 and -2 exact; 1.5 for 3/2 and "(B)" for B are not, so only a judge may decide
    extracted = submitted(result_file("M_MMReason_extract.xlsx", {1: "7", 2: " -2", 3: "1.5", 4: "(B)"}), "M-ex")
    assert extracted["text"]["reason"] == "2 of 4 rows need an LLM judge; 2 right of the 2 decided (100.0%)"
    decided = dict(PredictionResult.objects.filter(submission__model_name="M-ex").values_list(
        "sample__uid", "decided_by"))
    assert decided == {"1": "rule", "2": "rule", "3": "undecided", "4": "undecided"}
    assert json.loads(json.dumps(extracted["not_available"]))["text_acc"] == extracted["text"]["reason"]
    # the API's rows (to staff: the import put these samples on the test split): undecided is neither right nor wrong
    client.force_login(get_user_model().objects.create_user("stan", "s@example.org", "pw", is_staff=True))
    sub_id = PredictionResult.objects.filter(submission__model_name="M-ex").values_list("submission_id", flat=True)[0]
    api_rows = client.get(f"/api/v1/submissions/{sub_id}/predictions/").json()["results"]
    assert {r["sample_id"]: (r["correct"], r["decided_by"]) for r in api_rows if r["sample_id"] in ("1", "3")} == {
        "1": (True, "rule"), "3": (None, "undecided")}
