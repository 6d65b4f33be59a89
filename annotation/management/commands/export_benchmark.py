from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.models import Benchmark
from annotation.services import benchmark_export


class Command(BaseCommand):
    help = "Write a benchmark's approved annotations back in the benchmark-file format (a folder, or a .zip)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("out", type=Path, help="a folder to create, or a path ending in .zip")

    def handle(self, *args: object, **options: object) -> None:
        try:
            benchmark = Benchmark.objects.get(slug=options["slug"])
        except Benchmark.DoesNotExist:
            raise CommandError(f"No benchmark with slug {options['slug']!r}.") from None
        summary = benchmark_export(benchmark=benchmark, out=options["out"])
        note = f" ({summary.skipped} without an approved annotation left out)" if summary.skipped else ""
        self.stdout.write(self.style.SUCCESS(f"Exported {summary.exported} samples to {summary.path}{note}"))
