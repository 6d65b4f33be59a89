"""manage.py run_model: runs a model behind an OpenAI-compatible endpoint on a benchmark's own
protocol (spec/runs.md, docs/runs.md) and writes the prediction file; --submit submits it as
`submit` does."""

from __future__ import annotations

import getpass
import os
import re
import sys
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from annotation.models import Benchmark
from evaluation.harness import MODES
from evaluation.harness.cache import SqliteRequestCache
from evaluation.harness.client import Settings
from evaluation.harness.loop import DEFAULT_MAX_IMAGE_PIXELS, PROTOCOLS
from evaluation.harness.prompts import FAMILIES
from evaluation.harness.runner import Estimate, Patience, Progress
from evaluation.run_protocol import protocol_stamp
from evaluation.run_inputs import SPLITS, RunRefused, benchmark_family, run_benchmark


def cache_owner(username: str | None) -> str:
    """Whose answers the run's cache holds (spec/runs.md): the ``--user`` it is submitted for, else the
    local login running the command. Another owner's answers are never replayed (harness/cache.py)."""
    if not username:
        try:
            return f"local:{getpass.getuser()}"
        except (KeyError, OSError):  # no login name for this uid (a bare container)
            return f"local:uid-{os.getuid()}"
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise CommandError(f"--user: no user named {username!r}")
    return f"user:{user.pk}"


def _modes(value: str) -> list[str]:
    modes = [m.strip() for m in value.split(",") if m.strip()]
    unknown = [m for m in modes if m not in MODES]
    if unknown or not modes:
        raise CommandError(f"--modes: {', '.join(unknown) or 'nothing'} is not a mode (choose from {', '.join(MODES)})")
    return list(dict.fromkeys(modes))


