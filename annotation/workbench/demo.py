"""Demo roles and assignments for the demo benchmark (called by load_demo; safe to run twice)."""

from __future__ import annotations

from django.contrib.auth import get_user_model

from annotation.models import Benchmark, Role, Sample
from annotation.workbench.access import role_grant
from annotation.workbench.assignments import assignment_create

DEMO_ROLES = {"annotator1": [Role.ANNOTATOR], "annotator2": [Role.ANNOTATOR], "reviewer": [Role.REVIEWER],
              "admin": [Role.ADMIN]}
DEMO_ASSIGNED = 3  # the first samples go to both demo annotators, so the review has something to compare
DEMO_ANNOTATORS = [name for name, roles in DEMO_ROLES.items() if Role.ANNOTATOR in roles]


def demo_workbench_ensure(slug: str = "adaptmm-demo") -> str:
    benchmark = Benchmark.objects.filter(slug=slug).first()
    if benchmark is None:
        return "no demo benchmark: roles not set"
    users = {u.username: u for u in get_user_model().objects.filter(username__in=DEMO_ROLES)}
    for name, roles in DEMO_ROLES.items():
        if name in users:
            for role in roles:
                role_grant(benchmark=benchmark, user=users[name], role=role)
    # As many annotations per item as the demo has annotators: with the default of 3, two demo annotators
    # could never complete an item.
    Benchmark.objects.filter(pk=benchmark.pk).update(annotators_per_item=len(DEMO_ANNOTATORS))
    samples = list(Sample.objects.filter(benchmark=benchmark).order_by("position")[:DEMO_ASSIGNED])
    for name in DEMO_ANNOTATORS:
        if name in users:
            for sample in samples:
                assignment_create(sample=sample, annotator=users[name])
    return f"roles for {len(users)} demo accounts, {len(samples)} samples assigned to each demo annotator"
