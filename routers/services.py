"""Writes of the router track: create a router submission, score it (docs/routers.md).

Scoring reads the pool as it is now, validates the file against it line by line, and stores the
figures with the pool they were computed on (mode and model -> submission id).
"""

from __future__ import annotations

import hashlib
import json
import logging
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
from django.conf import settings
from django.core.files import File
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from annotation.models import Benchmark
from config.celery import task_by_name
from evaluation.derived import derived_refresh
from evaluation.services import owner_lock
from evaluation.metrics import routing
from evaluation.metrics.routing_knn import knn_probs
from routers.matrix_import import Matrix, MatrixRejected
from routers.models import (RouterPoolCell, RouterPoolVersion, RouterReference, RouterReported, RouterStatus,
                            RouterSubmission, RouterTrack)
from routers.pool import (PoolData, default_mode, pool_ensure, reference_inputs, reference_send, release_ids,
                          version_get_or_create)
from routers.validation import read_router_file

log = logging.getLogger(__name__)


class RouterRejected(Exception):
    """An upload refused before a router submission exists; ``code`` as evaluation's SubmissionRejected
    ("invalid", "quota", "busy": the API's status follows it)."""

    def __init__(self, message: str, code: str = "invalid") -> None:
        super().__init__(message)
        self.message = message
        self.code = code


def router_limits_check(*, owner: Any, benchmark: Benchmark) -> None:
    """The submissions' limits, counted over the owner's routers: SUBMISSIONS_PER_DAY uploads per benchmark
    in 24 hours (failed ones do not count) and SUBMISSIONS_MAX_ACTIVE_PER_USER waiting for their first score
    (a re-score after the pool moved is the platform's work, not the owner's). Staff are exempt."""
    if owner.is_staff:
        return
    per_day = settings.SUBMISSIONS_PER_DAY
    mine = RouterSubmission.objects.filter(owner=owner)
    if mine.filter(benchmark=benchmark, created_at__gte=timezone.now() - timedelta(days=1)).exclude(
            status=RouterStatus.FAILED).count() >= per_day:
        raise RouterRejected(f"You have uploaded {per_day} routers to '{benchmark.slug}' in the last 24 hours, the "
                             "daily limit. Failed ones do not count; try again later.", "quota")
    cap = settings.SUBMISSIONS_MAX_ACTIVE_PER_USER
    if mine.filter(status__in=[RouterStatus.QUEUED, RouterStatus.SCORING], finished_at__isnull=True).count() >= cap:
        raise RouterRejected(f"You already have {cap} routers waiting to be scored; wait until one of them is done "
                             "or failed.", "busy")


def router_submission_create(*, benchmark: Benchmark, owner: Any, file: File, name: str, is_public: bool = False,
                             description: str = "", enqueue: bool = True, enforce_limits: bool = True) -> RouterSubmission:
    """Store the upload as a ``queued`` router submission and, unless told not to, send it to be scored.
    The daily and active limits hold as for prediction files (``router_limits_check``)."""
    name = (name or "").strip()
    if not name:
        raise RouterRejected("give the router a name")
    if file.size is not None and file.size > settings.SUBMISSION_MAX_FILE_BYTES:
        raise RouterRejected(f"the file is {file.size} bytes; the limit is {settings.SUBMISSION_MAX_FILE_BYTES}")
    sub = RouterSubmission(benchmark=benchmark, owner=owner, name=name, description=description, is_public=is_public,
                           original_name=getattr(file, "name", "") or "")
    sub.full_clean(exclude=["file"])
    if enforce_limits:
        router_limits_check(owner=owner, benchmark=benchmark)
    with transaction.atomic():
        if enforce_limits and not owner.is_staff:
            # Again under a lock on the owner's row: eight uploads at once would each see room for itself.
            owner_lock(owner)
            router_limits_check(owner=owner, benchmark=benchmark)
        sub.file.save(f"router-{benchmark.slug}.jsonl", file, save=False)
        sub.save()
        if enqueue:
            pk = sub.pk
            transaction.on_commit(lambda: router_submission_send(pk))
    return sub


