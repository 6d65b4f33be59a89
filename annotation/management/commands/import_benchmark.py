from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from annotation.benchmark_format import SCORING_PROFILES, BenchmarkFileError
from annotation.releases import FORMATS
from annotation.services import benchmark_import


class Command(BaseCommand):
    help = (
        "Import a benchmark: our JSON Lines (file, folder or zip) or an author's release "
        "(AdaptMMBench parquet, VLMEvalKit TSV, VTC-Bench TSVs, Agent-X data.json). "
        "Re-importing updates samples by uid."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "file", type=Path, nargs="+", help="the .jsonl file, a folder holding it, a .zip, or a release's file(s) or folder"
        )
        parser.add_argument("--images", type=Path, default=None, help="folder the image paths are relative to")
        parser.add_argument("--slug", required=True)
        parser.add_argument("--name", default=None)
        parser.add_argument("--format", choices=FORMATS, default=None, help="force a reader (default: recognised)")
        parser.add_argument(
            "--domain-of",
            action="append",
            default=[],
            metavar="CATEGORY=DOMAIN",
            help="put a category in a domain (repeatable): the grouping a one-level release lacks",
        )
        parser.add_argument(
            "--scoring",
            choices=SCORING_PROFILES,
            default=None,
            help="the scoring profile: whose rules decide answer correctness (default: the release's authors', "
            "or the manifest's; else generic; docs/metrics.md)",
        )
        parser.add_argument(
            "--remove-missing",
            action="store_true",
            help="delete the benchmark's samples that the file does not have (and their results); without it they "
            "are kept and named in a warning",
        )
        parser.add_argument("--no-progress", action="store_true", help="do not draw progress bars")

    def handle(self, *args: object, **options: object) -> None:
        bars: dict[str, tqdm] = {}
        quiet = bool(options["no_progress"]) or int(options["verbosity"]) == 0
        domain_of: dict[str, str] = {}
        for item in options["domain_of"]:
            category, sep, domain = str(item).partition("=")
            if not sep or not category.strip() or not domain.strip():
                raise CommandError(f"--domain-of {item!r}: expected CATEGORY=DOMAIN")
            domain_of[category.strip()] = domain.strip()

        def progress(stage: str, done: int, total: int) -> None:
            if quiet:
                return
            bar = bars.get(stage)
            if bar is None:
                label, unit, scale = {
                    "validate": ("validating", "B", True),
                    "validate-rows": ("validating", " rows", False),
                }.get(stage, ("writing", " samples", False))
                bar = bars[stage] = tqdm(total=total, desc=label, unit=unit, unit_scale=scale, file=self.stderr._out)
            bar.update(done - bar.n)

        files = list(options["file"])
        try:
            summary = benchmark_import(
                path=files if len(files) > 1 else files[0],
                slug=options["slug"],
                name=options["name"],
                images_dir=options["images"],
                format=options["format"],
                domain_of=domain_of,
                progress=progress,
                scoring=options["scoring"],
                remove_missing=bool(options["remove_missing"]),
            )
        except BenchmarkFileError as exc:
            raise CommandError(f"Nothing was imported. {exc}") from None
        finally:
            for bar in bars.values():
                bar.close()
        for warning in summary.warnings:
            self.stderr.write(self.style.WARNING(f"warning: {warning}"))
        self.stdout.write(self.style.SUCCESS(f"Imported {summary}"))
        self.stdout.write(f"Scoring profile: {summary.benchmark.scoring}")
        self.stdout.write("Domains and categories (samples):")
        for line in summary.taxonomy_lines():
            self.stdout.write(f"  {line}")
