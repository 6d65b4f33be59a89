from __future__ import annotations

from django.core.management.base import BaseCommand

from annotation.demo import DEMO_ACCOUNTS, demo_accounts_ensure, demo_benchmark_load


class Command(BaseCommand):
    help = "Load the demo benchmark and the demo accounts. Safe to run twice."

    def handle(self, *args: object, **options: object) -> None:
        summary = demo_benchmark_load()
        self.stdout.write(f"Demo benchmark: {summary}")
        demo_accounts_ensure()
        self.stdout.write("Workbench: " + __import__("annotation.workbench.demo", fromlist=["_"]).demo_workbench_ensure())
        names = ", ".join(f"{a.username}/{a.password}" for a in DEMO_ACCOUNTS)
        self.stdout.write(self.style.SUCCESS(f"Demo accounts ready: {names}"))
        from evaluation.demo import demo_submissions_load  # evaluation builds on annotation, not the reverse

        demo_subs = demo_submissions_load(slug="adaptmm-demo")
        self.stdout.write(f"Demo submissions (simulated, scored): {len(demo_subs)}")
        __import__("django.core.management", fromlist=["_"]).call_command("load_reported_results", stdout=self.stdout)
