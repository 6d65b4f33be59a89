"""Undecided rows on the board's own tables (metrics.md section 13; leaderboard.services.entry_fields stores them
as ``?``, leaderboard.figures.cell_fig reads a per-domain cell): neither right nor wrong in the Accuracy by domain
tab, the Cost & Pareto tab, the compare page's tests and "What flipped", the mode-selection ranks, the model page's
error breakdown and sample list, as the overview's accuracy already is.

MMReason's rules decide a reply only by exact match without a judge: under the offline judge a right answer is
right, every other reply undecided (a missing line is still wrong).
"""

from __future__ import annotations

import json
import re

import pytest

from annotation.models import Benchmark
from leaderboard import board, selectors
from leaderboard.models import BoardEntry
from leaderboard.tests import helpers

pytestmark = pytest.mark.django_db

# Right on every sample in text and adaptive: nothing is left to a judge.
DELTA = helpers.ModelSpec("Delta", {"text": helpers.UIDS, "adaptive": helpers.UIDS}, tools=("s1", "s3"),
                          prices=(0.5, 2.0))
# Text right on s5 alone: the real-world domain has no decided row at all.
EPSILON = helpers.ModelSpec("Epsilon", {"text": ("s5",)}, prices=(0.2, 0.8))


@pytest.fixture
def judged_board(tmp_path):  # noqa: ANN201
    benchmark = helpers.make_benchmark(tmp_path / "bench")
    Benchmark.objects.filter(pk=benchmark.pk).update(scoring="mmreason")
    benchmark.refresh_from_db()
    subs = {spec.name: helpers.submit(benchmark, spec) for spec in (helpers.ALPHA, DELTA, EPSILON)}
    return benchmark, subs


def _cells(html: str, row_attrs: str) -> list[str]:
    row = re.search(rf"<tr[^>]*{row_attrs}[^>]*>(.*?)</tr>", html, re.S)
    assert row, row_attrs
    return [re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", c)).strip()
            for c in re.findall(r"<td[^>]*>(.*?)</td>", row.group(1), re.S)]


def _by_domain(benchmark: Benchmark, cells: list[str]) -> dict[str, tuple[str, str]]:
    slugs = [slug for slug, _ in selectors.domains_of(benchmark)] + ["overall"]
    return dict(zip(slugs, zip(cells[0::2], cells[1::2])))


def test_the_domain_tab_reads_a_cell_with_undecided_rows_as_not_available_with_the_decided_share(
        client, judged_board) -> None:
    benchmark, subs = judged_board
    html = client.get("/b/hand/domains/").content.decode()
    alpha = _by_domain(benchmark, _cells(html, f'data-key="s{subs["Alpha"].pk}" data-mode="text"')[1:])
    # Alpha's text: right on s2 and s5, every other reply undecided. real_world: w/o enh. = s2, s4; All = s1..s4.
    # Counted wrong they read 50.0 and 25.0 (the bug); over the decided rows alone, 100.0 with nothing said.
    na = "not available: "
    assert alpha["real_world"] == (na + "1 of 2 rows need an LLM judge; 1 right of the 1 decided (100.0%)",
                                   na + "3 of 4 rows need an LLM judge; 1 right of the 1 decided (100.0%)")
    assert alpha["ocr"] == (na + "2 of 3 rows need an LLM judge; 1 right of the 1 decided (100.0%)",
                            na + "3 of 4 rows need an LLM judge; 1 right of the 1 decided (100.0%)")
    # the overall columns say the same as the overview, from the library's Rate
    assert alpha["overall"][1] == na + "6 of 8 rows need an LLM judge; 2 right of the 2 decided (100.0%)"
    epsilon = _by_domain(benchmark, _cells(html, f'data-key="s{subs["Epsilon"].pk}" data-mode="text"')[1:])
    assert epsilon["real_world"][1] == na + "4 of 4 rows need an LLM judge; none decided"
    delta = _by_domain(benchmark, _cells(html, f'data-key="s{subs["Delta"].pk}" data-mode="text"')[1:])
    assert delta["real_world"][1].startswith("100.0") and delta["ocr"][0].startswith("100.0")
    # the board's marks go to figures alone: Delta's 100.0 is the best, a "not available" cell is never marked
    row = re.search(rf'<tr[^>]*data-key="s{subs["Alpha"].pk}" data-mode="text"[^>]*>(.*?)</tr>', html, re.S)
    assert row and "place best" not in row.group(1)


