"""The pipeline run in-process (Celery eager): stages, idempotency, the sweeper, limits, privacy."""

from __future__ import annotations

from datetime import timedelta
from unittest import mock

import pytest
from django.contrib.auth import get_user_model
from django.conf import settings as site_settings
from django.core import mail
from django.utils import timezone
from kombu.exceptions import OperationalError

from evaluation import pipeline, selectors, services, tasks
from evaluation.judges import JudgeError, OfflineJudge
from evaluation.models import PredictionResult, Submission
from evaluation.tests.submission_helpers import BAD_FILES, good_file, jsonl, make_benchmark, prediction, upload

pytestmark = pytest.mark.django_db


@pytest.fixture
def bench(tmp_path):
    return make_benchmark(tmp_path)


@pytest.fixture
def researcher():
    return get_user_model().objects.create_user("ada", "ada@example.org", "pw")


def submit(bench, owner, content: bytes, capture, **kw) -> Submission:
    with capture(execute=True):
        sub = services.submission_create(benchmark=bench, owner=owner, file=upload(content),
                                         model_name=kw.pop("model_name", "m1"), **kw)
    sub.refresh_from_db()
    return sub


def sample_uids(benchmark) -> list[str]:
    """The benchmark's sample uids in the scorer's order."""
    return list(benchmark.samples.order_by("position", "uid").values_list("uid", flat=True))


def test_a_good_file_goes_to_done_with_its_scores_and_one_row_per_prediction(
        bench, researcher, django_capture_on_commit_callbacks) -> None:
    sub = submit(bench, researcher, good_file(), django_capture_on_commit_callbacks,
                 price_input_per_mtok=1.0, price_output_per_mtok=2.0)
    assert sub.status == "done", sub.failure_reason
    text = sub.results["modes"]["text"]["accuracy"]["overall"]
    assert (text["count"], text["n"]) == (4, 6)  # s2 and s5 answered wrong
    assert sub.results["mode_selection"] is not None
    assert PredictionResult.objects.filter(submission=sub).count() == 12
    row = PredictionResult.objects.get(submission=sub, sample__uid="s1", mode="adaptive")
    assert row.correct and row.decided_by == "rule" and row.n_calls == 1
    assert row.cost_usd == pytest.approx((1000 * 1.0 + 100 * 2.0) / 1e6)
    assert sub.coverage["adaptive"]["missing"] == 0
    assert sub.scorer_version.startswith("metrics-") and sub.judge_name == "offline"
    assert (sub.progress_done, sub.progress_total) == (12, 12)
    assert len(mail.outbox) == 1 and "is scored" in mail.outbox[0].subject
    # The link works from a mail reader: the site's address before the path (issue 26), never a bare path.
    assert f"Results: {site_settings.SITE_URL}/submissions/{sub.pk}/" in mail.outbox[0].body
    assert site_settings.SITE_URL.startswith("http")


def test_a_stage_run_again_changes_nothing(bench, researcher, django_capture_on_commit_callbacks) -> None:
    sub = submit(bench, researcher, good_file(), django_capture_on_commit_callbacks)
    before = sub.results
    pipeline.submission_validate(submission_id=sub.pk)
    pipeline.submission_score(submission_id=sub.pk)
    sub.refresh_from_db()
    assert sub.status == "done" and sub.results == before
    assert PredictionResult.objects.filter(submission=sub).count() == 12
    assert len(mail.outbox) == 1


def test_scoring_after_an_interrupted_run_replaces_its_rows_instead_of_adding(
        bench, researcher, django_capture_on_commit_callbacks) -> None:
    sub = submit(bench, researcher, good_file(), django_capture_on_commit_callbacks)
    # As if a run had died after writing: stale rows, status left in judging.
    PredictionResult.objects.filter(submission=sub, sample__uid="s1", mode="text").update(correct=False)
    Submission.objects.filter(pk=sub.pk).update(status="judging")
    pipeline.submission_score(submission_id=sub.pk)
    assert PredictionResult.objects.filter(submission=sub).count() == 12
    assert PredictionResult.objects.get(submission=sub, sample__uid="s1", mode="text").correct


