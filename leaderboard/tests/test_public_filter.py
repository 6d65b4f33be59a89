"""What the public board shows, as a visitor sees it, where a single-line bug used to go unnoticed
(issue 13): an unpublished submission on the board and its exports, missing predictions left out
of the domain table, the cost tab's frontier and Strongest baseline. Figures are computed by hand
on the benchmark of helpers.py (real_world: s1-s4, ocr: s5-s8, s9 aux; s1, s3, s7 need recovery).
"""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
from django.core.files.base import ContentFile

from evaluation import pipeline, services
from leaderboard import selectors
from leaderboard.tests import helpers

pytestmark = pytest.mark.django_db


NAMES = ("Alpha", "Secret")


def _names(client, slug: str = helpers.SLUG) -> dict[str, set[str]]:  # noqa: ANN001
    """The model names each public surface lists."""
    page = client.get(f"/b/{slug}/").content.decode()
    csv_rows = csv.DictReader(io.StringIO(client.get(f"/b/{slug}/leaderboard.csv").content.decode()))
    return {
        "page": {n for n in NAMES if re.search(rf">\s*{n}\s*<", page)},
        "home": {n for n in NAMES if re.search(rf">\s*{n}\s*<", client.get("/").content.decode())},
        "csv": {r["model"] for r in csv_rows},
        "json": {r["model"] for r in client.get(f"/b/{slug}/leaderboard.json").json()["rows"]},
        "api": {r["model"] for r in client.get(f"/api/v1/benchmarks/{slug}/leaderboard/").json()["rows"]},
    }


def test_an_unpublished_submission_leaves_the_board_and_every_export(client, tmp_path) -> None:
    """Bug: leaderboard/selectors.py's public_entries without its is_public filter."""
    benchmark = helpers.make_benchmark(tmp_path / "bench")
    helpers.submit(benchmark, helpers.ALPHA)
    secret = helpers.submit(benchmark, helpers.ModelSpec("Secret", {"text": helpers.UIDS}))
    everywhere = {"Alpha", "Secret"}
    assert _names(client) == dict.fromkeys(("page", "home", "csv", "json", "api"), everywhere)
    # Its board entry now exists; unpublishing must hide it from every surface at once.
    services.submission_set_public(submission=secret, public=False)
    assert _names(client) == dict.fromkeys(("page", "home", "csv", "json", "api"), {"Alpha"})
    page = client.get("/b/hand/").content.decode()
    assert "Secret" not in page and f'data-key="s{secret.pk}"' not in page
    assert client.get(f"/b/hand/m/{secret.pk}/").status_code == 404


def _submit_lines(benchmark, name: str, lines: list[dict]):  # noqa: ANN001, ANN202
    sub = services.submission_create(
        benchmark=benchmark, owner=helpers.owner(), file=ContentFile(helpers.jsonl(lines), name="p.jsonl"),
        model_name=name, is_public=True, enforce_limits=False, enqueue=False,
        price_input_per_mtok=1.0, price_output_per_mtok=4.0)
    sub = pipeline.submission_process_sync(submission=sub)
    assert sub.status == "done", sub.failure_reason
    helpers.refreshed(benchmark)
    return sub


def _cells(html: str, row_attrs: str) -> list[str]:
    row = re.search(rf"<tr[^>]*{row_attrs}[^>]*>(.*?)</tr>", html, re.S)
    assert row, row_attrs
    return [re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", c)).strip()
            for c in re.findall(r"<td[^>]*>(.*?)</td>", row.group(1), re.S)]


def test_missing_predictions_count_wrong_in_the_domain_table(client, tmp_path) -> None:
    """Bug: missing predictions skipped in the domain table (they count as wrong)."""
    benchmark = helpers.make_benchmark(tmp_path / "bench")
    right = [{"sample_id": uid, "mode": "text", "answer": helpers.answer_of(uid)} for uid in ("s1", "s2", "s5")]
    sub = _submit_lines(benchmark, "Sparse", right)  # six of the eight scored samples have no line
    html = client.get("/b/hand/domains/").content.decode()
    cells = _cells(html, f'data-key="s{sub.pk}" data-mode="text"')[1:]  # after the mode's name
    figures = [c.split()[0] for c in cells]  # the figure, before its interval
    slugs = [slug for slug, _ in selectors.domains_of(benchmark)]
    by_domain = dict(zip(slugs, zip(figures[0::2], figures[1::2])))
    # real_world: w/o enh. = s2, s4 -> 1 of 2; All = s1..s4 -> 2 of 4. ocr: w/o enh. = s5, s6, s8 -> 1 of 3;
    # All = s5..s8 -> 1 of 4. Overall: w/o enh. 2 of 5, All 3 of 8. Skipping the missing lines would
    # read 100.0 everywhere.
    assert by_domain["real_world"] == ("50.0", "50.0")
    assert by_domain["ocr"] == ("33.3", "25.0")
    assert by_domain["math"] == ("–", "–")  # only the aux sample: nothing scored
    assert figures[-2:] == ["40.0", "37.5"]


def test_cost_tab_frontier_and_strongest_baseline(client, tmp_path) -> None:
    """Bugs: a frontier that keeps a dearer point of equal accuracy; the Strongest tie-break reversed."""
    benchmark = helpers.make_benchmark(tmp_path / "bench")
    # Same adaptive accuracy (4 of 8); Baker costs four times what Able does; Carol is cheapest, 2 of 8.
    baker = helpers.submit(benchmark, helpers.ModelSpec("Baker", {"adaptive": ("s1", "s2", "s3", "s4")},
                                                        prices=(4.0, 16.0)))
    able = helpers.submit(benchmark, helpers.ModelSpec("Able", {"adaptive": ("s5", "s6", "s7", "s8")},
                                                       prices=(1.0, 4.0)))
    carol = helpers.submit(benchmark, helpers.ModelSpec("Carol", {"adaptive": ("s1", "s5")}, prices=(0.1, 0.4)))
    html = client.get("/b/hand/cost/?mode=adaptive&unit=usd").content.decode()
    frontier = {sub.model_name: "on the frontier" in " ".join(_cells(html, f'data-submission="{sub.pk}"'))
                for sub in (able, baker, carol)}
    assert frontier == {"Able": True, "Baker": False, "Carol": True}
    chart = json.loads(re.search(r'id="pareto-chart-data"[^>]*>(.*?)</script>', html, re.S).group(1))
    line = next(t for t in chart["data"] if t["meta"]["role"] == "frontier")
    assert line["text"] == ["Carol", "Able"]
    baselines = re.findall(r'<tr data-kind="(\w+)"><th scope="row">([^<]+)</th><td class="num">([\d.]+)</td>', html)
    # Strongest: Able and Baker tie at 50.0 %; the tie goes to the first name in sorted order.
    # Oracle: right on s1-s8 by picking the cheapest right model per sample: 100.0 %.
    assert baselines == [("Oracle", "Oracle", "100.0"), ("Strongest", "Strongest (Able)", "50.0"),
                         ("Cheapest", "Cheapest (Carol)", "25.0")]
