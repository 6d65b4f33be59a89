from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from evaluation import pipeline, queueing, services
from evaluation.models import Submission


class Command(BaseCommand):
    help = "Re-score one submission through the queue, or in this process with --sync."

    def add_arguments(self, parser) -> None:  # noqa: ANN001
        parser.add_argument("submission_id", type=int)
        parser.add_argument("--sync", action="store_true")

    def handle(self, *args: object, **opts: object) -> None:
        sub = Submission.objects.filter(pk=opts["submission_id"]).first()
        if sub is None:
            raise CommandError(f"no submission {opts['submission_id']}")
        if not sub.is_final:
            # Still in the pipeline (or stuck): re-send its current stage instead of starting over.
            if opts["sync"]:
                sub = pipeline.submission_process_sync(submission=sub)
            else:
                queueing.submission_enqueue(submission_id=sub.pk, status=sub.status)
        else:
            services.submission_rescore(submission=sub, enqueue=not opts["sync"])
            if opts["sync"]:
                sub = pipeline.submission_process_sync(submission=sub)
        self.stdout.write(f"submission {sub.pk}: {sub.status}")
        if opts["sync"]:
            if sub.status != "done":
                raise CommandError(f"submission {sub.pk} failed: {sub.failure_reason}")
            queueing.results_changed_run(benchmark_id=sub.benchmark_id)  # the board holds it on return (submit.py)
            self.stdout.write(json.dumps(sub.results, indent=2))
