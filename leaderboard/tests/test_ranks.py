"""Honest ranks on a hand-made board: the ranks, tie groups and rank intervals the pages and files
show are the library's (evaluation.metrics.ranks) on the models' per-sample results."""

from __future__ import annotations

import csv
import io
import re

import pytest

from evaluation.metrics import neighbour_mcnemar, rank_intervals, shared_ranks
from leaderboard import board
from leaderboard.figures import p_text
from leaderboard.templatetags.leaderboard_tags import pvalue
from leaderboard.tests import helpers

pytestmark = pytest.mark.django_db

NON_AUX = [u for u in helpers.UIDS if not helpers.SAMPLES[u][4]]  # the vectors' samples, in order
# Adaptive accuracy 8/8, 7/8, 1/8 and 0/8 (in that board order): Top and Next do not differ (McNemar
# p = 1), Next and Low do (6 discordant pairs, all one way: p = 2/64), Low and Last do not.
SPECS = {
    "Top": NON_AUX, "Next": NON_AUX[:7], "Low": NON_AUX[6:7], "Last": (),
}


@pytest.fixture
def ranked(db, tmp_path):  # noqa: ANN201
    benchmark = helpers.make_benchmark(tmp_path / "bench")
    # Tools on s1 and s2: a defined MCC (a model that never calls a tool has none, and leaves its ordering).
    subs = {name: helpers.submit(benchmark, helpers.ModelSpec(name, {"adaptive": tuple(right), "text": ("s1",)},
                                                              tools=("s1", "s2")))
            for name, right in SPECS.items()}
    return benchmark, subs


def _library(order: list[str]) -> tuple[list[int], list[tuple[int, int]], list]:
    vectors = [[u in SPECS[name] for u in NON_AUX] for name in order]
    tests = neighbour_mcnemar(vectors)
    shared = shared_ranks([t.significant if t else None for t in tests])
    return shared, [(r.low, r.high) for r in rank_intervals(vectors)], tests


def test_the_overview_shows_the_library_s_tie_groups_and_rank_intervals(client, ranked) -> None:
    _, subs = ranked
    html = client.get("/b/hand/").content.decode()
    cells = re.findall(r'data-key="s(\d+)">\s*<td class="num rank" data-rank="(\d+)" data-rank-low="(\d+)" '
                       r'data-rank-high="(\d+)">', html)
    by_pk = {s.pk: name for name, s in subs.items()}
    order = [by_pk[int(pk)] for pk, *_ in cells]
    assert order == ["Top", "Next", "Low", "Last"]
    shared, intervals, tests = _library(order)
    assert shared == [1, 1, 3, 3]  # the hand-made groups: {Top, Next}, {Low, Last}
    assert [int(r) for _, r, _, _ in cells] == shared
    assert [(int(lo), int(hi)) for _, _, lo, hi in cells] == intervals
    assert f"differs significantly from the row above (exact McNemar, {p_text(tests[2].p_value)})" in html
    assert "How to read the ranks" in html


def test_a_filtered_view_keeps_the_whole_board_ranks(client, ranked) -> None:
    html = client.get("/b/hand/", {"q": "Next"}).content.decode()
    assert re.findall(r'<td class="num rank" data-rank="(\d+)"', html) == ["1"]  # tied with Top, shown or not


def test_the_model_page_and_the_files_carry_the_same_ranks(client, ranked) -> None:
    benchmark, subs = ranked
    shared, intervals, tests = _library(["Top", "Next", "Low", "Last"])
    html = client.get(f"/b/hand/m/{subs['Low'].pk}/").content.decode()
    row = re.search(r'<tr data-metric="adaptive">.*?</tr>', html, re.S).group(0)
    assert f'data-rank="{shared[2]}"' in row and f'data-rank-low="{intervals[2][0]}"' in row
    assert f'data-rank-high="{intervals[2][1]}"' in row and "differs significantly" in row

    data = client.get("/api/v1/benchmarks/hand/leaderboard/").json()
    got = {r["model"]: r["ranks"]["adaptive"] for r in data["rows"]}
    for i, name in enumerate(["Top", "Next", "Low", "Last"]):
        assert (got[name]["rank"], got[name]["low"], got[name]["high"]) == (shared[i], *intervals[i])
        assert got[name]["p_vs_above"] == (tests[i].p_value if tests[i] else None)
    rows = list(csv.DictReader(io.StringIO(client.get("/b/hand/leaderboard.csv").content.decode())))
    assert [(r["model"], r["tied_rank"], r["rank_low"], r["rank_high"]) for r in rows] == [
        (name, str(shared[i]), str(intervals[i][0]), str(intervals[i][1]))
        for i, name in enumerate(["Top", "Next", "Low", "Last"])]


def test_p_values_below_a_thousandth_never_read_zero() -> None:
    assert p_text(0.0004) == "p < 0.001" and p_text(1e-12) == "p < 0.001"
    assert p_text(0.0312) == "p = 0.031" and pvalue(0.0) == "p < 0.001" and pvalue(None) == "–"
    note, sig = board.neighbour_note("adaptive", 2.0 ** -40, True)
    assert sig and "p < 0.001" in note and "0.000" not in note


def test_stored_tests_kept_across_a_finish_equal_tests_run_afresh(ranked) -> None:
    from leaderboard import selectors
    from leaderboard.models import EntryRank

    benchmark, _ = ranked
    selectors.board_rows(benchmark)  # built
    helpers.submit(benchmark, helpers.ModelSpec("Late", {"adaptive": NON_AUX[:4], "text": NON_AUX[2:5]},
                                                tools=NON_AUX[:3]))
    selectors.board_rows(benchmark)  # rebuilt: unchanged pairs keep their MCC test, new pairs are run
    vectors = selectors.board_vectors(list(EntryRank.objects.values_list("submission_id", flat=True)))
    checked = 0
    for r in EntryRank.objects.filter(benchmark=benchmark, above__isnull=False):
        test = board.paired_test(r.metric, vectors[r.above], vectors[r.submission_id])
        assert (r.p_above, r.significant_above) == ((test.p_value, test.significant) if test else (None, None))
        checked += 1
    assert checked == 3 * 4  # five entries; text, adaptive and MCC orderings (no oracle predictions here)
