"""Row digests (evaluation.metrics.digest, evaluation.records, the pipeline's _digest_fields), the
``verify_row`` command, the stdlib ``scripts/verify_row.py`` on the records export, and the lines that
record the endpoint's model ids (evaluation.metrics.run_lines). docs/runs.md, "The verified tier"."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings
from django.core.files.base import ContentFile
from django.core.management import call_command
from django.core.management.base import CommandError

from evaluation import pipeline, services
from evaluation.metrics import digest
from evaluation.models import PredictionResult, Submission
from evaluation.records import export_lines
from leaderboard.tests import helpers

pytestmark = pytest.mark.django_db
SCRIPT = Path(settings.BASE_DIR) / "scripts" / "verify_row.py"
HEX64 = re.compile(r"^[0-9a-f]{64}$")


def _script():  # noqa: ANN202 - the stdlib script as a module
    spec = importlib.util.spec_from_file_location("verify_row_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


def _lines() -> list[dict]:
    out = helpers.prediction_lines(helpers.ALPHA)
    for i, line in enumerate(out):
        if i % 3 == 0:  # a third of the lines record what the endpoint returned
            line["run"] = {"model_ids": ["alpha-2024"], "response_ids": [f"r{i}"], "prompt_version": "v1"}
        elif i % 3 == 1:
            line["run"] = {"model_ids": ["alpha-2025"]}
    return out


@pytest.fixture
def scored(tmp_path) -> Submission:
    benchmark = helpers.make_benchmark(tmp_path / "bench")
    sub = services.submission_create(
        benchmark=benchmark, owner=helpers.owner(), file=ContentFile(helpers.jsonl(_lines()), name="p.jsonl"),
        model_name="Alpha", is_public=True, enforce_limits=False, enqueue=False)
    sub = pipeline.submission_process_sync(submission=sub)
    assert sub.status == "done", sub.failure_reason
    return sub


def _verify(pk: int) -> tuple[int, str]:
    out = StringIO()
    try:
        call_command("verify_row", str(pk), stdout=out)
    except CommandError as error:
        return error.returncode, str(error)
    return 0, out.getvalue()


def test_scoring_stores_the_digests_and_verify_row_says_ok(scored: Submission) -> None:
    assert HEX64.match(scored.digest) and HEX64.match(scored.digest_dev) and scored.digest != scored.digest_dev
    assert set(scored.digest_parts["modes"]) == {"text", "adaptive", "oracle"}
    assert scored.results["judge_prompts"] == {}  # the offline judge asks no prompt
    code, said = _verify(scored.pk)
    assert code == 0 and said.startswith("ok"), said


def test_verify_row_names_the_mode_of_a_tampered_record(scored: Submission) -> None:
    row = PredictionResult.objects.filter(submission=scored, mode="adaptive", sample__split="test").first()
    PredictionResult.objects.filter(pk=row.pk).update(correct=not row.correct)
    code, said = _verify(scored.pk)
    assert code == 1
    assert "digest differs" in said and "records differ in mode(s): adaptive" in said
    assert "text" not in said.split("mode(s):")[1]  # only the tampered mode is named
    assert "digest_dev" not in said  # a test-split record: the public (dev) digest still holds


def test_verify_row_exits_1_when_no_digest_is_stored(scored: Submission) -> None:
    Submission.objects.filter(pk=scored.pk).update(digest="", digest_dev="", digest_parts={})
    code, said = _verify(scored.pk)
    assert code == 1 and "not available" in said


def test_the_script_recomputes_the_export_and_names_a_tampered_record(scored: Submission, tmp_path) -> None:
    scored = Submission.objects.select_related("benchmark").get(pk=scored.pk)
    export = tmp_path / "records.jsonl"
    export.write_bytes(b"".join(export_lines(scored, include_test=True)))
    run = subprocess.run([sys.executable, str(SCRIPT), str(export), "--expect", scored.digest],
                         capture_output=True, text=True, check=False)
    assert (run.returncode, run.stdout.strip()) == (0, "ok"), run.stdout + run.stderr
    lines = export.read_text().splitlines()
    head = json.loads(lines[0])
    assert head["digest"] == scored.digest and head["scope"] == "all"
    # Change one text-mode record's extracted answer: the script names the digest and the mode.
    for i, line in enumerate(lines[1:], 1):
        rec = json.loads(line)
        if rec["mode"] == "text" and rec["split"] == "dev":
            rec["extracted"] = "42"
            lines[i] = json.dumps(rec)
            break
    export.write_text("\n".join(lines) + "\n")
    run = subprocess.run([sys.executable, str(SCRIPT), str(export)], capture_output=True, text=True, check=False)
    assert run.returncode == 1
    assert "digest differs" in run.stdout and "records differ in mode(s): text" in run.stdout
    assert "dev-split records differ in mode(s): text" in run.stdout


def test_a_dev_only_export_checks_the_dev_digest(scored: Submission) -> None:
    scored = Submission.objects.select_related("benchmark").get(pk=scored.pk)
    lines = [b.decode() for b in export_lines(scored, include_test=False)]
    head = json.loads(lines[0])
    assert head["scope"] == "dev" and "digest" not in head and head["digest_dev"] == scored.digest_dev
    assert all(json.loads(line)["split"] == "dev" for line in lines[1:])
    script = _script()
    assert script.check(lines, scored.digest_dev) == []
    assert script.check(lines, scored.digest)  # the whole row's digest is not the dev one


def test_script_and_server_share_the_canonical_functions(scored: Submission) -> None:
    """The stdlib copy gives the same digests as the server's module, on the same records."""
    script = _script()
    assert script.CANONICAL_FIELDS == digest.CANONICAL_FIELDS and script.CANON == digest.CANON
    records = [({"uid": "b", "mode": "text", "kcov": 0.1 + 0.2, "calls": [{"z": 1, "a": None}], "extracted": "é"},
                True), ({"uid": "a", "mode": "adaptive", "correct": True, "cost_usd": 1e-07}, False)]
    header = digest.header_line("metrics-x", "openai:m", {"answer_equivalence": "v2"})
    assert header == script.header_line("metrics-x", "openai:m", {"answer_equivalence": "v2"})
    assert digest.digests_of(header, records) == script.digests_of(header, records)
    # And on the stored rows: the export's header digest equals the server's.
    scored = Submission.objects.select_related("benchmark").get(pk=scored.pk)
    assert script.check([b.decode() for b in export_lines(scored, include_test=True)]) == []


