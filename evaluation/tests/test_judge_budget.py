"""The judge's prices and budget: the spend stored with the results and shown to the owner, a run
stopped before it would pass the budget, and a re-score after that asking only what is left."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from evaluation import services
from evaluation.judges import JudgeBudgetExceeded
from evaluation.models import JudgeVerdict, Submission
from evaluation.tests.submission_helpers import good_file, make_benchmark, upload
from evaluation.tests.test_judges_openai import _expected, _judge, _numbered, server  # noqa: F401 - fixture

pytestmark = pytest.mark.django_db


def test_the_judge_stops_before_a_request_would_pass_its_budget(server) -> None:  # noqa: F811
    # $1,000 per million input tokens: a 2-question request of ~400 tokens costs about $0.40.
    judge = _judge(server, batch_size=2, max_concurrency=1, price_input=1000.0, budget_usd=1.0)
    with pytest.raises(JudgeBudgetExceeded, match=r"budget of \$1 would be exceeded"):
        judge.answer_equivalence(_numbered(10))
    assert len(server.requests) == 2  # a third would have passed $1
    spent = sum(u["prompt_tokens"] for u in server.usage) * 1000.0 / 1e6
    assert judge.usage["cost_usd"] == pytest.approx(spent) and 0.5 < spent <= 1.0


def test_batches_in_flight_at_once_never_take_the_spending_past_the_budget(server) -> None:  # noqa: F811
    # Each 2-question request costs about $0.40 (as above); $1.30 fits three. Eight threads and a server that
    # takes 0.5 s to answer: the first three are in flight together, and a fourth must count what they hold.
    server.delay = 0.5
    judge = _judge(server, batch_size=2, max_concurrency=8, price_input=1000.0, budget_usd=1.3)
    stopped: JudgeBudgetExceeded | None = None
    try:
        judge.answer_equivalence(_numbered(20))
    except JudgeBudgetExceeded as exc:
        stopped = exc
    spent = sum(u["prompt_tokens"] for u in server.usage) * 1000.0 / 1e6
    assert spent <= 1.3, f"{len(server.requests)} requests spent ${spent:.2f} of a $1.30 budget"
    assert stopped is not None and "budget of $1.3 would be exceeded" in str(stopped)
    assert len(server.requests) == 3 and spent > 0.9
    assert server.arrivals[-1] - server.arrivals[0] < server.delay  # all three were in flight at once
    assert judge.usage["cost_usd"] == pytest.approx(spent) and judge.spending.spent_usd == pytest.approx(spent)


def test_the_spend_is_counted_from_the_reported_usage(server) -> None:  # noqa: F811
    judge = _judge(server, batch_size=5, price_input=2.0, price_output=8.0)
    assert judge.answer_equivalence(_numbered(10)) == _expected(10)
    tokens_in = sum(u["prompt_tokens"] for u in server.usage)
    tokens_out = sum(u["completion_tokens"] for u in server.usage)
    assert judge.usage == {"requests": 2, "questions": 10, "input_tokens": tokens_in, "output_tokens": tokens_out,
                           "cost_usd": pytest.approx((tokens_in * 2.0 + tokens_out * 8.0) / 1e6)}


@pytest.fixture
def owner():
    return get_user_model().objects.create_user("ada", "ada@example.org", "pw")


def _submit(tmp_path, owner, capture) -> Submission:
    bench = make_benchmark(tmp_path)
    with capture(execute=True):
        sub = services.submission_create(benchmark=bench, owner=owner, file=upload(good_file()), model_name="m1",
                                         enforce_limits=False)
    sub.refresh_from_db()
    return sub


# Transactional: no test-wide transaction around the run, so on PostgreSQL the verdicts go through
# the cache's own connection as in a worker (inside one, they would roll back with the results).
@pytest.mark.django_db(transaction=True)
def test_a_submission_over_the_budget_fails_with_the_reason_and_a_rescore_asks_only_the_rest(
        server, settings, tmp_path, owner, django_capture_on_commit_callbacks) -> None:  # noqa: F811
    settings.JUDGE_OPENAI_BASE_URL = server.url
    settings.JUDGE_OPENAI_API_KEY = "test"
    settings.JUDGE_OPENAI_BATCH = 2
    settings.JUDGE_OPENAI_CONCURRENCY = 1
    settings.JUDGE_PRICE_INPUT = 1000.0
    settings.JUDGE_BUDGET_USD = 1.0
    sub = _submit(tmp_path, owner, django_capture_on_commit_callbacks)
    assert sub.status == "failed"
    assert "Judging stopped before the budget was exceeded" in sub.failure_reason
    assert "budget of $1 would be exceeded" in sub.failure_reason
    kept = JudgeVerdict.objects.count()
    assert kept == len(server.requests) * 2  # every answered batch kept
    asked_before = len(server.requests)

    settings.JUDGE_BUDGET_USD = 0.0  # staff raise the budget and re-score
    with django_capture_on_commit_callbacks(execute=True):
        assert services.submission_rescore(submission=sub)
    sub.refresh_from_db()
    assert sub.status == "done", sub.failure_reason
    asked = sum(len(__import__("json").loads(r["messages"][1]["content"])["questions"])
                for r in server.requests[asked_before:])
    assert asked == JudgeVerdict.objects.count() - kept  # only the questions left


def test_the_judge_spend_is_stored_and_shown_to_the_owner(
        server, settings, tmp_path, owner, client, django_capture_on_commit_callbacks) -> None:  # noqa: F811
    settings.JUDGE_OPENAI_BASE_URL = server.url
    settings.JUDGE_OPENAI_API_KEY = "test"
    settings.JUDGE_PRICE_INPUT = 2.5
    settings.JUDGE_PRICE_OUTPUT = 10.0
    sub = _submit(tmp_path, owner, django_capture_on_commit_callbacks)
    assert sub.status == "done", sub.failure_reason
    usage = sub.results["judge_usage"]
    tokens_in = sum(u["prompt_tokens"] for u in server.usage)
    tokens_out = sum(u["completion_tokens"] for u in server.usage)
    assert usage["requests"] == len(server.requests)
    assert (usage["input_tokens"], usage["output_tokens"]) == (tokens_in, tokens_out)
    cost = (tokens_in * 2.5 + tokens_out * 10.0) / 1e6
    assert usage["cost_usd"] == pytest.approx(cost)
    client.force_login(owner)
    page = client.get(f"/submissions/{sub.pk}/").content.decode()
    assert (f"The judge was sent {len(server.requests)} request" in page
            and f"{tokens_in} input and {tokens_out} output tokens, ${cost:.4f}" in page)


def _asked(server) -> int:  # noqa: F811
    import json

    return sum(len(json.loads(r["messages"][1]["content"])["questions"]) for r in server.requests)


def test_the_estimate_before_judging_is_within_ten_percent_of_what_the_judge_was_asked(
        server, settings, tmp_path, owner, client, django_capture_on_commit_callbacks) -> None:  # noqa: F811
    settings.JUDGE_OPENAI_BASE_URL = server.url
    settings.JUDGE_OPENAI_API_KEY = "test"
    settings.JUDGE_OPENAI_BATCH = 4
    settings.JUDGE_PRICE_INPUT = 2.5
    settings.JUDGE_PRICE_OUTPUT = 10.0
    sub = _submit(tmp_path, owner, django_capture_on_commit_callbacks)
    assert sub.status == "done", sub.failure_reason
    est = sub.judge_estimate
    asked = _asked(server)
    assert asked > 0 and est["cached"] == 0
    assert abs(est["questions"] - asked) <= 0.1 * asked
    assert abs(est["requests"] - len(server.requests)) <= 0.1 * len(server.requests)
    real_in = sum(u["prompt_tokens"] for u in server.usage)
    assert abs(est["input_tokens"] - real_in) <= 0.1 * real_in
    assert est["cost_usd"] == pytest.approx((est["input_tokens"] * 2.5 + est["output_tokens"] * 10.0) / 1e6)
    client.force_login(owner)
    page = client.get(f"/submissions/{sub.pk}/").content.decode()
    assert f"Estimated before judging: the judge asked {est['questions']} questions" in page

    # Re-scored: every question is in the cache; the estimate says so, and nothing is sent.
    sent = len(server.requests)
    with django_capture_on_commit_callbacks(execute=True):
        assert services.submission_rescore(submission=sub)
    sub.refresh_from_db()
    assert sub.status == "done", sub.failure_reason
    assert (sub.judge_estimate["questions"], sub.judge_estimate["requests"]) == (0, 0)
    assert sub.judge_estimate["cached"] == asked and sub.judge_estimate["cost_usd"] == 0
    assert len(server.requests) == sent


def test_on_the_demo_the_estimate_is_within_ten_percent_of_the_real_count(
        server, settings, owner, django_capture_on_commit_callbacks) -> None:  # noqa: F811
    import orjson

    from annotation.demo import demo_benchmark_load
    from annotation.models import Benchmark
    from evaluation.demo import DEMO_MODELS
    from evaluation.selectors import scoring_samples
    from evaluation.simulator import simulate

    settings.JUDGE_OPENAI_BASE_URL = server.url
    settings.JUDGE_OPENAI_API_KEY = "test"
    demo_benchmark_load()
    bench = Benchmark.objects.get(slug="adaptmm-demo")
    samples, _ = scoring_samples(benchmark=bench)
    data = b"".join(orjson.dumps(x) + b"\n" for x in simulate(samples, DEMO_MODELS[0].profile))
    with django_capture_on_commit_callbacks(execute=True):
        sub = services.submission_create(benchmark=bench, owner=owner, file=upload(data), model_name="demo",
                                         enforce_limits=False)
    sub.refresh_from_db()
    assert sub.status == "done", sub.failure_reason
    est, asked = sub.judge_estimate, _asked(server)
    assert asked > 100
    assert abs(est["questions"] - asked) <= 0.1 * asked, (est, asked)
    assert abs(est["requests"] - len(server.requests)) <= 0.1 * len(server.requests), (est, len(server.requests))
    real_in = sum(u["prompt_tokens"] for u in server.usage)
    assert abs(est["input_tokens"] - real_in) <= 0.1 * real_in, (est, real_in)
