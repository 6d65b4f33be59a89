"""The pool's matrices for one split as rows (CSV or Parquet): what a router researcher trains on.

Train and dev rows carry, for every model, ``<model>:correct`` (1 or 0) and ``<model>:cost_usd``;
test rows carry only the sample id, the question and the image URL, so a router's test picks can
never have seen the answers.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterable
from typing import Any

from django.urls import reverse

from config.csv_cells import csv_text_row
from config.csvw import Column, table_metadata
from evaluation.metrics.routing import SPLITS
from routers.pool import PoolData

FIXED = ["sample_id", "question", "image_url"]


def matrix_columns(data: PoolData, split: str) -> list[str]:
    if split == "test":
        return list(FIXED)
    return FIXED + [f"{m}:{k}" for m in data.pool.models for k in ("correct", "cost_usd")]


def matrix_rows(data: PoolData, split: str, absolute: Callable[[str], str] = lambda u: u) -> list[dict[str, Any]]:
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}: use one of {', '.join(SPLITS)}")
    slug = data.track.benchmark.slug
    image_base = reverse("routers:sample_image", args=[slug, 0])[:-len("0/image")]
    out = []
    for i in data.rows(split):
        s = data.samples[i]
        row: dict[str, Any] = {"sample_id": s.uid, "question": s.question, "image_url": absolute(f"{image_base}{s.pk}/image")}
        if split != "test":
            for j, m in enumerate(data.pool.models):
                row[f"{m}:correct"] = int(data.pool.correct[i, j])
                row[f"{m}:cost_usd"] = float(data.pool.cost[i, j])
        out.append(row)
    return out


def _csv(columns: list[str], rows: Iterable[dict[str, Any]]) -> str:
    """Header and rows, text escaped against spreadsheet formulas: a model's name heads its columns."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(csv_text_row(columns))
    writer.writerows(csv_text_row(row[c] for c in columns) for row in rows)
    return buf.getvalue()


def matrix_csv(data: PoolData, split: str, absolute: Callable[[str], str] = lambda u: u) -> str:
    return _csv(matrix_columns(data, split), matrix_rows(data, split, absolute))


def matrix_parquet(data: PoolData, split: str, absolute: Callable[[str], str] = lambda u: u) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = matrix_rows(data, split, absolute)
    columns = matrix_columns(data, split)
    table = pa.table({c: [r[c] for r in rows] for c in columns})
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


BOARD_COLUMNS = ["kind", "name", "router_id", "accuracy", "accuracy_low", "accuracy_high", "cost_per_sample_usd",
                 "cost_per_10k_usd", "rank_score", "oracle_gap_accuracy", "oracle_gap_cost_usd", "on_frontier",
                 "pool_current", "pool_version"]


def board_json(slug: str, board: Any) -> dict[str, Any]:  # board: routers.selectors.RouterBoard
    return {"benchmark": slug, "mode": board.mode, "models": board.models, "pool_version": board.pool_version,
            "pool_origin": board.origin,  # "" (the leaderboard's submissions) or "imported from <files>"
            # "computing" while the worker trains it for this pool (its row is then absent), "done", "failed".
            "reference_router": board.reference, "split_seed": 42, "splits": board.splits,
            "cost_bounds": list(board.bounds) if board.bounds else None,
            "rows": [{**r.flat(), "share": r.figures["share"],
                      "accuracy_by_domain": r.figures.get("accuracy_by_domain", {})} for r in board.rows],
            # A paper's figures on its own pool: not comparable row by row with the rows above.
            "reported": [{"name": r.name, "group": r.group, **r.figures, "source": r.source, "citation": r.citation}
                         for r in board.reported]}


def board_csv(board: Any) -> str:
    return _csv(BOARD_COLUMNS, (r.flat() for r in board.rows))


# routers.csv's columns with their datatypes and units (the CSVW metadata, /b/<slug>/routers.csv-metadata.json;
# config/csvw.py). Shares here are fractions of 1, as in routers.json, not percent.
SHARE = "fraction, 0 to 1"
BOARD_METADATA = [
    Column("kind", "router (a submission), baseline (oracle, random, the reference router ...) or model (one "
                   "pool model, always picked)"),
    Column("name", "The router's or baseline's name"),
    Column("router_id", "The router submission's id (/b/<slug>/routers/<id>/); empty on a baseline", "integer"),
    Column("accuracy", "Share of the test split answered right by the picked models", "number", SHARE),
    Column("accuracy_low", "Lower end of the accuracy's 95 % bootstrap interval", "number", SHARE),
    Column("accuracy_high", "Upper end of the accuracy's 95 % bootstrap interval", "number", SHARE),
    Column("cost_per_sample_usd", "Mean cost of the picked models per test sample", "number", "USD per sample"),
    Column("cost_per_10k_usd", "The same for 10,000 samples", "number", "USD per 10,000 samples"),
    Column("rank_score", "RouterArena's accuracy-cost score (b = 0.1)", "number", "dimensionless, 0 to 1"),
    Column("oracle_gap_accuracy", "Oracle's accuracy minus this row's", "number", SHARE),
    Column("oracle_gap_cost_usd", "This row's cost per sample minus the oracle's", "number", "USD per sample"),
    Column("on_frontier", "True when no other row is both more accurate and cheaper", "boolean"),
    Column("pool_current", "True when scored on the pool the board was built from", "boolean"),
    Column("pool_version", "The pool version the row was scored on", "integer"),
]


def board_metadata(slug: str) -> dict[str, Any]:
    """routers.csv's CSVW metadata: its columns, in the file's order, each with its datatype and unit."""
    return table_metadata(csv_url="routers.csv", title=f"{slug} router leaderboard", columns=BOARD_METADATA,
                          description="The router board's rows; the same as routers.json without share and "
                                      "accuracy_by_domain (docs/routers.md)")
