"""`manage.py judge_stability SLUG [--sample 50] [--repeats 3] [--seed 0]`: the judge asked again about a
seeded sample of its cached questions on a benchmark; its agreement with itself goes on the agreement page."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.models import Benchmark
from evaluation.judges import JudgeError
from trace_review.stability import StabilityRefused, run_stability, stability_figures


class Command(BaseCommand):
    help = "Re-ask the configured judge N times about a random sample of a benchmark's cached questions."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help="the benchmark")
        parser.add_argument("--sample", type=int, default=50, help="questions to draw (default 50)")
        parser.add_argument("--repeats", type=int, default=3, help="times each is asked again (default 3)")
        parser.add_argument("--seed", type=int, default=0, help="the sample's seed (default 0)")

    def handle(self, *args: object, slug: str, sample: int, repeats: int, seed: int, **options: object) -> None:
        benchmark = Benchmark.objects.filter(slug=slug).first()
        if benchmark is None:
            raise CommandError(f"No benchmark '{slug}'.")
        try:
            run = run_stability(benchmark=benchmark, sample=sample, repeats=repeats, seed=seed)
        except StabilityRefused as exc:
            raise CommandError(str(exc)) from exc
        except JudgeError as exc:  # the judge failed or the budget stopped it: nothing was stored
            raise CommandError(f"The judge failed; nothing was stored: {exc}") from exc
        figures = stability_figures(run)
        self.stdout.write(f"judge {run.judge}: {run.sample_size} questions x {run.repeats} repeats (seed {seed}); "
                          f"all repeats agree on {figures.all_agree} of {figures.questions}")
        for k in figures.kinds:
            alpha = "-" if k.alpha.alpha is None else f"{k.alpha.alpha:.3f}"
            self.stdout.write(f"  {k.label}: {k.all_agree}/{k.questions} agree, Krippendorff's alpha {alpha}")
