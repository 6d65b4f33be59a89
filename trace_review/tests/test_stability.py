"""Judge stability: a benchmark's cached questions asked again, N times, against the local fake
OpenAI-compatible server; the judge's agreement with itself on the agreement page."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser
from django.core.management import CommandError, call_command
from django.test import RequestFactory
from django.urls import reverse

from annotation.models import Benchmark
from evaluation import services
from evaluation.judge_cache import DatabaseVerdictCache
from evaluation.judges.openai_judge import OpenAIJudge
from evaluation.models import JudgeVerdict, PredictionResult, Submission
from evaluation.tests import test_judges_openai as fake
from evaluation.tests.submission_helpers import SLUG, good_file, make_benchmark, upload
from evaluation.tests.test_judges_openai import server  # noqa: F401 - fixture
from trace_review import services as tr_services
from trace_review.models import JudgeRepeatVerdict, JudgeStabilityRun
from trace_review.stability import OFFLINE_MESSAGE, run_stability, stability_figures
from trace_review.traces import trace_view
from trace_review.views_agreement import agreement as agreement_view

pytestmark = pytest.mark.django_db



@pytest.fixture
def scored(server, settings, tmp_path, django_capture_on_commit_callbacks):  # noqa: F811
    """A benchmark whose one submission was scored by the fake server's judge: its verdicts are cached."""
    settings.JUDGE_OPENAI_BASE_URL = server.url
    settings.JUDGE_OPENAI_API_KEY = "test"
    owner = get_user_model().objects.create_user("ada", "ada@example.org", "pw")
    bench = make_benchmark(tmp_path)
    with django_capture_on_commit_callbacks(execute=True):
        sub = services.submission_create(benchmark=bench, owner=owner, file=upload(good_file()), model_name="m1",
                                         enforce_limits=False)
    sub.refresh_from_db()
    assert sub.status == "done", sub.failure_reason
    return bench


def _fickle(monkeypatch, uid: str) -> None:
    """From now on the server answers the tool-call question of sample ``uid`` the other way every
    second time it is asked, starting now (asks 1, 3, ... say invalid, 2, 4, ... valid); all else as before."""
    seen: dict[str, int] = {}
    steady = fake._verdict

    def verdict(system: str, user: dict) -> dict:
        got = steady(system, user)
        if '"valid"' in system and user["question"] == f"How many squares in {uid}?":
            key = json.dumps({k: v for k, v in user.items() if k != "id"}, sort_keys=True)
            seen[key] = seen.get(key, 0) + 1
            if seen[key] % 2 == 1:
                return {"valid": not got["valid"]}
        return got

    monkeypatch.setattr(fake, "_verdict", verdict)


def _judge(server) -> OpenAIJudge:  # noqa: F811
    return OpenAIJudge(model="gpt-4o-mini", base_url=server.url, api_key="test", timeout=5.0,
                       cache=DatabaseVerdictCache(), sleep=lambda s: None)


def test_a_judge_that_changes_its_mind_gets_the_hand_computed_self_agreement(scored, server, monkeypatch):  # noqa: F811
    judge = _judge(server)
    cached = {k: JudgeVerdict.objects.filter(prompt_version__startswith=k).count()
              for k in ("answer_equivalence", "key_step_matching", "tool_call_validity", "step_scores")}
    before = sorted(JudgeVerdict.objects.values_list("judge", "prompt_version", "input_hash", "verdict", "created"))
    assert cached == {"answer_equivalence": 0, "key_step_matching": 6, "tool_call_validity": 6, "step_scores": 6}
    _fickle(monkeypatch, uid="s1")
    asked = len(server.requests)
    run = run_stability(benchmark=scored, sample=1000, repeats=3, seed=7, judge=judge)
    figures = stability_figures(run)

    assert run.sample_size == sum(cached.values()) and run.repeats == 3
    assert JudgeRepeatVerdict.objects.filter(run=run).count() == 3 * run.sample_size
    assert len(server.requests) > asked  # really asked again: the cache was not read ...
    # ... nor written: every cached verdict is as it was.
    assert sorted(JudgeVerdict.objects.values_list("judge", "prompt_version", "input_hash", "verdict",
                                                   "created")) == before
    # One question of the 18 drawn changed its verdict: s1's call, invalid / valid / invalid.
    assert (figures.questions, figures.all_agree) == (18, 17)
    calls = next(k for k in figures.kinds if k.kind == "tool_call_validity")
    assert (calls.questions, calls.all_agree) == (6, 5)
    # Krippendorff's alpha, nominal, by hand. Five units (T,T,T): 6 ordered pairs x 1/2 -> o[T][T] = 15.
    # One unit (F,T,F): o[F][T] = o[T][F] = 2 x 1/2 = 1, o[F][F] = 1. n_T = 16, n_F = 2, n = 18.
    # D_o = 2/18 = 1/9; D_e = 2 x 16 x 2 / (18 x 17) = 32/153; alpha = 1 - 153/288 = 135/288 = 0.46875.
    assert calls.alpha.alpha == pytest.approx(135 / 288)
    others = [k for k in figures.kinds if k.kind != "tool_call_validity"]
    assert {k.kind for k in others} == {"key_step_matching", "step_scores"}
    assert all(k.all_agree == k.questions == 6 and k.alpha.alpha == 1.0 for k in others)


