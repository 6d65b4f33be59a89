"""Hosted runs: the harness on the workers for a signed-in researcher (spec/runs.md, docs/runs.md
"Hosted runs"). Writes only: creating a run (the endpoint checked, the key encrypted, the estimate),
cancelling it, executing it on the runs queue (claim, heartbeat, resume from the cache), and the sweep
that keeps every run moving until it is final.

A run's outcome is one of: ``done`` (its file became a submission with provenance "run"), ``stopped``
(its budget), ``cancelled`` (its owner), ``failed`` (with a reason a person can act on). The partial
file of a stopped or cancelled run is kept on the run; running it again replays the cache for free.
"""

from __future__ import annotations

import dataclasses
import logging
import tempfile
import threading
import time
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core.files import File
from django.db import DatabaseError, connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from annotation.models import Benchmark
from annotation.selectors import benchmark_scorable
from evaluation import queueing, services
from evaluation.harness import HARNESS_VERSION, MODES
from evaluation.harness.cache import SqliteRequestCache
from evaluation.harness.client import Settings
from evaluation.harness.loop import DEFAULT_MAX_IMAGE_PIXELS
from evaluation.harness.prompts import load_prompt
from evaluation.harness.runner import CANCELLED, Estimate, Patience, Progress, RunSummary
from evaluation.harness.safe_http import EndpointRefused, check_endpoint
from evaluation.models import RUN_ACTIVE_STATUSES, HostedRun, RunStatus
from evaluation.pipeline import new_claim_token
from evaluation.run_protocol import protocol_facts, protocol_page, protocol_stamp, protocol_version
from evaluation.run_inputs import SPLITS, RunRefused, benchmark_family, benchmark_tools, run_benchmark
from evaluation.secrets import decrypt_api_key, encrypt_api_key

log = logging.getLogger(__name__)
PROTOCOL_CHOICES = ("function_calling", "tagged_text")
OPTION_DEFAULTS: dict[str, Any] = {"protocol": "function_calling", "max_turns": 8, "concurrency": 4,
                                   "max_image_pixels": DEFAULT_MAX_IMAGE_PIXELS,
                                   "max_tokens": 1024, "temperature": 0.0, "seed": 0, "budget_usd": 0.0}


class RunRejected(ValueError):
    """A run that cannot be created; the message says why."""


def _options(given: dict[str, Any]) -> dict[str, Any]:
    options = {**OPTION_DEFAULTS, **{k: v for k, v in given.items() if v is not None and k in OPTION_DEFAULTS}}
    if options["protocol"] not in PROTOCOL_CHOICES:
        raise RunRejected(f'protocol: "{options["protocol"]}" is not one of {", ".join(PROTOCOL_CHOICES)}')
    options["concurrency"] = max(1, min(int(options["concurrency"]), settings.RUNS_CONCURRENCY_MAX))
    options["max_turns"] = max(1, min(int(options["max_turns"]), 32))
    options["max_image_pixels"] = max(0, int(options["max_image_pixels"]))
    return options


def _harness_settings(run: HostedRun, api_key: str = "") -> Settings:
    details, options = run.details, run.options
    return Settings(
        model=run.model, base_url=run.endpoint, api_key=api_key, temperature=float(options["temperature"]),
        seed=options["seed"], max_tokens=int(options["max_tokens"]), timeout=float(settings.RUNS_REQUEST_TIMEOUT),
        price_input=float(details.get("price_input_per_mtok") or 0.0),
        price_output=float(details.get("price_output_per_mtok") or 0.0),
        budget_usd=float(options["budget_usd"] or 0.0),
        allow_private_addresses=settings.RUNS_ALLOW_PRIVATE_ENDPOINTS, max_retries=settings.RUNS_REQUEST_RETRIES,
        backoff=settings.RUNS_REQUEST_BACKOFF_SECONDS, patience=float(settings.RUNS_PATIENCE_SECONDS))


def _patience() -> Patience:
    return Patience(seconds=float(settings.RUNS_PATIENCE_SECONDS), backoff=settings.RUNS_RETRY_BACKOFF_SECONDS,
                    backoff_max=settings.RUNS_RETRY_BACKOFF_MAX_SECONDS)


def run_estimate(*, benchmark: Benchmark, endpoint: str, model: str, modes: list[str], split: str,
                 details: dict[str, Any], options: dict[str, Any]) -> Estimate:
    """What a run would cost, before it is created (the web form's confirmation step); refuses what
    run_create would refuse."""
    run = _unsaved(benchmark=benchmark, endpoint=endpoint, model=model, modes=modes, split=split, details=details,
                   options=options)
    return _plan(run)


