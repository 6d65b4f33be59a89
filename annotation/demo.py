"""The demo data: the generated demo benchmark (fixtures/demo) and demo accounts (see README)."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction

from annotation.models import Benchmark
from annotation.services import ImportSummary, benchmark_import

DEMO_DIR = Path(settings.BASE_DIR) / "fixtures" / "demo"
DEMO_SLUG = "adaptmm-demo"
ROLE_GROUPS = ("annotators", "reviewers", "researchers")


@dataclass(frozen=True, slots=True)
class DemoAccount:
    username: str
    password: str
    groups: tuple[str, ...] = ()
    is_staff: bool = False
    is_superuser: bool = False


# Demo only: these passwords are printed in the README on purpose.
DEMO_ACCOUNTS = (
    DemoAccount("admin", "admin-demo", is_staff=True, is_superuser=True),
    DemoAccount("annotator1", "annotator1-demo", groups=("annotators",)),
    DemoAccount("annotator2", "annotator2-demo", groups=("annotators",)),
    DemoAccount("reviewer", "reviewer-demo", groups=("reviewers",)),
    DemoAccount("researcher", "researcher-demo", groups=("researchers",)),
)


def demo_accounts_ensure() -> None:
    """Create (or reset) the demo accounts; safe to run again."""
    user_model = get_user_model()
    with transaction.atomic():
        groups = {name: Group.objects.get_or_create(name=name)[0] for name in ROLE_GROUPS}
        for account in DEMO_ACCOUNTS:
            user, _ = user_model.objects.get_or_create(username=account.username)
            user.is_staff = account.is_staff
            user.is_superuser = account.is_superuser
            user.email = f"{account.username}@example.org"
            user.set_password(account.password)
            user.save()
            user.groups.set([groups[g] for g in account.groups])


def demo_benchmark_load(progress=None) -> ImportSummary:
    # keep_edited: run again (scripts/run does at every start), the demo never replaces what people approved or edited.
    return benchmark_import(path=DEMO_DIR / "benchmark.jsonl", slug=DEMO_SLUG, progress=progress, keep_edited=True)


def demo_releases_load() -> list[ImportSummary]:
    """The small benchmarks in VTC-Bench's, MMReason's and Agent-X's release shapes (fixtures/releases):
    written to a temporary folder and imported through their release readers, as `import_benchmark
    PATH --format F [--domain-of C=D]` would. The files are byte-identical on every run, so a second
    run finds every sample unchanged."""
    from fixtures.releases.generate import write_all

    summaries = []
    with tempfile.TemporaryDirectory(prefix="demo-releases-") as tmp:
        for release in write_all(Path(tmp)):
            summary = benchmark_import(path=release.path, slug=release.slug, name=release.name,
                                       format=release.format, domain_of=release.domain_of,
                                       scoring=release.scoring, keep_edited=True)
            # A release's manifest has no description (the import clears it): the demo's says what it is.
            Benchmark.objects.filter(pk=summary.benchmark.pk).update(description=release.description)
            summaries.append(summary)
    return summaries


HRBENCH_DEMO_SIZE = (2400, 1600)
HRBENCH_DEMO_N = 12


def demo_hrbench_load() -> ImportSummary:
    """The HR-Bench-shaped demo (fixtures/releases/hrbench_demo.py; issue 35): a dozen 2400x1600 images whose
    answer is a small tag, written to a temporary folder and imported through the VLMEvalKit reader (the
    hrbench profile), as `import_benchmark hr_bench_demo.tsv` would. Byte-identical on every run."""
    from fixtures.releases import hrbench_demo

    with tempfile.TemporaryDirectory(prefix="demo-hrbench-") as tmp:
        path = hrbench_demo.write(Path(tmp), n=HRBENCH_DEMO_N, size=HRBENCH_DEMO_SIZE)
        summary = benchmark_import(path=path, slug=hrbench_demo.SLUG, name="HR-Bench-shaped demo", keep_edited=True)
    Benchmark.objects.filter(pk=summary.benchmark.pk).update(description=(
        "Generated demo data (fixtures/releases/hrbench_demo.py), not the real HR-Bench: a dozen 2400x1600 "
        "images in HR-Bench's VLMEvalKit TSV shape, each with one small numbered tag that decides the answer, "
        "imported with import_benchmark (the hrbench profile). Its entry is the platform's harness run against "
        "a simulated model: text mode cannot read the tag, adaptive reads it when it zooms at it."))
    return summary
