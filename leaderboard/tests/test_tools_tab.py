"""What the tools changed on every page and export (leaderboard.tools_tab; docs/metrics.md section 15), and MCC
"not available" where it is undefined, on the hand-made benchmark of ``helpers`` (8 samples, one aux-line).

By hand, text -> adaptive (T, A: right in text, adaptive; "called": a valid tool call):
- Alpha: s1, s3, s6, s8 wrong -> right with calls (solved by tools 4), s7 wrong in both with calls (called,
  nothing changed 1), s2 and s5 right in both without calls; tool contribution 4/8 = +50 pp, drift 0; oracle
  right everywhere, adaptive wrong on s4 and s7: oracle headroom 25 %; McNemar (4, 0): p = 2/16.
- Beta: s1 right -> wrong with a call (broken 1), s4 wrong in both with a call (1), s6 wrong -> right without a
  call (drift +1); contribution -12.5 pp, drift +12.5 pp, difference 0; no oracle lines: headroom not available.
- Gamma has text lines only: no row. Always calls a tool on every sample: MCC undefined (no sample without a
  call), not available with that reason on the board, the mode-selection tab, and the exports.
"""

from __future__ import annotations

import csv
import io
import re

import pytest
from django.core.management import call_command

from leaderboard.tests import helpers

pytestmark = pytest.mark.django_db
ALWAYS = helpers.ModelSpec("Always", {"text": ("s1", "s2"), "adaptive": ("s1", "s3")}, tools=helpers.UIDS)
UNDEFINED = "MCC is undefined: the model called a tool on every sample in adaptive mode"


@pytest.fixture(scope="module")
def built(django_db_setup, django_db_blocker, tmp_path_factory):  # noqa: ANN001, ANN201
    """Built once for the module (each test only reads it), flushed after it."""
    with django_db_blocker.unblock():
        benchmark = helpers.make_benchmark(tmp_path_factory.mktemp("tools") / "bench")
        subs = {spec.name: helpers.submit(benchmark, spec)
                for spec in (helpers.ALPHA, helpers.BETA, helpers.GAMMA, ALWAYS)}
        yield benchmark, subs
        call_command("flush", interactive=False, verbosity=0)


@pytest.fixture
def board(built, db):  # noqa: ANN001, ANN201
    return built


def _cells(html: str, pk: int) -> list[str]:
    row = re.search(rf'<tr [^>]*data-key="s{pk}"[^>]*>(.*?)</tr>', html, re.S)
    assert row is not None, f"no row for s{pk}"
    return [re.sub(r"<[^>]+>", "", c).replace("\u2060", "").strip()
            for c in re.findall(r"<td[^>]*>(.*?)</td>", row.group(1), re.S)]


def test_the_tab_shows_each_entry_with_both_modes_best_contribution_first(client, board) -> None:  # noqa: ANN001
    _, subs = board
    html = client.get("/b/hand/tools/").content.decode()
    keys = re.findall(r'<tr [^>]*data-key="(s\d+)" data-mode', html)
    assert keys == [f"s{subs['Alpha'].pk}", f"s{subs['Always'].pk}", f"s{subs['Beta'].pk}"]  # Gamma: text only
    alpha = _cells(html, subs["Alpha"].pk)
    # mode, text %, adaptive %, contribution, drift, solved, broken, unchanged, tool-only, headroom, shown
    assert alpha[0] == "Text → adaptive"
    assert alpha[1].startswith("25.00 [") and alpha[2].startswith("75.00 [")
    assert alpha[3].startswith("50.00 [") and alpha[4] == "0.00 [0.00, 0.00]"
    assert alpha[5:9] == ["4▲best", "0▲best", "1", "4▲best"]
    assert alpha[9].startswith("25.00 [") and alpha[10] == "–"  # no harness record in this file
    assert 'title="not available: the file does not record the images sent"' in html
    beta = _cells(html, subs["Beta"].pk)
    assert beta[3].startswith("-12.50 [") and beta[4].startswith("12.50 [") and beta[5:8] == ["0", "1△second best", "1"]
    assert beta[9] == "–" and 'title="not available: no oracle-mode predictions in this file"' in html
    board_html = client.get("/b/hand/").content.decode()
    assert 'href="/b/hand/tools/"' in board_html  # offered: a row has both modes