def router_submission_send(pk: int) -> None:
    try:  # by name: the task module imports this one; the pipeline's workers take it
        task_by_name("routers.score").apply_async((pk,), queue=settings.SUBMISSIONS_QUEUE)
    except Exception:  # broker down: the row says so, and the sweeper's next run sends it
        log.warning("could not send router submission %s to the queue", pk, exc_info=True)
        RouterSubmission.objects.filter(pk=pk, status=RouterStatus.QUEUED).update(enqueue_failed=True)


def cost_bounds_of(benchmark: Benchmark, data: PoolData, rows: list[int]) -> tuple[float, float] | None:
    """The benchmark's fixed bounds when it has them, else the pool models' cheapest and dearest mean cost on ``rows``."""
    if benchmark.cost_min is not None and benchmark.cost_max is not None:
        return (benchmark.cost_min, benchmark.cost_max)
    if data.version.bounds:  # an imported pool's own (the release's cost_bounds.json)
        return (data.version.bounds[0], data.version.bounds[1])
    return routing.pool_bounds(data.pool, rows)


def figures_json(figures: routing.RouterFigures) -> dict[str, Any]:
    return figures.as_dict()


# Stored for paired tests, never shown: a router's outcome per test sample would reveal which models are
# right on which test samples (the correctness the test matrix hides).
PRIVATE_RESULT_KEYS = ("per_sample",)


def results_shown(results: dict[str, Any] | None) -> dict[str, Any] | None:
    """A router's figures as any page, file or API answer may show them."""
    if results is None:
        return None
    return {k: v for k, v in results.items() if k not in PRIVATE_RESULT_KEYS}


def router_submission_score(*, submission_id: int) -> RouterSubmission | None:
    """Validate and score one router submission; safe to run twice (a finished one is left alone)."""
    claimed = RouterSubmission.objects.filter(pk=submission_id, status=RouterStatus.QUEUED).update(
        status=RouterStatus.SCORING, status_at=timezone.now())
    sub = RouterSubmission.objects.select_related("benchmark").filter(pk=submission_id).first()
    if sub is None or not claimed and sub.status != RouterStatus.SCORING:
        return sub
    data = pool_ensure(sub.benchmark)
    test_rows = data.rows("test")
    test_uids = [data.samples[i].uid for i in test_rows]
    if not data.pool.models:
        return _fail(sub, "the benchmark has no priced public models in its pool yet", [])
    with sub.file.open("rb") as fh:
        # The file names models as they were called when it was written: a name a member has had since
        # (this version's, or the pool this router was last scored on) is that member.
        parsed = read_router_file(fh, models=data.pool.models, test=test_uids, known=[s.uid for s in data.samples],
                                  aliases=data.aliases(data.version.members, (sub.pool or {}).get("models")))
    if parsed.errors:
        if sub.pool:  # a re-score that failed (a picked model left the pool): tried again when the pool moves
            sub.pool = {**sub.pool, "failed_on": data.version.pk}
            sub.save(update_fields=["pool"])
        return _fail(sub, f"{len(parsed.errors)}{'+' if parsed.truncated else ''} problem(s) in the file: "
                          "each names its line", parsed.errors)
    probs = routing.probs_matrix(data.pool, [parsed.picks[u] for u in test_uids])
    domains = [data.samples[i].domain for i in test_rows]
    figures = routing.score(data.pool, test_rows, probs, bounds=cost_bounds_of(sub.benchmark, data, test_rows),
                            domains=domains)
    sub.results = figures_json(figures)
    sub.pool = {"mode": data.track.mode, "models": data.submissions, "version": data.version.number}
    sub.pool_version = data.version
    sub.status = RouterStatus.DONE
    sub.finished_at = sub.status_at = timezone.now()
    sub.errors, sub.failure_reason = [], ""
    sub.save(update_fields=["results", "pool", "pool_version", "status", "status_at", "finished_at", "errors",
                            "failure_reason"])
    return sub


