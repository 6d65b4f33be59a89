from __future__ import annotations

from django.core.management.base import BaseCommand
from django.db.models import Q

from evaluation import pipeline, queueing, services
from evaluation.models import Submission, SubmissionStatus
from evaluation.metrics import PROFILES
from evaluation.reports import scorer_version


class Command(BaseCommand):
    help = ("Re-score every finished (done) submission through the queue after a scorer change; old "
            "results stay visible until replaced.")

    def add_arguments(self, parser) -> None:  # noqa: ANN001
        parser.add_argument("--benchmark", help="only this benchmark's submissions (slug)")
        parser.add_argument("--stale-only", action="store_true",
                            help=f"only those scored by another scorer version than {scorer_version()} (with "
                                 "their benchmark's scoring profile: metrics-...+vtcbench)")
        parser.add_argument("--sync", action="store_true", help="score in this process, one after another")

    def handle(self, *args: object, **opts: object) -> None:
        subs = Submission.objects.filter(status=SubmissionStatus.DONE, deleted_at__isnull=True).order_by("pk")
        if opts["benchmark"]:
            subs = subs.filter(benchmark__slug=opts["benchmark"])
        if opts["stale_only"]:
            current = Q()
            for profile in PROFILES:
                current |= Q(benchmark__scoring=profile, scorer_version=scorer_version(profile))
            subs = subs.exclude(current)
        count = 0
        touched: set[int] = set()
        for sub in subs.iterator():
            if services.submission_rescore(submission=sub, enqueue=not opts["sync"]):
                count += 1
                if opts["sync"]:
                    pipeline.submission_process_sync(submission=sub)
                    touched.add(sub.benchmark_id)
        for benchmark_id in sorted(touched):  # each board rebuilt once, here (submit.py)
            queueing.results_changed_run(benchmark_id=benchmark_id)
        self.stdout.write(f"re-scoring {count} submission{'s' if count != 1 else ''}"
                          f"{' (done)' if opts['sync'] else ' (queued)'}")
