"""The LLM judge in a REAL worker process (test database, configured broker): verdicts are kept
as each batch is answered, outside the result transaction, so a worker killed mid-judging never
pays for a question twice, and a re-score of a finished submission sends no request."""

from __future__ import annotations

import re

import pytest

from evaluation import services
from evaluation.models import JudgeVerdict, Submission
from evaluation.tests.test_worker_integration import (  # noqa: F401 - fixtures
    assert_scored_once,
    bench,
    create,
    judge_server,
    owner,
    start_worker,
    status_of,
    wait_for,
)

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]
BATCH = 2


def test_a_worker_killed_mid_judging_keeps_its_verdicts_and_the_next_run_asks_only_the_rest(
        bench, owner, start_worker, judge_server) -> None:
    # Batches of 2, one at a time, 0.4 s each: the kill lands with some batches answered.
    server = judge_server(delay=0.4, flaky=False)
    env = {**server.env, "JUDGE_OPENAI_CONCURRENCY": "1", "JUDGE_OPENAI_BATCH": str(BATCH)}
    worker = start_worker(**env)
    sub = create(bench, owner)
    wait_for(lambda: len(server.questions) >= 3 * BATCH, worker, "three batches answered")
    worker.kill()
    answered_before = len(server.questions)
    assert status_of(sub) == "judging"
    # What was answered is in the table, though the run's result transaction was rolled back
    # (at most the batch in flight at the kill is lost).
    assert JudgeVerdict.objects.count() >= answered_before - BATCH

    restarted = start_worker(**env)
    wait_for(lambda: status_of(sub) == "done", restarted, "done after the restart")
    assert_scored_once(sub)
    unique = len(set(server.questions))
    assert unique > answered_before  # the second run had questions left to ask
    # Every question answered once, but for the one batch that may have been in flight at the kill.
    assert len(server.questions) <= unique + BATCH
    assert JudgeVerdict.objects.count() == unique

    # A re-score of the finished submission (staff, after a scorer change): the whole pipeline
    # runs again, every verdict comes from the table, no request is sent.
    requests_before = server.calls
    assert services.submission_rescore(submission=Submission.objects.get(pk=sub.pk))
    wait_for(lambda: status_of(sub) == "done", restarted, "re-scored")
    assert_scored_once(sub)
    assert server.calls == requests_before


def test_a_judge_that_fails_every_other_call_is_slow_not_dead_and_the_submission_ends_done(
        bench, owner, start_worker, judge_server) -> None:  # noqa: F811
    """The audit's drill (issue 27): a judge refusing every other call failed the submission once some batch
    drew four refusals in a row. Here the count-based retries are none at all (no retry of a request, no
    retry of the task), so the first refusal would fail it: only the patience with a judge that still
    answers carries it to done."""
    server = judge_server()  # every other call answered with HTTP 500
    worker = start_worker(**server.env, JUDGE_OPENAI_MAX_RETRIES="0", SUBMISSION_JUDGE_RETRIES="0",
                          JUDGE_OPENAI_BATCH="1", JUDGE_OPENAI_CONCURRENCY="4")
    sub = create(bench, owner)
    wait_for(lambda: status_of(sub) in ("done", "failed"), worker, "the end of scoring")
    assert_scored_once(sub)
    assert server.failures >= 5 and server.calls > server.failures, (server.calls, server.failures)


def test_a_judge_gone_for_good_fails_the_submission_with_the_share_it_judged(
        bench, owner, start_worker, judge_server) -> None:  # noqa: F811
    server = judge_server(flaky=False, fail_after=3)  # three answers, then nothing but HTTP 500
    worker = start_worker(**server.env, JUDGE_OPENAI_PATIENCE_SECONDS="2", SUBMISSION_JUDGE_RETRIES="0",
                          JUDGE_OPENAI_BATCH="1", JUDGE_OPENAI_CONCURRENCY="1")
    sub = create(bench, owner)
    wait_for(lambda: status_of(sub) in ("done", "failed"), worker, "the end of scoring")
    sub.refresh_from_db()
    assert sub.status == "failed"
    assert "The judge kept failing (1 try with backoff)" in sub.failure_reason
    share = re.search(r"It judged 3 of the (\d+) questions asked \((\d+) %\); those verdicts are kept",
                      sub.failure_reason)
    assert share, sub.failure_reason
    assert int(share[1]) > 3 and int(share[2]) == round(300 / int(share[1]))
