"""The CSVs' units, published as W3C CSV on the Web metadata (config/csvw.py, leaderboard/csv_metadata.py,
routers/exports.py's BOARD_METADATA): leaderboard.csv and routers.csv keep their column names (interfaces.md) and
point, by a ``Link: rel="describedby"`` header, at ``<csv url>-metadata.json`` (where a CSVW processor looks),
which describes every column of the file as served (title, datatype, unit), and every cell parses as its
column's datatype says."""

from __future__ import annotations

import csv
import io
import re
from datetime import date, datetime
from urllib.parse import urljoin

import pytest
from django.core.management import call_command

from annotation.models import Benchmark
from config.csvw import BOOLEAN, CONTENT_TYPE
from leaderboard import csv_metadata
from leaderboard.author_figures_view import RULES
from leaderboard.exports import csv_header
from leaderboard.tests import helpers

pytestmark = pytest.mark.django_db
# The columns whose values are measured in something: each must say in what.
MEASURED = ("number",)
HOST = "http://testserver"


def _parse(value: str, datatype: object) -> None:
    """Raise when ``value`` is not a ``datatype`` lexical form, as the exports write it."""
    if datatype == BOOLEAN:
        assert value in ("True", "False"), value
    elif datatype == "integer":
        int(value)
    elif datatype == "number":
        float(value)
    elif datatype == "date":
        date.fromisoformat(value)
    elif datatype == "datetime":
        datetime.fromisoformat(value)
    elif datatype == "anyURI":
        assert re.match(r"^[a-z][a-z0-9+.-]*:", value), value


def _described(client, csv_path: str) -> tuple[list[dict[str, str]], list[str], dict]:  # noqa: ANN001
    """The CSV's rows and header, and the metadata its Link header names, checked to be where CSVW looks."""
    response = client.get(csv_path)
    assert response.status_code == 200
    link = re.fullmatch(r'<([^>]+)>; rel="describedby"; type="([^"]+)"', response["Link"])
    assert link and link.group(2) == CONTENT_TYPE, response["Link"]
    assert link.group(1) == csv_path + "-metadata.json"  # the URL the spec's default template gives too
    meta_response = client.get(link.group(1))
    assert meta_response.status_code == 200 and meta_response["Content-Type"] == CONTENT_TYPE
    meta = meta_response.json()
    assert meta["@context"] == "http://www.w3.org/ns/csvw"
    assert urljoin(HOST + link.group(1), meta["url"]) == HOST + csv_path  # it describes this file
    text = response.content.decode()
    header = next(csv.reader(io.StringIO(text)))
    return list(csv.DictReader(io.StringIO(text))), header, meta


def _check(rows: list[dict[str, str]], header: list[str], meta: dict) -> dict[str, dict]:
    columns = meta["tableSchema"]["columns"]
    assert [c["titles"] for c in columns] == header  # every column, in the file's order, by its exact name
    assert [c["name"] for c in columns] == header
    for c in columns:
        assert c["dc:description"] and c["datatype"], c
        if c["datatype"] in MEASURED:
            assert c.get("schema:unitText"), c["name"]
    by_name = {c["name"]: c for c in columns}
    assert rows
    for row in rows:
        for name, value in row.items():
            if value not in by_name[name]["null"]:
                _parse(value, by_name[name]["datatype"])
    return by_name


def test_leaderboard_csv_points_at_metadata_describing_every_column_with_its_unit(client, tmp_path) -> None:
    benchmark = helpers.make_benchmark(tmp_path / "bench")
    for spec in (helpers.ALPHA, helpers.BETA, helpers.GAMMA):
        helpers.submit(benchmark, spec, refresh=False)
    helpers.refreshed(benchmark)
    rows, header, meta = _described(client, f"/b/{benchmark.slug}/leaderboard.csv")
    by_name = _check(rows, header, meta)
    assert by_name["adaptive"]["schema:unitText"] == "percent" and by_name["adaptive_low"]["datatype"] == "number"
    assert by_name["cost_per_10k_usd"]["schema:unitText"] == "USD per 10,000 samples"
    assert by_name["tokens"]["schema:unitText"] == "tokens per sample"
    assert by_name["mcc"]["schema:unitText"].startswith("dimensionless")
    assert by_name["tools_contribution"]["schema:unitText"] == "percentage points"
    assert by_name["tools_solved"]["datatype"] == "integer"
    assert by_name["simulated_demo"]["datatype"] == BOOLEAN
    assert rows[0]["date"] and rows[0]["submission_id"]  # a submission row's cells were parsed, not all empty


def test_the_authors_and_agentx_columns_are_described_too(client, tmp_path) -> None:
    """A benchmark's CSV gains columns by its scoring profile (author_*) and figures (agentx_*): the metadata
    follows the header the CSV writes (exports.csv_header), for every profile with the authors' figures."""
    for scoring in RULES:
        names = csv_header(agentx=True, tools=True, authors_of=scoring)
        assert [csv_metadata.column(n, scoring).name for n in names] == names
    with pytest.raises(KeyError):
        csv_metadata.column("a_column_nobody_described")
    benchmark = helpers.make_benchmark(tmp_path / "bench")
    Benchmark.objects.filter(pk=benchmark.pk).update(scoring="hrbench", figures=["agentx"])
    helpers.submit(benchmark, helpers.ALPHA)
    rows, header, meta = _described(client, f"/b/{benchmark.slug}/leaderboard.csv")
    assert any(h.startswith("author_") for h in header) and any(h.startswith("agentx_") for h in header)
    by_name = _check(rows, header, meta)
    # a judged Agent-X figure scored by the offline judge reads "needs an LLM judge" in its cell: no value
    assert all("needs an LLM judge" in c["null"] for n, c in by_name.items()
               if n.startswith("agentx_") and not n.endswith(("_low", "_high")))


def test_the_reported_rows_cells_parse_too(client) -> None:
    call_command("load_reported_results", stdout=io.StringIO())
    rows, header, meta = _described(client, "/b/adaptmmbench/leaderboard.csv")
    _check(rows, header, meta)
    assert {r["source"] for r in rows} == {"reported by the authors"}


def test_routers_csv_points_at_metadata_describing_every_column_with_its_unit(client, tmp_path) -> None:
    from routers.tests import helpers as router_helpers

    benchmark = router_helpers.make_pool(tmp_path)
    rows, header, meta = _described(client, f"/b/{benchmark.slug}/routers.csv")
    by_name = _check(rows, header, meta)
    assert by_name["accuracy"]["schema:unitText"] == "fraction, 0 to 1"  # not percent, as routers.json
    assert by_name["cost_per_sample_usd"]["schema:unitText"] == "USD per sample"
    assert by_name["on_frontier"]["datatype"] == BOOLEAN


def test_a_missing_benchmark_has_no_metadata(client) -> None:
    assert client.get("/b/nope/leaderboard.csv-metadata.json").status_code == 404
    assert client.get("/b/nope/routers.csv-metadata.json").status_code == 404
