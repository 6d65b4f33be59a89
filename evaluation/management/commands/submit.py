from __future__ import annotations

import json
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.files import File
from django.core.management.base import BaseCommand, CommandError

from annotation.models import Benchmark
from evaluation import pipeline, services
from evaluation.converters import FORMATS


class Command(BaseCommand):
    help = ("Create a submission as USER from a prediction file, exactly as an upload would, and score it "
            "through the queue (or in this process with --sync).")

    def add_arguments(self, parser) -> None:  # noqa: ANN001
        parser.add_argument("slug")
        parser.add_argument("file", type=Path)
        parser.add_argument("--model", required=True, help="the model's name")
        parser.add_argument("--user", required=True, help="the owner's username")
        parser.add_argument("--prices", nargs=2, type=float, metavar=("IN", "OUT"),
                            help="USD per million input and output tokens")
        parser.add_argument("--organisation", default="")
        parser.add_argument("--format", dest="file_format", choices=FORMATS, default="jsonl",
                            help="the file's shape: our JSON Lines (default), or an author's, converted on the "
                                 "way in: vlmevalkit (.xlsx/.tsv/.csv/.json result file), vtcbench (agent "
                                 "results_*.jsonl), agentx (output list .json)")
        parser.add_argument("--public", action="store_true", help="publish it once scored")
        parser.add_argument("--sync", action="store_true", help="score in this process and print the metrics")

    def handle(self, *args: object, **opts: object) -> None:
        benchmark = Benchmark.objects.filter(slug=opts["slug"]).first()
        if benchmark is None:
            raise CommandError(f"no benchmark with slug {opts['slug']!r}")
        user = get_user_model().objects.filter(username=opts["user"]).first()
        if user is None:
            raise CommandError(f"no user {opts['user']!r}")
        path: Path = opts["file"]  # type: ignore[assignment]
        if not path.is_file():
            raise CommandError(f"no file at {path}")
        prices = opts["prices"] or (None, None)
        try:
            with path.open("rb") as fh:
                sub = services.submission_create(
                    benchmark=benchmark, owner=user, file=File(fh, name=path.name), model_name=opts["model"],
                    organisation=opts["organisation"], is_public=opts["public"], enqueue=not opts["sync"],
                    price_input_per_mtok=prices[0], price_output_per_mtok=prices[1],
                    file_format=opts["file_format"],
                )
        except services.SubmissionRejected as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(f"submission {sub.pk}")
        if not opts["sync"]:
            return
        sub = pipeline.submission_process_sync(submission=sub)
        if sub.status != "done":
            for e in sub.errors:
                where = e.get("where") or ("file" if e["line"] is None else f"line {e['line']}")
                self.stderr.write(f"{where}, field '{e['field']}': {e['message']}" if e["field"]
                                  else f"{where}: {e['message']}")
            raise CommandError(f"submission {sub.pk} failed: {sub.failure_reason}")
        self.stdout.write(json.dumps(sub.results, indent=2))
