from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandParser

from leaderboard.reported import AGENTX_DATA, DATA, reported_results_load


class Command(BaseCommand):
    help = ("Load the results AdaptMMBench's authors report (Tables 1-4) into a benchmark entry without samples; "
            "--file leaderboard/data/agentx_reported.json (or --agentx) for Agent-X's (Tables 4 and 7).")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--file", type=Path, default=DATA, help="the reported-results JSON (default: the paper's)")
        parser.add_argument("--agentx", action="store_true", help="Agent-X's reported results instead")

    def handle(self, *args: object, **options: object) -> None:
        benchmark, n = reported_results_load(path=AGENTX_DATA if options["agentx"] else options["file"])
        self.stdout.write(self.style.SUCCESS(f"Reported results: {n} models on '{benchmark.slug}' ({benchmark.name})"))