def test_mode_selection_ranks_leave_an_undecided_text_answer_out_as_the_mcc_does(judged_board) -> None:
    """The MCC's rank intervals and neighbour tests are drawn from the entries' cells: the same samples as the
    MCC itself (aggregate.mode_selection_from_state), not the undecided text answers counted wrong."""
    _, subs = judged_board
    for sub in subs.values():
        entry = BoardEntry.objects.get(submission=sub)
        cells = board.mcc_cells(board.Vectors(correct=entry.correct, invoked=entry.invoked))
        ms = sub.results.get("mode_selection")
        if not ms:
            continue
        counts = [sum(1 for c in cells if c == k) for k in range(4)]
        assert counts == [ms["tp"], ms["fp"], ms["tn"], ms["fn"]], sub.model_name
    alpha = BoardEntry.objects.get(submission=subs["Alpha"])
    assert alpha.correct["text"].count("?") == 6 and "0" not in alpha.correct["text"]


def test_compare_and_what_flipped_count_no_undecided_row_as_a_flip(client, judged_board) -> None:
    _, subs = judged_board
    alpha, delta = subs["Alpha"], subs["Delta"]
    client.force_login(helpers.owner())  # staff: every split
    html = client.get(f"/b/hand/compare/?a={alpha.pk}&b={delta.pk}&mode=text").content.decode()
    text = _cells(html, 'data-mode="text"')
    # Alpha's text accuracy is not available: no McNemar on it (counted wrong, 6 discordant samples, p = 0.031)
    assert text[0].startswith("not available: 6 of 8 rows need an LLM judge")
    assert "not tested: rows need an LLM judge" in text and text[-1] == "not tested"
    flipped = html[html.index('id="flipped"'):]
    assert "6 samples left out: A's or B's answer is undecided" in flipped
    assert 'id="flipped-table"' not in flipped and "No sample flipped" in flipped


def test_the_pareto_tab_says_why_a_row_is_not_plotted(client, judged_board) -> None:
    _, subs = judged_board
    html = client.get("/b/hand/cost/?mode=adaptive&unit=usd").content.decode()
    note = re.sub(r"\s+", " ", re.search(r'id="pareto-undecided">(.*?)</p>', html, re.S).group(1))
    assert note == ("Not plotted (accuracy not available): Alpha: 2 of 8 rows need an LLM judge; "
                    "6 right of the 6 decided (100.0%).")
    chart = json.loads(re.search(r'id="pareto-chart-data"[^>]*>(.*?)</script>', html, re.S).group(1))
    plotted = [name for t in chart["data"] if t["meta"]["role"] == "points" for name in t["text"]]
    assert "Alpha" not in plotted and "Delta" in plotted


