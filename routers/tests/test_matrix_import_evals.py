"""import_router_matrix, the archive form: per-model VLMEvalKit evaluation files (correctness in hit,
is_correct or score; CSV, TSV, .xlsx, JSON), token counts and a price table. Sample ids are
VL-RouterBench's "<Dataset>/<index>", matched to a benchmark imported from several VLMEvalKit TSVs
(uids "<dataset>:<index>"). Small fixtures written here in those shapes."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from django.core.cache import cache
from django.core.management import CommandError, call_command
from openpyxl import Workbook

from annotation.models import Benchmark
from annotation.services import benchmark_import
from annotation.tests.benchmark_files import sample_line, write_benchmark
from routers.models import RouterPoolCell, RouterPoolVersion
from routers.pool import pool_load

pytestmark = pytest.mark.django_db
SLUG = "vlrb"
DATASETS = ("MMStar", "OCRBench")
PRICES = {"Alpha": (2.5, 10.0), "Beta": (0.1, 0.4)}  # $ per million input / output tokens


def right(model: str, dataset: str, i: int) -> bool:
    if model == "Alpha":
        return i % 2 == 0 if dataset == "MMStar" else i % 3 == 0
    return i < 5 if dataset == "MMStar" else i % 2 == 1


def tokens(model: str, i: int) -> tuple[int, int]:
    return (1000 + i, 100 + 10 * i) if model == "Alpha" else (500, 50 + i)


def usd(model: str, i: int) -> float:
    t_in, t_out = tokens(model, i)
    return (t_in * PRICES[model][0] + t_out * PRICES[model][1]) / 1_000_000


@pytest.fixture
def bench(tmp_path) -> Benchmark:  # noqa: ANN001
    cache.clear()
    lines = [sample_line(f"{d}:{i}", question=f"{d} question number {i} about {'charts' if i % 2 else 'apples'}")
             for d in DATASETS for i in range(10)]
    benchmark_import(path=write_benchmark(tmp_path / "bench", lines), slug=SLUG)
    return Benchmark.objects.get(slug=SLUG)


def write_archive(root: Path, *, index: Callable[[str, int], object] = lambda d, i: i,
                  extra_tokens: list[list[object]] = (), drop_token: int | None = None,
                  prices: dict = PRICES) -> Path:
    """evals/<model>/<model>_<dataset>...: Alpha as CSV (hit) and .xlsx after a judge stage (score), Beta as
    TSV (is_correct) and JSON (score); tokens.csv; prices.csv (with a model not in the pool: ignored)."""
    for model in ("Alpha", "Beta"):
        (root / "evals" / model).mkdir(parents=True, exist_ok=True)
    def rows(model: str, d: str) -> list[list[object]]:
        return [[index(d, i), f"answer {i}", int(right(model, d, i))] for i in range(10)]
    with (root / "evals/Alpha/Alpha_MMStar.csv").open("w", newline="") as fh:
        csv.writer(fh).writerows([["index", "prediction", "hit"], *rows("Alpha", "MMStar")])
    book = Workbook()
    book.active.append(["index", "prediction", "score"])
    for r in rows("Alpha", "OCRBench"):
        book.active.append(r)
    book.save(root / "evals/Alpha/Alpha_OCRBench_gpt-4o_score.xlsx")
    with (root / "evals/Beta/Beta_MMStar.tsv").open("w", newline="") as fh:
        csv.writer(fh, delimiter="\t").writerows(
            [["index", "prediction", "is_correct"], *[[a, b, "True" if c else "False"] for a, b, c in rows("Beta", "MMStar")]])
    (root / "evals/Beta/Beta_OCRBench.json").write_text(
        json.dumps([{"index": a, "prediction": b, "score": c} for a, b, c in rows("Beta", "OCRBench")]))
    token_rows = [[m, f"{d}/{index(d, i)}", *tokens(m, i)] for m in ("Alpha", "Beta") for d in DATASETS for i in range(10)]
    if drop_token is not None:
        del token_rows[drop_token]
    with (root / "tokens.csv").open("w", newline="") as fh:
        csv.writer(fh).writerows([["model", "sample_id", "input_tokens", "output_tokens"], *token_rows, *extra_tokens])
    with (root / "prices.csv").open("w", newline="") as fh:
        csv.writer(fh).writerows([["model", "input_per_million", "output_per_million"],
                                  *[[m, *p] for m, p in prices.items()], ["Unpooled", 1, 1]])
    return root


def run(root: Path) -> str:
    out = io.StringIO()
    call_command("import_router_matrix", SLUG, "--evals", str(root / "evals"), "--tokens", str(root / "tokens.csv"),
                 "--prices", str(root / "prices.csv"), stdout=out)
    return out.getvalue()


def test_the_archive_becomes_the_pool_with_costs_from_tokens_and_prices(bench, tmp_path):
    out = run(write_archive(tmp_path / "rel"))
    assert "20 samples x 2 models (Alpha, Beta) imported from evals/ (evaluation files), tokens.csv, prices.csv" in out
    data = pool_load(bench)
    assert data.pool.models == ("Alpha", "Beta") and RouterPoolCell.objects.count() == 40
    call_command("export_router_matrix", SLUG, str(tmp_path / "train.csv"), "--split", "train")
    rows = list(csv.DictReader((tmp_path / "train.csv").open()))
    assert len(rows) == 14
    for r in rows:
        d, i = r["sample_id"].split(":")
        for m in ("Alpha", "Beta"):
            assert r[f"{m}:correct"] == str(int(right(m, d, int(i))))
            assert float(r[f"{m}:cost_usd"]) == pytest.approx(usd(m, int(i)))


def unknown_sample(d: str, i: int) -> object:
    return 99 if (d, i) == ("MMStar", 9) else i


def duplicate(d: str, i: int) -> object:
    return 0 if (d, i) == ("MMStar", 1) else i


CASES = {
    "a model the evaluations lack": (dict(extra_tokens=[["Gamma", "MMStar/0", 1, 1]]),
                                     "tokens.csv row 41, field 'model': unknown model 'Gamma' "
                                     "(the evaluation files have Alpha, Beta)"),
    "no price": (dict(prices={"Alpha": PRICES["Alpha"]}),
                 "prices.csv: no price for model 'Beta' (its evaluation files are in evals/Beta/)"),
    "no token counts": (dict(drop_token=0),
                        "tokens.csv: no token counts for model 'Alpha', sample 'MMStar/0' (evals/Alpha/Alpha_MMStar.csv row 1)"),
    "a sample the benchmark lacks": (dict(index=unknown_sample),
                                     "evals/Alpha/Alpha_MMStar.csv row 10: sample id 'MMStar/99' is not a sample of vlrb"),
    "one sample twice": (dict(index=duplicate),
                         "evals/Alpha/Alpha_MMStar.csv row 2, field 'index': sample 'MMStar/0' again "
                         "(first at evals/Alpha/Alpha_MMStar.csv row 1)"),
}


def break_files(root: Path, case: str) -> str:
    """Edits of the written files that the keyword arguments above cannot make; returns the message expected."""
    if case == "not 0 or 1":
        path = root / "evals/Alpha/Alpha_MMStar.csv"
        lines = path.read_text().splitlines()
        lines[3] = lines[3].rsplit(",", 1)[0] + ",maybe"
        path.write_text("\n".join(lines) + "\n")
        return "evals/Alpha/Alpha_MMStar.csv row 3, field 'hit': 'maybe' is not 0 or 1"
    if case == "a missing row":
        path = root / "evals/Beta/Beta_MMStar.tsv"
        path.write_text("\n".join(path.read_text().splitlines()[:-1]) + "\n")
        return ("evals/Beta/: no evaluation row for 1 sample(s) the other models have, first 'MMStar/9' "
                "(evals/Alpha/Alpha_MMStar.csv row 10)")
    if case == "an unknown dataset":
        (root / "evals/Alpha/Alpha_MMStar.csv").rename(root / "evals/Alpha/Alpha_MMBench.csv")
        return "evals/Alpha/Alpha_MMBench.csv: the file name names none of the benchmark's datasets (MMStar, OCRBench)"
    if case == "no correctness column":
        (root / "evals/Beta/Beta_MMStar.tsv").write_text("index\tprediction\n0\tA\n")
        return ("evals/Beta/Beta_MMStar.tsv: needs the columns index and one of is_correct, hit, score; "
                "it has index, prediction")
    if case == "a bad price":
        (root / "prices.csv").write_text("model,input_per_million,output_per_million\nAlpha,2.5,10\nBeta,free,0.4\n")
        return "prices.csv row 2, field 'input_per_million': 'free' is not a price ($ >= 0)"
    if case == "a bad token count":
        path = root / "tokens.csv"
        lines = path.read_text().splitlines()
        lines[1] = lines[1].rsplit(",", 1)[0] + ",-5"
        path.write_text("\n".join(lines) + "\n")
        return "tokens.csv row 1, field 'output_tokens': '-5' is not a token count"
    if case == "a model folder without files":
        (root / "evals/Gamma").mkdir()
        return "evals/Gamma/: no evaluation file (.csv, .tsv, .xlsx, .json)"
    raise AssertionError(case)


@pytest.mark.parametrize("case", [*CASES, "not 0 or 1", "a missing row", "an unknown dataset", "no correctness column",
                                  "a bad price", "a bad token count", "a model folder without files"])
def test_every_problem_is_named_and_nothing_is_imported(bench, tmp_path, case):
    if case in CASES:
        root, message = write_archive(tmp_path / "rel", **CASES[case][0]), CASES[case][1]
    else:
        root = write_archive(tmp_path / "rel")
        message = break_files(root, case)
    err = io.StringIO()
    with pytest.raises(CommandError, match="nothing imported"):
        call_command("import_router_matrix", SLUG, "--evals", str(root / "evals"), "--tokens",
                     str(root / "tokens.csv"), "--prices", str(root / "prices.csv"), stderr=err)
    assert message in err.getvalue()
    assert not RouterPoolVersion.objects.exclude(origin="").exists() and not RouterPoolCell.objects.exists()


def test_the_releases_split_with_its_own_ids_then_its_archive(bench, tmp_path):
    """VL-RouterBench end to end: SPLITS/*.jsonl naming "<Dataset>/<id>", then the archive."""
    ids = [f"{d}/{i}" for d in DATASETS for i in range(10)]
    folder = tmp_path / "SPLITS"
    folder.mkdir()
    for name, part in (("train", ids[:14]), ("dev", ids[14:16]), ("test", ids[16:])):
        (folder / f"{name}.jsonl").write_text("".join(json.dumps({"sample_id": x}) + "\n" for x in part))
    call_command("import_router_splits", SLUG, str(folder), stdout=io.StringIO())
    run(write_archive(tmp_path / "rel"))
    data = pool_load(bench)
    assert [data.samples[i].uid for i in data.rows("test")] == [x.replace("/", ":") for x in ids[16:]]
    assert len(data.rows("train")) == 14 and data.pool.models == ("Alpha", "Beta")
