"""Author-format prediction files through the real pipeline: converted in the validation stage,
scored exactly like the same predictions in our format, the upload kept beside the converted
file, bad files failing with their rows and fields. Uploads by the API, the form and ``submit``."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from rest_framework.test import APIClient

from annotation.models import Benchmark
from annotation.services import benchmark_import
from annotation.tests.benchmark_files import sample_line, write_benchmark
from evaluation import services
from evaluation.models import PredictionResult, Submission
from evaluation.tests import author_shapes as shapes
from evaluation.tests.submission_helpers import upload

pytestmark = pytest.mark.django_db

# Numeric uids: a benchmark imported from a VLMEvalKit TSV takes its uids from `index`.
UIDS = ("11", "12", "13", "14", "15", "16", "17", "18")
ANSWERS = {u: str(i + 2) for i, u in enumerate(UIDS)}


@pytest.fixture
def bench(tmp_path) -> Benchmark:
    lines = [sample_line(uid, answer=ANSWERS[uid], split="dev" if i % 2 else "test")
             for i, uid in enumerate(UIDS)]
    benchmark_import(path=write_benchmark(tmp_path, lines), slug="numeric")
    return Benchmark.objects.get(slug="numeric")


@pytest.fixture
def owner():
    return get_user_model().objects.create_user("grace", "grace@example.org", "pw")


def submit(bench, owner, content: bytes, capture, name: str, fmt: str = "jsonl") -> Submission:
    with capture(execute=True):
        sub = services.submission_create(benchmark=bench, owner=owner, file=upload(content, name), model_name="m",
                                         file_format=fmt, enforce_limits=False,
                                         price_input_per_mtok=1.0, price_output_per_mtok=2.0)
    sub.refresh_from_db()
    return sub


def rows(sub: Submission) -> list[tuple]:
    return sorted(PredictionResult.objects.filter(submission=sub).values_list(
        "sample__uid", "mode", "correct", "extracted", "n_steps", "n_calls", "calls", "tokens", "cost_usd"))


def results(sub: Submission) -> dict:
    return sub.results


@pytest.mark.parametrize("fmt,name,author,ours", [
    ("vlmevalkit", "M_MMReason.xlsx", shapes.vlmevalkit_xlsx, shapes.ours_text),
    ("vlmevalkit", "M_MMReason.tsv", shapes.vlmevalkit_table, shapes.ours_text),
    ("vtcbench", "results_20261101_1200.jsonl", shapes.vtcbench_results, shapes.ours_vtcbench),
    ("agentx", "agentx_outputs.json", shapes.agentx_outputs, shapes.ours_agentx),
])
def test_a_converted_file_scores_the_same_as_the_same_predictions_in_our_format(
        bench, owner, django_capture_on_commit_callbacks, fmt, name, author, ours) -> None:
    preds = shapes.generate(UIDS, ANSWERS, seed=11)
    upload_bytes = author(preds)  # once: a workbook carries its creation time
    theirs = submit(bench, owner, upload_bytes, django_capture_on_commit_callbacks, name, fmt)
    mine = submit(bench, owner, ours(preds), django_capture_on_commit_callbacks, "ours.jsonl")
    assert theirs.status == "done", (theirs.failure_reason, theirs.errors)
    assert mine.status == "done", (mine.failure_reason, mine.errors)
    assert results(theirs) == results(mine)
    assert rows(theirs) == rows(mine)
    # Some right, some wrong, some tools: the comparison is not between two empty reports.
    assert {r[2] for r in rows(mine)} == {True, False}
    # The upload is kept as it came, beside the converted file.
    assert theirs.format == fmt and theirs.original_name == name
    with theirs.source_file.open("rb") as fh:
        assert fh.read() == upload_bytes
    # Both private under random names (docs/security.md): the converted file is a .jsonl of its own.
    assert theirs.file.name.endswith(".jsonl") and theirs.file.name != theirs.source_file.name


def test_a_bad_author_file_fails_with_its_rows_and_fields_and_is_kept(
        bench, owner, django_capture_on_commit_callbacks) -> None:
    content = b"index\tprediction\n11\tA\n999\tB\n\tC\n"
    sub = submit(bench, owner, content, django_capture_on_commit_callbacks, "m.tsv", "vlmevalkit")
    assert sub.status == "failed"
    assert sub.failure_reason.startswith("The file could not be converted from VLMEvalKit result file")
    assert [(e["where"], e["field"]) for e in sub.errors] == [("line 3", "index"), ("line 4", "index")]
    assert not sub.file and PredictionResult.objects.filter(submission=sub).count() == 0
    with sub.source_file.open("rb") as fh:
        assert fh.read() == content


def test_a_file_of_the_wrong_kind_fails_with_one_message(bench, owner, django_capture_on_commit_callbacks) -> None:
    preds = shapes.generate(UIDS, ANSWERS)
    sub = submit(bench, owner, shapes.agentx_outputs(preds), django_capture_on_commit_callbacks, "o.json", "vtcbench")
    assert sub.status == "failed" and len(sub.errors) == 1
    assert "it looks like an Agent-X output list" in sub.failure_reason
    assert "Submit it with the format 'agentx'" in sub.failure_reason


def test_an_author_file_uploaded_as_our_format_is_named_for_what_it_is(
        bench, owner, django_capture_on_commit_callbacks) -> None:
    preds = shapes.generate(UIDS, ANSWERS)
    sub = submit(bench, owner, shapes.vlmevalkit_xlsx(preds), django_capture_on_commit_callbacks, "M_MMReason.xlsx")
    assert sub.status == "failed"
    assert sub.errors == [{"line": None, "where": "file", "field": "", "message": (
        "This file does not look like a prediction file in our format (JSON Lines with sample_id and mode): it "
        "looks like an Excel workbook (.xlsx). Submit it with the format 'vlmevalkit'.")}]


def test_a_rescore_reuses_the_converted_file(bench, owner, django_capture_on_commit_callbacks) -> None:
    preds = shapes.generate(UIDS, ANSWERS)
    sub = submit(bench, owner, shapes.vtcbench_results(preds), django_capture_on_commit_callbacks,
                 "results_1.jsonl", "vtcbench")
    converted, before = sub.file.name, sub.results
    with django_capture_on_commit_callbacks(execute=True):
        assert services.submission_rescore(submission=sub)
    sub.refresh_from_db()
    assert sub.status == "done" and sub.file.name == converted and sub.results == before


def test_the_upload_api_takes_the_format_field(bench, owner, django_capture_on_commit_callbacks) -> None:
    api = APIClient()
    api.force_authenticate(owner)
    preds = shapes.generate(UIDS, ANSWERS)
    with django_capture_on_commit_callbacks(execute=True):
        res = api.post("/api/v1/benchmarks/numeric/submissions/", {
            "file": upload(shapes.agentx_outputs(preds), "outputs.json"), "model_name": "agent", "format": "agentx",
        }, format="multipart")
    assert res.status_code == 202, res.content
    body = api.get(f"/api/v1/submissions/{res.json()['id']}/").json()
    assert body["status"] == "done" and body["file"]["format"] == "agentx"
    res = api.post("/api/v1/benchmarks/numeric/submissions/", {
        "file": upload(b"x", "o.json"), "model_name": "agent", "format": "opencompass"}, format="multipart")
    assert res.status_code == 400 and "format" in res.json()


def test_the_upload_form_takes_the_format_and_the_page_shows_rows(
        bench, owner, client, django_capture_on_commit_callbacks) -> None:
    client.force_login(owner)
    with django_capture_on_commit_callbacks(execute=True):
        res = client.post("/submissions/new/", {
            "benchmark": "numeric", "model_name": "table-model", "format": "vlmevalkit",
            "file": upload(b"index\tprediction\n11\tA\n999\tB\n", "m.tsv")})
    assert res.status_code == 302
    sub = Submission.objects.get(model_name="table-model")
    assert sub.format == "vlmevalkit" and sub.status == "failed"
    page = client.get(sub.get_absolute_url()).content.decode()
    assert "line 3" in page and "&#x27;999&#x27; is not a sample of this benchmark" in page
    assert "VLMEvalKit result file (.xlsx, .tsv, .csv, .json), converted to our format" in page


def test_submit_takes_format_and_prints_conversion_errors(bench, owner, tmp_path) -> None:
    preds = shapes.generate(UIDS, ANSWERS)
    path = tmp_path / "M_MMReason.xlsx"
    path.write_bytes(shapes.vlmevalkit_xlsx(preds))
    out = StringIO()
    call_command("submit", "numeric", str(path), "--model", "xl", "--user", "grace", "--format", "vlmevalkit",
                 "--sync", stdout=out)
    first, rest = out.getvalue().split("\n", 1)
    assert json.loads(rest)["modes"]["text"]["accuracy"]["overall"]["n"] == len(UIDS)
    bad = tmp_path / "results_2.jsonl"
    bad.write_text('{"item_id": "11", "agent_answer": "2", "conversation": "oops"}\n')
    err = StringIO()
    with pytest.raises(Exception, match="could not be converted"):
        call_command("submit", "numeric", str(bad), "--model", "v", "--user", "grace", "--format", "vtcbench",
                     "--sync", stdout=StringIO(), stderr=err)
    assert "line 1, field 'conversation': expected a list of messages, got 'oops'" in err.getvalue()


def test_while_converting_the_page_and_the_api_count_rows_read(bench, owner, client) -> None:
    sub = services.submission_create(benchmark=bench, owner=owner, file=upload(b"index\tprediction\n", "m.tsv"),
                                     model_name="m", file_format="vlmevalkit", enqueue=False)
    Submission.objects.filter(pk=sub.pk).update(status="validating", progress_done=3000)
    client.force_login(owner)
    page = client.get(f"/submissions/{sub.pk}/", HTTP_HX_REQUEST="true").content.decode()
    assert "Converting the VLMEvalKit result file (.xlsx, .tsv, .csv, .json) to our format: 3000 rows" in page
    api = APIClient()
    api.force_authenticate(owner)
    assert api.get(f"/api/v1/submissions/{sub.pk}/").json()["progress"] == {"done": 3000, "total": 0, "unit": "items"}


@pytest.mark.django_db(transaction=True)
def test_the_standalone_client_sends_the_format_and_prints_rows_of_a_bad_file(live_server, tmp_path, owner) -> None:
    from rest_framework.authtoken.models import Token

    from evaluation.tests.submission_helpers import UIDS as TINY, answer_of, make_benchmark
    from evaluation.tests.test_api import run_client

    make_benchmark(tmp_path / "bench")
    token = Token.objects.create(user=owner).key
    good = tmp_path / "results_1.jsonl"
    good.write_bytes(shapes.vtcbench_results(shapes.generate(TINY, {u: answer_of(u) for u in TINY})))
    done = run_client(live_server, token, good, "--format", "vtcbench", "--wait")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["modes"]["adaptive"]["n_predictions"] == len(TINY)
    bad = tmp_path / "M_tiny.tsv"
    bad.write_text("index\tprediction\ns1\t1\nnope\t2\n")
    failed = run_client(live_server, token, bad, "--format", "vlmevalkit", "--wait")
    assert failed.returncode == 1
    assert "line 3, field 'index': 'nope' is not a sample of this benchmark" in failed.stderr


def test_the_admin_lists_converted_submissions_by_format(bench, owner, admin_client,
                                                        django_capture_on_commit_callbacks) -> None:
    preds = shapes.generate(UIDS, ANSWERS)
    sub = submit(bench, owner, shapes.agentx_outputs(preds), django_capture_on_commit_callbacks, "o.json", "agentx")
    page = admin_client.get("/admin/evaluation/submission/?format__exact=agentx")
    assert page.status_code == 200 and f">{sub.pk}<" in page.content.decode()
    assert admin_client.get(f"/admin/evaluation/submission/{sub.pk}/change/").status_code == 200
    assert admin_client.get("/admin/evaluation/submission/?format__exact=vtcbench").content.decode().count(
        f">{sub.pk}<") == 0


@pytest.fixture
def other_bench(tmp_path) -> Benchmark:
    """A second benchmark, whose samples are named s0..s59."""
    lines = [sample_line(f"s{i}", answer="1") for i in range(60)]
    benchmark_import(path=write_benchmark(tmp_path / "other", lines), slug="other-bench")
    return Benchmark.objects.get(slug="other-bench")


def _foreign_message(sub: Submission) -> str:
    assert sub.status == "failed"
    assert len(sub.errors) == 1, sub.errors  # one message, not a row per line
    return sub.errors[0]["message"]


def test_a_file_made_for_another_benchmark_gets_one_message_naming_it(
        bench, other_bench, owner, django_capture_on_commit_callbacks) -> None:
    ours = "".join(json.dumps({"sample_id": f"s{i}", "mode": "text", "answer": "1"}) + "\n" for i in range(60))
    sub = submit(bench, owner, ours.encode(), django_capture_on_commit_callbacks, "preds.jsonl")
    message = _foreign_message(sub)
    assert "lines name samples of the benchmark 'other-bench', not of 'numeric'" in message
    assert "Submit it there (submit other-bench FILE" in message
    # An author's shape, converted first, says the same.
    theirs = "".join(json.dumps({"item_id": f"s{i}", "agent_answer": "1", "conversation": []}) + "\n" for i in range(60))
    sub = submit(bench, owner, theirs.encode(), django_capture_on_commit_callbacks, "results_1.jsonl", "vtcbench")
    assert "name samples of the benchmark 'other-bench', not of 'numeric'" in _foreign_message(sub)


def test_the_api_says_the_same_and_ids_of_no_benchmark_keep_their_line_errors(
        bench, other_bench, owner, django_capture_on_commit_callbacks) -> None:
    api = APIClient()
    api.force_authenticate(owner)
    ours = "".join(json.dumps({"sample_id": f"s{i}", "mode": "text", "answer": "1"}) + "\n" for i in range(3))
    with django_capture_on_commit_callbacks(execute=True):
        res = api.post("/api/v1/benchmarks/numeric/submissions/", {
            "file": upload(ours.encode(), "p.jsonl"), "model_name": "agent"}, format="multipart")
    body = api.get(f"/api/v1/submissions/{res.json()['id']}/").json()
    assert body["status"] == "failed"
    assert [e["message"] for e in body["errors"]] == [
        "3 lines name samples of the benchmark 'other-bench', not of 'numeric' ('s0', 's1', 's2'...): this file was "
        "made for 'other-bench'. Submit it there (submit other-bench FILE ...), or check that you chose the right "
        "benchmark."]
    nowhere = "".join(json.dumps({"sample_id": f"x{i}", "mode": "text", "answer": "1"}) + "\n" for i in range(3))
    sub = submit(bench, owner, nowhere.encode(), django_capture_on_commit_callbacks, "p.jsonl")
    assert [e["line"] for e in sub.errors] == [1, 2, 3]


def test_a_repeated_vtcbench_item_is_scored_by_its_last_line_and_the_page_and_api_say_so(
        bench, owner, client, django_capture_on_commit_callbacks) -> None:
    lines = [{"item_id": "11", "agent_answer": "wrong"}, {"item_id": "12", "agent_answer": ANSWERS["12"]},
             {"item_id": "11", "agent_answer": ANSWERS["11"]}]
    content = b"".join(json.dumps(x).encode() + b"\n" for x in lines)
    sub = submit(bench, owner, content, django_capture_on_commit_callbacks, "results_2.jsonl", "vtcbench")
    assert sub.status == "done", sub.failure_reason
    assert dict(PredictionResult.objects.filter(submission=sub).values_list("sample__uid", "correct")) == {
        "11": True, "12": True}
    warning = "line 3: item '11' is also on line 1; the last line is kept, as VTC-Bench's evaluation keeps it"
    assert sub.conversion_warnings == [warning]
    client.force_login(owner)
    assert warning.replace("'", "&#x27;") in client.get(f"/submissions/{sub.pk}/").content.decode()
    assert client.get(f"/api/v1/submissions/{sub.pk}/").json()["conversion_warnings"] == [warning]
