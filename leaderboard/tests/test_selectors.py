"""Every tab's numbers against the scoring library, on the hand-made benchmark of helpers.py."""

from __future__ import annotations

import pytest

from evaluation.metrics import Point, mcnemar_exact, pareto_frontier, rank_score, routing_baselines
from evaluation.metrics.cost import cost_bounds
from leaderboard import board, model_page, selectors
from leaderboard.pareto import pareto_view
from leaderboard.tests import helpers

pytestmark = pytest.mark.django_db


def _rows(b) -> dict[str, board.Row]:
    return {r.model_name: r for r in selectors.board_rows(b.benchmark)}


def test_overview_shows_only_public_finished_rows(hand) -> None:
    assert set(_rows(hand)) == {"Alpha", "Beta", "Gamma"}


@pytest.mark.parametrize("spec", [helpers.ALPHA, helpers.BETA, helpers.GAMMA], ids=lambda s: s.name)
def test_overview_figures_are_the_librarys(hand, spec) -> None:
    row = _rows(hand)[spec.name]
    report = helpers.library_report(hand.benchmark, spec)
    for mode in ("text", "adaptive", "oracle"):
        fig = getattr(row, mode)
        if mode not in report.modes:
            assert fig.value is None
            continue
        acc = report.modes[mode].accuracy.overall
        assert fig.value == pytest.approx(acc.percent)
        assert (fig.lo, fig.hi) == pytest.approx((acc.interval.low * 100, acc.interval.high * 100))
    if report.mode_selection is None:
        assert row.mcc.value is None
    else:
        ms = report.mode_selection
        assert (row.mcc.value, row.mcc.lo, row.mcc.hi) == pytest.approx((ms.mcc, ms.interval.low, ms.interval.high))
        process = report.modes["adaptive"].process
        assert row.kcov.value == pytest.approx(process.kcov.value * 100)
        kiv = process.kcov.interval
        assert (row.kcov.lo, row.kcov.hi) == pytest.approx((kiv.low * 100, kiv.high * 100))
        assert row.kcov.lo <= row.kcov.value <= row.kcov.hi and row.kcov.n == process.kcov.n
        assert row.tool_eff.value == pytest.approx(process.tool_eff.value * 100)
    head = report.modes["adaptive" if "adaptive" in report.modes else "text"]
    assert row.tokens == pytest.approx(head.process.mean_tokens.value)
    assert row.cost == (pytest.approx(head.cost.mean_cost_usd.value) if spec.prices else None)


def test_rank_score_uses_the_priced_rows_bounds(hand) -> None:
    rows = _rows(hand)
    bounds = cost_bounds([rows["Alpha"].cost, rows["Beta"].cost])
    for name in ("Alpha", "Beta"):
        r = rows[name]
        assert r.rank_score == pytest.approx(100 * rank_score(r.adaptive.value / 100, r.cost, *bounds))
    assert rows["Gamma"].rank_score is None  # unpriced


def test_sorting_changes_the_order_and_keeps_missing_values_last(hand) -> None:
    rows = selectors.board_rows(hand.benchmark)
    by_text_desc = [r.model_name for r in board_sort(rows, "text", True)]
    by_text_asc = [r.model_name for r in board_sort(rows, "text", False)]
    assert by_text_desc == ["Gamma", "Beta", "Alpha"]  # 4/8, 3/8 (Beta), 2/8
    assert by_text_asc == ["Alpha", "Beta", "Gamma"]
    assert [r.model_name for r in board_sort(rows, "oracle", False)][-1] in ("Beta", "Gamma")
    assert [r.model_name for r in board_sort(rows, "oracle", True)][0] == "Alpha"


def board_sort(rows, key, desc):  # noqa: ANN001, ANN201
    return board.sort_rows(rows, key, desc)


def test_filters_by_weights_and_search(hand) -> None:
    rows = selectors.board_rows(hand.benchmark)
    assert [r.model_name for r in board.filter_rows(rows, board.Query(weights="open"))] == ["Alpha"]
    assert [r.model_name for r in board.filter_rows(rows, board.Query(q="beta lab"))] == ["Beta"]


def test_neighbours_are_tested_with_mcnemar_on_the_same_samples(hand) -> None:
    page = selectors.overview(hand.benchmark, board.Query(sort="text"))
    names = [r.model_name for r in page.rows]
    assert names == ["Gamma", "Beta", "Alpha"]
    reports = {s.name: helpers.library_report(hand.benchmark, s) for s in (helpers.BETA, helpers.GAMMA)}

    def vector(report):  # noqa: ANN001, ANN202
        by_uid = {r.sample_id: r.correct for r in report.records if r.mode == "text"}
        return [by_uid[u] for u in helpers.UIDS if u != "s9"]  # non-aux samples, in primary-key order

    expected = mcnemar_exact(vector(reports["Gamma"]), vector(reports["Beta"]))
    assert page.rows[0].note == ""
    assert f"p = {expected.p_value:.2f}" in page.rows[1].note
    assert page.rows[1].significant is expected.significant is False
    assert "not significantly different" in page.rows[1].note