def test_a_bad_file_fails_whole_with_its_errors_and_keeps_the_file(
        bench, researcher, django_capture_on_commit_callbacks) -> None:
    content = good_file() + (BAD_FILES / "bad_mode.jsonl").read_bytes().splitlines(keepends=True)[1]
    sub = submit(bench, researcher, content, django_capture_on_commit_callbacks)
    assert sub.status == "failed"
    assert sub.errors == [{"line": 13, "field": "mode",
                           "message": "expected one of text, adaptive, oracle, blind, got 'agentic'"}]
    assert "nothing was scored" in sub.failure_reason
    assert not PredictionResult.objects.filter(submission=sub).exists() and sub.results is None
    with sub.file.open("rb") as fh:
        assert fh.read() == content
    assert "failed" in mail.outbox[-1].subject


def test_a_broker_outage_at_upload_is_recorded_and_the_next_sweep_sends_it_once(
        bench, researcher, django_capture_on_commit_callbacks, settings) -> None:
    settings.SUBMISSION_QUEUED_RESEND_SECONDS = 3600  # no waiting for the re-send interval: the record is enough
    with mock.patch.object(tasks.submission_validate, "apply_async", side_effect=OperationalError("down")):
        sub = submit(bench, researcher, good_file(), django_capture_on_commit_callbacks)
    assert (sub.status, sub.enqueue_failed) == ("queued", True)  # the upload succeeded; its message did not go
    with (mock.patch.object(tasks.submission_validate, "apply_async", side_effect=OperationalError("down")),
          django_capture_on_commit_callbacks(execute=True)):
        assert services.submissions_sweep().resent == [sub.pk]  # a sweep while the broker is still down
    sub.refresh_from_db()
    assert (sub.status, sub.enqueue_failed) == ("queued", True)  # still to send
    with django_capture_on_commit_callbacks(execute=True):
        summary = services.submissions_sweep()  # the first sweep once the broker answers
    assert summary.resent == [sub.pk]
    sub.refresh_from_db()
    assert (sub.status, sub.enqueue_failed) == ("done", False)
    assert services.submissions_sweep().resent == []  # never sent twice


def test_a_queued_submission_whose_message_went_is_left_to_its_worker(
        bench, researcher, django_capture_on_commit_callbacks, settings) -> None:
    settings.SUBMISSION_QUEUED_RESEND_SECONDS = 300
    with mock.patch.object(tasks.submission_validate, "apply_async"):  # sent, and waiting in the queue
        sub = submit(bench, researcher, good_file(), django_capture_on_commit_callbacks)
    assert (sub.status, sub.enqueue_failed) == ("queued", False)
    Submission.objects.filter(pk=sub.pk).update(heartbeat_at=timezone.now() - timedelta(minutes=2))
    assert services.submissions_sweep().resent == []  # a backlog is not flooded with copies
    Submission.objects.filter(pk=sub.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))
    with django_capture_on_commit_callbacks(execute=True):
        assert services.submissions_sweep().resent == [sub.pk]  # lost inside the broker: sent again


def test_a_stage_whose_worker_dies_every_time_fails_after_the_last_attempt_with_an_actionable_reason(
        bench, researcher, django_capture_on_commit_callbacks, settings) -> None:
    # A file that kills its worker: each delivery claims the stage and is never heard of again.
    # The attempt is counted at the claim, so the sweeper's re-sends cannot loop for ever.
    settings.SUBMISSION_MAX_ATTEMPTS = 2
    with mock.patch.object(pipeline.validating, "_validate"):
        sub = submit(bench, researcher, good_file(), django_capture_on_commit_callbacks)
        assert (sub.status, sub.attempts) == ("validating", 1)
        for attempts in (2, 2):
            Submission.objects.filter(pk=sub.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))
            with django_capture_on_commit_callbacks(execute=True):
                services.submissions_sweep()
            sub.refresh_from_db()
            assert sub.attempts == attempts
    assert sub.status == "failed"
    assert "validating stage was started 2 times and its worker stopped each time" in sub.failure_reason
    assert f"manage.py score {sub.pk}" in sub.failure_reason and "split it by mode" in sub.failure_reason


