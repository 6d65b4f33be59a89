"""docs/security.md, executed: every URL pattern of the site, requested by each role, answers as the
table says, and no body carries test gold (or a private submission's predictions) where forbidden.

The patterns are read from the URL resolver, so a new URL without a row in ``TABLE`` fails the test.
One world is built once; each request runs in a savepoint that is rolled back, so a POST (delete,
publish, skip ...) by one role changes nothing for the next.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core.files.base import ContentFile
from django.db import transaction
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from django.utils import timezone

from annotation.downloads.services import downloads_build_now
from annotation.models import Benchmark, KeyStepDraft, Revision, Role, Sample
from annotation.workbench.access import role_grant
from annotation.workbench.assignments import assignment_claim_next
from annotation.workbench.editing import annotation_save
from evaluation import services
from evaluation.models import PredictionResult, Submission
from leaderboard.tests import helpers as lb
from tests.confidential import gold_in, mark_test_gold
from trace_review import services as tr_services
from trace_review.models import Trace, TraceAssignment
from trace_review.traces import trace_view

ROLES = ("anonymous", "owner", "other", "annotator", "reviewer", "staff")
PRIVATE_MARK = "PRIVATE-PREDICTION"
L = "login"  # 302 to the sign-in page
A = "admin-login"  # 302 to the admin's sign-in page


def _all(status: object) -> dict[str, object]:
    return dict.fromkeys(ROLES, status)


def _signed_in(status: object, anonymous: object = L) -> dict[str, object]:
    return {"anonymous": anonymous, **dict.fromkeys(ROLES[1:], status)}


@dataclass
class Row:
    """One URL pattern: how to fill its arguments, how to call it, what each role gets."""

    args: Callable[[World], dict] = lambda w: {}
    expect: dict[str, object] = field(default_factory=dict)
    method: str = "get"
    data: Callable[[World], dict] = lambda w: {}
    gold_ok: frozenset = frozenset({"staff"})  # roles that may see test gold in the body
    private_ok: frozenset = frozenset({"owner", "staff"})  # roles that may see a private submission's predictions


@dataclass
class World:
    benchmark: Benchmark
    dev: Sample
    test: Sample
    public: object
    private: object
    assignment: object
    revision: Revision
    draft: KeyStepDraft
    batch: object
    trace_assignment: TraceAssignment
    users: dict
    run: object = None  # the owner's hosted run (docs/runs.md)
    named_batch: object = None  # a trace batch naming the annotator only
    proposal_run: object = None  # staff's proposal run (docs/annotation.md, "Proposals")


def _judged_by_people(trace: Trace, people: list) -> None:
    """Two people's verdicts on ``trace``: its judge's agreement with people now has a row."""
    shape = trace_view(trace, gold=True, run=False).shape
    for person in people:
        assignment = TraceAssignment.objects.create(trace=trace, reviewer=person,
                                                    locked_until=timezone.now() + timedelta(hours=1))
        tr_services.verdict_save(assignment=assignment, shape=shape, answer_correct=True,
                                 key_steps=[True] * shape.n_key_steps, calls=[True] * shape.n_calls,
                                 step_scores=[1.0] * shape.n_steps)


def _private_judged_by_people(benchmark: Benchmark, private: Submission, people: list) -> None:
    """The private submission was public when people judged its traces; its owner has since unpublished it.
    Its judge carries the private mark, so an agreement page that counts its traces shows the mark."""
    Submission.objects.filter(pk=private.pk).update(is_public=True)
    batch = tr_services.batch_create(benchmark=benchmark, name="Judged before unpublishing", size=2,
                                     submission=Submission.objects.get(pk=private.pk))
    for trace in batch.traces.all():
        _judged_by_people(trace, people)
    PredictionResult.objects.filter(submission=private).update(decided_by=f"judge:{PRIVATE_MARK}")
    Submission.objects.filter(pk=private.pk).update(is_public=False, judge_name=PRIVATE_MARK)


def build_world(folder) -> World:  # noqa: ANN001
    users_model = get_user_model()
    users = {
        "owner": users_model.objects.create_user("owner", password="pw"),
        "other": users_model.objects.create_user("other", password="pw"),
        "annotator": users_model.objects.create_user("annotator", password="pw"),
        "reviewer": users_model.objects.create_user("reviewer", password="pw"),
        "staff": users_model.objects.create_superuser("staff", password="pw"),
    }
    benchmark = lb.make_benchmark(folder)
    role_grant(benchmark=benchmark, user=users["annotator"], role=Role.ANNOTATOR)
    role_grant(benchmark=benchmark, user=users["reviewer"], role=Role.REVIEWER)

    def submit(name: str, public: bool, mark: str):  # noqa: ANN202
        lines = lb.prediction_lines(lb.ModelSpec(name, lb.ALPHA.right, tools=lb.ALPHA.tools))
        for line in lines:
            line["response"] = mark
        sub = services.submission_create(benchmark=benchmark, owner=users["owner"], model_name=name,
                                         file=ContentFile(lb.jsonl(lines), name="p.jsonl"), is_public=public,
                                         enforce_limits=False, enqueue=False, price_input_per_mtok=1.0,
                                         price_output_per_mtok=2.0)
        from evaluation.pipeline import submission_process_sync

        return submission_process_sync(submission=sub)

    public = submit("Open model", True, "public response")
    private = submit("Secret model", False, PRIVATE_MARK)
    mark_test_gold(benchmark)
    # Declares Agent-X's figures, so its per-task page answers (a private submission's: owner and staff).
    type(benchmark).objects.filter(pk=benchmark.pk).update(figures=["agentx"])
    test = Sample.objects.get(benchmark=benchmark, uid="s3")  # test split, with a chain and a transform
    dev = Sample.objects.get(benchmark=benchmark, uid="s1")
    assignment = assignment_claim_next(user=users["annotator"], benchmark=benchmark)
    annotation_save(annotation_id=assignment.annotation_id, user=users["annotator"], base_version=1,
                    data={"question": "Q?", "options": None, "answer": "1", "answer_type": "number", "transform": [],
                          "regions": [], "key_steps": [], "toolchain": []})
    revision = Revision.objects.filter(annotation_id=assignment.annotation_id).first()
    draft = KeyStepDraft.objects.create(annotation_id=assignment.annotation_id, requested_by=users["annotator"],
                                        prompt_version="v1")
    batch = tr_services.batch_create(benchmark=benchmark, name="Walk", size=50, submission=public)
    trace = batch.traces.get(sample=test)
    trace_assignment = TraceAssignment.objects.create(trace=trace, reviewer=users["annotator"],
                                                      locked_until=timezone.now() + timedelta(hours=1))
    named_batch = tr_services.batch_create(benchmark=benchmark, name="Named", size=2, submission=public,
                                           reviewers=[users["annotator"]])
    # Agreement with people: over a public submission's traces, and over a private one's (staff only).
    people = [users_model.objects.create_user(name, password="pw") for name in ("judger1", "judger2")]
    for person in people:
        role_grant(benchmark=benchmark, user=person, role=Role.ANNOTATOR)
    _judged_by_people(batch.traces.exclude(pk=trace.pk).first(), people)
    _private_judged_by_people(benchmark, private, people)
    downloads_build_now(benchmark=benchmark)  # the public files of the world as it is, test markers included
    from evaluation.models import HostedRun
    from evaluation.secrets import encrypt_api_key

    run = HostedRun.objects.create(benchmark=benchmark, owner=users["owner"], endpoint="http://127.0.0.1:9/v1",
                                   model="m", modes=["text"], api_key_encrypted=encrypt_api_key(PRIVATE_MARK),
                                   keep_endpoint=True, status="done")
    run.predictions.save(f"run-{run.pk}.jsonl", ContentFile(b'{"sample_id": "x", "mode": "text", "answer": "A"}\n'))
    from annotation.models import Proposal, ProposalRun

    proposal_run = ProposalRun.objects.create(benchmark=benchmark, owner=users["staff"], endpoint="http://127.0.0.1:9/v1",
                                              model="m", prompt_version="proposals_v1", status="running",
                                              api_key_encrypted=encrypt_api_key(PRIVATE_MARK))
    Proposal.objects.create(run=proposal_run, sample=dev, model="m", prompt_version="proposals_v1", raw_reply="{}",
                            regions=[], transform=[], key_steps=[], toolchain=[])
    from evaluation.queueing import results_changed_run

    benchmark.refresh_from_db()
    results_changed_run(benchmark_id=benchmark.pk)  # what the worker does after each finish: pages read it
    return World(benchmark, dev, test, public, private, assignment, revision, draft, batch, trace_assignment, users,
                 run, named_batch, proposal_run)


SLUG = {"slug": lb.SLUG}
MINE = {"annotator": 200}  # the annotator's own assignment; everyone else 404 (not even confirmed to exist)
OWN = {"anonymous": L, "owner": 404, "other": 404, "annotator": 200, "reviewer": 404, "staff": 404}
OWNED = {"anonymous": L, "owner": 200, "other": 404, "annotator": 404, "reviewer": 404, "staff": 200}
REVIEWERS = {"anonymous": L, "owner": 403, "other": 403, "annotator": 403, "reviewer": 200, "staff": 200}
ADMINS = {"anonymous": L, "owner": 404, "other": 404, "annotator": 404, "reviewer": 404, "staff": 200}
STAFF = {"anonymous": A, "owner": A, "other": A, "annotator": A, "reviewer": A, "staff": 200}
PUBLIC = _all(200)

TABLE: dict[str, Row] = {
    # Accounts and API documentation.
    "login": Row(expect=PUBLIC, gold_ok=frozenset(ROLES)),
    "logout": Row(method="post", expect=_all(302)),
    "favicon": Row(expect=_all(302)),
    "schema": Row(expect=PUBLIC),
    "api-docs": Row(expect=PUBLIC),
    "tools": Row(expect=PUBLIC),
    # Submissions: a private one is its owner's and staff's (docs/security.md).
    "api-submission-create": Row(args=lambda w: SLUG, method="post", expect=_signed_in(400, anonymous=401)),
    "api-submission-list": Row(expect=_signed_in(200, anonymous=401)),
    "api-submission-detail": Row(args=lambda w: {"pk": w.private.pk}, expect={**OWNED, "anonymous": 401}),
    "api-submission-predictions": Row(args=lambda w: {"pk": w.private.pk}, expect={**OWNED, "anonymous": 401}),
    "evaluation:list": Row(expect=_signed_in(200)),
    "evaluation:new": Row(expect=_signed_in(200)),
    "evaluation:new_for": Row(args=lambda w: SLUG, expect=_signed_in(200)),
    "evaluation:detail": Row(args=lambda w: {"pk": w.private.pk}, expect=OWNED),
    "evaluation:progress": Row(args=lambda w: {"pk": w.private.pk}, expect=OWNED),
    "evaluation:file": Row(args=lambda w: {"pk": w.private.pk}, expect=OWNED),
    "evaluation:publish": Row(args=lambda w: {"pk": w.private.pk}, method="post", data=lambda w: {"public": "1"},
                              expect={**OWNED, "owner": 302, "staff": 302}),
    "evaluation:edit": Row(args=lambda w: {"pk": w.private.pk}, expect=OWNED),  # the model details (no re-score)
    "evaluation:delete": Row(args=lambda w: {"pk": w.private.pk}, method="post",
                             expect={**OWNED, "owner": 302, "staff": 302}),
    "evaluation:health": Row(expect=STAFF),
    # Hosted runs: their owner's and staff's; the API key is nobody's (PRIVATE_MARK is the stored key here).
    "api-run-create": Row(args=lambda w: SLUG, method="post", expect=_signed_in(400, anonymous=401)),
    "api-run-list": Row(expect=_signed_in(200, anonymous=401), private_ok=frozenset()),
    "api-run-detail": Row(args=lambda w: {"pk": w.run.pk}, expect={**OWNED, "anonymous": 401}, private_ok=frozenset()),
    "api-run-cancel": Row(args=lambda w: {"pk": w.run.pk}, method="post", expect={**OWNED, "anonymous": 401},
                          private_ok=frozenset()),
    # Proposal runs: staff's and a benchmark's admins' (others 404); the stored key is nobody's.
    "proposals:runs": Row(args=lambda w: SLUG, expect=ADMINS, private_ok=frozenset()),
    "proposals:quality": Row(args=lambda w: SLUG, expect=ADMINS, private_ok=frozenset()),
    "proposals:quality_csv": Row(args=lambda w: SLUG, expect=ADMINS, private_ok=frozenset()),
    "proposals:quality_json": Row(args=lambda w: SLUG, expect=ADMINS, private_ok=frozenset()),
    "proposals:detail": Row(args=lambda w: {**SLUG, "pk": w.proposal_run.pk}, expect=ADMINS, private_ok=frozenset()),
    "proposals:cancel": Row(args=lambda w: {**SLUG, "pk": w.proposal_run.pk}, method="post",
                            expect={**ADMINS, "staff": 302}, private_ok=frozenset()),
    "runs:list": Row(expect=_signed_in(200), private_ok=frozenset()),
    "runs:new": Row(expect=_signed_in(200), private_ok=frozenset()),
    "runs:detail": Row(args=lambda w: {"pk": w.run.pk}, expect=OWNED, private_ok=frozenset()),
    "runs:progress": Row(args=lambda w: {"pk": w.run.pk}, expect=OWNED, private_ok=frozenset()),
    "runs:file": Row(args=lambda w: {"pk": w.run.pk}, expect=OWNED, private_ok=frozenset()),
    "runs:cancel": Row(args=lambda w: {"pk": w.run.pk}, method="post", expect={**OWNED, "owner": 302, "staff": 302},
                       private_ok=frozenset()),  # the pipeline's health page (staff_member_required)
    # Public benchmark data: aggregates, public submissions, dev samples.
    "api-benchmark-list": Row(expect=PUBLIC),
    "api-benchmark-detail": Row(args=lambda w: SLUG, expect=PUBLIC),
    "api-benchmark-leaderboard": Row(args=lambda w: SLUG, expect=PUBLIC),
    "leaderboard:home": Row(expect=PUBLIC),
    "leaderboard:export_csv": Row(args=lambda w: SLUG, expect=PUBLIC),
    "leaderboard:export_csv_metadata": Row(args=lambda w: SLUG, expect=PUBLIC),  # CSVW: column units, no data
    "leaderboard:export_json": Row(args=lambda w: SLUG, expect=PUBLIC),
    "leaderboard:board": Row(args=lambda w: SLUG, expect=PUBLIC),
    "leaderboard:tab": Row(args=lambda w: {**SLUG, "tab": "process"}, expect=PUBLIC),
    "leaderboard:compare": Row(args=lambda w: SLUG, expect=PUBLIC),
    # "What flipped", one sample's two traces: a test sample for staff and the owner of both (without its gold).
    "leaderboard:compare_sample": Row(args=lambda w: {**SLUG, "a": w.public.pk, "b": w.public.pk, "uid": w.test.uid},
                                      expect={**_all(404), "owner": 200, "staff": 200}),
    # The benchmark's inputs per split (docs/downloads.md): public, and the test split's files carry no gold for
    # anyone, staff included (staff export it with export_benchmark). The TSV is plain text, so the markers show.
    "leaderboard:data": Row(args=lambda w: SLUG, expect=PUBLIC),
    "leaderboard:data_file": Row(args=lambda w: {**SLUG, "split": "test", "kind": "tsv"}, expect=PUBLIC,
                                 gold_ok=frozenset()),
    "api-benchmark-downloads": Row(args=lambda w: SLUG, expect=PUBLIC),
    # The run protocol (prompts, tools, images, scoring): public like the board; no sample, no gold.
    "leaderboard:protocol": Row(args=lambda w: SLUG, expect=PUBLIC, gold_ok=frozenset()),
    # An example prediction file on the benchmark's sample ids (the upload form's): placeholders, no gold.
    "leaderboard:example_predictions": Row(args=lambda w: SLUG, expect=PUBLIC, gold_ok=frozenset()),
    "leaderboard:model": Row(args=lambda w: {**SLUG, "pk": w.public.pk}, expect=PUBLIC),
    # Agent-X per task: a private submission's for its owner and staff (test-split tasks for staff only).
    "leaderboard:agentx_tasks": Row(args=lambda w: {**SLUG, "pk": w.private.pk}, expect={**OWNED, "anonymous": 404}),
    # A row's per-sample records (docs/runs.md, "The verified tier"): a private submission's for its owner and
    # staff (others: 404); a public one's dev-split records for anyone (leaderboard/tests/test_provenance.py).
    "leaderboard:records": Row(args=lambda w: {**SLUG, "pk": w.private.pk}, expect={**OWNED, "anonymous": 404}),
    # The same row for the shared registries (docs/interop.md): as its records. The Hugging Face entries need the
    # benchmark's Hub dataset, which this one does not name: 404 with the reason, for everyone.
    "leaderboard:eee": Row(args=lambda w: {**SLUG, "pk": w.private.pk}, expect={**OWNED, "anonymous": 404}),
    "leaderboard:hf_eval_results": Row(args=lambda w: {**SLUG, "pk": w.private.pk}, expect=_all(404)),
    "leaderboard:sample": Row(args=lambda w: {**SLUG, "pk": w.public.pk, "uid": w.dev.uid}, expect=PUBLIC),
    "leaderboard:sample_medium": Row(args=lambda w: {**SLUG, "pk": w.public.pk, "uid": w.dev.uid, "position": 0,
                                                     "part": "still"}, expect=PUBLIC),
    "leaderboard:sample_image": Row(args=lambda w: {**SLUG, "pk": w.public.pk, "uid": w.dev.uid, "mode": "adaptive",
                                                    "ref": "img1"}, expect=PUBLIC),
    "routers:sample_image": Row(args=lambda w: {**SLUG, "pk": w.dev.pk}, expect=PUBLIC),
    "routers:matrix_csv": Row(args=lambda w: {**SLUG, "split": "test"}, expect=PUBLIC),
    "routers:matrix_parquet": Row(args=lambda w: {**SLUG, "split": "test"}, expect=PUBLIC),
    "routers:routers_json": Row(args=lambda w: SLUG, expect=PUBLIC),
    "routers:routers_csv": Row(args=lambda w: SLUG, expect=PUBLIC),
    "routers:routers_csv_metadata": Row(args=lambda w: SLUG, expect=PUBLIC),  # CSVW: column units, no data
    "routers:submit": Row(args=lambda w: SLUG, expect=_signed_in(200)),
    "routers:page": Row(args=lambda w: {**SLUG, "pk": 999_999}, expect=_all(404)),  # private ones: routers/tests/test_pages.py
    "api-router-create": Row(args=lambda w: SLUG, method="post", expect=_signed_in(400, anonymous=401)),
    "api-router-detail": Row(args=lambda w: {"pk": 999_999}, expect=_all(404)),  # router submissions: docs/routers.md
    # The annotator's workbench: their own assignment only.
    "annotation:queue": Row(expect=_signed_in(200)),
    "annotation:claim_next": Row(args=lambda w: SLUG, method="post",
                                 expect={**_signed_in(403), "annotator": 302, "staff": 302}),
    "annotation:item": Row(args=lambda w: {"pk": w.assignment.pk}, expect=OWN),
    "annotation:save": Row(args=lambda w: {"pk": w.assignment.pk}, method="post", expect={**OWN, "annotator": 400}),
    "annotation:skip": Row(args=lambda w: {"pk": w.assignment.pk}, method="post", expect={**OWN, "annotator": 302}),
    "annotation:run_chain": Row(args=lambda w: {"pk": w.assignment.pk}, method="post", expect=OWN),
    "annotation:verify_chain": Row(args=lambda w: {"pk": w.assignment.pk}, method="post", expect=OWN),
    "annotation:draft_steps": Row(args=lambda w: {"pk": w.assignment.pk}, method="post", expect=OWN),
    "annotation:history": Row(args=lambda w: {"pk": w.assignment.pk}, expect=OWN),
    "annotation:restore": Row(args=lambda w: {"pk": w.assignment.pk, "revision_pk": w.revision.pk}, method="post",
                              expect={**OWN, "annotator": 302}),
    "annotation:draft_status": Row(args=lambda w: {"pk": w.draft.pk}, expect=OWN),
    # Images of a test sample: its annotators, reviewers while it is under review, staff.
    "annotation:preview": Row(args=lambda w: {"pk": w.test.pk}, expect={**REVIEWERS, "reviewer": 403}),
    "annotation:medium": Row(args=lambda w: {"pk": w.test.pk, "position": 0, "part": "still"},
                             expect={**REVIEWERS, "reviewer": 403}),
    # Review pages and exports: reviewers (exports of the dev split only), staff everything.
    "annotation:review_list": Row(args=lambda w: SLUG, expect=REVIEWERS),
    "annotation:export_zip": Row(args=lambda w: SLUG, expect=REVIEWERS),
    "annotation:export_coco": Row(args=lambda w: SLUG, expect=REVIEWERS),
    "annotation:review_sample": Row(args=lambda w: {"pk": w.test.pk}, expect={**REVIEWERS, "reviewer": 404}),
    # Trace review: the assignee's trace (no test gold unless staff), public submissions only.
    "trace_review:queue": Row(expect=_signed_in(200)),
    "trace_review:batch_create": Row(method="post", data=lambda w: {"benchmark": lb.SLUG, "size": "2"},
                                     expect={**_signed_in(403), "staff": 302}),
    "trace_review:batch": Row(args=lambda w: {"pk": w.batch.pk}, expect={**REVIEWERS, "annotator": 200}),
    "trace_review:next": Row(args=lambda w: {"pk": w.batch.pk}, method="post",
                             expect={**REVIEWERS, "annotator": 302, "reviewer": 302, "staff": 302}),
    "trace_review:review": Row(args=lambda w: {"pk": w.trace_assignment.pk}, expect=OWN),
    "trace_review:skip": Row(args=lambda w: {"pk": w.trace_assignment.pk}, method="post",
                             expect={**OWN, "annotator": 302}),
    "trace_review:frame": Row(args=lambda w: {"pk": w.trace_assignment.pk}, expect=OWN),
    "trace_review:medium": Row(args=lambda w: {"pk": w.trace_assignment.pk, "position": 0, "part": "still"},
                               expect=OWN),
    "trace_review:image": Row(args=lambda w: {"pk": w.trace_assignment.pk, "ref": "img1"}, expect=OWN),
    # Agreement with people: over public submissions' traces, and over every submission's for staff only, so
    # a private submission's judge (its name is the private mark here) shows to staff alone.
    "trace_review:agreement": Row(expect=PUBLIC, private_ok=frozenset({"staff"})),
    "trace_review:agreement_for_submission": Row(args=lambda w: {"pk": w.public.pk}, expect=_all(302)),
    "trace_review:export": Row(expect={**_signed_in(403), "staff": 200}),
    # Staff only: re-asking the judge pays for every repeat (the offline test judge: refused with a message).
    "trace_review:stability_start": Row(method="post", data=lambda w: {"benchmark": lb.SLUG},
                                        expect={**_signed_in(403), "staff": 302}),
    "trace_review:verified": Row(args=lambda w: {"pk": w.public.pk}, expect=PUBLIC),
}

# A public submission's sample browser on a test sample: its owner's and staff's (gold: staff only).
TEST_SAMPLE_OF_OWNER = {**_all(404), "owner": 200, "staff": 200}

# The same URL again on another object of the world, where who may see it differs.
VARIANTS: dict[str, list[Row]] = {
    "leaderboard:compare_sample": [Row(args=lambda w: {**SLUG, "a": w.public.pk, "b": w.public.pk, "uid": w.dev.uid},
                                       expect=PUBLIC)],
    "leaderboard:sample": [Row(args=lambda w: {**SLUG, "pk": w.public.pk, "uid": w.test.uid},
                               expect=TEST_SAMPLE_OF_OWNER)],
    "leaderboard:sample_medium": [Row(args=lambda w: {**SLUG, "pk": w.public.pk, "uid": w.test.uid, "position": 0,
                                                      "part": "still"}, expect=TEST_SAMPLE_OF_OWNER)],
    "leaderboard:sample_image": [Row(args=lambda w: {**SLUG, "pk": w.public.pk, "uid": w.test.uid,
                                                     "mode": "adaptive", "ref": "img1"}, expect=TEST_SAMPLE_OF_OWNER)],
    # A batch that names people is theirs (and admins'): the reviewer, not named, is refused.
    "trace_review:batch": [Row(args=lambda w: {"pk": w.named_batch.pk}, expect={**REVIEWERS, "annotator": 200,
                                                                              "reviewer": 403})],
    "trace_review:next": [Row(args=lambda w: {"pk": w.named_batch.pk}, method="post",
                              expect={**REVIEWERS, "annotator": 302, "reviewer": 403, "staff": 302})],
    # A private submission's agreement and human-verified figures: staff only, the owner included out.
    "trace_review:agreement_for_submission": [Row(args=lambda w: {"pk": w.private.pk},
                                                  expect={**_all(404), "staff": 302}, private_ok=frozenset({"staff"}))],
    "trace_review:verified": [Row(args=lambda w: {"pk": w.private.pk}, expect={**_all(404), "staff": 200},
                                  private_ok=frozenset({"staff"}))],
}


def url_patterns() -> list[tuple[str, URLPattern, str]]:
    """(namespaced name, pattern, full route) for every pattern the resolver knows, nested includes too."""
    out = []

    def walk(patterns: list, namespace: str | None, prefix: str) -> None:
        for p in patterns:
            if isinstance(p, URLResolver):
                walk(p.url_patterns, p.namespace or namespace, prefix + str(p.pattern))
            else:
                route = prefix + str(p.pattern)
                name = p.name or f"unnamed {route}"
                out.append((f"{namespace}:{name}" if namespace else name, p, route))

    walk(get_resolver().url_patterns, None, "")
    return out


def _admin_args(pattern: URLPattern) -> dict:
    names = pattern.pattern.regex.groupindex
    return {k: ("auth" if k == "app_label" else "1") for k in names}


def _admin_row(name: str) -> Row:
    if name == "admin:login":  # the sign-in form; a signed-in staff member is sent on to the index
        return Row(expect={**PUBLIC, "staff": 302}, gold_ok=frozenset(ROLES))
    if name == "admin:logout":  # signs anyone out
        return Row(method="post", expect=_all(302))
    # Every other admin page is for staff (site operators); a missing object 302s or 404s for them.
    return Row(args=lambda w: {}, expect={**dict.fromkeys(ROLES, A), "staff": "staff-any"})


def _status_ok(response, expected: object) -> bool:  # noqa: ANN001
    location = response.get("Location", "")
    if expected == L:
        return response.status_code == 302 and location.startswith("/accounts/login/")
    if expected == A:
        return response.status_code == 302 and location.startswith("/admin/login/")
    if expected == "staff-any":
        # A missing object redirects or 404s; the autocomplete without its parameters is a 403.
        return response.status_code in (200, 302, 403, 404) and not location.startswith("/admin/login/")
    return response.status_code == expected


@pytest.mark.slow
@pytest.mark.django_db
def test_every_url_answers_each_role_as_the_security_table_says(tmp_path) -> None:
    world = build_world(tmp_path / "bench")
    clients = {"anonymous": Client()}
    for role in ROLES[1:]:
        clients[role] = Client()
        clients[role].force_login(world.users[role])
    problems, missing, gold_seen, private_seen = [], [], set(), set()
    for name, pattern, route in url_patterns():
        if name.startswith("admin:"):
            rows = [_admin_row(name)]
        elif name in TABLE:
            rows = [TABLE[name], *VARIANTS.get(name, ())]
        else:
            missing.append(name)
            continue
        for row in rows:
            kwargs = _admin_args(pattern) if name.startswith("admin:") else row.args(world)
            try:  # an unnamed pattern (the admin's object redirect) is filled in by hand
                url = "/" + re.sub(r"<[^>]+>", "1", route) if pattern.name is None else reverse(name, kwargs=kwargs)
            except Exception as error:  # noqa: BLE001 - say which row cannot be built
                problems.append(f"{name}: cannot build its URL from {kwargs}: {error}")
                continue
            for role in ROLES:
                client = clients[role]
                if name in ("logout", "admin:logout"):  # signing out would sign this client out for the next rows
                    client = Client()
                    if role != "anonymous":
                        client.force_login(world.users[role])
                with transaction.atomic():
                    call = getattr(client, row.method)
                    response = call(url, row.data(world)) if row.method == "post" else call(url)
                    body = b"".join(response.streaming_content) if response.streaming else response.content
                    transaction.set_rollback(True)
                expected = row.expect.get(role)
                if not _status_ok(response, expected):
                    problems.append(f"{name} {row.method.upper()} {url} as {role}: {response.status_code} "
                                    f"{response.get('Location', '')}, expected {expected}")
                text = body.decode("utf-8", "replace")
                if gold_in(text):
                    gold_seen.add((name, role))
                if role not in row.gold_ok and gold_in(text):
                    problems.append(f"{name} as {role}: test gold in the body: {sorted(set(gold_in(text)))[:3]}")
                if PRIVATE_MARK in text:
                    private_seen.add((name, role))
                if role not in row.private_ok and PRIVATE_MARK in text:
                    problems.append(f"{name} {url} as {role}: a private submission's predictions or judge in the body")
    assert not missing, f"URL patterns without a row in docs/security.md's table (tests/test_security_table.py): {missing}"
    assert not problems, "\n".join(problems)
    # Not vacuous: the markers are there to be found, where staff look.
    assert ("annotation:review_sample", "staff") in gold_seen
    assert ("trace_review:agreement", "staff") in private_seen  # the private judge's row, for staff alone


def test_the_table_has_no_row_for_a_url_that_no_longer_exists() -> None:
    names = {name for name, _, _ in url_patterns()}
    assert set(TABLE) - names == set()
    assert set(VARIANTS) - set(TABLE) == set()
