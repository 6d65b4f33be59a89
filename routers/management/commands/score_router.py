from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from evaluation.queueing import results_changed_run
from routers import services
from routers.models import RouterStatus, RouterSubmission


class Command(BaseCommand):
    help = "Score one router submission again on the pool as it is now (through the queue, or here with --sync)."

    def add_arguments(self, parser) -> None:  # noqa: ANN001
        parser.add_argument("id", type=int)
        parser.add_argument("--sync", action="store_true")

    def handle(self, *args: object, **opts: object) -> None:
        if not RouterSubmission.objects.filter(pk=opts["id"]).update(status=RouterStatus.QUEUED, status_at=timezone.now()):
            raise CommandError(f"no router submission {opts['id']}")
        if not opts["sync"]:
            services.router_submission_send(opts["id"])
            self.stdout.write(f"router submission {opts['id']} sent to the queue")
            return
        sub = services.router_submission_score(submission_id=opts["id"])
        if sub.status != RouterStatus.DONE:
            raise CommandError(f"router submission {sub.pk} failed: {sub.failure_reason}")
        results_changed_run(benchmark_id=sub.benchmark_id)  # the Routers tab holds it on return, as submit --sync
        self.stdout.write(json.dumps(services.results_shown(sub.results), indent=2))
