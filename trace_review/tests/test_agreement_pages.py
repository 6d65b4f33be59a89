"""Agreement read from the database, its page, the leaderboard's links to it, the export and the
human-verified figures. Verdicts are written directly, and the judge's rows set by hand, so every
figure can be worked out on paper (in the comments)."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command
from django.urls import reverse

from evaluation.models import PredictionResult, Submission
from trace_review import selectors, services
from trace_review.models import HumanVerdict, Trace
from trace_review.traces import trace_view

T, F = True, False


def _verdict(trace: Trace, user, answer: bool) -> HumanVerdict:
    shape = trace_view(trace, gold=True, run=False).shape
    assignment = trace.assignments.create(reviewer=user, locked_until="2100-01-01T00:00Z")
    return services.verdict_save(assignment=assignment, shape=shape, answer_correct=answer,
                                 key_steps=[T] * shape.n_key_steps, calls=[T] * shape.n_calls,
                                 step_scores=[1.0] * shape.n_steps)


@pytest.fixture
def judged(world, people):
    """Four alpha traces. The judge (offline) says correct T, T, F, F; the people say
    (T,T), (F,F), (F,F), (T,F)."""
    batch = services.batch_create(benchmark=world.benchmark, name="b", size=4, submission=world.alpha)
    traces = list(batch.traces.order_by("position"))
    for trace, judge, (h1, h2) in zip(traces, (T, T, F, F), ((T, T), (F, F), (F, F), (T, F))):
        PredictionResult.objects.filter(submission=trace.submission, sample=trace.sample, mode=trace.mode).update(
            correct=judge, decided_by="judge:offline")
        _verdict(trace, people["a1"], h1)
        _verdict(trace, people["a2"], h2)
    return traces


def _answer(page, judge: str = "offline"):
    row = next(r for r in page.judges if r.judge == judge)
    return next(a for k, a in row.kinds if k.key == "answer")


def test_answer_agreement_matches_the_hand_computation(judged):
    a = _answer(selectors.agreement_page(everything=True))
    # Trace 4 is a 1-1 tie: left out. Pairs (people, judge): (T,T), (F,T), (F,F) -> raw 2/3.
    # People T = 1, F = 2; judge T = 2, F = 1: p_e = (1*2 + 2*1) / 9 = 4/9, p_o = 6/9,
    # kappa = (6/9 - 4/9) / (1 - 4/9) = (2/9) / (5/9) = 0.4.
    assert (a.n_units, a.n_tied, a.n_traces) == (3, 1, 3)
    assert a.raw == pytest.approx(2 / 3)
    assert a.kappa.kappa == pytest.approx(0.4)
    assert a.confusion == [[1, 0], [1, 1]]  # rows people yes/no, columns judge yes/no
    # People's alpha over the four units (T,T) (F,F) (F,F) (T,F): o_TT = 2, o_FF = 4, o_TF = o_FT = 1,
    # n_T = 3, n_F = 5, n = 8; D_o = 2/8, D_e = 2*3*5 / (8*7) = 30/56; alpha = 1 - (1/4)/(30/56) = 8/15.
    assert a.human_alpha.alpha == pytest.approx(8 / 15)


def test_a_judge_that_says_correct_to_everything_gets_a_defined_kappa(judged, client):
    PredictionResult.objects.update(correct=True)
    a = _answer(selectors.agreement_page(everything=True))
    # Pairs (T,T), (F,T), (F,T): p_o = 1/3; people T = 1, F = 2; judge T = 3: p_e = 3/9; kappa = 0.
    assert a.kappa.kappa == pytest.approx(0.0) and not a.kappa.degenerate
    assert client.get(reverse("trace_review:agreement")).status_code == 200


# The ways a published submission leaves the board: unpublished, re-scored into failure (is_public stays
# set), deleted. Its traces must leave every public page with it.
OFF_BOARD = {"unpublished": {"is_public": False}, "failed on re-score": {"status": "failed"},
             "deleted": {"deleted_at": "2026-01-01T00:00Z"}}


@pytest.mark.parametrize("gone", list(OFF_BOARD))
def test_the_page_shows_public_submissions_to_visitors_and_everything_to_staff(judged, client, people, world, gone):
    page = client.get(reverse("trace_review:agreement")).content.decode()
    assert 'id="judge-offline"' in page and "0.400" in page and "66.7" in page
    Submission.objects.filter(pk=world.alpha.pk).update(**OFF_BOARD[gone])
    if gone == "deleted":  # nobody's page counts a deleted submission's verdicts
        assert 'id="judge-offline"' not in client.get(reverse("trace_review:agreement")).content.decode()
        return
    assert 'id="judge-offline"' not in client.get(reverse("trace_review:agreement")).content.decode()
    client.force_login(people["staff"])
    assert 'id="judge-offline"' in client.get(reverse("trace_review:agreement")).content.decode()


def test_the_leaderboard_links_process_figures_to_their_judges_agreement(judged, client, world):
    overview = client.get(f"/b/{world.benchmark.slug}/").content.decode()
    link = f"/review/agreement/s/{world.alpha.pk}/?kind=key_steps"
    assert link in overview
    assert f"/review/agreement/s/{world.alpha.pk}/" in client.get(f"/b/{world.benchmark.slug}/process/").content.decode()
    response = client.get(link)
    assert response.status_code == 302
    assert response.url == f"/review/agreement/?judge={world.alpha.judge_name}#{world.alpha.judge_name}-key_steps"
    Submission.objects.filter(pk=world.alpha.pk).update(status="failed")
    assert client.get(link).status_code == 404  # a submission off the board: its judge is not revealed
    Submission.objects.filter(pk=world.alpha.pk).update(status="done", is_public=False)
    assert client.get(link).status_code == 404  # a private submission's judge is not revealed


def test_the_export_holds_each_verdict_beside_the_judges(judged, client, people, tmp_path, world):
    assert client.get(reverse("trace_review:export")).status_code == 302  # sign in first
    client.force_login(people["a1"])
    assert client.get(reverse("trace_review:export")).status_code == 403
    client.force_login(people["admin"])
    response = client.get(reverse("trace_review:export") + f"?benchmark={world.benchmark.slug}")
    lines = [json.loads(x) for x in b"".join(response.streaming_content).splitlines()]
    assert len(lines) == 8
    first = lines[0]
    assert first["reviewer"] in ("a1", "a2") and first["human"]["answer_correct"] in (True, False)
    assert first["judge"]["answer_decided_by"] == "judge:offline" and first["created_at"]
    out = tmp_path / "v.jsonl"
    call_command("export_trace_verdicts", str(out), benchmark=world.benchmark.slug)
    assert [json.loads(x) for x in out.read_text().splitlines()] == lines


def test_human_verified_figures_appear_once_every_prediction_is_judged(world, people, client):
    url = reverse("trace_review:verified", args=[world.beta.pk])
    assert "Not human-verified yet: people have judged 0 of 9" in client.get(url).content.decode()
    batch = services.batch_create(benchmark=world.benchmark, name="all", size=50, submission=world.beta)
    traces = list(batch.traces.select_related("sample"))
    # People call every answer correct except on s9 (an aux-line sample, left out of the figures).
    for trace in traces:
        _verdict(trace, people["a1"], trace.sample.uid != "s9")
    modes = {m.mode: m for m in selectors.human_verified(world.beta)}
    adaptive = modes["adaptive"]
    assert adaptive.complete and adaptive.people.n == 8  # nine predictions, one aux-line
    assert adaptive.people.accuracy == pytest.approx(1.0)
    judge_right = PredictionResult.objects.filter(submission=world.beta, mode="adaptive", correct=True,
                                                  sample__aux_line=False).count()
    assert adaptive.judge.accuracy == pytest.approx(judge_right / 8)
    assert adaptive.people.tool_eff == pytest.approx(1.0)  # every call said valid
    assert not modes["text"].complete  # the batch was adaptive only
    page = client.get(url).content.decode()
    assert 'data-figure="accuracy"' in page and "100.0" in page
    # every share in percent, like the accuracy above it (tool effectiveness 1.0 -> 100.0, not 1.000)
    tool = page[page.index('data-figure="tool_eff"'):].split("</tr>")[0]
    assert "Tool effectiveness %" in tool and '<td class="num">100.0</td>' in tool and "1.000" not in tool
    model_page = client.get(f"/b/{world.benchmark.slug}/m/{world.beta.pk}/").content.decode()
    assert url in model_page


def test_load_demo_batch_is_made_once(world, people):
    from trace_review.demo import demo_trace_review_ensure

    first = demo_trace_review_ensure(world.benchmark.slug)
    assert "traces" in first
    assert "already there" in demo_trace_review_ensure(world.benchmark.slug)
    assert Trace.objects.count() == 12


def test_calls_settled_by_the_rules_are_compared_under_rule_not_the_judge(world, people):
    batch = services.batch_create(benchmark=world.benchmark, name="b", size=50, submission=world.alpha)
    trace = batch.traces.get(sample__uid="s1")  # rotate, then zoom
    pr = PredictionResult.objects.get(submission=world.alpha, sample=trace.sample, mode="adaptive")
    pr.calls = [{**pr.calls[0], "valid": False, "decided_by": "rule"}, {**pr.calls[1], "decided_by": "judge:offline"}]
    pr.save(update_fields=["calls"])
    _verdict(trace, people["a1"], True)  # says every call valid
    page = selectors.agreement_page(everything=True, kind="calls")
    calls = {row.judge: {k.key: a for k, a in row.kinds}["calls"] for row in page.judges}
    assert calls["rule"].n_units == 1 and calls["rule"].raw == 0.0  # the rule said invalid, the person valid
    assert calls["offline"].n_units == 1


def test_an_answer_left_to_an_llm_judge_is_no_verdict_to_compare(judged):
    """Undecided is not wrong (docs/metrics.md section 13): a trace whose answer no rule decided and no judge has
    gives the judge nothing to agree or disagree with, rather than a "no" against the people."""
    PredictionResult.objects.filter(submission=judged[0].submission, sample=judged[0].sample,
                                    mode=judged[0].mode).update(correct=False, decided_by="undecided")
    a = _answer(selectors.agreement_page(everything=True))
    # trace 1 drops out (the people said T, T); traces 2 and 3 are left: (F,T), (F,F) -> raw 1/2
    assert (a.n_units, a.n_traces) == (2, 2)
    assert a.raw == pytest.approx(1 / 2)
    page = selectors.agreement_page(everything=True)
    assert "undecided" not in [row.judge for row in page.judges]


def test_the_export_gives_an_undecided_answer_as_null_not_wrong(judged, client, people, world) -> None:
    """The verdicts export says what the Predictions API says of a row no rule decided: correct null."""
    first = judged[0]
    PredictionResult.objects.filter(submission=first.submission, sample=first.sample,
                                    mode=first.mode).update(correct=False, decided_by="undecided")
    client.force_login(people["admin"])
    response = client.get(reverse("trace_review:export") + f"?benchmark={world.benchmark.slug}")
    lines = [json.loads(x) for x in b"".join(response.streaming_content).splitlines()]
    mine = [x["judge"] for x in lines if x["trace"] == first.pk]
    assert mine and all(j["answer_correct"] is None and j["answer_decided_by"] == "undecided" for j in mine)
    others = [x["judge"]["answer_correct"] for x in lines if x["trace"] != first.pk]
    assert others and all(isinstance(c, bool) for c in others)
