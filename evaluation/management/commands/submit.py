from __future__ import annotations

import json
from datetime import date
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.files import File
from django.core.management.base import BaseCommand, CommandError

from annotation.models import Benchmark
from evaluation import pipeline, queueing, services
from evaluation.converters import FORMATS
from evaluation.model_meta import parse_parameters
from evaluation.models import FULL_PIPELINE_HELP, Weights


OPTION_OF = {"parameters_billions": "--params", "license": "--license", "release_date": "--release-date",
             "model_url": "--model-url", "paper_url": "--paper-url", "weights": "--weights", "model_name": "--model",
             "organisation": "--organisation"}


def model_details(opts: dict) -> dict:
    """The model-detail options, parsed; a value that cannot be read is a CommandError naming its option."""
    try:
        params = parse_parameters(opts.get("params"))
    except ValueError as exc:
        raise CommandError(f"--params: {exc}") from exc
    raw_date = opts.get("release_date")
    try:
        released = date.fromisoformat(raw_date) if raw_date else None
    except ValueError as exc:
        raise CommandError(f'--release-date: expected a date as YYYY-MM-DD, got "{raw_date}"') from exc
    return {"parameters_billions": params, "release_date": released, "weights": opts.get("weights") or "",
            "license": opts.get("license") or "", "model_url": opts.get("model_url") or "",
            "paper_url": opts.get("paper_url") or ""}


def validation_message(exc: ValidationError) -> str:
    """Django's field errors as one line per option: "--paper-url: a link must start with http:// ..."."""
    if not hasattr(exc, "message_dict"):
        return "; ".join(exc.messages)
    return "\n".join(f"{OPTION_OF.get(field, field)}: {m}" for field, msgs in exc.message_dict.items() for m in msgs)


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
        parser.add_argument("--params", help='parameter count: "7B", "70b", "1.5B", "500M", or a number of billions')
        parser.add_argument("--weights", choices=[w.value for w in Weights if w.value], default="",
                            help="open or closed weights")
        parser.add_argument("--license", default="", help='as the model card states it, e.g. "Apache-2.0"')
        parser.add_argument("--release-date", dest="release_date", help="YYYY-MM-DD")
        parser.add_argument("--model-url", dest="model_url", default="", help="the code or model card (http/https)")
        parser.add_argument("--paper-url", dest="paper_url", default="", help="the paper (http/https)")
        parser.add_argument("--format", dest="file_format", choices=FORMATS, default="jsonl",
                            help="the file's shape: our JSON Lines (default), or an author's, converted on the "
                                 "way in: vlmevalkit (.xlsx/.tsv/.csv/.json result file), vtcbench (agent "
                                 "results_*.jsonl), agentx (output list .json)")
        parser.add_argument("--full-pipeline", dest="full_pipeline", action="store_true",
                            help=FULL_PIPELINE_HELP)
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
        details = model_details(opts)
        try:
            with path.open("rb") as fh:
                sub = services.submission_create(
                    benchmark=benchmark, owner=user, file=File(fh, name=path.name), model_name=opts["model"],
                    organisation=opts["organisation"], is_public=opts["public"], enqueue=not opts["sync"],
                    price_input_per_mtok=prices[0], price_output_per_mtok=prices[1],
                    file_format=opts["file_format"], full_pipeline=bool(opts["full_pipeline"]), **details,
                )
        except services.SubmissionRejected as exc:
            raise CommandError(exc.message) from exc
        except ValidationError as exc:
            raise CommandError(validation_message(exc)) from exc
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
        # The derived figures (board, tabs, exports) built here, as load_demo does: the row is on the board
        # when the command returns, with no worker running (the queued refreshes find nothing left to do).
        queueing.results_changed_run(benchmark_id=sub.benchmark_id)
        self.stdout.write(json.dumps(sub.results, indent=2))
