"""Proposal runs (evaluation/proposal_runs.py, annotation/proposals.py) against the simulated model in its own
process: each part of a proposal stored and validated, an invalid proposal kept with its error, the address guard
and the key at rest as hosted runs have them, a resumed run paying nothing twice; then on a REAL Celery worker."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model

from annotation.models import Proposal, ProposalRun
from evaluation import hosted_runs, proposal_runs, secrets
from evaluation.run_inputs import write_simulated_key
from evaluation.tests.harness_fixtures import log_lines, simulated_model
from evaluation.tests.submission_helpers import make_benchmark
from evaluation.tests.test_worker_integration import start_worker, wait_for  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db


@pytest.fixture
def runs_settings(settings, tmp_path: Path):  # noqa: ANN201
    settings.RUNS_ALLOW_PRIVATE_ENDPOINTS = True
    settings.RUNS_CACHE_PATH = tmp_path / "run-cache.sqlite3"
    settings.RUNS_REQUEST_RETRIES = 0
    return settings


def _owner(**flags: bool):  # noqa: ANN202
    users = get_user_model().objects
    return users.filter(username="ada").first() or users.create_user("ada", "ada@example.org", "pw", **flags)


def _run(benchmark, url: str, **kwargs) -> ProposalRun:  # noqa: ANN001
    return proposal_runs.proposal_run_create(benchmark=benchmark, owner=_owner(is_staff=True), endpoint=url,
                                             model="sim-proposer", api_key="sk-secret-proposals", **kwargs)


def test_each_part_is_stored_validated_and_an_invalid_proposal_is_kept_with_its_error(
        runs_settings, tmp_path: Path, django_capture_on_commit_callbacks) -> None:  # noqa: ANN001
    benchmark = make_benchmark(tmp_path / "bench")
    key = write_simulated_key(benchmark, tmp_path / "key.jsonl")
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"s2": "bad_proposal", "s3": "garbled_proposal"}))
    log = tmp_path / "log.jsonl"
    with simulated_model(key, log, "--script", str(script)) as url:
        run = _run(benchmark, url, sample_uids=["s1", "s2", "s3"], details={"price_input_per_mtok": 1.0})
        assert run.progress_total == 3 and run.estimate["requests"] == 3 and run.estimate["cost_usd"] > 0
        stored = ProposalRun.objects.get(pk=run.pk)
        # The key at rest is hosted runs' Fernet token, never the key in clear.
        assert "sk-secret" not in stored.api_key_encrypted
        assert secrets.decrypt_api_key(stored.api_key_encrypted) == "sk-secret-proposals"
        proposal_runs.proposal_run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == "done", run.failure_reason
    assert run.api_key_encrypted == "" and run.progress_done == 3 and run.requests_sent == 3
    by_uid = {p.sample.uid: p for p in Proposal.objects.filter(run=run).select_related("sample")}
    good = by_uid["s1"]
    assert good.errors == {}, good.raw_reply
    assert good.prompt_version == "proposals_v1" and good.model == "sim-proposer"
    # The approved region [10, 10, 60, 40] moved right by a tenth of its width (simulated.proposal_reply).
    assert good.regions == [{"box": [15, 10, 65, 40], "label": "region 1"}]
    assert good.transform == [{"op": "rotate", "angle": 90}]
    assert good.key_steps == ["Rotate the image upright."]
    assert [c["tool"] for c in good.toolchain] == ["rotate", "zoom_in"]
    assert good.toolchain[1]["input"] == "img1" and 0.3 <= good.confidence <= 0.95
    bad = by_uid["s2"]
    assert set(bad.errors) == {"regions", "transform"} and "warp_magic" in bad.errors["transform"]
    assert bad.regions is None and bad.transform is None and bad.key_steps == ["Rotate the image upright."]
    assert "warp_magic" in bad.raw_reply
    garbled = by_uid["s3"]
    assert garbled.errors == {"reply": "the reply holds no JSON object"} and garbled.raw_reply.startswith("I think")
    # A proposal request is one request per item, with the image; none of the run's answers is an annotation.
    assert [r["uid"] for r in log_lines(log)] == ["s1", "s2", "s3"]
    assert all(len(r["first_images"]) == 1 for r in log_lines(log))
    assert not benchmark.samples.filter(annotations__annotator__isnull=False).exists()


def test_a_run_again_replays_the_cache_and_pays_nothing_twice(runs_settings, tmp_path: Path) -> None:
    benchmark = make_benchmark(tmp_path / "bench")
    key = write_simulated_key(benchmark, tmp_path / "key.jsonl")
    log = tmp_path / "log.jsonl"
    with simulated_model(key, log) as url:
        run = _run(benchmark, url, split="dev")
        proposal_runs.proposal_run_execute(run_id=run.pk)
        sent = len(log_lines(log))
        # A worker that died after the first two answers: the run is taken up again, its answers replayed.
        Proposal.objects.filter(run=run, sample__uid="s3").delete()
        ProposalRun.objects.filter(pk=run.pk).update(status="running", claim_token="", attempts=0,
                                                    api_key_encrypted=secrets.encrypt_api_key("k"))
        proposal_runs.proposal_run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert sent == 3 and len(log_lines(log)) == 3
    assert run.status == "done" and run.progress_done == 3 and run.requests_cached == 1


def test_a_private_address_is_refused_when_private_endpoints_are_off(settings, tmp_path: Path) -> None:
    settings.RUNS_ALLOW_PRIVATE_ENDPOINTS = False
    benchmark = make_benchmark(tmp_path / "bench")
    for url in ("http://127.0.0.1:8000/v1", "http://10.0.0.5/v1", "http://169.254.169.254/latest"):
        with pytest.raises(proposal_runs.ProposalRunRejected, match="endpoint"):
            _run(benchmark, url)
    assert not ProposalRun.objects.exists()
    # The guard and the key's encryption are hosted runs' own, not copies.
    assert proposal_runs.check_endpoint is hosted_runs.check_endpoint
    assert proposal_runs.encrypt_api_key is hosted_runs.encrypt_api_key is secrets.encrypt_api_key


def test_unknown_items_and_a_missing_model_are_refused(runs_settings, tmp_path: Path) -> None:
    benchmark = make_benchmark(tmp_path / "bench")
    with pytest.raises(proposal_runs.ProposalRunRejected, match="nope"):
        _run(benchmark, "http://127.0.0.1:9/v1", sample_uids=["s1", "nope"])
    with pytest.raises(proposal_runs.ProposalRunRejected, match="model"):
        proposal_runs.proposal_run_create(benchmark=benchmark, owner=_owner(), endpoint="http://127.0.0.1:9/v1",
                                          model=" ")


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_proposal_run_reaches_done_on_a_real_worker(settings, tmp_path: Path, start_worker) -> None:  # noqa: ANN001, F811
    queue = f"test-runs-{uuid.uuid4().hex[:8]}"
    settings.RUNS_QUEUE = queue
    settings.RUNS_CACHE_PATH = tmp_path / "run-cache.sqlite3"
    settings.RUNS_ALLOW_PRIVATE_ENDPOINTS = True
    env = {"RUNS_QUEUE": queue, "RUNS_CACHE_PATH": str(settings.RUNS_CACHE_PATH), "RUNS_ALLOW_PRIVATE_ENDPOINTS": "1"}
    benchmark = make_benchmark(tmp_path / "bench")
    key = write_simulated_key(benchmark, tmp_path / "key.jsonl")
    with simulated_model(key, tmp_path / "log.jsonl") as url:
        worker = start_worker(queues=f"{settings.SUBMISSIONS_QUEUE},{queue}", beat=False, **env)
        run = _run(benchmark, url, options={"budget_usd": 5.0})
        wait_for(lambda: ProposalRun.objects.get(pk=run.pk).is_final, worker, "the proposal run to end", timeout=60)
    run.refresh_from_db()
    assert run.status == "done", run.failure_reason
    assert run.progress_done == 6 and run.api_key_encrypted == ""
    assert Proposal.objects.filter(run=run, errors={}).count() == 6


def test_a_benchmarks_admin_sees_the_estimate_then_starts_a_run_from_the_page(runs_settings, tmp_path: Path,
                                                                               client) -> None:  # noqa: ANN001
    from annotation.models import Role
    from annotation.workbench.access import role_grant

    benchmark = make_benchmark(tmp_path / "bench")
    admin = _owner()
    role_grant(benchmark=benchmark, user=admin, role=Role.ADMIN)
    client.force_login(admin)
    page = f"/runs/proposals/{benchmark.slug}/"
    form = {"endpoint": "http://127.0.0.1:9/v1", "model": "sim", "api_key": "sk-x", "split": "dev",
            "items": "s1, s2", "price_input_per_mtok": "2"}
    estimate = client.post(page, form)
    assert estimate.status_code == 200 and b"2 items: 2 requests" in estimate.content
    assert not ProposalRun.objects.exists()  # an estimate creates nothing
    started = client.post(page, {**form, "confirm": "1"})
    run = ProposalRun.objects.get()
    assert started.status_code == 302 and started["Location"] == f"{page}{run.pk}/"
    assert run.sample_uids == ["s1", "s2"] and run.owner == admin and run.status == "queued"
    detail = client.get(started["Location"])
    assert b"stored encrypted" in detail.content and b"sk-x" not in detail.content
    refused = client.post(page, {**form, "items": "s1 zz9"})
    assert b"zz9 is not in" in refused.content and ProposalRun.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_the_heartbeat_thread_renews_the_claim_while_a_request_is_slow_and_sees_a_takeover(settings, tmp_path) -> None:  # noqa: ANN001
    import time

    from django.utils import timezone

    settings.RUNS_HEARTBEAT_SECONDS = 1
    benchmark = make_benchmark(tmp_path / "bench")
    past = timezone.now() - timezone.timedelta(minutes=5)
    run = ProposalRun.objects.create(benchmark=benchmark, owner=_owner(), endpoint="http://x/v1", model="m",
                                     prompt_version="proposals_v1", status="running", claim_token="mine",
                                     heartbeat_at=past)
    with proposal_runs._Heartbeat(run.pk, "mine") as heartbeat:
        time.sleep(1.3)  # the thread's own period: one request taking longer than a beat
        assert ProposalRun.objects.get(pk=run.pk).heartbeat_at > past
        ProposalRun.objects.filter(pk=run.pk).update(claim_token="another worker's")
        assert heartbeat.lost.wait(2.5)