def _plan(run: HostedRun) -> Estimate:
    """The run's estimate (nothing is sent); a benchmark that cannot be run so is refused with the reason."""
    try:
        planned, _ = run_benchmark(benchmark=run.benchmark, settings=_harness_settings(run), modes=run.modes,
                                   split=run.split, protocol=run.options["protocol"],
                                   max_turns=run.options["max_turns"], before=lambda _: False)
    except (RunRefused, ValueError) as exc:
        raise RunRejected(str(exc)) from exc
    return planned


def _unsaved(*, benchmark: Benchmark, endpoint: str, model: str, modes: list[str], split: str,
             details: dict[str, Any], options: dict[str, Any]) -> HostedRun:
    endpoint = (endpoint or "").strip()
    model = (model or "").strip()
    if not model:
        raise RunRejected("model: the name the endpoint serves is required")
    modes = list(dict.fromkeys(modes))
    bad = [m for m in modes if m not in MODES]
    if not modes or bad:
        raise RunRejected(f"modes: {', '.join(bad) or 'none given'}; choose from {', '.join(MODES)}")
    if split not in SPLITS:
        raise RunRejected(f'split: "{split}" is not one of {", ".join(SPLITS)}')
    try:
        check_endpoint(endpoint, allow_private=settings.RUNS_ALLOW_PRIVATE_ENDPOINTS)
    except EndpointRefused as exc:
        raise RunRejected(f"endpoint: {exc}") from exc
    if "adaptive" in modes:
        try:
            benchmark_tools(benchmark, benchmark_family(benchmark))
        except (RunRefused, ValueError) as exc:
            raise RunRejected(str(exc)) from exc
    if not (details.get("model_name") or "").strip():
        details = {**details, "model_name": model}
    return HostedRun(benchmark=benchmark, endpoint=endpoint, model=model, modes=modes, split=split,
                     details=details, options=_options(options))


def run_create(*, benchmark: Benchmark, owner: Any, endpoint: str, model: str, api_key: str = "",
               modes: list[str], split: str = "all", details: dict[str, Any] | None = None,
               options: dict[str, Any] | None = None, keep_endpoint: bool = False) -> HostedRun:
    """A queued run, its key encrypted, its estimate stored, sent to the runs queue on commit."""
    if not benchmark_scorable(benchmark):
        raise RunRejected(services.results_only_message(benchmark))
    run = _unsaved(benchmark=benchmark, endpoint=endpoint, model=model, modes=modes, split=split,
                   details=details or {}, options=options or {})
    run.owner = owner
    run.keep_endpoint = keep_endpoint
    run.api_key_encrypted = encrypt_api_key(api_key or "")
    planned = _plan(run)
    run.estimate = _estimate_json(planned)
    run.progress_total = planned.pairs
    with transaction.atomic():
        if not owner.is_staff:
            services.owner_lock(owner)
            active = HostedRun.objects.filter(owner=owner, status__in=RUN_ACTIVE_STATUSES).count()
            if active >= settings.RUNS_MAX_ACTIVE_PER_USER:
                raise RunRejected(f"You already have {active} runs going; wait until one of them ends, or cancel one.")
        run.save()
        pk = run.pk
        transaction.on_commit(lambda: queueing.run_enqueue(run_id=pk))
    return run


def _estimate_json(planned: Estimate) -> dict[str, Any]:
    return {"pairs": planned.pairs, "requests": planned.requests, "requests_max": planned.requests_max,
            "input_tokens": planned.input_tokens, "output_tokens": planned.output_tokens,
            "cost_usd": planned.cost_usd, "text": planned.describe()}


def run_cancel(*, run: HostedRun) -> HostedRun:
    """A queued run ends at once; a running one sends no new request once its worker reads the cancel (every
    RUNS_CANCEL_POLL_SECONDS): the requests in flight finish, what is done is kept."""
    now = timezone.now()
    ended = HostedRun.objects.filter(pk=run.pk, status=RunStatus.QUEUED, claim_token="").update(
        status=RunStatus.CANCELLED, cancel_requested=True, finished_at=now,
        failure_reason="Cancelled by its owner before it started.")
    if ended:
        _forget_key(run.pk)
    else:
        HostedRun.objects.filter(pk=run.pk, status__in=RUN_ACTIVE_STATUSES).update(cancel_requested=True)
    run.refresh_from_db()
    return run


def _forget_key(run_id: int) -> None:
    HostedRun.objects.filter(pk=run_id, keep_endpoint=False).update(api_key_encrypted="")