def test_canonical_fields_cover_every_scorer_column() -> None:
    """A new PredictionResult column is a decision: into the canonical record, or listed here as left out."""
    columns = {f.name for f in PredictionResult._meta.concrete_fields} - {"id", "submission", "sample"}
    left_out = {"latency_ms"}  # the file's timing, not a decision of the scorer (evaluation/metrics/digest.py)
    assert columns - left_out == set(digest.CANONICAL_FIELDS) - {"uid"}


def test_lines_recording_model_ids_are_counted(scored: Submission) -> None:
    r = scored.results
    n = len(_lines())
    assert r["lines_read"] == n
    assert r["lines_with_model_ids"] == len(range(0, n, 3)) + len(range(1, n, 3))
    assert r["lines_with_response_ids"] == len(range(0, n, 3))
    assert r["model_ids_seen"] == ["alpha-2024", "alpha-2025"]


def test_the_submission_page_says_how_many_lines_record_model_ids(scored: Submission, client) -> None:
    client.force_login(scored.owner)
    html = client.get(f"/submissions/{scored.pk}/").content.decode()
    n = len(_lines())
    with_ids = len(range(0, n, 3)) + len(range(1, n, 3))
    assert f"{with_ids} of {n} lines record the model ids the endpoint returned (alpha-2024, alpha-2025)" in html
    assert "Provenance: <strong>submitted file</strong>" in html
    assert scored.digest in html


def test_the_scoring_stage_counts_and_digests_as_the_validation_pass_does(scored: Submission) -> None:
    """A remote judge's path (validate, then the scoring stage re-reads the file): same counts, same digest."""
    before = (scored.digest, scored.digest_dev, scored.results["lines_with_model_ids"])
    Submission.objects.filter(pk=scored.pk).update(status="scoring", digest="", results=None)
    pipeline.submission_score(submission_id=scored.pk)
    scored.refresh_from_db()
    assert scored.status == "done"
    assert (scored.digest, scored.digest_dev, scored.results["lines_with_model_ids"]) == before
