"""manage.py run_model on the demo benchmark against the simulated model (its own process), with the
real registry, the real images and the real scorer: the scores are what the model's policy implies,
a second run sends nothing, and every line records the model id the endpoint returned."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.demo import DEMO_SLUG, demo_benchmark_load
from annotation.models import Benchmark
from evaluation.harness.simulated import answer_for
from evaluation.models import PredictionResult, Submission
from evaluation.run_inputs import write_simulated_key
from evaluation.tests.harness_fixtures import log_lines, simulated_model
from evaluation.tests.submission_helpers import SLUG, make_benchmark

pytestmark = pytest.mark.django_db
LIMIT = 12


@pytest.fixture
def demo(tmp_path: Path):  # noqa: ANN201
    """The demo benchmark (151 samples, both splits), its first LIMIT samples in the simulated model's key."""
    demo_benchmark_load()
    get_user_model().objects.create_user("runner", "runner@example.org", "pw", is_staff=True)
    benchmark = Benchmark.objects.get(slug=DEMO_SLUG)
    key = write_simulated_key(benchmark, tmp_path / "key.jsonl", limit=LIMIT)
    return benchmark, key


@pytest.fixture
def tiny(tmp_path: Path):  # noqa: ANN201
    """The 6-sample benchmark, for what needs no demo (quicker to import)."""
    benchmark = make_benchmark(tmp_path / "tiny")
    return benchmark, write_simulated_key(benchmark, tmp_path / "tiny-key.jsonl")


def _run(url: str, tmp_path: Path, *extra: str, slug: str = DEMO_SLUG) -> str:
    out = StringIO()
    call_command("run_model", slug, "--endpoint", url, "--model", "sim-requested", "--limit", str(LIMIT),
                 "--out", str(tmp_path / "predictions.jsonl"), "--cache", str(tmp_path / "cache.sqlite3"),
                 "--no-progress", "--concurrency", "4", *extra, stdout=out)
    return out.getvalue()


def test_run_model_scores_what_the_simulated_policy_implies_and_a_rerun_sends_nothing(demo, tmp_path: Path) -> None:  # noqa: ANN001
    benchmark, key = demo
    log = tmp_path / "log.jsonl"
    keyed = {json.loads(x)["uid"]: json.loads(x) for x in key.read_text().splitlines()}
    with simulated_model(key, log, "--served-model", "sim-served-2026-11", "--tool-calls", "2") as url:
        printed = _run(url, tmp_path, "--submit", "--user", "runner", "--sync", "--model-name", "Sim runner")
        sent = len(log_lines(log))
        first_file = (tmp_path / "predictions.jsonl").read_bytes()
        again = _run(url, tmp_path, "--user", "runner")  # the same owner (the cache is theirs), not submitted
    assert sent > 0 and len(log_lines(log)) == sent  # the second run sent no request
    assert "; 0 requests sent, " in again
    def answers(data: bytes) -> list:
        return [{**x, "latency_ms": 0, "run": {**x["run"], "cached_turns": 0}}
                for x in map(json.loads, data.decode().splitlines())]

    assert answers((tmp_path / "predictions.jsonl").read_bytes()) == answers(first_file)  # the same answers

    lines = [json.loads(x) for x in first_file.decode().splitlines()]
    assert len(lines) == LIMIT * 4
    assert all(line["run"]["model_ids"] == ["sim-served-2026-11"] for line in lines)
    # every tool call's output image reached the model (the model answers NO TOOL IMAGE otherwise)
    adaptive = [line for line in lines if line["mode"] == "adaptive"]
    assert all(len(line["run"]["images_sent"]) == 3 and all(len(t) == 1 for t in line["run"]["images_sent"][1:])
               for line in adaptive)

    # `submit --sync`'s metrics JSON, then each scored row is the policy's answer.
    metrics = json.loads(printed[printed.index("\n{") + 1:])
    sub = Submission.objects.get(model_name="Sim runner")
    assert sub.status == "done" and metrics["n_predictions"] == LIMIT * 4
    rows = PredictionResult.objects.filter(submission=sub).select_related("sample")
    assert rows.count() == LIMIT * 4
    for row in rows:
        entry = keyed[row.sample.uid]
        seen_as = "text" if row.mode == "oracle" and entry["oracle_sha256"] == entry["img0_sha256"] else row.mode
        if row.mode == "blind":  # no image: a question asked twice (same options) reads as its first sample
            entry = next(e for e in keyed.values()
                         if (e["question"], e["options"]) == (entry["question"], entry["options"]))
        said = answer_for(entry, seen_as)
        assert row.correct == (said == keyed[row.sample.uid]["answer"]), (row.sample.uid, row.mode, said)
    for mode in ("text", "adaptive", "oracle", "blind"):
        right = sum(1 for row in rows if row.mode == mode and row.correct)
        assert metrics["modes"][mode]["accuracy"]["overall"]["count"] <= right


