"""The router pool of a benchmark and its fixed split (docs/routers.md).

Candidates are the benchmark's public, scored submissions that are priced in the track's mode
(every prediction in that mode has a cost); of several submissions of one model name the latest
counts. Q and C come from their ``PredictionResult`` rows over the benchmark's non-aux samples; a
sample a model did not answer counts as wrong at $0. An imported pool (``RouterTrack.imported``,
import_router_matrix) is instead its version's own cells, over the samples they cover.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass, replace

import numpy as np
from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Count, Max, Q
from django.utils import timezone

from config.celery import task_by_name

from annotation.models import Benchmark, Sample
from evaluation.metrics.profiles import UNDECIDED
from evaluation.metrics.routing import Pool, split_samples
from evaluation.metrics.types import HEADLINE_ORDER
from evaluation.models import PredictionResult, Submission
from routers.models import RouterPoolCell, RouterPoolVersion, RouterReference, RouterSplitSample, RouterStatus, RouterTrack

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SampleInfo:
    pk: int
    uid: str
    question: str
    domain: str


@dataclass(frozen=True)
class PoolData:
    track: RouterTrack
    pool: Pool
    samples: list[SampleInfo]  # aligned with pool.samples
    split: dict[str, str]  # uid -> train | dev | test
    submissions: dict[str, int | None]  # model name -> submission id (None: a member of an imported pool)
    version: RouterPoolVersion
    reference: RouterReference | None = None  # the reference router of this content and split (reference_ensure)

    def rows(self, split: str) -> list[int]:
        return [i for i, s in enumerate(self.samples) if self.split.get(s.uid) == split]

    def key_of(self, name: str) -> str:
        return member_key(name, self.submissions.get(name))

    def name_of_key(self) -> dict[str, str]:
        """{member key: the member's name now}."""
        return {self.key_of(name): name for name in self.submissions}

    def aliases(self, *earlier: dict[str, int | None] | None) -> dict[str, str]:
        """Names the current members had before ({earlier name: name now}), from earlier {name: submission id}
        maps (a pool version's members, the pool a router was last scored on): a router file written with
        a model's old name still routes to that model after its owner renamed it."""
        now = {sid: name for name, sid in self.submissions.items() if sid is not None}
        out: dict[str, str] = {}
        for members in earlier:
            for name, sid in (members or {}).items():
                if name not in self.submissions and sid in now:
                    out.setdefault(name, now[sid])
        return out


def member_key(name: str, submission_id: int | None) -> str:
    """A pool member's identity: its submission ("s<id>"), so that its owner renaming the model (the
    submission's ``model_name``) changes neither the pool's version nor any router's picks; a member of an
    imported pool has no submission and is its name (the import's own identity)."""
    return f"s{submission_id}" if submission_id is not None else name


def _public(benchmark: Benchmark):  # noqa: ANN202 - a Submission queryset
    return Submission.objects.on_board().filter(benchmark=benchmark)


def priced_candidates(benchmark: Benchmark, mode: str) -> dict[str, int]:
    """{model name: submission id}: public scored submissions with a cost on every prediction in ``mode``, and
    no non-aux row left undecided for an LLM judge (docs/metrics.md section 13): Q would count it wrong."""
    counts = (PredictionResult.objects.filter(submission__in=_public(benchmark), mode=mode)
              .values("submission_id").annotate(n=Count("id"), priced=Count("cost_usd"), undecided=Count(
                  "id", filter=Q(decided_by=UNDECIDED, sample__aux_line=False))).order_by())
    priced = {r["submission_id"] for r in counts if r["n"] and r["n"] == r["priced"] and not r["undecided"]}
    out: dict[str, int] = {}
    for sid, name in (_public(benchmark).filter(pk__in=priced).order_by("finished_at", "id")
                      .values_list("id", "model_name")):
        out[name] = sid  # later rows win: the latest submission of a model name
    return out


def default_mode(benchmark: Benchmark) -> str:
    """The headline mode (adaptive, else text, else oracle) among modes that have priced candidates."""
    for mode in HEADLINE_ORDER:
        if priced_candidates(benchmark, mode):
            return mode
    return HEADLINE_ORDER[0]


def _samples(benchmark: Benchmark) -> list[SampleInfo]:
    rows = (Sample.objects.filter(benchmark=benchmark, aux_line=False).order_by("pk")
            .values_list("pk", "uid", "question", "category__domain__name"))
    return [SampleInfo(*r) for r in rows]


def release_ids(benchmark: Benchmark) -> dict[str, int | None]:
    """A release's sample id -> the benchmark sample's pk (None when two samples would claim it).

    VL-RouterBench names a sample ``<Dataset>/<id>``. A sample matches its own uid, and also: a uid
    ``<dataset>:<index>`` (our VLMEvalKit import of several TSVs) as ``<dataset>/<index>``; a uid
    ``<index>`` imported from one TSV ``<dataset>.tsv`` (its ``source``) as ``<dataset>/<index>``.
    """
    out: dict[str, int | None] = {}
    alias: dict[str, int | None] = {}
    for pk, uid, source in Sample.objects.filter(benchmark=benchmark, aux_line=False).values_list("pk", "uid", "source"):
        out[uid] = pk
        other = uid.replace(":", "/", 1) if ":" in uid else (f"{source.rsplit('.', 1)[0]}/{uid}" if source else None)
        if other is not None:
            alias[other] = None if other in alias else pk
    for other, pk in alias.items():
        out.setdefault(other, pk)  # an exact uid wins over an alias
    return out


def track_ensure(*, benchmark: Benchmark) -> RouterTrack:
    """The benchmark's track and split, created on first use; samples added since are split among themselves.

    Rows are only ever added (``ignore_conflicts``), so a split drawn once never moves, and two
    requests racing to draw it write the same rows.
    """
    track = RouterTrack.objects.filter(benchmark=benchmark).select_related("imported").first()
    if track is None:
        track, _ = RouterTrack.objects.get_or_create(benchmark=benchmark, defaults={"mode": default_mode(benchmark)})
    elif track.imported_id is None and not priced_candidates(benchmark, track.mode):
        # Chosen before any model was priced in it (or all have left): follow the headline mode again.
        mode = default_mode(benchmark)
        if mode != track.mode:
            RouterTrack.objects.filter(pk=track.pk).update(mode=mode)
            track.mode = mode
    if track.split_source != "seed":
        return track
    samples = _samples(benchmark)
    have = set(RouterSplitSample.objects.filter(track=track).values_list("sample_id", flat=True))
    new = [s for s in samples if s.pk not in have]
    if new:
        split = split_samples([s.uid for s in new], seed=track.seed)
        with transaction.atomic():
            RouterSplitSample.objects.bulk_create(
                [RouterSplitSample(track=track, sample_id=s.pk, split=split[s.uid]) for s in new],
                ignore_conflicts=True)
    return track


def pool_load(benchmark: Benchmark, *, ensure: bool = True) -> PoolData | None:
    """The pool as it is now. With ``ensure`` (the pool's refresh, scoring, imports: never a page) the track,
    its split, the pool version and the reference router are created as needed; without it (a page's read)
    nothing is written: None when the track does not exist yet, and a pool version not yet numbered is an
    unsaved one (number 0) until the refresh numbers it."""
    if ensure:
        track = track_ensure(benchmark=benchmark)
    else:
        found = RouterTrack.objects.filter(benchmark=benchmark).select_related("imported").first()
        if found is None:
            return None
        track = found
    samples = _samples(benchmark)
    if track.split_source != "seed":  # a release's split: its samples only
        listed = set(RouterSplitSample.objects.filter(track=track).values_list("sample_id", flat=True))
        samples = [s for s in samples if s.pk in listed]
    if track.imported_id is not None:
        version = track.imported
        members: dict[str, int | None] = dict(version.members)
        cells = list(RouterPoolCell.objects.filter(version=version).values_list("model", "sample_id", "correct",
                                                                                 "cost_usd"))
        covered = {pk for _, pk, _, _ in cells}
        samples = [s for s in samples if s.pk in covered]  # an imported pool routes its own samples only
    else:
        members = priced_candidates(benchmark, track.mode)
        names = {sid: name for name, sid in members.items()}
        cells = [(names[sid], pk, ok, usd) for sid, pk, ok, usd in PredictionResult.objects.filter(
            submission_id__in=names, mode=track.mode).values_list("submission_id", "sample_id", "correct", "cost_usd")]
        version = pool_version_ensure(track=track, members=members) if ensure else pool_version_find(
            track=track, members=members)
    by_pk = {s.pk: s.uid for s in samples}
    split = {by_pk[pk]: sp for pk, sp in RouterSplitSample.objects.filter(track=track).values_list("sample_id", "split")
             if pk in by_pk}
    correct: dict[str, dict[str, bool]] = {n: {} for n in members}
    cost: dict[str, dict[str, float]] = {n: {} for n in members}
    for name, sample_id, ok, usd in cells:
        uid = by_pk.get(sample_id)
        if uid is not None:
            correct[name][uid] = ok
            cost[name][uid] = usd
    pool = Pool.build(list(members), [s.uid for s in samples], correct, cost)
    data = PoolData(track=track, pool=pool, samples=samples, split=split, submissions=members, version=version)
    if not ensure:
        ref = RouterReference.objects.filter(track=track, inputs=reference_inputs(data)).first() if (
            data.pool.models and data.rows("test")) else None
        return replace(data, reference=ref)
    return replace(data, reference=reference_ensure(data=data))


def pool_ensure(benchmark: Benchmark) -> PoolData:
    """``pool_load`` for writers: the track, split, version and reference router exist afterwards."""
    data = pool_load(benchmark, ensure=True)
    assert data is not None  # with ensure the track is created
    return data


def _signature(track: RouterTrack, members: dict[str, int]) -> str:
    """The content: the mode and the member submissions, not their names (a rename is the same pool)."""
    return hashlib.sha256(json.dumps([track.mode, "submissions", sorted(members.values())]).encode()).hexdigest()


def pool_version_ensure(*, track: RouterTrack, members: dict[str, int]) -> RouterPoolVersion:
    """The version naming this pool content, created (numbered next) the first time the content is seen."""
    return version_get_or_create(track=track, signature=_signature(track, members), members=members)[0]


def pool_version_find(*, track: RouterTrack, members: dict[str, int]) -> RouterPoolVersion:
    """The version naming this content, or an unsaved one (number 0) if no refresh has numbered it yet."""
    signature = _signature(track, members)
    found = RouterPoolVersion.objects.filter(track=track, signature=signature).first()
    return found or RouterPoolVersion(track=track, number=0, signature=signature, members=members)


def version_get_or_create(*, track: RouterTrack, signature: str, members: dict[str, int | None], origin: str = "",
                          bounds: list[float] | None = None) -> tuple[RouterPoolVersion, bool]:
    """(the version with this signature, whether it was created now, numbered next).

    Two requests seeing a new content at once: one creates it, the other's insert hits a unique
    constraint (same signature, or same number for another content) and it reads or numbers again.
    """
    for _ in range(5):
        found = RouterPoolVersion.objects.filter(track=track, signature=signature).first()
        if found is not None:
            return found, False
        number = (RouterPoolVersion.objects.filter(track=track).aggregate(m=Max("number"))["m"] or 0) + 1
        try:
            with transaction.atomic():
                return RouterPoolVersion.objects.create(track=track, number=number, signature=signature,
                                                        members=members, origin=origin, bounds=bounds), True
        except IntegrityError:
            continue
    raise RuntimeError("could not number the router pool's new version")


def reference_inputs(data: PoolData) -> str:
    """sha256 of what training the reference router reads: the models, the train and test samples with
    their questions, and train's Q and C (its neighbours' correctness and cost)."""
    train, test = data.rows("train"), data.rows("test")
    h = hashlib.sha256(json.dumps([[data.key_of(m) for m in data.pool.models],  # members, not their names
                                   [[data.samples[i].uid, data.samples[i].question] for i in train],
                                   [[data.samples[i].uid, data.samples[i].question] for i in test]]).encode())
    h.update(np.ascontiguousarray(data.pool.correct[train]).tobytes())
    h.update(np.ascontiguousarray(data.pool.cost[train]).tobytes())
    return h.hexdigest()


def reference_ensure(*, data: PoolData) -> RouterReference | None:
    """The reference router of this pool content and split; the first reader of new inputs creates it
    ``queued`` and sends it to the worker (training takes seconds at VL-RouterBench's size, so no web
    request does it). None when there is nothing to route (no model or no test sample)."""
    if not data.pool.models or not data.rows("test"):
        return None
    ref, created = RouterReference.objects.get_or_create(track=data.track, inputs=reference_inputs(data),
                                                         defaults={"pool_version": data.version})
    # One given up on because the pool moved while it waited (superseded) is queued again if its pool is back.
    if created or (ref.status == RouterStatus.FAILED and RouterReference.objects.filter(
            pk=ref.pk, status=RouterStatus.FAILED).update(status=RouterStatus.QUEUED, status_at=timezone.now())):
        ref.status = RouterStatus.QUEUED
        pk = ref.pk
        transaction.on_commit(lambda: reference_send(pk))
    return ref


def reference_send(pk: int) -> None:
    try:  # sent by name: the task module imports the services, which import this one
        task_by_name("routers.reference").apply_async((pk,), queue=settings.SUBMISSIONS_QUEUE)
    except Exception:  # broker down: the row says so, and the sweeper's next run sends it
        log.warning("could not send reference router %s to the queue", pk, exc_info=True)
        RouterReference.objects.filter(pk=pk, status=RouterStatus.QUEUED).update(enqueue_failed=True)
