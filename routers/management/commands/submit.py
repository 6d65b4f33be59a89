"""evaluation's ``submit`` with ``--router``: a router's picks on the test split instead of predictions.

This app comes before ``evaluation`` in INSTALLED_APPS, so ``manage.py submit`` is this command;
without ``--router`` it is evaluation's, unchanged.
"""

from __future__ import annotations

import json
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.files import File
from django.core.management.base import CommandError

from annotation.models import Benchmark
from evaluation.management.commands.submit import Command as PredictionSubmit
from evaluation.queueing import results_changed_run
from routers import services
from routers.models import RouterStatus

# The keys `--sync` prints (interfaces.md), in this order.
SYNC_KEYS = ("accuracy", "cost_per_sample_usd", "cost_per_10k_usd", "rank_score", "oracle_gap", "share")


def print_errors(cmd: PredictionSubmit, errors: list[dict]) -> None:
    for e in errors:
        where = "file" if e["line"] is None else f"line {e['line']}"
        cmd.stderr.write(f"{where}, field '{e['field']}': {e['message']}" if e["field"] else f"{where}: {e['message']}")


class Command(PredictionSubmit):
    help = PredictionSubmit.help + (" With --router, FILE is a router's picks (JSON Lines, one {\"sample_id\", "
                                     "\"model\"} per test sample; docs/routers.md) and --model names the router.")

    def add_arguments(self, parser) -> None:  # noqa: ANN001
        super().add_arguments(parser)
        parser.add_argument("--router", action="store_true", help="a router submission (docs/routers.md)")

    def handle(self, *args: object, **opts: object) -> None:
        if not opts.get("router"):
            return super().handle(*args, **opts)
        benchmark = Benchmark.objects.filter(slug=opts["slug"]).first()
        if benchmark is None:
            raise CommandError(f"no benchmark with slug {opts['slug']!r}")
        user = get_user_model().objects.filter(username=opts["user"]).first()
        if user is None:
            raise CommandError(f"no user {opts['user']!r}")
        path: Path = opts["file"]  # type: ignore[assignment]
        if not path.is_file():
            raise CommandError(f"no file at {path}")
        try:
            with path.open("rb") as fh:
                sub = services.router_submission_create(benchmark=benchmark, owner=user, file=File(fh, name=path.name),
                                                        name=str(opts["model"]), is_public=bool(opts["public"]),
                                                        enqueue=not opts["sync"])
        except services.RouterRejected as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(f"router submission {sub.pk}")
        if not opts["sync"]:
            return None
        sub = services.router_submission_score(submission_id=sub.pk)
        if sub.status != RouterStatus.DONE:
            print_errors(self, sub.errors)
            raise CommandError(f"router submission {sub.pk} failed: {sub.failure_reason}")
        results_changed_run(benchmark_id=benchmark.pk)  # the board and its tabs hold it on return (evaluation's submit)
        summary = {k: sub.results[k] for k in SYNC_KEYS} | {"n": sub.results["n"], "pool_version": sub.pool["version"]}
        self.stdout.write(json.dumps(summary, indent=2))
        return None
