"""evaluation/metrics/tool_effect.py: what the tools changed (metrics.md section 15), on a benchmark written for
the test, every figure computed by hand below."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from evaluation.judges import OfflineJudge
from evaluation.metrics import parse_prediction, score_submission
from evaluation.metrics.tool_effect import (
    NO_ADAPTIVE,
    NO_CALLS,
    NO_IMAGES_SENT,
    NO_ORACLE,
    NO_VALID_CALLS,
    COUNTS,
    contribution_values,
    group_from_counts,
    outputs_shown,
    paired_difference,
    shown_rate,
)
from evaluation.metrics.types import ToolEffect
from evaluation.reports import report_to_json

# Ten samples in two domains, and one aux-line sample (left out, as in every overall figure).
#   uid  domain cat  text      adaptive                   blind  oracle   -> what the tools changed
#   s1   X      c1   right     right, valid call                  right    tools called, nothing changed
#   s2   X      c1   wrong     right, valid call          wrong           solved by tools, tool-only
#   s3   X      c2   right     wrong, valid call                  right    broken by tools, headroom
#   s4   X      c2   wrong     wrong, valid call                  right    tools called, nothing changed, headroom
#   s10  X      c2   wrong     right, valid call          (none)          solved by tools, tool-only
#   s5   Y      c3   wrong     right, no call                              drift up
#   s6   Y      c3   right     wrong, no call                     wrong    drift down
#   s7   Y      c3   right     (missing line: wrong)              right    drift down, headroom
#   s8   Y      c3   failure   right, valid call          right           solved by tools, not tool-only
#   s9   Y      c3   right     right, invalid call only                    no valid call: nothing
SAMPLES = [{"uid": u, "domain": d, "category": c, "answer": "cat"} for u, d, c in (
    ("s1", "X", "c1"), ("s2", "X", "c1"), ("s3", "X", "c2"), ("s4", "X", "c2"), ("s10", "X", "c2"),
    ("s5", "Y", "c3"), ("s6", "Y", "c3"), ("s7", "Y", "c3"), ("s8", "Y", "c3"), ("s9", "Y", "c3"))] + [
    {"uid": "aux", "domain": "X", "category": "c1", "answer": "cat", "aux_line": True}]
ZOOM = {"tool": {"name": "zoom_in", "args": {"bbox": [0, 0, 10, 10]}, "output": "img1"}}
BROKEN = {"tool": {"name": "zoom_in", "args": {"bbox": [0, 0, 10, 10]}, "error": "boom"}}


def _line(uid: str, mode: str, right: bool, *steps: dict, **extra: Any) -> dict[str, Any]:
    return {"sample_id": uid, "mode": mode, "answer": "cat" if right else "dog", "steps": list(steps), **extra}


def _run(shown: bool) -> dict[str, Any]:
    """A harness record: img1 was made; the model was sent it at the next turn, or sent nothing."""
    return {"images_sent": [["h0"], ["h1"] if shown else []], "tool_outputs": {"img1": "h1"}}


TEXT = {"s1": True, "s2": False, "s3": True, "s4": False, "s10": False, "s5": False, "s6": True, "s7": True,
        "s9": True, "aux": True}
ADAPTIVE = [
    _line("s1", "adaptive", True, ZOOM), _line("s2", "adaptive", True, ZOOM, run=_run(True)),
    _line("s3", "adaptive", False, ZOOM), _line("s4", "adaptive", False, ZOOM),
    _line("s10", "adaptive", True, ZOOM, run=_run(False)), _line("s5", "adaptive", True),
    _line("s6", "adaptive", False), _line("s8", "adaptive", True, ZOOM), _line("s9", "adaptive", True, BROKEN),
    _line("aux", "adaptive", False, ZOOM),
]
LINES = [
    *(_line(u, "text", r) for u, r in TEXT.items()),
    {"sample_id": "s8", "mode": "text", "answer": None, "failure": "provider_error", "failure_detail": "503"},
    *ADAPTIVE,
    _line("s2", "blind", False), _line("s8", "blind", True), _line("s1", "blind", True),
    *(_line(u, "oracle", r) for u, r in (("s1", True), ("s3", True), ("s4", True), ("s6", False), ("s7", True))),
]


def _effect(lines: list[dict[str, Any]]) -> ToolEffect:
    report = score_submission(SAMPLES, lines, judge=OfflineJudge())
    assert report.tool_effect is not None
    return report.tool_effect


@pytest.fixture(scope="module")
def effect() -> ToolEffect:
    return _effect(LINES)


def test_counts_and_figures_equal_the_hand_computation(effect: ToolEffect) -> None:
    g = effect.overall
    assert effect.reason is None and g is not None
    assert g.n == 10 and (g.text_correct, g.adaptive_correct) == (5, 6)
    assert (g.solved, g.broken, g.unchanged, g.kept_right) == (3, 1, 2, 1)  # s1 right in both, s4 wrong in both
    assert (g.drift_up, g.drift_down) == (1, 2)
    assert g.contribution.value == pytest.approx(0.2) and g.contribution.n == 10
    assert g.drift.value == pytest.approx(-0.1) and g.difference.value == pytest.approx(0.1)
    assert (g.tool_only.count, g.tool_only.n) == (2, 3)  # s2 and s10; s8 was right blind
    assert (g.oracle_headroom.count, g.oracle_headroom.n) == (3, 10)  # s3, s4, s7
    assert g.p_value == pytest.approx(0.625) and not g.significant  # exact McNemar (3, 1): 2 * 5 / 16


def test_contribution_plus_drift_is_the_accuracy_difference_exactly(effect: ToolEffect) -> None:
    for g in [effect.overall, *effect.by_domain.values(), *effect.by_category.values()]:
        assert g is not None
        contribution = Fraction(g.solved - g.broken, g.n)
        drift = Fraction(g.drift_up - g.drift_down, g.n)
        assert contribution + drift == Fraction(g.adaptive_correct - g.text_correct, g.n)


def test_per_domain_and_category(effect: ToolEffect) -> None:
    x, y = effect.by_domain["X"], effect.by_domain["Y"]
    assert (x.n, x.solved, x.broken, x.unchanged, x.drift_up, x.drift_down) == (5, 2, 1, 2, 0, 0)
    assert x.contribution.value == pytest.approx(0.2) and x.drift.value == 0
    assert (y.n, y.solved, y.broken, y.unchanged, y.drift_up, y.drift_down) == (5, 1, 0, 0, 1, 2)
    assert y.contribution.value == pytest.approx(0.2) and y.drift.value == pytest.approx(-0.2)
    assert y.difference.value == 0
    assert sorted(effect.by_category) == ["c1", "c2", "c3"] and effect.by_category["c1"].solved == 1


def test_intervals_are_paired_bootstraps_that_hold_the_value(effect: ToolEffect) -> None:
    g = effect.overall
    assert g is not None
    for m in (g.contribution, g.drift, g.difference):
        assert m.interval is not None and m.value is not None
        assert m.interval.low <= m.value <= m.interval.high and m.interval.resamples == 1000


def test_tool_outputs_shown_from_the_run_record(effect: ToolEffect) -> None:
    assert (effect.shown.count, effect.shown.n) == (1, 2)  # s2's image was sent, s10's never
    assert outputs_shown([ZOOM], _run(False)) == (0, 1, ("img1",))
    assert outputs_shown([ZOOM], {"images_sent": [["h0"]]}) is None  # no record of what each call made


def test_not_available_cases() -> None:
    text_only = [line for line in LINES if line["mode"] == "text"]
    assert _effect(text_only).reason == NO_ADAPTIVE and _effect(text_only).overall is None
    no_calls = [{**line, "steps": []} for line in LINES]
    assert _effect(no_calls).reason == NO_CALLS
    only_broken = [{**line, "steps": [BROKEN]} if line["mode"] == "adaptive" else line for line in LINES]
    assert _effect(only_broken).reason == NO_VALID_CALLS
    no_oracle = _effect([line for line in LINES if line["mode"] != "oracle"])
    assert no_oracle.overall is not None and no_oracle.overall.oracle_headroom.reason == NO_ORACLE
    no_run = _effect([{k: v for k, v in line.items() if k != "run"} for line in LINES])
    assert no_run.shown.value is None and no_run.shown.reason == NO_IMAGES_SENT


def test_results_json_keeps_the_integers_and_gives_the_figures_back_bit_for_bit(effect: ToolEffect) -> None:
    stored = report_to_json(score_submission(SAMPLES, LINES, judge=OfflineJudge()))["tool_effect"]
    assert stored["overall"]["solved"] == 3 and set(stored["overall"]) == set(COUNTS)
    for got, want in [(stored["overall"], effect.overall), *((stored["by_domain"][k], g)
                                                              for k, g in effect.by_domain.items())]:
        assert group_from_counts(got, has_oracle=stored["has_oracle"]) == want
    assert shown_rate(stored["shown"]) == effect.shown
    text_only = report_to_json(score_submission(SAMPLES, [x for x in LINES if x["mode"] == "text"],
                                                judge=OfflineJudge()))
    assert text_only["tool_effect"]["reason"] == NO_ADAPTIVE and text_only["tool_effect"]["overall"] is None
    assert shown_rate(text_only["tool_effect"]["shown"]).reason == NO_IMAGES_SENT


def test_two_submissions_tool_contributions_are_compared_by_a_paired_bootstrap() -> None:
    a = contribution_values([False] * 40, [True] * 20 + [False] * 20, [True] * 40)  # tools solve half
    b = contribution_values([False] * 40, [False] * 40, [True] * 40)  # tools change nothing
    assert sum(a) == 20 and set(b) == {0}
    test = paired_difference(a, b)
    assert test.statistic == 0.5 and test.significant and test.interval is not None
    assert test.interval.low <= 0.5 <= test.interval.high
    same = paired_difference(b, b)
    assert same.statistic == 0 and same.p_value == 1.0 and not same.significant


def test_toolset_precision_leaves_out_a_prediction_that_predicted_no_tool() -> None:
    """Section 14: a precision with no predicted positive is undefined, not 0; recall still counts it."""
    chain = [{"tool": "zoom_in", "args": {"bbox": [0, 0, 10, 10]}}]
    samples = [{"uid": u, "answer": "cat", "toolchain": chain} for u in ("a", "b")]
    report = score_submission(samples, [_line("a", "adaptive", True, ZOOM), _line("b", "adaptive", True)],
                              judge=OfflineJudge())
    chain_report = report.modes["adaptive"].toolchain
    assert (chain_report.toolset_precision.value, chain_report.toolset_precision.n) == (1.0, 1)
    assert (chain_report.toolset_recall.value, chain_report.toolset_recall.n) == (0.5, 2)


def test_a_parsed_line_keeps_what_its_run_record_says(effect: ToolEffect) -> None:
    """The pipeline's validation pass hands the scorer parsed Predictions, which have no ``run``: the figure
    must come out the same."""
    parsed = score_submission(SAMPLES, map(parse_prediction, LINES), judge=OfflineJudge()).tool_effect
    assert parsed == effect and (parsed.shown.count, parsed.shown.n) == (1, 2)


def test_tool_effectiveness_of_a_mode_whose_calls_are_not_judged_says_why() -> None:
    """Oracle calls are not judged (process modes: adaptive): valid calls over 0 judged is not available."""
    report = score_submission(SAMPLES, [_line("s1", "oracle", True, ZOOM)], judge=OfflineJudge())
    process = report.modes["oracle"].process
    assert process.tool_eff.value is None and process.tool_eff.reason is not None
    assert "not judged" in process.tool_eff.reason and process.tool_eff_per_sample.reason == process.tool_eff.reason
