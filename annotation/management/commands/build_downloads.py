"""`manage.py build_downloads [SLUG] [--sync]`: the public downloads of each benchmark's current state."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.downloads.services import downloads_build_now, downloads_request
from annotation.models import Benchmark, DataDownload, DownloadStatus


class Command(BaseCommand):
    help = ("Ask for the public downloads (zip, VLMEvalKit TSV, parquet per split) of a benchmark's current state, "
            "or of every benchmark: builds missing ones, and again failed or abandoned ones. Through the queue, "
            "or in this process with --sync. Builds that are ready are kept (one per benchmark state).")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", nargs="?", help="one benchmark (default: every benchmark with samples)")
        parser.add_argument("--sync", action="store_true", help="build here instead of sending tasks")

    def handle(self, *args: object, slug: str | None = None, sync: bool = False, **options: object) -> None:
        benchmarks = Benchmark.objects.filter(samples__isnull=False).distinct().order_by("slug")
        if slug:
            benchmarks = benchmarks.filter(slug=slug)
            if not benchmarks.exists():
                raise CommandError(f"No benchmark with samples has the slug {slug!r}")
        for benchmark in benchmarks:
            if sync:
                summary = downloads_build_now(benchmark=benchmark)
            else:
                summary = downloads_request(benchmark=benchmark, retry=True)
            rows = DataDownload.objects.filter(pk__in=[r.pk for r in summary.current]).order_by("split", "kind")
            states = ", ".join(f"{r.split}.{r.kind} {r.status}" for r in rows)
            failed = [r for r in rows if r.status == DownloadStatus.FAILED]
            self.stdout.write(f"{benchmark.slug} ({summary.key}): {len(summary.requested)} to build; {states}")
            for row in failed:
                self.stderr.write(f"  {row.split}.{row.kind} failed: {row.error}")
