"""Blind mode and MMReason's guessability audit: the threshold, the count of blind submissions,
which submissions count (public, done), and the flag written on the samples after scoring."""

from __future__ import annotations

import pytest
from django.test import override_settings

from annotation.models import Sample
from evaluation.metrics.guessability import guessability
from evaluation.models import Submission, SubmissionStatus
from evaluation.services import submission_delete, submission_set_public
from evaluation.tests.submission_helpers import UIDS, jsonl, prediction, upload

URL = "/api/v1/benchmarks/tiny/submissions/"


# ---- the library: hand-made correct sets
def test_k_minus_one_correct_is_not_guessable_and_k_is() -> None:
    audit = guessability([{"a", "b"}, {"a"}, set()], ["a", "b", "c"], k=2, min_blind=3)
    assert audit.audited and audit.n_blind == 3
    assert audit.flag("a") is True  # 2 of 3 = k
    assert audit.flag("b") is False  # 1 of 3 = k - 1
    assert audit.flag("c") is False


def test_two_blind_submissions_decide_nothing_three_do() -> None:
    two = guessability([{"a"}, {"a"}], ["a", "b"], k=2, min_blind=3)
    assert not two.audited and two.flag("a") is None and two.flag("b") is None
    three = guessability([{"a"}, {"a"}, set()], ["a", "b"], k=2, min_blind=3)
    assert three.flag("a") is True and three.flag("b") is False


def test_k_is_a_setting_and_unknown_samples_are_ignored() -> None:
    audit = guessability([{"a", "zz"}, {"a"}, {"a"}], ["a"], k=3)
    assert audit.flag("a") is True and "zz" not in audit.correct
    assert guessability([{"a"}, {"a"}, set()], ["a"], k=3).flag("a") is False
    with pytest.raises(ValueError):
        guessability([], ["a"], k=0)


# ---- the platform: blind submissions uploaded, scored, published
pytestmark_db = pytest.mark.django_db


@pytest.fixture
def blind(api, bench, django_capture_on_commit_callbacks):
    """Upload a blind submission right on ``right`` (a set of uids); published unless told."""
    def go(right: set[str], public: bool = True, modes: tuple[str, ...] = ("blind",)) -> Submission:
        lines = [prediction(uid, mode, right=uid in right) for mode in modes for uid in UIDS]
        with django_capture_on_commit_callbacks(execute=True):
            resp = api.post(URL, {"file": upload(jsonl(lines)), "model_name": f"m{len(right)}",
                                  "is_public": "true" if public else "false"}, format="multipart")
        assert resp.status_code == 202, resp.content
        sub = Submission.objects.get(pk=resp.json()["id"])
        assert sub.status == SubmissionStatus.DONE, sub.errors
        return sub
    return go


def flags(bench) -> dict[str, bool | None]:
    return dict(Sample.objects.filter(benchmark=bench).values_list("uid", "guessable"))


@pytest.mark.django_db
def test_a_blind_line_is_scored_in_its_own_mode(blind) -> None:
    sub = blind({"s1", "s2"}, modes=("text", "blind"))
    modes = sub.results["modes"]
    assert set(modes) == {"text", "blind"}
    assert modes["blind"]["accuracy"]["overall"]["count"] == 2
    assert sub.prediction_results.filter(mode="blind").count() == len(UIDS)


@pytest.mark.django_db
def test_flags_appear_with_the_third_public_blind_submission_and_follow_the_threshold(bench, blind) -> None:
    blind({"s1", "s2"})
    blind({"s1"})
    assert set(flags(bench).values()) == {None}  # two blind submissions: nothing decided
    blind({"s3"})
    got = flags(bench)
    assert got["s1"] is True  # 2 correct = k
    assert got["s2"] is False and got["s3"] is False  # 1 correct = k - 1
    assert got["s4"] is False


@pytest.mark.django_db
@override_settings(GUESSABLE_K=3)
def test_k_comes_from_the_settings(bench, blind) -> None:
    for right in ({"s1"}, {"s1", "s2"}, {"s1", "s2", "s3"}):
        blind(right)
    assert flags(bench)["s1"] is True and flags(bench)["s2"] is False


@pytest.mark.django_db
def test_private_blind_submissions_never_count(bench, blind, django_capture_on_commit_callbacks) -> None:
    blind({"s1"})
    blind({"s2"})
    blind(set())
    private = blind({"s1", "s2"}, public=False)
    assert flags(bench)["s1"] is False  # the private one would have made s1 guessable
    with django_capture_on_commit_callbacks(execute=True):
        submission_set_public(submission=private, public=True)
    assert flags(bench)["s1"] is True and flags(bench)["s2"] is True
    with django_capture_on_commit_callbacks(execute=True):
        submission_delete(submission=private)
    assert flags(bench)["s1"] is False
    first = Submission.objects.order_by("pk").first()
    with django_capture_on_commit_callbacks(execute=True):
        submission_set_public(submission=first, public=False)
    assert set(flags(bench).values()) == {None}  # back to two counted
