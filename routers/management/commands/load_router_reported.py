from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.models import Benchmark
from routers.services import router_reported_load

TABLE2 = Path(__file__).resolve().parents[2] / "data" / "vl_routerbench_table2.json"


class Command(BaseCommand):
    help = ("Load a paper's router results onto a benchmark's Routers tab, badged and cited (default: "
            "VL-RouterBench's Table 2). Safe to run twice.")

    def add_arguments(self, parser) -> None:  # noqa: ANN001
        parser.add_argument("slug", help="the benchmark entry to show them on (e.g. a VL-RouterBench import)")
        parser.add_argument("--file", type=Path, default=TABLE2)

    def handle(self, *args: object, **opts: object) -> None:
        benchmark = Benchmark.objects.filter(slug=opts["slug"]).first()
        if benchmark is None:
            raise CommandError(f"no benchmark with slug {opts['slug']!r}")
        n = router_reported_load(benchmark=benchmark, path=opts["file"])
        self.stdout.write(f"{n} reported router rows on {benchmark.slug}")