def test_estimate_only_prints_the_estimate_and_sends_nothing(tiny, tmp_path: Path) -> None:  # noqa: ANN001
    _, key = tiny
    log = tmp_path / "log.jsonl"
    with simulated_model(key, log) as url:
        printed = _run(url, tmp_path, "--estimate-only", "--prices", "0.2", "0.6", slug=SLUG)
    assert "requests" in printed and "$" in printed and log_lines(log) == []
    assert not (tmp_path / "predictions.jsonl").exists()


def test_a_benchmark_with_model_backed_tools_refuses_adaptive_with_the_reason(tiny, tmp_path: Path) -> None:  # noqa: ANN001
    benchmark, _ = tiny
    Benchmark.objects.filter(pk=benchmark.pk).update(declared_tools=[{"name": "OCR", "description": "reads text"}])
    with pytest.raises(CommandError, match="declares tools the platform cannot run.*OCR"):
        _run("http://127.0.0.1:9/v1", tmp_path, "--modes", "adaptive", slug=SLUG)


def test_failed_attempts_are_submitted_scored_wrong_and_counted_by_class(demo, tmp_path: Path) -> None:  # noqa: ANN001
    benchmark, key = demo
    uids = [json.loads(x)["uid"] for x in key.read_text().splitlines()][:4]
    # Failures that asking again cannot change (a provider's 5xx is asked again: test_runs_under_faults.py).
    (tmp_path / "script.json").write_text(json.dumps({uids[0]: "content_filter", uids[1]: "loop"}))
    with simulated_model(key, tmp_path / "log.jsonl", "--script", str(tmp_path / "script.json")) as url:
        out = StringIO()
        call_command("run_model", DEMO_SLUG, "--endpoint", url, "--model", "sim-fail", "--limit", "4",
                     "--modes", "adaptive", "--max-turns", "2", "--max-retries", "0", "--no-progress",
                     "--out", str(tmp_path / "p.jsonl"), "--cache", str(tmp_path / "c.sqlite3"),
                     "--submit", "--user", "runner", "--sync", stdout=out)
    printed = out.getvalue()
    assert "failures: 1 content_filter, 1 max_turns" in printed
    metrics = json.loads(printed[printed.index("\n{") + 1:])["modes"]["adaptive"]
    assert metrics["failures"]["content_filter"] == 1 and metrics["failures"]["max_turns"] == 1
    rows = PredictionResult.objects.filter(submission__model_name="sim-fail", sample__uid__in=uids[:2])
    assert rows.count() == 2 and not any(r.correct for r in rows)


def test_oracle_runs_on_the_test_split_can_be_turned_off_by_the_benchmark(tiny, tmp_path: Path) -> None:  # noqa: ANN001
    benchmark, _ = tiny
    Benchmark.objects.filter(pk=benchmark.pk).update(oracle_runs_on_test=False)
    with pytest.raises(CommandError, match="turned oracle runs off for its test split"):
        _run("http://127.0.0.1:9/v1", tmp_path, "--modes", "oracle", slug=SLUG)
    with pytest.raises(CommandError, match="turned oracle runs off"):
        _run("http://127.0.0.1:9/v1", tmp_path, "--modes", "text,oracle", "--split", "test", slug=SLUG)
    printed = _run("http://127.0.0.1:9/v1", tmp_path, "--modes", "oracle", "--split", "dev", "--estimate-only",
                   slug=SLUG)
    assert "requests" in printed