def test_a_second_delivery_finds_the_stage_claimed_until_the_holder_goes_silent(bench, researcher) -> None:
    sub = services.submission_create(benchmark=bench, owner=researcher, file=upload(good_file()),
                                     model_name="m1", enqueue=False)
    assert pipeline._claim(sub.pk, ("queued", "validating"), "validating", "worker-a")
    assert not pipeline._claim(sub.pk, ("queued", "validating"), "validating", "worker-b")
    assert pipeline._claim(sub.pk, ("queued", "validating"), "validating", "worker-a")  # a's own retry
    assert Submission.objects.get(pk=sub.pk).attempts == 1  # ... is not a new attempt
    Submission.objects.filter(pk=sub.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))
    assert pipeline._claim(sub.pk, ("queued", "validating"), "validating", "worker-b")  # a is dead
    sub.refresh_from_db()
    assert (sub.claim_token, sub.attempts) == ("worker-b", 2)


class FlakyJudge(OfflineJudge):
    """Fails the first ``failures`` batches, then judges like the offline judge."""

    def __init__(self, failures: int) -> None:
        super().__init__()
        self.failures = failures

    # Tool calls, not answers: good_file's wrong answers are numbers, which no judge is asked about.
    def tool_call_validity(self, questions):
        if self.failures:
            self.failures -= 1
            raise JudgeError("judge http 503")
        return super().tool_call_validity(questions)


def test_a_judge_failure_is_retried_then_scored(bench, researcher, django_capture_on_commit_callbacks,
                                                settings) -> None:
    settings.SUBMISSION_JUDGE_RETRY_SECONDS = 0
    judge = FlakyJudge(failures=1)
    with mock.patch.object(pipeline.judging, "pipeline_judge", return_value=judge):
        sub = submit(bench, researcher, good_file(), django_capture_on_commit_callbacks)
    assert sub.status == "done" and judge.failures == 0


def test_a_judge_that_keeps_failing_fails_the_submission_with_the_reason(
        bench, researcher, django_capture_on_commit_callbacks, settings) -> None:
    settings.SUBMISSION_JUDGE_RETRY_SECONDS = 0
    settings.SUBMISSION_JUDGE_RETRIES = 2
    with mock.patch.object(pipeline.judging, "pipeline_judge", return_value=FlakyJudge(failures=99)):
        sub = submit(bench, researcher, good_file(), django_capture_on_commit_callbacks)
    assert sub.status == "failed"
    assert "The judge kept failing (3 tries with backoff): judge http 503" in sub.failure_reason
    assert not PredictionResult.objects.filter(submission=sub).exists()


def test_tool_calls_are_checked_by_the_tool_registry(bench, researcher, django_capture_on_commit_callbacks) -> None:
    bad = prediction("s1", "adaptive", steps=[{"thought": "zoom", "tool": {"name": "zoom_in", "args": {"bbox": "x"}}}])
    sub = submit(bench, researcher, jsonl([bad]), django_capture_on_commit_callbacks)
    row = PredictionResult.objects.get(submission=sub)
    assert row.calls[0]["valid"] is False and row.calls[0]["decided_by"] == "rule"
    assert any("bbox" in e for e in row.calls[0]["errors"])


def test_failed_submissions_do_not_count_against_the_daily_quota(
        bench, researcher, django_capture_on_commit_callbacks, settings) -> None:
    settings.SUBMISSIONS_PER_DAY = 2
    settings.SUBMISSIONS_MAX_ACTIVE_PER_USER = 10
    submit(bench, researcher, b"not json\n", django_capture_on_commit_callbacks)
    submit(bench, researcher, good_file(), django_capture_on_commit_callbacks)
    submit(bench, researcher, good_file(), django_capture_on_commit_callbacks)
    with pytest.raises(services.QuotaExceeded, match="2 submissions to 'tiny' in the last 24 hours"):
        submit(bench, researcher, good_file(), django_capture_on_commit_callbacks)
    staff = get_user_model().objects.create_user("boss", is_staff=True)
    for _ in range(3):
        assert submit(bench, staff, good_file(), django_capture_on_commit_callbacks).status == "done"


def test_a_researcher_can_have_only_so_many_submissions_in_the_pipeline(
        bench, researcher, django_capture_on_commit_callbacks, settings) -> None:
    settings.SUBMISSIONS_MAX_ACTIVE_PER_USER = 1
    with mock.patch.object(tasks.submission_validate, "apply_async"):  # stays queued
        submit(bench, researcher, good_file(), django_capture_on_commit_callbacks)
    with pytest.raises(services.TooManyActive, match="already have 1 submissions being scored"):
        submit(bench, researcher, good_file(), django_capture_on_commit_callbacks)