def _claim(run_id: int, token: str) -> bool:
    now = timezone.now()
    stale = now - timedelta(seconds=settings.RUNS_STUCK_SECONDS)
    active = HostedRun.objects.filter(pk=run_id, status__in=RUN_ACTIVE_STATUSES)
    fields = {"status": RunStatus.RUNNING, "heartbeat_at": now, "claim_token": token}
    free = Q(claim_token="") | Q(heartbeat_at__lt=stale)
    if active.filter(free, attempts__lt=settings.RUNS_MAX_ATTEMPTS).update(**fields, attempts=F("attempts") + 1):
        HostedRun.objects.filter(pk=run_id, started_at__isnull=True).update(started_at=now)
        return True
    if active.filter(free).exists():  # free to take, but every try has been used
        _fail(run_id, f"The run's worker stopped {settings.RUNS_MAX_ATTEMPTS} times before it finished (each "
                      "time it resumed from the cache, paying for nothing twice). The answers so far are kept: "
                      "start it again and they are replayed for free.")
    return False


def run_fail(*, run_id: int, reason: str) -> None:
    _fail(run_id, reason)


def _fail(run_id: int, reason: str) -> None:
    HostedRun.objects.filter(pk=run_id, status__in=RUN_ACTIVE_STATUSES).update(
        status=RunStatus.FAILED, failure_reason=reason, finished_at=timezone.now(), claim_token="")
    _forget_key(run_id)


class _Lease:
    """The run's heartbeat from a thread with its own connection: the progress so far, and the
    owner's cancel read back (it sets ``cancel``). Stops when the run is no longer ours."""

    def __init__(self, run_id: int, token: str, prior: HostedRun, spent_before: float) -> None:
        self.pk = run_id
        self.token = token
        # What earlier deliveries of this run did (a worker died): their counts go on; their spend as the
        # ledger has it.
        self.prior = (prior.requests_sent, prior.requests_cached, spent_before)
        self.progress_at_claim = prior.progress_done
        self.stop = threading.Event()
        self.cancel = threading.Event()
        self.snapshot: dict[str, Any] = {}
        self.lock = threading.Lock()
        self.thread: threading.Thread | None = None

    def report(self, progress: Progress) -> None:
        with self.lock:
            sent, cached, spent = self.prior
            self.snapshot = {"progress_done": progress.done, "requests_sent": sent + progress.sent,
                             "requests_cached": cached + progress.cached, "spent_usd": spent + progress.spent_usd,
                             "failures": dict(progress.failures)}

    def __enter__(self) -> _Lease:
        if not connection.in_atomic_block:
            self.thread = threading.Thread(target=self._run, name=f"run-lease-{self.pk}", daemon=True)
            self.thread.start()
        return self

    def beat(self) -> bool:
        with self.lock:
            fields = dict(self.snapshot)
        if fields.get("progress_done", 0) > self.progress_at_claim:
            fields["attempts"] = 1  # this delivery made progress: only fruitless deliveries in a row count
        try:
            held = HostedRun.objects.filter(pk=self.pk, claim_token=self.token, status=RunStatus.RUNNING).update(
                heartbeat_at=timezone.now(), **fields)
            if held and HostedRun.objects.filter(pk=self.pk, cancel_requested=True).exists():
                self.cancel.set()
        except DatabaseError as exc:
            log.warning("run %s: could not renew its heartbeat (%s)", self.pk, exc)
            connection.close()
            return True
        return bool(held)

    def _run(self) -> None:
        """Beats every RUNS_HEARTBEAT_SECONDS, and reads the owner's cancel every RUNS_CANCEL_POLL_SECONDS in
        between, so that a cancel stops new requests within about a second."""
        beat_at = time.monotonic() + settings.RUNS_HEARTBEAT_SECONDS
        try:
            while not self.stop.wait(min(settings.RUNS_CANCEL_POLL_SECONDS, settings.RUNS_HEARTBEAT_SECONDS)):
                if time.monotonic() >= beat_at:
                    beat_at = time.monotonic() + settings.RUNS_HEARTBEAT_SECONDS
                    if not self.beat():
                        self.cancel.set()  # taken over (our heartbeat went stale) or ended: stop paying
                        return
                elif self._cancel_requested():
                    self.cancel.set()
        finally:
            connection.close()

    def _cancel_requested(self) -> bool:
        try:
            return HostedRun.objects.filter(pk=self.pk, cancel_requested=True).exists()
        except DatabaseError:
            connection.close()
            return False

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        if self.thread is not None:
            self.thread.join(timeout=30)


