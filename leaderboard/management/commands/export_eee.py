from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from evaluation.models import Submission
from leaderboard import eee


class Command(BaseCommand):
    help = ("Write a row as Every Eval Ever records (docs/interop.md): the aggregate JSON and <uuid>_samples.jsonl "
            "under OUT/data/<benchmark>/<developer>/<model>/. A public row's dev-split instances unless --all "
            "(every split, without test gold: for the row's owner or staff).")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("submission", type=int, help="the row's submission id (the number in /b/<slug>/m/<id>/)")
        parser.add_argument("out", type=Path, help="a folder (made if missing), or a .zip")
        parser.add_argument("--all", action="store_true", help="every split's instances, not only the dev split's")

    def handle(self, *args: object, **options: object) -> None:
        pk = options["submission"]
        submission = Submission.objects.select_related("benchmark").filter(pk=pk, status="done", deleted_at=None).first()
        if submission is None or not submission.results:
            raise CommandError(f"No scored submission {pk} (a row is a submission whose scoring is done).")
        if not submission.is_public and not options["all"]:
            raise CommandError(f"Submission {pk} is private: only its owner or staff may export it, with --all.")
        export = eee.build(submission, include_test=bool(options["all"]), now=timezone.now())
        out: Path = options["out"]  # type: ignore[assignment]  # argparse gives the Path
        if out.suffix == ".zip":
            out.write_bytes(export.zip_bytes())
            written = str(out)
        else:
            folder = out / export.folder
            folder.mkdir(parents=True, exist_ok=True)
            (out / export.aggregate_path).write_text(json.dumps(export.aggregate, ensure_ascii=False, indent=2))
            (out / export.samples_path).write_bytes(export.samples_bytes())
            written = str(folder)
        self.stdout.write(self.style.SUCCESS(
            f"Every Eval Ever records of submission {pk}: {len(export.aggregate['evaluation_results'])} results, "
            f"{len(export.instances)} instances, in {written}"))
