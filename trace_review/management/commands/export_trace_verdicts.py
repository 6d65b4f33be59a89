"""`manage.py export_trace_verdicts OUT.jsonl [--benchmark SLUG]`: every human verdict beside the judge's."""

from __future__ import annotations

import sys
from contextlib import nullcontext
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.models import Benchmark
from trace_review.exports import verdict_lines


class Command(BaseCommand):
    help = "Write the trace-review verdicts (with the judge's verdicts on the same questions) as JSON Lines."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("out", help="output file, or - for standard output")
        parser.add_argument("--benchmark", help="only this benchmark's verdicts (slug)")

    def handle(self, *args: object, out: str, benchmark: str | None = None, **options: object) -> None:
        bench = None
        if benchmark:
            bench = Benchmark.objects.filter(slug=benchmark).first()
            if bench is None:
                raise CommandError(f"No benchmark '{benchmark}'.")
        n = 0
        with nullcontext(sys.stdout.buffer) if out == "-" else Path(out).open("wb") as stream:
            for line in verdict_lines(benchmark=bench):
                stream.write(line)
                n += 1
        if out != "-":
            self.stdout.write(f"Wrote {n} verdict{'s' if n != 1 else ''} to {out}")