def test_a_file_over_the_size_limit_is_refused_before_it_is_stored(bench, researcher, settings,
                                                                   django_capture_on_commit_callbacks) -> None:
    settings.SUBMISSION_MAX_FILE_BYTES = 1024
    with pytest.raises(services.FileTooLarge, match="over the limit of 1,024 bytes"):
        submit(bench, researcher, (BAD_FILES / "too_large.jsonl").read_bytes(), django_capture_on_commit_callbacks)
    assert not Submission.objects.exists()


def test_test_split_rows_are_hidden_from_everyone_but_staff(bench, researcher,
                                                            django_capture_on_commit_callbacks) -> None:
    sub = submit(bench, researcher, good_file(), django_capture_on_commit_callbacks)
    seen = {r.sample.uid for r in selectors.prediction_results_for(submission=sub, user=researcher)}
    assert seen == {"s1", "s2", "s3"}
    staff = get_user_model().objects.create_user("boss", is_staff=True)
    assert selectors.prediction_results_for(submission=sub, user=staff).count() == 12


def test_publish_unpublish_and_soft_delete(bench, researcher, django_capture_on_commit_callbacks) -> None:
    sub = submit(bench, researcher, good_file(), django_capture_on_commit_callbacks)
    assert list(Submission.objects.on_board().filter(benchmark=bench)) == []
    services.submission_set_public(submission=sub, public=True)
    assert list(Submission.objects.on_board().filter(benchmark=bench)) == [sub]
    services.submission_delete(submission=sub)
    assert list(Submission.objects.on_board().filter(benchmark=bench)) == []
    assert list(selectors.submissions_of(user=researcher)) == []
    assert Submission.objects.filter(pk=sub.pk).exists()  # soft: kept for audit


def test_rescore_keeps_the_old_results_until_replaced(bench, researcher,
                                                              django_capture_on_commit_callbacks) -> None:
    sub = submit(bench, researcher, good_file(), django_capture_on_commit_callbacks, is_public=True)
    Submission.objects.filter(pk=sub.pk).update(scorer_version="metrics-old")
    with mock.patch.object(tasks.submission_validate, "apply_async"), django_capture_on_commit_callbacks(execute=True):
        assert services.submission_rescore(submission=sub)
    assert sub.status == "queued"
    sub.refresh_from_db()
    assert sub.results is not None  # kept, though off the board until the new ones are in
    assert list(Submission.objects.on_board().filter(benchmark=bench)) == []
    pipeline.submission_process_sync(submission=sub)
    assert sub.status == "done" and sub.scorer_version != "metrics-old"
    assert PredictionResult.objects.filter(submission=sub).count() == 12


# ------------------------------------------------------------------ commands and admin


def test_submit_sync_prints_the_id_and_metrics_and_score_rescores(bench, researcher, tmp_path, client) -> None:
    import json
    from io import StringIO

    from django.core.management import call_command

    path = tmp_path / "preds.jsonl"
    path.write_bytes(good_file())
    out = StringIO()
    call_command("submit", "tiny", str(path), "--model", "cli-model", "--user", "ada", "--prices", "1", "2",
                 "--public", "--sync", stdout=out)
    first, rest = out.getvalue().split("\n", 1)
    sub = Submission.objects.get()
    assert first == f"submission {sub.pk}"
    assert json.loads(rest)["modes"]["text"]["accuracy"]["overall"]["count"] == 4
    assert sub.is_public and sub.prices == (1.0, 2.0)
    # No worker ran: the command built the board itself, so the row is on it when the command returns.
    board = client.get("/b/tiny/leaderboard.json").json()
    assert [r["submission_id"] for r in board["rows"]] == [sub.pk]
    assert 'id="board-updating"' not in client.get("/b/tiny/").content.decode()
    Submission.objects.filter(pk=sub.pk).update(scorer_version="metrics-old")
    out = StringIO()
    call_command("score", str(sub.pk), "--sync", stdout=out)
    sub.refresh_from_db()
    assert out.getvalue().startswith(f"submission {sub.pk}: done") and sub.scorer_version != "metrics-old"
    assert PredictionResult.objects.filter(submission=sub).count() == 12