def test_domain_table_matches_hand_counts_and_the_library(hand) -> None:
    sources = selectors.tab_sources(hand.benchmark)
    domains, rows = selectors.domain_table(hand.benchmark, sources)
    slugs = [d for d, _ in domains]
    assert slugs[:2] == ["real_world", "ocr"]
    row = next(r for r in rows if r.source.model_name == "Alpha" and r.mode == "adaptive")
    cells = {(slug, kind): row.cells[2 * i + j].fig.value for i, slug in enumerate([*slugs, "overall"])
             for j, kind in enumerate(("wo_enh", "all"))}
    # Alpha adaptive is right on s1 s2 s3 s5 s6 s8. Real world: s1 s3 need recovery; s2 s4 do not.
    assert cells["real_world", "wo_enh"] == pytest.approx(50.0)  # s2 right, s4 wrong
    assert cells["real_world", "all"] == pytest.approx(75.0)
    assert cells["ocr", "wo_enh"] == pytest.approx(100.0)  # s5 s6 s8 right; s7 needs recovery
    report = helpers.library_report(hand.benchmark, helpers.ALPHA).modes["adaptive"].accuracy
    for slug in ("real_world", "ocr"):
        assert cells[slug, "all"] == pytest.approx(report.by_domain[slug].percent)
    assert cells["overall", "wo_enh"] == pytest.approx(report.wo_enh.percent)
    assert cells["overall", "all"] == pytest.approx(report.all.percent)
    places = {r.source.model_name: (r.cells[0].place, r.cells[3].place) for r in rows if r.mode == "adaptive"}
    assert places == {"Alpha": (1, 1), "Beta": (1, 2)}  # real-world w/o enh. ties at 50 %; OCR All 75 % vs 50 %
    aux = {src.model_name: figs for src, figs in selectors.aux_table(sources)}
    assert aux["Alpha"][0].value == pytest.approx(report_aux(hand, helpers.ALPHA, "text"))


def report_aux(b, spec, mode):  # noqa: ANN001, ANN201
    return helpers.library_report(b.benchmark, spec).modes[mode].accuracy.aux_line.percent


def test_mode_selection_rows_are_the_librarys_confusion(hand) -> None:
    rows = {r.source.model_name: r for r in selectors.mode_selection(selectors.tab_sources(hand.benchmark))}
    assert set(rows) == {"Alpha", "Beta"}  # Gamma has no adaptive run
    for spec in (helpers.ALPHA, helpers.BETA):
        ms = helpers.library_report(hand.benchmark, spec).mode_selection
        r = rows[spec.name]
        assert (r.tp, r.fp, r.tn, r.fn) == (ms.tp, ms.fp, ms.tn, ms.fn)
        assert r.mcc.value == pytest.approx(ms.mcc)
    # Alpha: text wrong on s1 s3 s4 s6 s7 s8, tools on s1 s3 s6 s7 s8 -> TP 5, FN 1 (s4); text right on s2 s5, no tools -> TN 2.
    assert (rows["Alpha"].tp, rows["Alpha"].fn, rows["Alpha"].tn, rows["Alpha"].fp) == (5, 1, 2, 0)


def test_process_and_toolchain_tables_are_the_librarys(hand) -> None:
    sources = selectors.tab_sources(hand.benchmark)
    report = helpers.library_report(hand.benchmark, helpers.ALPHA).modes["adaptive"]
    process = next(r for r in selectors.process_table(sources) if r.source.model_name == "Alpha")
    keys = [k for _, k, _, _ in selectors.PROCESS_COLUMNS]
    kcov = process.cells[keys.index("kcov")].fig
    assert kcov.value == pytest.approx(report.process.kcov.value * 100)
    assert (kcov.lo, kcov.hi) == pytest.approx((report.process.kcov.interval.low * 100,
                                                 report.process.kcov.interval.high * 100))
    grounding = process.cells[keys.index("grounding_iou")].fig  # continuous: its n, no interval
    assert grounding.lo is None and grounding.n == report.process.grounding_iou.n
    assert process.cells[keys.index("mean_calls")].fig.value == pytest.approx(report.process.mean_calls.value)
    assert process.cells[keys.index("tool_eff")].fig.value == pytest.approx(report.process.tool_eff.value * 100)
    chain = next(r for r in selectors.toolchain_table(sources) if r.source.model_name == "Alpha" and r.mode == "adaptive")
    tkeys = [k for _, k, _, _ in selectors.TOOLCHAIN_COLUMNS]
    assert chain.cells[tkeys.index("tcr")].fig.value == pytest.approx(report.toolchain.tcr.value * 100)
    assert chain.cells[tkeys.index("mae_total")].fig.value == pytest.approx(report.toolchain.mae_total.value)
    f1 = chain.cells[tkeys.index("toolset_f1")].fig
    assert (f1.lo, f1.hi) == pytest.approx((report.toolchain.toolset_f1.interval.low,
                                             report.toolchain.toolset_f1.interval.high))
    assert chain.cells[tkeys.index("toolset_f1")].fig.value == pytest.approx(report.toolchain.toolset_f1.value)


