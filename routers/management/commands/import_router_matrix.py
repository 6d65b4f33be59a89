from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.models import Benchmark
from routers.matrix_import import MatrixRejected, read_evaluations, read_matrices
from routers.pool import release_ids
from routers.services import router_pool_import, router_pool_import_drop


class Command(BaseCommand):
    help = ("Make a router pool from VL-RouterBench's own files (docs/routers.md): either its matrices "
            "(--matrices DIR with Y.npz, C.npy, the registry and cost_bounds.json) or its per-model VLMEvalKit "
            "evaluation files with token counts and a price table (--evals DIR --tokens FILE --prices FILE). "
            "All or nothing; every problem is named by file and row or field.")

    def add_arguments(self, parser) -> None:  # noqa: ANN001
        parser.add_argument("slug")
        parser.add_argument("--matrices", type=Path, help="folder with Y.npz and C.npy (data/matrices/)")
        parser.add_argument("--y", type=Path, help="Y.npz, when not in --matrices")
        parser.add_argument("--c", type=Path, help="C.npy, when not in --matrices")
        parser.add_argument("--registry", type=Path,
                            help="JSON: {'models': [...], 'sample_ids': [...]} naming Y's columns and rows "
                                 "(default: registry.json in --matrices, else arrays model_ids/sample_ids in Y.npz)")
        parser.add_argument("--cost-bounds", type=Path, help="cost_bounds.json (default: the one in --matrices)")
        parser.add_argument("--evals", type=Path, help="folder with one folder per model of VLMEvalKit evaluation files")
        parser.add_argument("--tokens", type=Path, help="CSV: model, sample_id, input_tokens, output_tokens")
        parser.add_argument("--prices", type=Path, help="CSV: model, input_per_million, output_per_million ($)")
        parser.add_argument("--leaderboard", action="store_true",
                            help="drop the imported pool: build the pool from the leaderboard's submissions again")

    def handle(self, *args: object, **opts: object) -> None:
        benchmark = Benchmark.objects.filter(slug=opts["slug"]).first()
        if benchmark is None:
            raise CommandError(f"no benchmark with slug {opts['slug']!r}")
        matrices, evals = opts["matrices"], opts["evals"]
        if opts["leaderboard"]:
            if matrices is not None or evals is not None or opts["y"] is not None:
                raise CommandError("--leaderboard takes no files: it drops the imported pool")
            version = router_pool_import_drop(benchmark=benchmark)
            if version is None:
                raise CommandError(f"the router pool of {benchmark.slug} is not imported: nothing to drop")
            self.stdout.write(f"{benchmark.slug}: the router pool is built from the leaderboard's submissions again "
                              f"(pool version {version.number}, {len(version.members)} models); routers re-scored")
            return
        try:
            if evals is not None:
                if matrices is not None or opts["y"] is not None:
                    raise CommandError("give the matrices (--matrices) or the evaluation files (--evals), not both")
                if opts["tokens"] is None or opts["prices"] is None:
                    raise CommandError("--evals needs --tokens (token counts) and --prices (the price table)")
                datasets = {sid.split("/", 1)[0] for sid in release_ids(benchmark) if "/" in sid}
                matrix = read_evaluations(evals, tokens=opts["tokens"], prices=opts["prices"], datasets=datasets)
            elif matrices is not None or (opts["y"] is not None and opts["c"] is not None):
                matrix = read_matrices(matrices or Path("."), y_path=opts["y"], c_path=opts["c"],
                                       registry=opts["registry"], bounds=opts["cost_bounds"])
            else:
                raise CommandError("give --matrices DIR (or --y and --c), or --evals DIR with --tokens and --prices")
            version, created = router_pool_import(benchmark=benchmark, matrix=matrix)
        except MatrixRejected as exc:
            for e in exc.errors:
                self.stderr.write(e)
            raise CommandError(f"nothing imported: {len(exc.errors)} problem(s)") from exc
        what = "new pool version" if created else "already imported as pool version"
        self.stdout.write(f"{len(matrix.samples)} samples x {len(matrix.models)} models ({', '.join(matrix.models)}) "
                          f"{matrix.origin}: {what} {version.number} of {benchmark.slug}")