def test_the_page_reads_the_figures_its_refresh_drew(client, board, monkeypatch) -> None:  # noqa: ANN001
    """The refresh stores each row's figures with their intervals (wide_tabs); the page draws no bootstrap and shows
    what it shows when it draws them itself (as it does while the build is behind the results)."""
    from django.core.cache import cache

    from leaderboard import tools_tab, wide_tabs

    cache.clear()
    with monkeypatch.context() as m:
        m.setattr(wide_tabs, "_stored_figures", lambda benchmark, ids: None)
        drawn = client.get("/b/hand/tools/?sort=broken&desc=0", HTTP_HX_REQUEST="true").content.decode()
    cache.clear()

    def no_bootstrap(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise AssertionError("a page drew a bootstrap")

    monkeypatch.setattr(tools_tab, "group_figs", no_bootstrap)
    assert client.get("/b/hand/tools/?sort=broken&desc=0", HTTP_HX_REQUEST="true").content.decode() == drawn
    assert _cells(drawn, board[1]["Alpha"].pk)[3].startswith("50.00 [")  # Alpha's contribution, with its interval


def test_undefined_mcc_is_not_available_with_its_reason_everywhere(client, board) -> None:  # noqa: ANN001
    _, subs = board
    pk = subs["Always"].pk
    overview = client.get("/b/hand/").content.decode()
    row = re.search(rf'<tr [^>]*data-key="s{pk}">(.*?)</tr>', overview, re.S).group(1)
    assert f'title="not available: {UNDEFINED}"' in row and "0.00 [0.00, 0.00]" not in row
    tab = client.get("/b/hand/mode-selection/").content.decode()
    row = re.search(rf'<tr [^>]*data-key="s{pk}">(.*?)</tr>', tab, re.S).group(1)
    assert f'title="not available: {UNDEFINED}"' in row
    assert re.findall(r'data-key="(s\d+)"', tab)[-1] == f"s{pk}"  # out of the MCC ordering: last
    data = client.get("/b/hand/leaderboard.json").json()
    (mine,) = [r for r in data["rows"] if r["submission_id"] == pk]
    assert mine["mcc"]["value"] is None and mine["not_available"]["mcc"] == UNDEFINED
    assert mine["ranks"]["mcc"] is None
    model = client.get(f"/b/hand/m/{pk}/").content.decode()
    assert f'title="not available: {UNDEFINED}"' in model


def test_exports_and_api_carry_the_figures(client, board) -> None:  # noqa: ANN001
    _, subs = board
    data = client.get("/b/hand/leaderboard.json").json()
    rows = {r["submission_id"]: r for r in data["rows"] if r["source"] == "submission"}
    alpha = rows[subs["Alpha"].pk]["tools"]
    assert alpha["contribution"]["value"] == 50.0 and alpha["solved"]["value"] == 4
    assert alpha["shown"]["value"] is None and alpha["shown"]["reason"] == "the file does not record the images sent"
    assert rows[subs["Gamma"].pk]["tools"]["reason"] == "no adaptive-mode predictions in this file"
    assert client.get("/api/v1/benchmarks/hand/leaderboard/").json()["rows"] == data["rows"]
    table = list(csv.DictReader(io.StringIO(client.get("/b/hand/leaderboard.csv").content.decode())))
    (beta,) = [r for r in table if r["model"] == "Beta"]
    assert float(beta["tools_contribution"]) == -12.5 and beta["tools_broken"] == "1" and beta["tools_shown"] == ""


def test_the_model_page_has_the_figures_per_domain_and_a_2x2_that_filters_the_samples(client, board) -> None:  # noqa: ANN001
    benchmark, subs = board
    pk = subs["Alpha"].pk
    html = client.get(f"/b/hand/m/{pk}/").content.decode()
    table = re.search(r'id="model-tools">(.*?)</table>', html, re.S).group(1)
    heads = re.findall(r'<th scope="row">(.*?)</th>', table)
    assert heads[0] == "Overall" and len(heads) == 3  # and the two domains with samples
    two = re.search(r'id="tools-2x2">(.*?)</table>', html, re.S).group(1)
    assert "4 called a tool (solved by tools)" in two and "0 called a tool (broken by tools)" in two
    assert f'href="/b/hand/m/{pk}/?tools=wr-called#samples"' in two
    listed = client.get(f"/b/hand/m/{pk}/?tools=wr-called").content.decode()
    shown = re.findall(r'data-uid="(s\d)"', listed)
    assert shown == ["s1", "s8"]  # s1, s3, s6, s8 solved by tools; s3 and s6 are test-split
    assert "text wrong, adaptive right, a valid tool call" in listed


def test_the_compare_page_tests_tool_contribution_of_a_against_b(client, board) -> None:  # noqa: ANN001
    _, subs = board
    html = client.get(f"/b/hand/compare/?a={subs['Alpha'].pk}&b={subs['Beta'].pk}").content.decode()
    row = re.search(r'<tr data-mode="tools">(.*?)</tr>', html, re.S).group(1)
    cells = [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
    assert cells[2] == "62.50" and cells[3] == "paired bootstrap on 8 samples"
    assert '<tr data-mode="mcc">' in html  # both MCCs are defined: their paired test
    undefined = client.get(f"/b/hand/compare/?a={subs['Alpha'].pk}&b={subs['Always'].pk}").content.decode()
    assert '<tr data-mode="mcc">' not in undefined and '<tr data-mode="tools">' in undefined


def test_a_column_header_sorts_the_tab(client, board) -> None:  # noqa: ANN001
    _, subs = board
    html = client.get("/b/hand/tools/?sort=drift&desc=1").content.decode()
    keys = re.findall(r'<tr [^>]*data-key="(s\d+)" data-mode', html)
    assert keys == [f"s{subs['Beta'].pk}", f"s{subs['Alpha'].pk}", f"s{subs['Always'].pk}"]  # +12.5, 0, 0
    assert re.search(r'aria-sort="descending"><a href="/b/hand/tools/\?sort=drift&amp;desc=0"', html)
    html = client.get("/b/hand/tools/?sort=contribution&desc=0").content.decode()
    assert re.findall(r'<tr [^>]*data-key="(s\d+)" data-mode', html)[0] == f"s{subs['Beta'].pk}"  # lowest first
