from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandParser

from leaderboard.reported import DATA, reported_results_load


class Command(BaseCommand):
    help = "Load the results AdaptMMBench's authors report (Tables 1-4) into a benchmark entry without samples."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--file", type=Path, default=DATA, help="the reported-results JSON (default: the paper's)")

    def handle(self, *args: object, **options: object) -> None:
        benchmark, n = reported_results_load(path=options["file"])
        self.stdout.write(self.style.SUCCESS(f"Reported results: {n} models on '{benchmark.slug}' ({benchmark.name})"))