def routers_rescore_stale(*, benchmark: Benchmark, version: RouterPoolVersion) -> list[int]:
    """Send every scored router of the benchmark whose pool version is not ``version`` to be scored again.

    Moved back to ``queued`` first (only from ``done``), so two readers noticing the change at once send
    each router once; its old figures stay on the tab, marked, until the new ones replace them.
    """
    stale = [(pk, RouterStatus.DONE) for pk in RouterSubmission.objects.filter(
        benchmark=benchmark, status=RouterStatus.DONE).exclude(pool_version=version).values_list("pk", flat=True)]
    # A re-score that failed on another pool (a model it picked had left) is tried again on this one: the
    # model may be back. Not one that failed on this pool, nor a file that never scored.
    stale += [(pk, RouterStatus.FAILED) for pk, pool in RouterSubmission.objects.filter(
        benchmark=benchmark, status=RouterStatus.FAILED, pool__has_key="failed_on").values_list("pk", "pool")
        if pool.get("failed_on") != version.pk]
    sent = []
    for pk, was in stale:
        if RouterSubmission.objects.filter(pk=pk, status=was).update(status=RouterStatus.QUEUED,
                                                                     status_at=timezone.now()):
            sent.append(pk)
            transaction.on_commit(lambda pk=pk: router_submission_send(pk))
    return sent


def router_pool_import(*, benchmark: Benchmark, matrix: Matrix) -> tuple[RouterPoolVersion, bool]:
    """Make an imported matrix the benchmark's router pool: a pool version of its own cells (its models are
    named members, not submissions). All or nothing: a sample id the benchmark does not have (or two rows
    naming one sample) refuses the whole import, naming where the id was read. The same content imported
    again is the same version (returned with False); routers scored on another version are re-scored."""
    known = release_ids(benchmark)
    errors: list[str] = []
    pks: list[int] = []
    first: dict[int, str] = {}
    for sid, where in zip(matrix.samples, matrix.where):
        pk = known.get(sid)
        if pk is None:
            errors.append(f"{where}: sample id {sid!r} " + ("matches two samples" if sid in known else
                                                          f"is not a sample of {benchmark.slug}"))
        elif pk in first:
            errors.append(f"{where}: sample id {sid!r} is the same sample as {first[pk]}")
        else:
            first[pk] = where
        pks.append(pk or 0)
        if len(errors) >= 50:
            break
    if errors:
        raise MatrixRejected(errors)
    content = hashlib.sha256(json.dumps(["imported", matrix.models, pks, matrix.bounds]).encode())
    content.update(np.ascontiguousarray(matrix.correct).tobytes())
    content.update(np.ascontiguousarray(matrix.cost).tobytes())
    with transaction.atomic():
        track, _ = RouterTrack.objects.select_for_update().get_or_create(
            benchmark=benchmark, defaults={"mode": default_mode(benchmark)})
        version, created = version_get_or_create(track=track, signature=content.hexdigest(),
                                                 members=dict.fromkeys(matrix.models), origin=matrix.origin,
                                                 bounds=matrix.bounds)
        if created:
            RouterPoolCell.objects.bulk_create(
                (RouterPoolCell(version=version, sample_id=pk, model=m, correct=bool(matrix.correct[i, j]),
                                cost_usd=float(matrix.cost[i, j]))
                 for i, pk in enumerate(pks) for j, m in enumerate(matrix.models)), batch_size=5000)
        track.imported = version
        track.save(update_fields=["imported"])
    pool_refresh(benchmark_id=benchmark.pk, force=True)  # re-scores the routers, queues the reference router
    return version, created


def router_pool_import_drop(*, benchmark: Benchmark) -> RouterPoolVersion | None:
    """Go back from an imported pool to the one built from the leaderboard's public priced submissions.

    The imported versions and their cells stay (routers scored on them keep saying so until re-scored);
    every router is re-scored on the leaderboard's pool, where a pick of a model that pool lacks fails
    with its line named. None when the benchmark's pool was not imported.
    """
    with transaction.atomic():
        track = RouterTrack.objects.select_for_update().filter(benchmark=benchmark).first()
        if track is None or track.imported_id is None:
            return None
        track.imported = None
        track.save(update_fields=["imported"])
    pool_refresh(benchmark_id=benchmark.pk, force=True)
    return pool_ensure(benchmark).version