def test_submit_reports_a_bad_file_with_its_lines(bench, researcher, tmp_path) -> None:
    from django.core.management import call_command
    from django.core.management.base import CommandError

    path = tmp_path / "bad.jsonl"
    path.write_bytes((BAD_FILES / "unknown_sample.jsonl").read_bytes())
    with pytest.raises(CommandError, match="failed: The file has 1 error"):
        call_command("submit", "tiny", str(path), "--model", "m", "--user", "ada", "--sync")


def test_rescore_all_requeues_every_done_submission_of_a_benchmark(
        bench, researcher, django_capture_on_commit_callbacks) -> None:
    from io import StringIO

    from django.core.management import call_command

    done = [submit(bench, researcher, good_file(), django_capture_on_commit_callbacks) for _ in range(2)]
    submit(bench, researcher, b"{", django_capture_on_commit_callbacks)  # failed: not re-scored
    Submission.objects.update(scorer_version="metrics-old")
    out = StringIO()
    with (mock.patch.object(tasks.submission_validate, "apply_async") as sent,
          django_capture_on_commit_callbacks(execute=True)):
        call_command("rescore_all", "--benchmark", "tiny", stdout=out)
    assert "re-scoring 2 submissions" in out.getvalue()
    assert sorted(c.kwargs["args"][0] for c in sent.call_args_list) == sorted(s.pk for s in done)


def test_rescore_all_sync_leaves_every_board_it_touched_built(bench, researcher, tmp_path, client) -> None:
    from io import StringIO

    from django.core.management import call_command

    path = tmp_path / "preds.jsonl"
    path.write_bytes(good_file())
    call_command("submit", "tiny", str(path), "--model", "m", "--user", "ada", "--public", "--sync", stdout=StringIO())
    Submission.objects.update(scorer_version="metrics-old")
    call_command("rescore_all", "--benchmark", "tiny", "--sync", stdout=StringIO())
    # The re-score moved the benchmark's results version; the command rebuilt the board at once (no worker).
    assert 'id="board-updating"' not in client.get("/b/tiny/").content.decode()
    assert Submission.objects.get().scorer_version != "metrics-old"


def test_the_admin_action_rescores(bench, researcher, django_capture_on_commit_callbacks, admin_client) -> None:
    sub = submit(bench, researcher, good_file(), django_capture_on_commit_callbacks)
    Submission.objects.filter(pk=sub.pk).update(scorer_version="metrics-old")
    with django_capture_on_commit_callbacks(execute=True):
        resp = admin_client.post("/admin/evaluation/submission/",
                                 {"action": "rescore", "_selected_action": [sub.pk]}, follow=True)
    assert "1 submission(s) sent for re-scoring" in resp.content.decode()
    sub.refresh_from_db()
    assert sub.status == "done" and sub.scorer_version != "metrics-old"


# ------------------------------------------------------------------ demo submissions


def test_the_simulator_is_deterministic_and_follows_its_profile() -> None:
    from evaluation.simulator import Profile, simulate

    samples = [{"uid": f"u{i}", "answer": "A", "options": {"A": "x", "B": "y"}, "transform": [],
                "regions": [], "key_steps": ["Look."], "toolchain": []} for i in range(200)]
    perfect = list(simulate(samples, Profile(text_accuracy=1.0, modes=("text",))))
    assert all(line["answer"] == "<answer>A</answer>" for line in perfect)
    poor = Profile(text_accuracy=0.0, tool_accuracy=1.0, selection=1.0, modes=("text", "adaptive"), seed=7)
    lines = list(simulate(samples, poor))
    assert lines == list(simulate(samples, poor))
    adaptive = [x for x in lines if x["mode"] == "adaptive"]
    # Text always wrong and perfect selection: every adaptive line calls a tool and is right.
    assert all(any("tool" in s for s in x["steps"]) and x["answer"] == "<answer>A</answer>" for x in adaptive)


class _Crash(BaseException):
    """Stands for a worker killed mid-way (not an Exception: nothing in the stage catches it)."""


