"""Proposal runs (issue 39, docs/annotation.md "Proposals"): a VLM endpoint asked, item by item, for the key
regions, the recovery transform, the key steps and the reference chain an annotator would otherwise draw.

Registered exactly as a hosted run is (hosted_runs.py): the same address guard (check_endpoint at creation,
the guarded HTTP client at each connection), the key encrypted with evaluation.secrets and emptied when the
run ends, an estimate before it starts, a budget, the request cache (a resumed run pays for nothing twice),
the runs queue with a claim, a heartbeat and the sweeper. One request per item, in order; each answer is
stored at once as a Proposal (annotation.models), its parts validated (annotation/proposals.py), an invalid
part kept with its error; a request that got no answer is kept too, with ``errors["request"]``.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from annotation.benchmark_fields import default_registry_view
from annotation.imagetools import REGISTRY
from annotation.media import media_of, still_path
from annotation.models import PROPOSAL_RUN_ACTIVE, Benchmark, Proposal, ProposalRun, ProposalRunStatus, Sample
from annotation.proposals import PROMPT_VERSION, parse_proposal, prompt_texts
from evaluation import queueing, services
from evaluation.endpoint_limits import BudgetExceeded, Spending
from evaluation.harness.cache import SqliteRequestCache
from evaluation.harness.client import Endpoint, EndpointUnusable, Failure, Settings, estimate_request_tokens
from evaluation.harness.items import Medium, RunItem
from evaluation.harness.loop import DEFAULT_MAX_IMAGE_PIXELS, medium_part
from evaluation.harness.prompts import question_block
from evaluation.harness.safe_http import EndpointRefused, check_endpoint
from evaluation.pipeline import new_claim_token
from evaluation.run_inputs import SPLITS
from evaluation.secrets import decrypt_api_key, encrypt_api_key

log = logging.getLogger(__name__)
OPTION_DEFAULTS: dict[str, Any] = {"max_tokens": 1024, "temperature": 0.0, "seed": 0, "budget_usd": 0.0,
                                   "max_image_pixels": DEFAULT_MAX_IMAGE_PIXELS}
# What a reply is reckoned at before it comes (a proposal is a short JSON object).
OUTPUT_TOKENS_EXPECTED = 300


class ProposalRunRejected(ValueError):
    """A proposal run that cannot be created; the message says why."""


def _samples(run: ProposalRun) -> list[Sample]:
    samples = Sample.objects.filter(benchmark=run.benchmark).prefetch_related("media").order_by("position", "uid")
    if run.split != "all":
        samples = samples.filter(split=run.split)
    if run.sample_uids:
        samples = samples.filter(uid__in=run.sample_uids)
    return list(samples)


def _tools(benchmark: Benchmark) -> list[str]:
    names = [n for n in (benchmark.tools or []) if n in REGISTRY]
    return names or list(REGISTRY)


def _settings(run: ProposalRun, api_key: str = "") -> Settings:
    options, details = run.options, run.details
    return Settings(
        model=run.model, base_url=run.endpoint, api_key=api_key, temperature=float(options["temperature"]),
        seed=options["seed"], max_tokens=int(options["max_tokens"]), timeout=float(settings.RUNS_REQUEST_TIMEOUT),
        price_input=float(details.get("price_input_per_mtok") or 0.0),
        price_output=float(details.get("price_output_per_mtok") or 0.0),
        budget_usd=float(options["budget_usd"] or 0.0), allow_private_addresses=settings.RUNS_ALLOW_PRIVATE_ENDPOINTS,
        max_retries=settings.RUNS_REQUEST_RETRIES, backoff=settings.RUNS_REQUEST_BACKOFF_SECONDS,
        patience=float(settings.RUNS_PATIENCE_SECONDS))


def _messages(run: ProposalRun, sample: Sample, *, image: bool = True) -> tuple[list[dict[str, Any]], float]:
    """The request of one item, and the original's pixels per pixel sent. ``image=False``: a stand-in
    part for the estimate (nothing decoded)."""
    first = media_of(sample)[0]
    medium = Medium(ref="img0", path=str(still_path(first)), width=first.width, height=first.height)
    if image:
        part, (sent_w, sent_h) = medium_part(medium, int(run.options["max_image_pixels"]), settings.IMAGE_MAX_PIXELS)
    else:
        part, (sent_w, sent_h) = {"type": "image_url", "image_url": {"url": ""}}, (first.width, first.height)
    sent_w, sent_h = sent_w or first.width, sent_h or first.height
    item = RunItem(uid=sample.uid, question=sample.question, options=sample.options or None,
                   answer_type=sample.answer_type, media=())
    system, user = prompt_texts(question_block=question_block(item), width=sent_w, height=sent_h,
                                tools=_tools(run.benchmark), version=run.prompt_version)
    messages = [{"role": "system", "content": system},
                {"role": "user", "content": [{"type": "text", "text": user}, part]}]
    return messages, (first.width / sent_w if sent_w else 1.0)


def _estimate(run: ProposalRun, samples: list[Sample]) -> dict[str, Any]:
    # The stand-in image part counts IMAGE_TOKENS, as a run's estimate reckons an image.
    tokens_in = sum(estimate_request_tokens(_messages(run, s, image=False)[0], None) for s in samples)
    tokens_out = len(samples) * min(OUTPUT_TOKENS_EXPECTED, int(run.options["max_tokens"]))
    priced = run.details.get("price_input_per_mtok") or run.details.get("price_output_per_mtok")
    cost = Spending(price_input=float(run.details.get("price_input_per_mtok") or 0),
                    price_output=float(run.details.get("price_output_per_mtok") or 0)).cost_usd(tokens_in, tokens_out)
    text = (f"{len(samples):,} items: {len(samples):,} requests, about {tokens_in:,} input and {tokens_out:,} output "
            f"tokens, " + (f"about ${cost:,.2f}" if priced else "cost unknown (no prices given)"))
    return {"requests": len(samples), "input_tokens": tokens_in, "output_tokens": tokens_out,
            "cost_usd": cost if priced else None, "text": text}


def proposal_run_create(*, benchmark: Benchmark, owner: Any, endpoint: str, model: str, api_key: str = "",
                        split: str = "all", sample_uids: list[str] | None = None,
                        details: dict[str, Any] | None = None, options: dict[str, Any] | None = None,
                        prompt_version: str = PROMPT_VERSION, enqueue: bool = True) -> ProposalRun:
    """A queued proposal run (its key encrypted, its estimate stored), sent to the runs queue on commit
    (``enqueue=False``: the caller runs it in its own process, as the demo does).
    The caller has checked that ``owner`` is staff or an admin of the benchmark."""
    run = proposal_run_unsaved(benchmark=benchmark, endpoint=endpoint, model=model, split=split,
                               sample_uids=sample_uids or [], details=details or {}, options=options or {},
                               prompt_version=prompt_version)
    samples = _samples(run)
    if not samples:
        raise ProposalRunRejected("no item of the benchmark matches the split and selection given")
    run.owner = owner
    run.api_key_encrypted = encrypt_api_key(api_key or "")
    run.estimate = _estimate(run, samples)
    run.progress_total = len(samples)
    with transaction.atomic():
        if not owner.is_staff:
            services.owner_lock(owner)
            active = ProposalRun.objects.filter(owner=owner, status__in=PROPOSAL_RUN_ACTIVE).count()
            if active >= settings.RUNS_MAX_ACTIVE_PER_USER:
                raise ProposalRunRejected(f"You already have {active} proposal runs going; wait until one ends.")
        run.save()
        pk = run.pk
        if enqueue:
            transaction.on_commit(lambda: queueing.proposal_run_enqueue(run_id=pk))
    return run


def proposal_run_unsaved(*, benchmark: Benchmark, endpoint: str, model: str, split: str, sample_uids: list[str],
                         details: dict[str, Any], options: dict[str, Any],
                         prompt_version: str = PROMPT_VERSION) -> ProposalRun:
    """The run as it would be created (the form's estimate reads it); refuses what creation refuses: a model
    name missing, an unknown split or item, an address the guard refuses."""
    endpoint, model = (endpoint or "").strip(), (model or "").strip()
    if not model:
        raise ProposalRunRejected("model: the name the endpoint serves is required")
    if split not in SPLITS:
        raise ProposalRunRejected(f'split: "{split}" is not one of {", ".join(SPLITS)}')
    try:
        check_endpoint(endpoint, allow_private=settings.RUNS_ALLOW_PRIVATE_ENDPOINTS)
    except EndpointRefused as exc:
        raise ProposalRunRejected(f"endpoint: {exc}") from exc
    uids = list(dict.fromkeys(u.strip() for u in sample_uids if u.strip()))
    if uids:
        known = set(Sample.objects.filter(benchmark=benchmark, uid__in=uids).values_list("uid", flat=True))
        missing = [u for u in uids if u not in known]
        if missing:
            raise ProposalRunRejected(f"items: {', '.join(missing[:5])} {'is' if len(missing) == 1 else 'are'} "
                                      f"not in {benchmark.name}")
    given = {k: v for k, v in options.items() if v is not None and k in OPTION_DEFAULTS}
    return ProposalRun(benchmark=benchmark, endpoint=endpoint, model=model, split=split, sample_uids=uids,
                       details=details, options={**OPTION_DEFAULTS, **given}, prompt_version=prompt_version)


def proposal_run_estimate(run: ProposalRun) -> dict[str, Any]:
    return _estimate(run, _samples(run))


def proposal_run_cancel(*, run: ProposalRun) -> ProposalRun:
    now = timezone.now()
    if not ProposalRun.objects.filter(pk=run.pk, status=ProposalRunStatus.QUEUED, claim_token="").update(
            status=ProposalRunStatus.CANCELLED, cancel_requested=True, finished_at=now, api_key_encrypted="",
            failure_reason="Cancelled before it started."):
        ProposalRun.objects.filter(pk=run.pk, status__in=PROPOSAL_RUN_ACTIVE).update(cancel_requested=True)
    run.refresh_from_db()
    return run


def _claim(run_id: int, token: str) -> bool:
    now = timezone.now()
    stale = now - timedelta(seconds=settings.RUNS_STUCK_SECONDS)
    active = ProposalRun.objects.filter(pk=run_id, status__in=PROPOSAL_RUN_ACTIVE)
    free = Q(claim_token="") | Q(heartbeat_at__lt=stale)
    if active.filter(free, attempts__lt=settings.RUNS_MAX_ATTEMPTS).update(
            status=ProposalRunStatus.RUNNING, heartbeat_at=now, claim_token=token, attempts=F("attempts") + 1):
        ProposalRun.objects.filter(pk=run_id, started_at__isnull=True).update(started_at=now)
        return True
    if active.filter(free).exists():
        _end(run_id, None, status=ProposalRunStatus.FAILED,
             reason=f"The run's worker stopped {settings.RUNS_MAX_ATTEMPTS} times before it finished; the proposals "
                    "so far are kept.")
    return False


def _end(run_id: int, token: str | None, *, status: str, reason: str, **fields: Any) -> None:
    rows = ProposalRun.objects.filter(pk=run_id, status__in=PROPOSAL_RUN_ACTIVE)
    if token is not None:
        rows = rows.filter(claim_token=token)
    rows.update(status=status, failure_reason=reason, finished_at=timezone.now(), claim_token="",
                api_key_encrypted="", **fields)


def proposal_run_fail(*, run_id: int, reason: str) -> None:
    _end(run_id, None, status=ProposalRunStatus.FAILED, reason=reason)


class _Heartbeat:
    """The run's heartbeat from a thread with its own connection, every RUNS_HEARTBEAT_SECONDS, so that one slow
    request (up to RUNS_REQUEST_TIMEOUT with its retries) does not let the sweeper take a live run for dead.
    ``lost``: the claim is no longer ours. Not started inside a transaction (tests), as hosted runs' lease."""

    def __init__(self, run_id: int, token: str) -> None:
        self.run_id, self.token = run_id, token
        self.stop, self.lost = threading.Event(), threading.Event()
        self.thread: threading.Thread | None = None

    def __enter__(self) -> _Heartbeat:
        if not connection.in_atomic_block:
            self.thread = threading.Thread(target=self._run, name=f"proposal-run-{self.run_id}", daemon=True)
            self.thread.start()
        return self

    def _run(self) -> None:
        try:
            while not self.stop.wait(settings.RUNS_HEARTBEAT_SECONDS):
                try:
                    if not ProposalRun.objects.filter(pk=self.run_id, claim_token=self.token,
                                                      status=ProposalRunStatus.RUNNING).update(
                            heartbeat_at=timezone.now()):
                        self.lost.set()
                        return
                except DatabaseError as exc:
                    log.warning("proposal run %s: could not renew its heartbeat (%s)", self.run_id, exc)
                    connection.close()
        finally:
            connection.close()

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        if self.thread is not None:
            self.thread.join(timeout=30)


def _beat(run_id: int, token: str, **fields: Any) -> tuple[bool, bool]:
    """(still ours, cancel asked): the heartbeat, renewed after every item with the progress so far."""
    held = ProposalRun.objects.filter(pk=run_id, claim_token=token, status=ProposalRunStatus.RUNNING).update(
        heartbeat_at=timezone.now(), **fields)
    return bool(held), ProposalRun.objects.filter(pk=run_id, cancel_requested=True).exists()


def proposal_run_execute(*, run_id: int, token: str = "") -> None:
    """The worker's body: claim, ask for each item not yet answered (a resumed run replays the cache), store
    each proposal as it comes, end with done / stopped (budget) / cancelled / failed."""
    token = token or new_claim_token()
    if not _claim(run_id, token):
        return
    run = ProposalRun.objects.select_related("benchmark").get(pk=run_id)
    if run.cancel_requested:
        _end(run_id, token, status=ProposalRunStatus.CANCELLED, reason="Cancelled.")
        return
    try:
        api_key = decrypt_api_key(run.api_key_encrypted)
    except ValueError as exc:
        _end(run_id, token, status=ProposalRunStatus.FAILED, reason=f"{exc}; enter the key again in a new run.")
        return
    cache = SqliteRequestCache(settings.RUNS_CACHE_PATH, owner=f"user:{run.owner_id}", run=f"proposals:{run.pk}")
    harness = _settings(run, api_key)
    spent_before = cache.spent_usd()
    if harness.budget_usd and harness.budget_usd - spent_before <= 0:
        _end(run_id, token, status=ProposalRunStatus.STOPPED, spent_usd=spent_before,
             reason=f"Stopped by its budget of ${harness.budget_usd:g}.")
        return
    if harness.budget_usd:
        harness = dataclasses.replace(harness, budget_usd=harness.budget_usd - spent_before)
    done_ids = set(run.proposals.exclude(errors__has_key="request").values_list("sample_id", flat=True))
    registry = default_registry_view()
    endpoint = Endpoint(harness, cache=cache)
    failures: dict[str, int] = {}
    outcome: tuple[str, str] = (ProposalRunStatus.DONE, "")
    try:
        with _Heartbeat(run_id, token) as heartbeat:
            outcome = _ask_each(run, token, endpoint, cache, done_ids, registry, failures, heartbeat) or outcome
    finally:
        endpoint.close()
    if outcome == _TAKEN_OVER:
        return
    status, reason = outcome
    if status == ProposalRunStatus.DONE and failures:
        reason = "Some items got no answer: " + ", ".join(f"{n} {k}" for k, n in sorted(failures.items()))
    _end(run_id, token, status=status, reason=reason, progress_done=run.proposals.count(),
         requests_sent=run.requests_sent + endpoint.counters.sent,
         requests_cached=run.requests_cached + endpoint.counters.cached, spent_usd=cache.spent_usd(),
         failures=failures)


_TAKEN_OVER = ("", "")


def _ask_each(run: ProposalRun, token: str, endpoint: Endpoint, cache: SqliteRequestCache, done_ids: set[int],
              registry: Any, failures: dict[str, int], heartbeat: _Heartbeat) -> tuple[str, str] | None:
    """Ask for each item not answered yet, storing each proposal as it comes; the run's outcome when it ends
    early (budget, an unusable endpoint, a cancel, taken over), None when every item was asked."""
    for sample in _samples(run):
        if sample.pk in done_ids:
            continue
        messages, scale = _messages(run, sample)
        try:
            answer, _ = endpoint.complete(messages, None)
        except BudgetExceeded as exc:
            return (ProposalRunStatus.STOPPED, f"Stopped by its budget: {exc}. The proposals so far are kept.")
        except EndpointUnusable as exc:
            return (ProposalRunStatus.FAILED, f"The endpoint could not be called: {exc}")
        except Failure as exc:
            failures[exc.klass] = failures.get(exc.klass, 0) + 1
            Proposal.objects.update_or_create(run=run, sample=sample, defaults={
                "model": run.model, "prompt_version": run.prompt_version, "raw_reply": "",
                "errors": {"request": f"{exc.klass}: {exc.detail}"}})
        else:
            _store(run, sample, answer, scale, registry)
        held, cancelled = _beat(run.pk, token, progress_done=run.proposals.count(),
                                requests_sent=run.requests_sent + endpoint.counters.sent,
                                requests_cached=run.requests_cached + endpoint.counters.cached,
                                spent_usd=cache.spent_usd())
        if not held or heartbeat.lost.is_set():
            log.warning("proposal run %s: taken over by another worker; this one stops", run.pk)
            return _TAKEN_OVER
        if cancelled:
            return (ProposalRunStatus.CANCELLED, "Cancelled; the proposals so far are kept.")
    return None


def _store(run: ProposalRun, sample: Sample, answer: dict[str, Any], scale: float, registry: Any) -> Proposal:
    text = (answer.get("message") or {}).get("content") or ""
    refs = [f"img{m.position}" for m in media_of(sample)]
    parsed = parse_proposal(text, width=sample.width, height=sample.height, scale=scale, registry=registry,
                            inputs=refs or ["img0"])
    proposal, _ = Proposal.objects.update_or_create(run=run, sample=sample, defaults={
        "model": str(answer.get("model") or run.model)[:200], "prompt_version": run.prompt_version,
        "raw_reply": text, **parsed.parts(), "confidence": parsed.confidence, "errors": parsed.errors})
    return proposal


def proposal_runs_sweep() -> int:
    """Send again every proposal run whose worker went silent, whose publish failed, or that nobody took."""
    now = timezone.now()
    unsent = list(ProposalRun.objects.filter(status=ProposalRunStatus.QUEUED, claim_token="", enqueue_failed=True)
                  .values_list("pk", flat=True))
    stale = ProposalRun.objects.filter(status=ProposalRunStatus.RUNNING,
                                       heartbeat_at__lt=now - timedelta(seconds=settings.RUNS_STUCK_SECONDS))
    waiting = ProposalRun.objects.filter(status=ProposalRunStatus.QUEUED, claim_token="",
                                         created_at__lt=now - timedelta(seconds=settings.RUNS_QUEUED_RESEND_SECONDS))
    resent = 0
    for pk in unsent:
        if ProposalRun.objects.filter(pk=pk, enqueue_failed=True).update(enqueue_failed=False):
            resent += int(queueing.proposal_run_enqueue(run_id=pk))
    for pk in dict.fromkeys([*stale.values_list("pk", flat=True), *waiting.values_list("pk", flat=True)]):
        if pk not in unsent:
            resent += int(queueing.proposal_run_enqueue(run_id=pk))
    return resent


__all__ = ["ProposalRunRejected", "proposal_run_cancel", "proposal_run_create", "proposal_run_estimate",
           "proposal_run_execute", "proposal_run_fail", "proposal_run_unsaved", "proposal_runs_sweep"]
