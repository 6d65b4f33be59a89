"""`manage.py load_demo`: everything a newcomer sees after the run command.

It lives in the leaderboard app because it reaches every layer (annotation -> evaluation ->
leaderboard), and dependencies only run that way.
"""

from __future__ import annotations

import logging

from django.core.management.base import BaseCommand

from annotation.demo import (DEMO_ACCOUNTS, DEMO_SLUG, demo_accounts_ensure, demo_benchmark_load, demo_hrbench_load,
                             demo_releases_load)
from annotation.downloads.services import downloads_build_now
from annotation.models import Benchmark
from annotation.selectors import scorable_benchmarks
from annotation.workbench.demo import demo_workbench_ensure
from evaluation.demo import (demo_harness_submission_load, demo_hrbench_harness_load, demo_proposal_run_load,
                             demo_release_submissions_load, demo_submissions_load)
from evaluation.queueing import results_changed_run
from leaderboard.reported import AGENTX_DATA, DATA, reported_results_load
from trace_review.demo import demo_trace_review_ensure


class Command(BaseCommand):
    help = (
        "Load the demo benchmark, demo accounts, annotation roles and assignments, simulated demo "
        "submissions scored through the pipeline, AdaptMMBench's and Agent-X's reported results, and small "
        "generated benchmarks in VTC-Bench's, MMReason's and Agent-X's release shapes with simulated submissions "
        "in their authors' output shapes, and an HR-Bench-shaped demo run by the harness. Safe to run twice."
    )

    def handle(self, *args: object, **options: object) -> None:
        # Each demo submission scored in this process finds its benchmark prepared: a line per hit says nothing
        # to the person starting the platform (the workers keep logging them).
        logging.getLogger("evaluation.benchmark_cache").setLevel(logging.WARNING)
        self.stdout.write(f"Demo benchmark: {demo_benchmark_load()}")
        demo_accounts_ensure()
        names = ", ".join(f"{a.username}/{a.password}" for a in DEMO_ACCOUNTS)
        self.stdout.write(f"Demo accounts: {names}")
        self.stdout.write(f"Workbench: {demo_workbench_ensure(DEMO_SLUG)}")
        submissions = demo_submissions_load(slug=DEMO_SLUG)
        self.stdout.write(f"Demo submissions (simulated, scored): {len(submissions)}")
        harnessed = demo_harness_submission_load(slug=DEMO_SLUG)
        if harnessed is not None:
            self.stdout.write(f"Harness run (the simulated model, served locally): submission {harnessed.pk}, "
                              f"{harnessed.status}")
        self.stdout.write(f"Trace review: {demo_trace_review_ensure(DEMO_SLUG)}")
        proposals = demo_proposal_run_load(slug=DEMO_SLUG)
        if proposals is not None:
            self.stdout.write(f"Proposal run (the simulated model, served locally): run {proposals.pk}, "
                              f"{proposals.status}, {proposals.progress_done} items")
        for summary in demo_releases_load():
            slug = summary.benchmark.slug
            submissions = demo_release_submissions_load(slug=slug)
            self.stdout.write(f"Release-shaped demo: {summary}; {len(submissions)} simulated submissions "
                              "(converted from the authors' output shapes, scored)")
        summary = demo_hrbench_load()
        zoomer = demo_hrbench_harness_load(slug=summary.benchmark.slug)
        self.stdout.write(f"HR-Bench-shaped demo: {summary}; harness run (simulated model, text/adaptive/blind): "
                          f"{'none' if zoomer is None else zoomer.status}")
        for path in (DATA, AGENTX_DATA):
            benchmark, n_models = reported_results_load(path=path)
            self.stdout.write(f"Reported results: {n_models} models on '{benchmark.slug}'")
        # Last, so they hold the demo's final state; built here, so the demo's boards and downloads are ready
        # at once, before any worker runs (pages only read what is built).
        for benchmark in Benchmark.objects.order_by("pk"):
            results_changed_run(benchmark_id=benchmark.pk)
        self.stdout.write("Boards, router pools and guessability audits built")
        for benchmark in scorable_benchmarks():
            summary = downloads_build_now(benchmark=benchmark)
            self.stdout.write(f"Downloads of '{benchmark.slug}': {len(summary.current)} files ({summary.key})")
        self.stdout.write(self.style.SUCCESS("Demo data loaded."))