def test_a_crash_after_some_rows_were_streamed_leaves_no_partial_rows_and_a_rerun_finishes_once(
        bench, researcher, django_capture_on_commit_callbacks, monkeypatch) -> None:
    monkeypatch.setattr(pipeline.finishing, "SCORE_CHUNK", 5)  # 12 predictions: chunks of 5, 5, 2
    written = []
    real_write = pipeline._ResultWriter.write

    def write_then_crash(self, records):
        real_write(self, records)
        written.append(len(records))
        if len(written) == 2:
            raise _Crash

    with mock.patch.object(pipeline._ResultWriter, "write", write_then_crash), pytest.raises(_Crash):
        submit(bench, researcher, good_file(), django_capture_on_commit_callbacks)
    assert written == [5, 5]  # two chunks went to the database before the "crash"
    sub = Submission.objects.get(model_name="m1")
    assert sub.status == "validating"  # offline judge: validated and scored in one pass
    assert not PredictionResult.objects.filter(submission=sub).exists()
    assert not pipeline.submission_validate(submission_id=sub.pk)  # the dead run's claim is still fresh
    Submission.objects.filter(pk=sub.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))
    with django_capture_on_commit_callbacks(execute=True):
        assert services.submissions_sweep().resent == [sub.pk]  # its heartbeat went stale: sent again
    sub.refresh_from_db()
    assert sub.status == "done" and (sub.progress_done, sub.n_predictions, sub.n_lines) == (12, 12, 12)
    assert sub.coverage["adaptive"]["missing"] == 0
    assert PredictionResult.objects.filter(submission=sub).count() == 12
    pipeline.submission_validate(submission_id=sub.pk)  # a duplicate delivery changes nothing
    pipeline.submission_score(submission_id=sub.pk)
    assert PredictionResult.objects.filter(submission=sub).count() == 12


def test_a_file_whose_error_comes_after_streamed_chunks_fails_whole_with_no_rows(
        bench, researcher, django_capture_on_commit_callbacks, monkeypatch) -> None:
    monkeypatch.setattr(pipeline.finishing, "SCORE_CHUNK", 2)
    written = []
    real_write = pipeline._ResultWriter.write
    monkeypatch.setattr(pipeline._ResultWriter, "write",
                        lambda self, records: (written.append(len(records)), real_write(self, records)))
    lines = [prediction(uid, mode) for mode in ("text", "adaptive") for uid in ("s1", "s2", "s3", "s4", "s5")]
    content = jsonl(lines + ['{"sample_id": "nope", "mode": "text", "answer": "1"}', prediction("s6", "text"),
                             lines[0]])
    sub = submit(bench, researcher, content, django_capture_on_commit_callbacks)
    assert len(written) >= 2  # rows of the good lines were streamed before the bad one was read
    assert sub.status == "failed" and "2 errors" in sub.failure_reason
    assert [(e["line"], e["field"]) for e in sub.errors] == [(11, "sample_id"), (13, "sample_id")]
    assert not PredictionResult.objects.filter(submission=sub).exists()


def test_streamed_rows_match_the_library_records(bench, researcher, django_capture_on_commit_callbacks,
                                                 monkeypatch) -> None:
    monkeypatch.setattr(pipeline.finishing, "SCORE_CHUNK", 3)
    sub = submit(bench, researcher, good_file(modes=("text", "adaptive", "oracle")),
                 django_capture_on_commit_callbacks)
    assert sub.status == "done", sub.failure_reason
    prepared, _, _ = pipeline.prepared_benchmarks.get(bench)
    from evaluation.metrics import score_submission

    report = score_submission(prepared, [prediction(uid, mode, right=uid not in ("s2", "s5"))
                                         for mode in ("text", "adaptive", "oracle")
                                         for uid in sample_uids(bench)],
                              judge=OfflineJudge())
    rows = {(r.sample.uid, r.mode): r for r in PredictionResult.objects.filter(submission=sub)
            .select_related("sample")}
    assert len(rows) == len(report.records) == 18
    for rec in report.records:
        row = rows[(rec.sample_id, rec.mode)]
        assert (row.correct, row.decided_by, row.n_calls, row.l_eff, row.kcov, row.effective) == (
            rec.correct, rec.decided_by, rec.n_calls, rec.l_eff, rec.kcov, list(rec.effective))
    assert sub.results["n_predictions"] == 18