def test_the_command_refuses_the_offline_judge_and_the_page_says_why(settings, client, tmp_path) -> None:
    settings.JUDGE_OPENAI_BASE_URL = ""
    make_benchmark(tmp_path)
    with pytest.raises(CommandError, match="offline judge is deterministic"):
        call_command("judge_stability", SLUG, "--sample", "5")
    assert not JudgeStabilityRun.objects.exists()
    page = client.get(reverse("trace_review:agreement")).content.decode()
    assert "self-agreement is 1 by construction" in page
    assert "deterministic" in OFFLINE_MESSAGE


def test_the_page_shows_the_judge_against_itself(scored, server, monkeypatch, client) -> None:  # noqa: F811
    _fickle(monkeypatch, uid="s1")
    call_command("judge_stability", SLUG, "--sample", "1000", "--repeats", "2", "--seed", "3")
    run = JudgeStabilityRun.objects.get()
    page = client.get(reverse("trace_review:agreement") + f"?benchmark={SLUG}").content.decode()
    section = page[page.index('id="stability"'):]
    assert f"Judge <code>{run.judge}</code>" in section
    assert f"{run.sample_size} questions × 2 repeats, seed 3" in section
    assert "tool_call_validity.v2" in section
    # 5 of 6 tool-call questions agree: 83.3 %.
    row = section[section.index('data-kind="tool_call_validity"'):]
    assert '<td class="num self-agree">83.3</td>' in row[:400]


def test_only_staff_may_start_a_run(scored, server, client, django_capture_on_commit_callbacks) -> None:  # noqa: F811
    url = reverse("trace_review:stability_start")
    data = {"benchmark": SLUG, "sample": "4", "repeats": "2", "seed": "1"}
    user = get_user_model().objects.create_user("bob", "bob@example.org", "pw")
    client.force_login(user)
    assert client.post(url, data).status_code == 403
    assert not JudgeStabilityRun.objects.exists()
    page = client.get(reverse("trace_review:agreement")).content.decode()
    assert 'id="stability-form"' not in page

    user.is_staff = True
    user.save()
    asked = len(server.requests)
    response = client.post(url, data)  # the test settings run the task at once (eager)
    assert response.status_code == 302
    run = JudgeStabilityRun.objects.get()
    assert (run.sample_size, run.repeats, run.seed, run.started_by) == (4, 2, 1, user)
    assert len(server.requests) > asked
    assert 'id="stability-form"' in client.get(reverse("trace_review:agreement")).content.decode()


def _judged_by_people(benchmark: Benchmark) -> None:
    """The scored submission published, and two people agreeing with its judge on every trace."""
    sub = services.submission_set_public(submission=Submission.objects.get(benchmark=benchmark), public=True)
    batch = tr_services.batch_create(benchmark=benchmark, name="b", size=100, submission=sub)
    people = [get_user_model().objects.create_user(n, f"{n}@example.org", "pw") for n in ("p1", "p2")]
    for trace in batch.traces.all():
        judged = PredictionResult.objects.get(submission=sub, sample=trace.sample, mode=trace.mode)
        shape = trace_view(trace, gold=True, run=False).shape
        for person in people:
            assignment = trace.assignments.create(reviewer=person, locked_until="2100-01-01T00:00Z")
            tr_services.verdict_save(assignment=assignment, shape=shape, answer_correct=judged.correct,
                                     key_steps=judged.key_steps, calls=[c["valid"] for c in judged.calls],
                                     step_scores=judged.step_scores)


def test_the_judge_card_shows_its_self_agreement_beside_its_agreement_with_people(scored, server, monkeypatch):  # noqa: F811
    _judged_by_people(scored)
    _fickle(monkeypatch, uid="s1")
    run = run_stability(benchmark=scored, sample=1000, repeats=3, judge=_judge(server))
    request = RequestFactory().get("/review/agreement/")
    request.user = AnonymousUser()
    card = agreement_view(request).content.decode()
    card = card[card.index(f'id="judge-{run.judge}"'):card.index('id="stability"')]
    assert "Against itself: all 3 repeats agree on <strong>94.4 %</strong> of 18 questions" in card  # 17/18
    # Beside it, its agreement with the two people, who said what it said: every unit agrees.
    for kind in ("key_steps", "calls", "step_scores"):
        row = card[card.index(f'id="{run.judge}-{kind}"'):]
        row = row[:row.index("</tr>")]
        assert '<td class="num raw">100.0' in row, row


def test_bad_numbers_and_too_few_repeats_are_refused_with_a_message(scored, client) -> None:
    with pytest.raises(CommandError, match="--repeats must be at least 2"):
        call_command("judge_stability", SLUG, "--repeats", "1")
    with pytest.raises(CommandError, match="No benchmark 'nope'"):
        call_command("judge_stability", "nope")
    staff = get_user_model().objects.create_user("sam", "sam@example.org", "pw", is_staff=True)
    client.force_login(staff)
    url = reverse("trace_review:stability_start")
    for data, message in (({"benchmark": SLUG, "sample": "x"}, "must be whole numbers"),
                          ({"benchmark": SLUG, "sample": "5", "repeats": "1"}, "repeats 2 to 10")):
        page = client.post(url, data, follow=True).content.decode()
        assert message in page
    assert not JudgeStabilityRun.objects.exists()


def test_a_judge_that_fails_stores_nothing_and_the_command_says_why(scored, server) -> None:  # noqa: F811
    server.script = [("status", 400)]  # refused: not retried
    with pytest.raises(CommandError, match="The judge failed; nothing was stored: .*HTTP 400"):
        call_command("judge_stability", SLUG, "--sample", "3", "--repeats", "2")
    assert not JudgeStabilityRun.objects.exists() and not JudgeRepeatVerdict.objects.exists()
