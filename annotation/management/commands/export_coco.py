import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.coco import coco_from_benchmark
from annotation.models import Benchmark


class Command(BaseCommand):
    help = "Write a benchmark's approved key regions as COCO JSON (see annotation/coco.py)."

    def add_arguments(self, parser) -> None:  # noqa: ANN001
        parser.add_argument("slug")
        parser.add_argument("out", type=Path)

    def handle(self, *args: object, slug: str, out: Path, **options: object) -> None:
        try:
            benchmark = Benchmark.objects.get(slug=slug)
        except Benchmark.DoesNotExist:
            raise CommandError(f"no benchmark {slug!r}") from None
        data = coco_from_benchmark(benchmark)
        out.write_text(json.dumps(data, indent=1) + "\n")
        self.stdout.write(f"{len(data['images'])} images, {len(data['annotations'])} boxes -> {out}")