def _fail(sub: RouterSubmission, reason: str, errors: list[dict[str, object]]) -> RouterSubmission:
    sub.status, sub.failure_reason, sub.errors = RouterStatus.FAILED, reason, errors
    sub.finished_at = sub.status_at = timezone.now()
    sub.save(update_fields=["status", "status_at", "failure_reason", "errors", "finished_at"])
    return sub


def router_reported_load(*, benchmark: Benchmark, path: Path) -> int:
    """Load a paper's router table (routers/data/*.json) onto a benchmark; idempotent (updates by name)."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    with transaction.atomic():
        for position, row in enumerate(doc["rows"]):
            figures = {k: v for k, v in row.items() if k not in ("name", "group")}
            RouterReported.objects.update_or_create(
                benchmark=benchmark, name=row["name"],
                defaults={"group": row.get("group", ""), "position": position, "figures": figures,
                          "source": doc["source"], "citation": doc["citation"]})
    return len(doc["rows"])


def router_reference_compute(*, reference_id: int) -> RouterReference | None:
    """Train the reference router (kNN over TF-IDF) on the train split and store its test picks.

    Safe to run twice: only a queued one is claimed (or one left ``scoring`` by a lost worker and
    delivered again). If the pool or the split moved since it was queued, it is not trained: the
    first reader of the new pool has queued another for the new inputs.
    """
    claimed = RouterReference.objects.filter(pk=reference_id, status=RouterStatus.QUEUED).update(
        status=RouterStatus.SCORING, status_at=timezone.now())
    ref = RouterReference.objects.select_related("track__benchmark").filter(pk=reference_id).first()
    if ref is None or not claimed and ref.status != RouterStatus.SCORING:
        return ref
    data = pool_ensure(ref.track.benchmark)
    if reference_inputs(data) != ref.inputs:
        ref.status, ref.failure_reason = RouterStatus.FAILED, "superseded: the pool or the split moved before training"
    else:
        train, test = data.rows("train"), data.rows("test")
        probs = knn_probs(data.pool, [s.question for s in data.samples], train, test)
        # by member key: a model renamed since keeps its picks (pool_build names them again)
        ref.picks = {data.samples[i].uid: data.key_of(data.pool.models[int(p.argmax())]) for i, p in zip(test, probs)}
        ref.status, ref.failure_reason = RouterStatus.DONE, ""
    ref.finished_at = ref.status_at = timezone.now()
    ref.save(update_fields=["status", "status_at", "picks", "failure_reason", "finished_at"])
    if ref.status == RouterStatus.DONE:
        pool_refresh(benchmark_id=ref.track.benchmark_id, force=True)  # its row joins the stored baselines
    return ref


def _sweep(model: type, send: Any, now: Any) -> list[int]:  # model: RouterSubmission or RouterReference
    stuck = now - timedelta(seconds=settings.SUBMISSION_STUCK_SECONDS)
    model.objects.filter(status=RouterStatus.SCORING, status_at__lt=stuck).update(
        status=RouterStatus.QUEUED, status_at=now - timedelta(days=1))  # re-sent just below
    waiting = now - timedelta(seconds=settings.SUBMISSION_QUEUED_RESEND_SECONDS)
    # One whose publish failed goes at once (this sweep came through the broker: it is back); one merely
    # waiting in the queue only after SUBMISSION_QUEUED_RESEND_SECONDS (its message lost in the broker).
    due = Q(status_at__lt=waiting) | Q(enqueue_failed=True)
    pks = list(model.objects.filter(due, status=RouterStatus.QUEUED).values_list("pk", flat=True))
    sent = []
    for pk in pks:  # whoever moves the row sends it, so two sweepers never both do
        if model.objects.filter(due, pk=pk, status=RouterStatus.QUEUED).update(status_at=now, enqueue_failed=False):
            send(pk)  # failing again sets the flag again
            sent.append(pk)
    return sent


def routers_sweep(*, now: Any = None) -> list[int]:
    """Send again the routers and reference routers left ``queued`` longer than SUBMISSION_QUEUED_RESEND_SECONDS
    (the broker was down when they were sent) and put back those ``scoring`` longer than
    SUBMISSION_STUCK_SECONDS (their worker was lost; scoring a router takes seconds, training the reference
    router ~10 s at VL-RouterBench's size). Safe to run twice: the work claims only a queued one. Returns the
    routers sent."""
    now = now or timezone.now()
    _sweep(RouterReference, reference_send, now)
    return _sweep(RouterSubmission, router_submission_send, now)


# ------------------------------------------------------------------------ the pool's derived build

REFERENCE_NAME = "kNN over TF-IDF (reference)"
# What the board says of the reference router: "done" (its row is on the board), "computing" (queued or
# being trained on the worker: no row, never an older pool's figures), "failed", or "" (no pool to route).
REFERENCE_STATES = {RouterStatus.QUEUED: "computing", RouterStatus.SCORING: "computing",
                    RouterStatus.DONE: "done", RouterStatus.FAILED: "failed"}


def _sparse(figures: dict[str, Any]) -> dict[str, Any]:
    """A board row's figures with only the picked models in its shares (the others are 0): a candidate
    model's row, or a baseline's, listed every model of the pool per domain, which made the payload grow
    with the square of the pool (115 MB at 1,000 models, 99 % of it zeros)."""
    out = dict(figures)
    if isinstance(out.get("share"), dict):
        out["share"] = {m: v for m, v in out["share"].items() if v}
    if isinstance(out.get("share_by_domain"), dict):
        out["share_by_domain"] = {d: {m: v for m, v in shares.items() if v}
                                  for d, shares in out["share_by_domain"].items()}
    return out


def pool_build(benchmark: Benchmark) -> dict[str, Any]:
    """The router pool's derived build (kind "routers"): the pool made current (track, split, version,
    reference router queued), routers scored on another pool sent to be re-scored, and what the Routers tab
    shows that depends on the pool alone: its shape, the baselines, each candidate model routed to alone,
    and the reference router's row once trained. Stored in DerivedState; pages only read it."""
    data = pool_ensure(benchmark)
    routers_rescore_stale(benchmark=benchmark, version=data.version)
    test = data.rows("test")
    bounds = cost_bounds_of(benchmark, data, test) if data.pool.models else None
    rows: list[dict[str, Any]] = []
    if data.pool.models and test:
        train = data.rows("train")
        domains = [data.samples[i].domain for i in test]
        for kind, (label, figures) in routing.baselines(data.pool, train, test, bounds=bounds).items():
            rows.append({"kind": "baseline", "name": label, "figures": _sparse(figures.as_dict()), "baseline": kind})
        for m, f in routing.single_model_scores(data.pool, test, bounds=bounds, domains=domains).items():
            rows.append({"kind": "model", "name": m, "figures": _sparse(f.as_dict())})
    ref = data.reference
    if ref is not None and ref.status == RouterStatus.DONE:
        names = data.name_of_key()  # a pick stored before picks were keyed is a name: kept as it is
        probs = routing.probs_matrix(data.pool, [{names.get(ref.picks[data.samples[i].uid],
                                                            ref.picks[data.samples[i].uid]): 1.0} for i in test])
        figures = routing.score(data.pool, test, probs, bounds=bounds, domains=[data.samples[i].domain for i in test])
        rows.append({"kind": "baseline", "name": REFERENCE_NAME, "figures": _sparse(figures.as_dict()),
                     "baseline": "knn"})
    return {"mode": data.track.mode, "models": list(data.pool.models), "n_test": len(test),
            "splits": {s: len(data.rows(s)) for s in routing.SPLITS}, "bounds": list(bounds) if bounds else None,
            "pool_version": data.version.number, "pool_version_id": data.version.pk, "origin": data.version.origin,
            "reference": REFERENCE_STATES[ref.status] if ref else "", "rows": rows,
            "members": data.submissions}


def pool_refresh(*, benchmark_id: int, force: bool = False) -> int | None:
    """Bring the pool's build up to the benchmark's results_version (the task ``routers.pool_refresh`` in
    RESULTS_CHANGED_TASKS); ``force`` rebuilds at the same version, after a change the version does not
    follow (a pool imported or dropped, the reference router trained)."""
    return derived_refresh(benchmark_id=benchmark_id, kind="routers", build=pool_build, force=force)