def run_execute(*, run_id: int, token: str = "") -> None:
    """The worker's body: claim the run, run the harness (resuming from the cache), then end it."""
    token = token or new_claim_token()
    if not _claim(run_id, token):
        return
    run = HostedRun.objects.select_related("benchmark", "owner").get(pk=run_id)
    if run.cancel_requested:
        _end(run, token, status=RunStatus.CANCELLED, reason="Cancelled by its owner.")
        return
    try:
        api_key = decrypt_api_key(run.api_key_encrypted)
    except ValueError as exc:
        _fail(run_id, f"{exc}; enter the key again in a new run.")
        return
    harness = _harness_settings(run, api_key)
    # The spend is read where it is recorded, with each paid answer (the cache's ledger), not from the last
    # progress report: a worker that died after paying for answers it had not reported yet paid for them.
    cache = SqliteRequestCache(settings.RUNS_CACHE_PATH, owner=f"user:{run.owner_id}", run=f"hosted:{run.pk}")
    spent_before = cache.spent_usd()
    if harness.budget_usd:  # what earlier deliveries spent counts against the budget
        remaining = harness.budget_usd - spent_before
        if remaining <= 0:
            _end(run, token, status=RunStatus.STOPPED, reason=f"Stopped by its budget of ${harness.budget_usd:g}: "
                 f"${spent_before:.4f} spent before its worker stopped.", spent_usd=spent_before)
            return
        harness = dataclasses.replace(harness, budget_usd=remaining)
    with tempfile.TemporaryDirectory(prefix=f"run-{run_id}-") as folder, \
            _Lease(run_id, token, run, spent_before) as lease:
        out = Path(folder) / "predictions.jsonl"
        try:
            _, summary = run_benchmark(
                benchmark=run.benchmark, settings=harness, modes=run.modes, split=run.split,
                protocol=run.options["protocol"], max_turns=run.options["max_turns"],
                max_image_pixels=int(run.options.get("max_image_pixels", DEFAULT_MAX_IMAGE_PIXELS)),
                concurrency=run.options["concurrency"], cache=cache, out=out, on_progress=lease.report,
                cancel=lease.cancel, patience=_patience(), stamp=protocol_stamp(run.benchmark))
        except (RunRefused, ValueError) as exc:
            lease.stop.set()
            _fail(run_id, str(exc))
            return
        assert summary is not None
        lease.stop.set()
        summary.spent_usd = cache.spent_usd() - spent_before  # this delivery's, as the ledger has it
        _finish(run, token, summary, out, spent_before, cache.paid_twice())


def _finish(run: HostedRun, token: str, summary: RunSummary, out: Path, spent_before: float, resent: int) -> None:
    """End the run with its outcome, holding its row so that a worker taking over a run it thinks dead
    (its heartbeat stopped with the harness) cannot end it too, nor make a second submission."""
    with transaction.atomic():
        if not HostedRun.objects.select_for_update().filter(
                pk=run.pk, claim_token=token, status=RunStatus.RUNNING).exists():
            log.warning("run %s: finished, but another worker took it over; this result is dropped", run.pk)
            return
        _finish_held(run, token, summary, out, spent_before, resent)


