"""Rebuild a benchmark's board whole: its entries brought up to date, every rank, interval and neighbour test
computed again (``services.board_refresh(full=True)``), even at the current results version. A repair: the
refresh after a change updates the ranks by what changed, and builds whole only where it cannot be exact."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.models import Benchmark
from leaderboard.services import board_refresh


class Command(BaseCommand):
    help = "Rebuild a benchmark's board whole (entries, ranks, rank intervals, neighbour tests, the tabs' index)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("benchmark", help="the benchmark's slug")

    def handle(self, *args: object, **options: object) -> None:
        benchmark = Benchmark.objects.filter(slug=options["benchmark"]).first()
        if benchmark is None:
            raise CommandError(f"No benchmark {options['benchmark']!r}.")
        version = board_refresh(benchmark_id=benchmark.pk, full=True)
        self.stdout.write(f"{benchmark.slug}: board rebuilt whole for results version {version}")