def test_the_model_page_keeps_undecided_answers_apart_from_the_wrong_ones(client, judged_board) -> None:
    benchmark, subs = judged_board
    alpha = subs["Alpha"]
    html = client.get(f"/b/hand/m/{alpha.pk}/").content.decode()
    # adaptive: right on s1, s2, s3, s5, s6, s8; s4 and s7 undecided, none wrong
    caption = re.sub(r"\s+", " ", re.search(r'id="error-breakdown">\s*<caption>(.*?)</caption>', html, re.S).group(1))
    assert caption.startswith("0 wrong of 8 adaptive predictions")
    assert "2 undecided, neither right nor wrong: they need an LLM judge." in caption
    # the dev samples' verdicts: s8's text reply is undecided, not wrong
    item = re.search(r'data-uid="s8">s8</a>(.*?)</li>', html, re.S).group(1)
    assert '<span class="small verdict-undecided" title="undecided: needs an LLM judge">text</span>' in item
    assert "verdict-bad" not in item
    # the Tools section's cells leave a sample out when either answer is undecided, as its figures do: s1 and s8
    # (text undecided, adaptive right with a valid call) are in no cell, not "text wrong, adaptive right"
    listed = client.get(f"/b/hand/m/{alpha.pk}/?tools=wr-called").content.decode()
    assert 'data-uid="s1"' not in listed and 'data-uid="s8"' not in listed
    assert "No dev-split predictions." in listed
    # the sample's own page: s8's text verdict in words, adaptive right
    sample = client.get(f"/b/hand/m/{alpha.pk}/s/s8/").content.decode()
    text = re.search(r'data-mode="text">\s*<h3>(.*?)</h3>', sample, re.S).group(1)
    assert '<span class="verdict-undecided">undecided: needs an LLM judge</span>' in text and "wrong" not in text
    # and the submission's own page, to its owner: the row reads undecided, not "no"
    client.force_login(helpers.owner())
    own = client.get(f"/submissions/{alpha.pk}/").content.decode()
    rows = re.findall(r"<tr><td>(s\d)</td><td class=\"verdict ([a-z]+)\"[^>]*>([a-z]+)</td><td>text</td>", own)
    assert ("s8", "undecided", "undecided") in rows and ("s2", "yes", "yes") in rows
    assert not [r for r in rows if r[2] == "no"]  # nothing under MMReason's rules is wrong without a judge


def test_the_exports_rank_no_accuracy_with_undecided_rows(client, judged_board) -> None:
    """leaderboard.json: a row whose accuracy is not available has no rank by it, and its reason beside it."""
    _, subs = judged_board
    rows = {r["model"]: r for r in client.get("/b/hand/leaderboard.json").json()["rows"]}
    assert rows["Alpha"]["text"]["value"] is None and rows["Alpha"]["ranks"]["text"] is None
    assert rows["Alpha"]["not_available"]["text_acc"].startswith("6 of 8 rows need an LLM judge")
    assert rows["Delta"]["ranks"]["text"]["rank"] == 1


def test_the_eee_export_leaves_undecided_instances_out_and_says_so(client, judged_board) -> None:
    """EEE's instance score is a number and is_correct a boolean: an undecided row exported as 0 / false would
    read wrong, so it is left out, counted in the aggregate (leaderboard/eee.py)."""
    import io
    import zipfile

    import jsonschema

    from leaderboard.tests.eee_schema import AGGREGATE, INSTANCE

    _, subs = judged_board
    alpha = subs["Alpha"]
    response = client.get(f"/b/hand/m/{alpha.pk}/eee.zip")
    assert response.status_code == 200
    with zipfile.ZipFile(io.BytesIO(response.content)) as archive:
        files = {name: archive.read(name) for name in archive.namelist()}
    aggregate = json.loads(next(v for k, v in files.items() if k.endswith(".json")))
    instances = [json.loads(x) for x in next(v for k, v in files.items() if k.endswith(".jsonl")).splitlines()]
    jsonschema.validate(aggregate, AGGREGATE)
    for item in instances:
        jsonschema.validate(item, INSTANCE)
    # the public gets the dev split; some of Alpha's rows there are undecided (text on s1 and s8, among others)
    from evaluation.models import PredictionResult
    undecided = PredictionResult.objects.filter(submission=alpha, decided_by="undecided", sample__split="dev")
    assert undecided.exists()
    exported = {(i["metadata"]["mode"], i["sample_id"]) for i in instances}
    assert not exported & {(r.mode, r.sample.uid) for r in undecided}
    assert all(i["evaluation"]["is_correct"] for i in instances)  # nothing under MMReason's rules is wrong here
    note = aggregate["source_metadata"]["additional_details"]["undecided_instances"]
    assert note == f"{undecided.count()} left out: their answers need an LLM judge (neither right nor wrong, and " \
                   "EEE's score takes a number)"
    # the accuracy not available on text is no item either (never a 0)
    ids = {r["evaluation_result_id"] for r in aggregate["evaluation_results"]}
    assert "text/accuracy" not in ids