def test_the_prepared_benchmark_is_cached_per_worker_until_the_benchmark_changes(
        bench, researcher, django_capture_on_commit_callbacks) -> None:
    cache = pipeline.prepared_benchmarks
    cache.clear()
    first, _, uids = cache.get(bench)
    assert cache.get(bench)[0] is first  # unchanged: no re-read
    assert uids == sample_uids(bench)
    sample = bench.samples.get(uid="s2")
    sample.answer = "99"  # s2's answer changes: the wrong answer of good_file becomes right
    sample.save()
    second, _, _ = cache.get(bench)
    assert second is not first and second.infos["s2"].sample.answer == "99"
    sub = submit(bench, researcher, good_file(), django_capture_on_commit_callbacks)
    text = sub.results["modes"]["text"]["accuracy"]["overall"]
    assert (text["count"], text["n"]) == (5, 6)
    assert cache.get(bench)[0] is second


def test_the_benchmark_cache_is_bounded_by_samples(tmp_path, monkeypatch) -> None:
    cache = pipeline.prepared_benchmarks
    cache.clear()
    a = make_benchmark(tmp_path / "a", slug="bench-a")
    b = make_benchmark(tmp_path / "b", slug="bench-b")
    n = len(sample_uids(a))
    monkeypatch.setattr(cache, "MAX_SAMPLES", 2 * n)
    cache.get(a)
    cache.get(b)
    assert list(cache.entries) == [a.pk, b.pk]  # both fit
    monkeypatch.setattr(cache, "MAX_SAMPLES", n)
    cache.get(a)  # still cached: a hit moves it to the end, nothing is built
    assert list(cache.entries) == [b.pk, a.pk]
    a.save()  # a changed: b is evicted before a is built again
    cache.get(a)
    assert list(cache.entries) == [a.pk]


@pytest.mark.django_db(transaction=True)
def test_a_running_stage_renews_its_claim_while_it_is_silent_and_stops_when_it_ends(
        bench, researcher, settings) -> None:
    """A stage that reports no progress for longer than SUBMISSION_STUCK_SECONDS (a large benchmark
    being read, a slow judge) must not look dead to the sweeper while its worker lives."""
    import time

    settings.SUBMISSION_HEARTBEAT_SECONDS = 0.5
    sub = services.submission_create(benchmark=bench, owner=researcher, file=upload(good_file()),
                                     model_name="m1", enqueue=False)
    assert pipeline._claim(sub.pk, ("queued",), "validating", "me")
    start = Submission.objects.get(pk=sub.pk).heartbeat_at

    def beats() -> int:  # the renewals seen so far (the stage itself says nothing)
        return Submission.objects.filter(pk=sub.pk, heartbeat_at__gt=start).count()

    with pipeline._Lease(sub.pk, "me"):
        give_up = time.monotonic() + 30  # a hang, not a slow machine
        while not beats() and time.monotonic() < give_up:
            time.sleep(0.05)
        assert beats(), "no renewal in 30 s with a heartbeat every 0.5 s"
    # Read after the stage ended (the lease's thread is joined by then): nothing renews it any more.
    ended = Submission.objects.get(pk=sub.pk).heartbeat_at
    assert ended > start
    time.sleep(3 * settings.SUBMISSION_HEARTBEAT_SECONDS)
    assert Submission.objects.get(pk=sub.pk).heartbeat_at == ended  # the lease ended with the stage


@pytest.mark.parametrize(("extra", "field"), [
    ({"usage": {"input_tokens": 2**63, "output_tokens": 100}}, "usage.input_tokens"),
    ({"usage": {"input_tokens": 1000, "output_tokens": 1e19}}, "usage.output_tokens"),
    ({"cost_usd": 1e308}, "cost_usd"),
])
def test_a_huge_number_fails_the_submission_at_validation_naming_line_and_field(
        bench, researcher, django_capture_on_commit_callbacks, extra, field) -> None:
    lines = [prediction(uid, "text") for uid in ("s1", "s2", "s3")]
    lines[1].update(extra)
    sub = submit(bench, researcher, jsonl([*lines]), django_capture_on_commit_callbacks,
                 price_input_per_mtok=1.0, price_output_per_mtok=2.0)
    assert sub.status == "failed" and "internal error" not in sub.failure_reason
    assert [(e["line"], e["field"]) for e in sub.errors] == [(2, field)]
    assert "below" in sub.errors[0]["message"]
    assert not PredictionResult.objects.filter(submission=sub).exists()
