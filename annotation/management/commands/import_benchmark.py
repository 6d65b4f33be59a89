from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from annotation.benchmark_format import BenchmarkFileError
from annotation.services import benchmark_import


class Command(BaseCommand):
    help = "Import a benchmark file (JSON Lines + images folder, or a zip holding both). Re-importing updates samples by uid."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path, help="the .jsonl file, a folder holding it, or a .zip")
        parser.add_argument("--images", type=Path, default=None, help="folder the 'image' paths are relative to")
        parser.add_argument("--slug", required=True)
        parser.add_argument("--name", default=None)
        parser.add_argument("--no-progress", action="store_true", help="do not draw progress bars")

    def handle(self, *args: object, **options: object) -> None:
        bars: dict[str, tqdm] = {}
        quiet = bool(options["no_progress"]) or int(options["verbosity"]) == 0

        def progress(stage: str, done: int, total: int) -> None:
            if quiet:
                return
            bar = bars.get(stage)
            if bar is None:
                label, unit, scale = ("validating", "B", True) if stage == "validate" else ("writing", " samples", False)
                bar = bars[stage] = tqdm(total=total, desc=label, unit=unit, unit_scale=scale, file=self.stderr._out)
            bar.update(done - bar.n)

        try:
            summary = benchmark_import(
                path=options["file"], slug=options["slug"], name=options["name"], images_dir=options["images"], progress=progress
            )
        except BenchmarkFileError as exc:
            raise CommandError(f"Nothing was imported. {exc}") from None
        finally:
            for bar in bars.values():
                bar.close()
        self.stdout.write(self.style.SUCCESS(f"Imported {summary}"))