def test_pareto_points_frontier_and_baselines_are_the_librarys(hand) -> None:
    view = pareto_view(selectors.tab_sources(hand.benchmark), "adaptive", "usd")
    reports = {s.name: helpers.library_report(hand.benchmark, s) for s in (helpers.ALPHA, helpers.BETA)}
    points = [Point(n, r.modes["adaptive"].accuracy.overall.value, r.modes["adaptive"].cost.mean_cost_usd.value)
              for n, r in reports.items()]
    assert {(p["name"], round(p["accuracy"], 6)) for p in view.points} == {
        (p.name, round(100 * p.accuracy, 6)) for p in points}
    assert [f["name"] for f in view.frontier] == [p.name for p in pareto_frontier(points)]
    assert view.unplotted == []  # Gamma has no adaptive run at all, so it is not a candidate

    def vectors(report):  # noqa: ANN001, ANN202
        recs = {r.sample_id: r for r in report.records if r.mode == "adaptive"}
        uids = [u for u in helpers.UIDS if u != "s9"]
        return [recs[u].correct for u in uids], [recs[u].cost_usd for u in uids]

    correct = {n: vectors(r)[0] for n, r in reports.items()}
    costs = {n: vectors(r)[1] for n, r in reports.items()}
    expected = routing_baselines(correct, costs)
    got = {b["kind"]: b for b in view.baselines}
    for kind, p in expected.items():
        assert got[kind]["accuracy"] == pytest.approx(100 * p.accuracy)
        assert got[kind]["cost"] == pytest.approx(p.cost)
    roles = [t["meta"]["role"] for t in view.figure["data"]]
    assert roles.count("frontier") == 1 and "baselines" in roles
    assert view.figure["layout"]["xaxis"]["type"] == "log"


def test_pareto_in_tokens_uses_mean_tokens(hand) -> None:
    view = pareto_view(selectors.tab_sources(hand.benchmark), "text", "tokens")
    gamma = next(p for p in view.points if p["name"] == "Gamma")  # unpriced, but it has tokens
    report = helpers.library_report(hand.benchmark, helpers.GAMMA).modes["text"]
    assert gamma["cost"] == pytest.approx(report.process.mean_tokens.value)


def test_error_breakdown_in_adaptmmbench_terms(hand) -> None:
    alpha = model_page.error_breakdown(hand.alpha)
    assert (alpha.wrong, alpha.total) == (2, 8)
    assert alpha.counts == {"mode_selection": 1, "wrong_region": 1}  # s4: no tools though text wrong; s7: bad zoom
    beta = model_page.error_breakdown(hand.beta)
    assert beta.counts == {"mode_selection": 1, "beyond": 4}  # s1: tools though text right; s3 s4 s7 s8 wrong in both
    assert model_page.error_breakdown(hand.gamma) is None  # text only


def test_compare_uses_the_librarys_paired_tests(hand) -> None:
    out = model_page.compare(hand.benchmark, hand.alpha, hand.beta)
    modes = {t.mode: t for t in out["tests"]}
    assert set(modes) == {"text", "adaptive"}
    ra, rb = (helpers.library_report(hand.benchmark, s) for s in (helpers.ALPHA, helpers.BETA))
    uids = [u for u in helpers.UIDS if u != "s9"]

    def vec(report, mode):  # noqa: ANN001, ANN202
        recs = {r.sample_id: r.correct for r in report.records if r.mode == mode}
        return [recs[u] for u in uids]

    expected = mcnemar_exact(vec(ra, "adaptive"), vec(rb, "adaptive"))
    assert modes["adaptive"].p_value == pytest.approx(expected.p_value)
    assert modes["adaptive"].discordant == expected.discordant
    assert out["mcc_test"] is not None and out["diff_mode"] == "adaptive"
    assert {d["domain"] for d in out["diffs"]} >= {"Real-world", "OCR"}


def test_leaders_are_the_best_headline_accuracies(hand) -> None:
    assert [r.model_name for r in selectors.leaders(hand.benchmark)] == ["Alpha", "Gamma", "Beta"]
