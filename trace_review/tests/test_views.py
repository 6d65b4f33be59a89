"""The review pages: who may open what, the judge's verdicts never shown, a verdict saved by a form post."""

from __future__ import annotations

import pytest
from django.urls import reverse

from evaluation.models import PredictionResult
from trace_review import services
from trace_review.models import HumanVerdict, Trace


def client_for(client, user):
    client.force_login(user)
    return client


@pytest.fixture
def batch(world, people):
    return services.batch_create(benchmark=world.benchmark, name="Batch one", size=50, submission=world.alpha)


def _claim(client, batch):
    response = client.post(reverse("trace_review:next", args=[batch.pk]))
    assert response.status_code == 302
    return response.url


def test_anonymous_visitors_are_sent_to_sign_in(client, batch):
    for url in (reverse("trace_review:queue"), reverse("trace_review:batch", args=[batch.pk])):
        response = client.get(url)
        assert response.status_code == 302 and "/accounts/login/" in response.url


def test_people_without_a_role_cannot_take_traces(client, batch, people):
    c = client_for(client, people["outsider"])
    assert c.post(reverse("trace_review:next", args=[batch.pk])).status_code == 403
    assert "Batch one" not in c.get(reverse("trace_review:queue")).content.decode()


def test_another_persons_trace_is_a_404(client, batch, people):
    url = _claim(client_for(client, people["a1"]), batch)
    client.logout()
    assert client_for(client, people["a2"]).get(url).status_code == 404
    assignment_id = int(url.rstrip("/").split("/")[-1])
    assert client.get(reverse("trace_review:frame", args=[assignment_id])).status_code == 404


def test_a_batch_naming_people_is_closed_to_the_others(client, world, people):
    named = services.batch_create(benchmark=world.benchmark, name="Only a1", size=2, submission=world.alpha,
                                  reviewers=[people["a1"]])
    assert client_for(client, people["a2"]).post(reverse("trace_review:next", args=[named.pk])).status_code == 403
    client.logout()
    assert client_for(client, people["a1"]).post(reverse("trace_review:next", args=[named.pk])).status_code == 302


def test_only_benchmark_admins_create_batches(client, world, people):
    data = {"benchmark": world.benchmark.slug, "name": "New", "size": "4", "people": "2", "mode": "adaptive"}
    assert client_for(client, people["a1"]).post(reverse("trace_review:batch_create"), data).status_code == 403
    client.logout()
    response = client_for(client, people["admin"]).post(reverse("trace_review:batch_create"), data, follow=True)
    assert "created with 4 traces" in response.content.decode()


def test_the_review_page_is_blind_to_the_judge(client, batch, people):
    # Make the judge's verdicts unmistakable, then look for them on the page.
    PredictionResult.objects.filter(submission=batch.submission).update(decided_by="judge:blabbermouth-judge")
    c = client_for(client, people["a1"])
    url = _claim(c, batch)
    page = c.get(url).content.decode()
    assert "blabbermouth" not in page and "decided by" not in page.lower()
    assert batch.submission.model_name not in page  # blind to the model too
    assert " checked" not in page  # no answer is pre-filled
    assert 'name="answer"' in page and "Gold key steps" in page and "Reference toolchain" in page


def test_a_posted_verdict_is_stored_with_who_and_when_and_the_next_trace_opens(client, batch, people):
    c = client_for(client, people["a1"])
    url = _claim(c, batch)
    trace = Trace.objects.get(assignments__reviewer=people["a1"])
    from trace_review.traces import trace_view

    shape = trace_view(trace, gold=True, run=False).shape
    data = {"answer": "1", "comment": "fine", "then": "next"}
    data |= {f"key_step_{i}": "1" for i in range(shape.n_key_steps)}
    data |= {f"call_{i}": "0" for i in range(shape.n_calls)}
    data |= {f"step_{i}": "0.5" for i in range(shape.n_steps)}
    response = c.post(url, data)
    assert response.status_code == 302 and response.url != url  # the next trace
    verdict = HumanVerdict.objects.get(reviewer=people["a1"])
    assert verdict.trace == trace and verdict.answer_correct is True and verdict.comment == "fine"
    assert verdict.calls == [False] * shape.n_calls and verdict.step_scores == [0.5] * shape.n_steps
    assert verdict.created_at is not None
    # Coming back shows their own answers (and only theirs).
    assert 'value="1" checked' in c.get(url).content.decode()


def test_a_half_answered_verdict_is_refused_with_a_message(client, batch, people):
    c = client_for(client, people["a1"])
    url = _claim(c, batch)
    response = c.post(url, {"answer": "1"})  # every hand-made sample has two key steps: left open here
    assert response.status_code == 400 and "Not saved" in response.content.decode()
    # It names the questions still open, as the form does, and not the service's count of scores.
    assert "still open: key step 1, key step 2" in response.content.decode()
    assert "Expected" not in response.content.decode()
    assert 'name="answer" value="1" checked' in response.content.decode()  # what they did answer is kept
    assert not HumanVerdict.objects.exists()


def test_images_of_the_trace_are_served_to_its_reviewer(client, batch, people):
    c = client_for(client, people["a1"])
    # Take traces until one with tool calls comes up.
    for _ in range(10):
        url = _claim(c, batch)
        page = c.get(url).content.decode()
        if "/img/" in page:
            break
        c.post(reverse("trace_review:skip", args=[int(url.rstrip("/").split("/")[-1])]))
    assignment_id = int(url.rstrip("/").split("/")[-1])
    frame = c.get(reverse("trace_review:frame", args=[assignment_id]))
    assert frame.status_code == 200 and frame["Content-Type"] == "image/png"
    img = c.get(reverse("trace_review:image", args=[assignment_id, "img1"]))
    assert img.status_code == 200 and img.content[:8] == b"\x89PNG\r\n\x1a\n"