def _finish_held(run: HostedRun, token: str, summary: RunSummary, out: Path, spent_before: float,
                 resent: int) -> None:
    fields: dict[str, Any] = {
        "progress_done": summary.lines, "requests_sent": run.requests_sent + summary.requests_sent,
        "requests_cached": run.requests_cached + summary.requests_cached, "spent_usd": spent_before + summary.spent_usd,
        "failures": summary.failures, "model_ids": summary.model_ids, "retried": summary.retried,
        "requests_resent": resent}
    with out.open("rb") as handle:
        run.predictions.save(f"{run.benchmark.slug}-run-{run.pk}.jsonl", File(handle), save=False)
    fields["predictions"] = run.predictions.name
    if summary.refused is not None:
        _end(run, token, status=RunStatus.FAILED, reason=f"The endpoint could not be called: {summary.refused}. "
             f"The run ended at the first refusal, after {summary.lines} of {run.progress_total} answers; no "
             "submission was made from it.", **fields)
        return
    if summary.stopped == CANCELLED:
        _end(run, token, status=RunStatus.CANCELLED, reason=f"Cancelled by its owner after {summary.lines} of "
             f"{run.progress_total} answers; they are kept.", **fields)
        return
    if summary.unavailable:
        _end(run, token, status=RunStatus.STOPPED, reason=f"Stopped: {summary.stopped}. The {summary.answered} "
             "answers so far are kept: start it again when the provider is back and they are replayed from the "
             "cache, not paid again.", **fields)
        return
    if summary.stopped is not None:
        _end(run, token, status=RunStatus.STOPPED, reason=f"Stopped by its budget after {summary.lines} of "
             f"{run.progress_total} answers: {summary.stopped}. Start it again with a larger budget: the answers "
             "so far are replayed from the cache, not paid again.", **fields)
        return
    if summary.answered == 0:  # a row of nothing but failures says nothing of the model
        failed = ", ".join(f"{n} {k}" for k, n in sorted(summary.failures.items())) or "none written"
        _end(run, token, status=RunStatus.FAILED, reason=f"No answer: none of the {run.progress_total} pairs was "
             f"answered ({failed}), so no row was made. The file is kept: see its failure details.", **fields)
        return
    details = run.details
    record = {"run_id": run.pk, **harness_record(
        benchmark=run.benchmark, modes=run.modes, split=run.split, settings=_harness_settings(run),
        protocol=run.options["protocol"], model_ids=summary.model_ids, endpoint=run.endpoint,
        # The protocol it ran under (docs/runs.md, "The protocol page"): its version and where it is stated.
        stamp={"protocol_version": protocol_version(protocol_facts(run.benchmark)),
               "protocol_page": protocol_page(run.benchmark)})}
    metadata = {k: details[k] for k in services.METADATA_FIELDS if details.get(k) not in (None, "")}
    try:
        with out.open("rb") as handle:
            sub = services.submission_create(
                benchmark=run.benchmark, owner=run.owner, file=File(handle, name="harness-run.jsonl"),
                model_name=details.get("model_name") or run.model, is_public=bool(details.get("is_public")),
                enforce_limits=False, run_record=record, **metadata)
    except services.SubmissionRejected as exc:
        _end(run, token, status=RunStatus.FAILED, reason=f"The run finished but its file was refused: {exc.message}",
             **fields)
        return
    _end(run, token, status=RunStatus.DONE, reason="", submission=sub, **fields)


def harness_record(*, benchmark: Benchmark, modes: list[str], split: str, settings: Settings, protocol: str,
                   model_ids: list[str], endpoint: str, stamp: dict[str, str] | None) -> dict[str, Any]:
    """The run record of a submission the platform's harness made (provenance "run"; docs/runs.md, "The verified
    tier"): a hosted run's, or one of load_demo's harness runs. ``stamp``: the protocol it ran under, if it did."""
    return {"harness_version": HARNESS_VERSION,
            "prompt_versions": {mode: load_prompt(benchmark_family(benchmark), mode).name for mode in modes},
            "sampling": settings.sampling(), "protocol": protocol,
            "date": timezone.now().isoformat(timespec="seconds"), "model_ids": model_ids,
            "declared_model": settings.model, "endpoint_host": urlsplit(endpoint).hostname or "",
            "split": split, "modes": list(modes), **(stamp or {})}


def _end(run: HostedRun, token: str, *, status: str, reason: str, **fields: Any) -> None:
    HostedRun.objects.filter(pk=run.pk, claim_token=token).update(
        status=status, failure_reason=reason, finished_at=timezone.now(), claim_token="", **fields)
    _forget_key(run.pk)


def runs_sweep() -> dict[str, int]:
    """Send again every run whose worker went silent, every queued run whose message could not be
    published (``enqueue_failed``: at once, since this sweep came through the broker, which is back), and
    every queued run nobody took (its message lost); a run out of attempts fails in its next claim. So a
    run never stays unfinished, and a broker blip costs a sweep interval, not RUNS_QUEUED_RESEND_SECONDS."""
    now = timezone.now()
    unsent = list(HostedRun.objects.filter(status=RunStatus.QUEUED, claim_token="", enqueue_failed=True)
                  .values_list("pk", flat=True))
    stale = HostedRun.objects.filter(status=RunStatus.RUNNING,
                                     heartbeat_at__lt=now - timedelta(seconds=settings.RUNS_STUCK_SECONDS))
    waiting = HostedRun.objects.filter(status=RunStatus.QUEUED, claim_token="",
                                       created_at__lt=now - timedelta(seconds=settings.RUNS_QUEUED_RESEND_SECONDS))
    resent = 0
    for pk in unsent:  # the flag is cleared by whoever sends it, so two sweepers never both do
        if HostedRun.objects.filter(pk=pk, enqueue_failed=True).update(enqueue_failed=False):
            resent += int(queueing.run_enqueue(run_id=pk))  # failing again sets it again
    for pk in dict.fromkeys([*stale.values_list("pk", flat=True), *waiting.values_list("pk", flat=True)]):
        if pk not in unsent:
            resent += int(queueing.run_enqueue(run_id=pk))
    return {"resent": resent}


__all__ = ["RunRejected", "run_cancel", "run_create", "run_estimate", "run_execute", "run_fail", "runs_sweep"]
