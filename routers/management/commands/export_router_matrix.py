from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.models import Benchmark
from evaluation.metrics.routing import SPLITS
from routers import exports
from routers.pool import pool_ensure


class Command(BaseCommand):
    help = ("Write the router pool's matrices for one split: one row per sample with its id, question and image "
            "URL, and for train/dev every model's <model>:correct and <model>:cost_usd (never for test). "
            "Parquet when OUT ends in .parquet, else CSV.")

    def add_arguments(self, parser) -> None:  # noqa: ANN001
        parser.add_argument("slug")
        parser.add_argument("out", type=Path)
        parser.add_argument("--split", choices=SPLITS, default="train")

    def handle(self, *args: object, **opts: object) -> None:
        benchmark = Benchmark.objects.filter(slug=opts["slug"]).first()
        if benchmark is None:
            raise CommandError(f"no benchmark with slug {opts['slug']!r}")
        data = pool_ensure(benchmark)
        out: Path = opts["out"]  # type: ignore[assignment]
        split: str = opts["split"]  # type: ignore[assignment]
        if out.suffix == ".parquet":
            out.write_bytes(exports.matrix_parquet(data, split))
        else:
            out.write_text(exports.matrix_csv(data, split), encoding="utf-8")
        n = len(data.rows(split))
        self.stdout.write(f"{n} {split} samples x {len(data.pool.models)} models ({data.track.mode} mode) -> {out}")