class Command(BaseCommand):
    help = ("Run a model behind an OpenAI-compatible chat-completions endpoint on the benchmark's protocol and "
            "write the prediction file (docs/runs.md); --submit submits it as `submit` does.")

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("slug")
        parser.add_argument("--endpoint", required=True, help="the base URL, e.g. http://127.0.0.1:8001/v1")
        parser.add_argument("--model", required=True, help="the model name the endpoint serves")
        parser.add_argument("--api-key-env", dest="api_key_env", default="",
                            help="the environment variable holding the API key (never the key itself)")
        parser.add_argument("--modes", default="text,adaptive,oracle,blind", type=_modes)
        parser.add_argument("--split", choices=SPLITS, default="all")
        parser.add_argument("--limit", type=int, default=None, help="only the first N samples")
        parser.add_argument("--max-turns", dest="max_turns", type=int, default=8)
        parser.add_argument("--max-image-pixels", dest="max_image_pixels", type=int, default=DEFAULT_MAX_IMAGE_PIXELS,
                            help="an image larger than this is sent as a scaled-down view; the tools work on the "
                                 f"original (default {DEFAULT_MAX_IMAGE_PIXELS:,}: 2048 x 2048; 0: as stored)")
        parser.add_argument("--concurrency", type=int, default=4, help="(sample, mode) pairs in flight")
        parser.add_argument("--out", type=Path, default=None, help="the prediction file (JSON Lines)")
        parser.add_argument("--family", choices=FAMILIES, default=None,
                            help="the prompt family (default: from the benchmark)")
        parser.add_argument("--protocol", choices=PROTOCOLS, default="function_calling",
                            help="how adaptive mode calls tools: OpenAI function calling, or <tool_call> tagged text")
        parser.add_argument("--prices", nargs=2, type=float, metavar=("IN", "OUT"),
                            help="USD per million input and output tokens (the estimate, the budget, the submission)")
        parser.add_argument("--budget", type=float, default=0.0, help="stop cleanly before spending more USD (0: none)")
        parser.add_argument("--rpm", type=int, default=0, help="requests per minute (0: no limit)")
        parser.add_argument("--tpm", type=int, default=0, help="tokens per minute (0: no limit)")
        parser.add_argument("--timeout", type=float, default=120.0, help="seconds per request")
        parser.add_argument("--max-retries", dest="max_retries", type=int, default=3,
                            help="one request's retries (a timeout, a 5xx) before its pair waits for the next pass")
        parser.add_argument("--patience", type=float, default=1800.0,
                            help="seconds without a single answer after which the run stops waiting for an "
                                 "unavailable provider (its failed pairs are asked again in later passes until then)")
        parser.add_argument("--max-tokens", dest="max_tokens", type=int, default=1024)
        parser.add_argument("--temperature", type=float, default=0.0)
        parser.add_argument("--seed", type=int, default=0, help="sent where the endpoint takes one; -1: none")
        parser.add_argument("--cache", type=Path, default=None,
                            help="the request cache (SQLite; default VAR_DIR/run_cache.sqlite3)")
        parser.add_argument("--estimate-only", dest="estimate_only", action="store_true",
                            help="print the estimate and stop")
        parser.add_argument("--no-progress", dest="no_progress", action="store_true")
        parser.add_argument("--submit", action="store_true", help="submit the file as `submit` does")
        parser.add_argument("--user", help="the submission's owner (with --submit), and whose cached answers the run may replay "
                            "(default: the local login's)")
        parser.add_argument("--model-name", dest="model_name", default="", help="the name on the board (default --model)")
        parser.add_argument("--organisation", default="")
        parser.add_argument("--public", action="store_true")
        parser.add_argument("--sync", action="store_true", help="score in this process and print the metrics")

    def handle(self, *args: object, **opts: Any) -> None:
        benchmark = Benchmark.objects.filter(slug=opts["slug"]).first()
        if benchmark is None:
            raise CommandError(f"no benchmark with slug {opts['slug']!r}")
        if opts["submit"] and not opts["user"]:
            raise CommandError("--submit needs --user (the submission's owner)")
        owner = cache_owner(opts["user"])
        api_key = ""
        if opts["api_key_env"]:
            api_key = os.environ.get(opts["api_key_env"], "")
            if not api_key:
                raise CommandError(f"--api-key-env: the environment variable {opts['api_key_env']} is not set")
        modes: list[str] = opts["modes"]
        prices = opts["prices"] or (0.0, 0.0)
        run_settings = Settings(
            model=opts["model"], base_url=opts["endpoint"], api_key=api_key, temperature=opts["temperature"],
            seed=None if opts["seed"] < 0 else opts["seed"], max_tokens=opts["max_tokens"], timeout=opts["timeout"],
            max_retries=opts["max_retries"], requests_per_minute=opts["rpm"], tokens_per_minute=opts["tpm"],
            price_input=prices[0], price_output=prices[1], budget_usd=opts["budget"], patience=opts["patience"])
        family = opts["family"] or benchmark_family(benchmark)
        out: Path = opts["out"] or Path(f"{benchmark.slug}.{re.sub(r'[^A-Za-z0-9._-]+', '_', opts['model'])}.jsonl")
        bar: Any = None

        def before(planned: Estimate) -> bool:
            nonlocal bar
            self.stdout.write(f"{benchmark.name}, split {opts['split']}, modes {', '.join(modes)}, prompts {family}: "
                              + planned.describe())
            if opts["estimate_only"]:
                return False
            if not opts["no_progress"]:
                bar = tqdm(total=planned.pairs, unit="answer", file=sys.stderr, dynamic_ncols=True)
            return True

        def progress(p: Progress) -> None:
            if bar is not None:
                bar.n = p.done
                bar.set_postfix_str(f"sent {p.sent}, cached {p.cached}, failed {sum(p.failures.values())}, "
                                    f"${p.spent_usd:.4f}", refresh=False)
                bar.refresh()

        try:
            _, summary = run_benchmark(
                benchmark=benchmark, settings=run_settings, modes=modes, split=opts["split"], limit=opts["limit"],
                family=family, protocol=opts["protocol"], max_turns=opts["max_turns"],
                max_image_pixels=opts["max_image_pixels"], stamp=protocol_stamp(benchmark, family=family),
                concurrency=opts["concurrency"], out=out, before=before, on_progress=progress,
                patience=Patience(seconds=opts["patience"]),
                cache=SqliteRequestCache(opts["cache"] or Path(settings.VAR_DIR) / "run_cache.sqlite3", owner=owner))
        except (RunRefused, ValueError) as exc:
            raise CommandError(str(exc)) from exc
        finally:
            if bar is not None:
                bar.close()
        if summary is None:
            return
        failures = ", ".join(f"{n} {k}" for k, n in sorted(summary.failures.items())) or "none"
        self.stdout.write(
            f"wrote {summary.lines} lines to {out}: {summary.answered} answered, failures: {failures}; "
            f"{summary.requests_sent} requests sent, {summary.requests_cached} from the cache, "
            f"{summary.input_tokens:,} input and {summary.output_tokens:,} output tokens, ${summary.spent_usd:.4f}; "
            f"model ids returned: {', '.join(summary.model_ids) or 'none'}"
            + ("; asked again after the provider failed: " + ", ".join(
                f"{n} {k}" for k, n in sorted(summary.retried.items())) if summary.retried else ""))
        if summary.refused is not None:
            raise CommandError(f"the endpoint could not be called: {summary.refused}; the run ended at the first "
                               "refusal" + (" and nothing was submitted" if opts["submit"] else ""))
        if summary.stopped:
            self.stderr.write(f"stopped early: {summary.stopped}")
        if summary.unavailable and opts["submit"]:
            raise CommandError("the provider was unavailable, so the file was not submitted (its missing answers "
                               "would count as wrong): run the same command again when it is back; what was "
                               "answered is replayed from the cache")
        if opts["submit"]:
            submit_opts: dict[str, Any] = {"model": opts["model_name"] or opts["model"], "user": opts["user"],
                                           "public": opts["public"], "sync": opts["sync"],
                                           "organisation": opts["organisation"]}
            if opts["prices"]:
                submit_opts["prices"] = list(opts["prices"])
            call_command("submit", benchmark.slug, str(out), stdout=self.stdout, stderr=self.stderr, **submit_opts)
