from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.models import Benchmark
from annotation.services import benchmark_export
from annotation.vlmevalkit_export import benchmark_export_vlmevalkit


class Command(BaseCommand):
    help = ("Write a benchmark's approved annotations back in the benchmark-file format (a folder, or a .zip), "
            "or with --format vlmevalkit as a VLMEvalKit dataset TSV (base64 images, options as columns).")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("out", type=Path, help="a folder to create, or a path ending in .zip; for vlmevalkit a "
                                                   ".tsv file (or a folder to write <slug>.tsv in)")
        parser.add_argument("--format", dest="file_format", choices=["jsonl", "vlmevalkit"], default="jsonl",
                            help="jsonl: our benchmark files (default); vlmevalkit: VLMEvalKit TSV(s), one per kind "
                                 "(multiple choice, open-ended) when the benchmark has both")

    def handle(self, *args: object, **options: object) -> None:
        try:
            benchmark = Benchmark.objects.get(slug=options["slug"])
        except Benchmark.DoesNotExist:
            raise CommandError(f"No benchmark with slug {options['slug']!r}.") from None
        out: Path = options["out"]  # type: ignore[assignment]
        if options["file_format"] == "vlmevalkit":
            if out.suffix.lower() != ".tsv":
                out = out / f"{benchmark.slug}.tsv"
            summaries = benchmark_export_vlmevalkit(benchmark=benchmark, out=out)
        else:
            summaries = [benchmark_export(benchmark=benchmark, out=out)]
        for summary in summaries:
            note = f" ({summary.skipped} without an approved annotation left out)" if summary.skipped else ""
            self.stdout.write(self.style.SUCCESS(f"Exported {summary.exported} samples to {summary.path}{note}"))
        if options["file_format"] == "vlmevalkit":
            for summary in summaries:
                self.stdout.write(_how_to_run(summary.path))


def _how_to_run(path: Path) -> str:
    """How VLMEvalKit runs and scores the file (docs/formats.md, "Export as a VLMEvalKit dataset TSV")."""
    name = path.stem
    if name.lower().endswith("openended"):
        # VLMEvalKit has no judge-free scorer for custom free-text rows: a custom VQA dataset's evaluate
        # raises NotImplementedError, and ImageShortQADataset cannot load a dataset it does not list.
        return (f"{path.name}: free-text rows. Put it in LMUData and run VLMEvalKit with --data {name} --mode infer "
                "(a custom VQA dataset: VLMEvalKit runs the model on it but has no scorer for custom free-text rows); "
                "then submit its result file here (submit SLUG FILE --format vlmevalkit): the benchmark's scoring "
                "profile scores it (docs/metrics.md, 'vlmevalkit').")
    return (f"{path.name}: multiple-choice rows. Put it in LMUData and run VLMEvalKit with --data {name} "
            "(a custom MCQ dataset, scored by option letter).")
