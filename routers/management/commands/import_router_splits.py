from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.models import Benchmark
from routers.splits_import import SplitsRejected, router_splits_import


class Command(BaseCommand):
    help = ("Use a release's router split (a folder with train.jsonl, dev.jsonl, test.jsonl, one "
            "{\"sample_id\": ...} a line, as VL-RouterBench's SPLITS/) instead of the seeded 70/10/20 one.")

    def add_arguments(self, parser) -> None:  # noqa: ANN001
        parser.add_argument("slug")
        parser.add_argument("folder", type=Path)

    def handle(self, *args: object, **opts: object) -> None:
        benchmark = Benchmark.objects.filter(slug=opts["slug"]).first()
        if benchmark is None:
            raise CommandError(f"no benchmark with slug {opts['slug']!r}")
        try:
            counts = router_splits_import(benchmark=benchmark, folder=opts["folder"])
        except SplitsRejected as exc:
            for e in exc.errors:
                self.stderr.write(e)
            raise CommandError(f"split not imported: {len(exc.errors)} problem(s)") from exc
        self.stdout.write(", ".join(f"{n} {s}" for s, n in counts.items()))
