import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.judges import OfflineJudge
from evaluation.metrics import PredictionFormatError, ScoringError, parse_prediction, score_submission


def _samples() -> list[dict]:
    return [
        {"uid": "a", "domain": "ocr", "category": "table", "answer": "831K",
         "transform": [{"op": "rotate", "angle": 90}], "regions": [[0, 0, 100, 100]],
         "key_steps": ["Rotate the image upright", "Find the last row", "Read the total 831K"],
         "toolchain": [{"tool": "rotate", "args": {"angle": 90}},
                       {"tool": "zoom_in", "args": {"bbox": [0, 0, 100, 100]}}]},
        {"uid": "b", "domain": "math", "category": "plot", "answer": "C", "answer_type": "choice",
         "options": {"A": "1", "B": "2", "C": "3"}},
        {"uid": "c", "domain": "math", "category": "geometry", "answer": "12",
         "answer_type": "number", "aux_line": True},
    ]


def _score(preds: list[dict], **kw: object):  # type: ignore[no-untyped-def]
    return score_submission(_samples(), preds, judge=OfflineJudge(), **kw)  # type: ignore[arg-type]


def test_library_imports_no_django() -> None:
    code = ("import sys, evaluation.metrics, evaluation.judges, evaluation.judges.openai_judge;"
            "bad=[m for m in sys.modules if m.split('.')[0] in ('django','rest_framework','celery','annotation','leaderboard')];"
            "print(bad); sys.exit(1 if bad else 0)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_empty_file_scores_zero_with_everything_missing() -> None:
    report = _score([])
    assert report.n_predictions == 0 and report.records == ()
    assert report.modes == {} and report.mode_selection is None


def test_missing_predictions_count_wrong_and_aux_line_is_apart() -> None:
    report = _score([
        {"sample_id": "a", "mode": "text", "answer": "<answer>831k</answer>"},
        {"sample_id": "c", "mode": "text", "answer": "12"},
    ])
    acc = report.modes["text"].accuracy
    assert (acc.overall.count, acc.overall.n, acc.missing) == (1, 2, 1)  # b missing, c is aux
    assert acc.overall.percent == 50.0
    assert (acc.aux_line.count, acc.aux_line.n) == (1, 1)
    assert acc.by_domain["math"].n == 1 and acc.by_domain["math"].count == 0
    assert (acc.wo_enh.count, acc.wo_enh.n) == (0, 1)  # only b has no recovery transform
    assert acc.all == acc.overall


def test_adaptive_process_hand_computed() -> None:
    report = _score([
        {"sample_id": "a", "mode": "text", "answer": "900K"},
        {"sample_id": "a", "mode": "adaptive", "answer": "831K", "answer_image": "img2",
         "steps": [
             {"thought": "The table is sideways, rotate the image upright.",
              "tool": {"name": "rotate", "args": {"angle": 90}, "input": "img0", "output": "img1"}},
             {"thought": "Zoom on the top left corner.",
              "tool": {"name": "zoom_in", "args": {"bbox": [0, 0, 40, 40]},
                       "input": "img1", "output": "img2"}},
             {"thought": "Blur for fun.", "tool": {"name": "blur", "args": {}, "input": "img1",
                                                  "output": "img3"}},
             {"thought": "Read the total: 831K."}],
         "usage": {"input_tokens": 1000, "output_tokens": 200}, "latency_ms": 1500},
        {"sample_id": "b", "mode": "text", "answer": "C"},
        {"sample_id": "b", "mode": "adaptive", "answer": "C"},
    ], tool_validator=lambda name, args: [] if name != "blur" else ["ksize is required"],
       prices=(1.0, 5.0))
    rec = next(r for r in report.records if r.mode == "adaptive" and r.sample_id == "a")
    assert rec.correct and rec.decided_by == "rule"
    assert [c.valid for c in rec.calls] == [True, False, False]
    assert rec.calls[1].decided_by == "judge:offline"  # 16 % of the region: under half
    assert rec.calls[2].decided_by == "rule" and rec.calls[2].errors == ("ksize is required",)
    assert rec.effective == (0, 1) and (rec.l_total, rec.l_eff, rec.l_gt) == (3, 2, 2)
    assert rec.key_steps == (True, False, True)
    assert rec.kcov == pytest.approx(1 / 3) and rec.kcov_any == pytest.approx(2 / 3)
    assert rec.step_scores == (1.0, 0.0, 0.0, 1.0)
    assert rec.iou == pytest.approx(1600 / 10000)
    assert rec.cost_usd == pytest.approx((1000 * 1 + 200 * 5) / 1e6)
    assert rec.toolset_prf == pytest.approx((2 / 3, 1.0, 0.8))
    assert rec.edit_distance == 0.0

    mode = report.modes["adaptive"]
    proc, chain = mode.process, mode.toolchain
    assert (proc.tool_eff.count, proc.tool_eff.n) == (1, 3)
    eff = proc.tool_eff_per_sample
    assert (eff.value, eff.n) == (1 / 3, 1)
    # One sample: every resample is that sample, so the interval is the point itself.
    assert eff.interval is not None and (eff.interval.low, eff.interval.high) == (1 / 3, 1 / 3)
    assert proc.kcov.n == 1  # sample b has no key steps: left out, not a zero
    assert proc.mean_steps.value == 2.0 and proc.mean_steps.n == 2
    assert (proc.grounding_hit.count, proc.grounding_hit.n) == (0, 1)
    assert (chain.tcr.count, chain.tcr.n) == (1, 2)
    assert chain.mae_total.value == 1.0 and chain.mae_total.n == 1
    assert chain.mae_eff.value == 0.0
    assert chain.efficiency.value == pytest.approx(2 / 3) and chain.efficiency.n == 1
    assert mode.cost.mean_cost_usd.n == 1  # only the priced prediction with usage
    sel = report.mode_selection
    assert sel is not None and (sel.tp, sel.fp, sel.tn, sel.fn) == (1, 0, 1, 0)
    assert sel.mcc == pytest.approx(1.0)


def test_every_chain_length_zero_gives_none_not_nan() -> None:
    samples = [{"uid": "x", "answer": "1", "answer_type": "number"}]
    report = score_submission(samples, [{"sample_id": "x", "mode": "adaptive", "answer": "1"}],
                              judge=OfflineJudge())
    chain = report.modes["adaptive"].toolchain
    assert chain.efficiency.value is None and chain.efficiency.n == 0
    # No call in the file: every toolchain and tool figure is not available, with the reason, never 0.
    assert chain.mae_total.n == 0 and chain.tcr.value is None and chain.tcr.n == 0
    assert chain.tcr.reason == chain.toolset_f1.reason == "no tool calls in this file"
    assert report.modes["adaptive"].process.tool_eff.value is None


def test_no_tool_calls_anywhere_gives_mcc_not_available() -> None:
    report = _score([
        {"sample_id": "a", "mode": "text", "answer": "no"},
        {"sample_id": "a", "mode": "adaptive", "answer": "no"},
        {"sample_id": "b", "mode": "text", "answer": "C"},
        {"sample_id": "b", "mode": "adaptive", "answer": "C"},
    ])
    assert report.mode_selection is not None and report.mode_selection.mcc is None
    assert report.mode_selection.reason == "MCC is undefined: the model never called a tool in adaptive mode"


def test_tool_outside_the_benchmark_tool_set_is_invalid_without_a_judge() -> None:
    report = _score([{"sample_id": "a", "mode": "adaptive", "answer": "x",
                      "steps": [{"tool": {"name": "Zoom In", "args": {"bbox": [0, 0, 100, 100]}}},
                                {"tool": {"name": "sharpen", "args": {}}},
                                {"tool": {"name": "rotate", "args": {"angle": 90},
                                          "error": "boom"}}]}],
                    benchmark_tools=frozenset({"zoom_in", "rotate"}))
    calls = report.records[0].calls
    assert [c.valid for c in calls] == [True, False, False]
    assert "not in this benchmark's tool set" in calls[1].errors[0]
    assert calls[2].errors == ("execution error: boom",)


def test_unknown_sample_and_duplicate_line_are_errors() -> None:
    with pytest.raises(ScoringError, match="'zzz'"):
        _score([{"sample_id": "zzz", "mode": "text", "answer": "1"}])
    with pytest.raises(ScoringError, match="duplicate"):
        _score([{"sample_id": "a", "mode": "text"}, {"sample_id": "a", "mode": "text"}])


@pytest.mark.parametrize("obj,field", [
    ({"mode": "text"}, "sample_id"),
    ({"sample_id": "a", "mode": "visual"}, "mode"),
    ({"sample_id": "a", "mode": "text", "steps": {}}, "steps"),
    ({"sample_id": "a", "mode": "text", "steps": [{"tool": {"args": {}}}]}, "steps[0].tool.name"),
    ({"sample_id": "a", "mode": "text", "usage": {"input_tokens": -1}}, "usage.input_tokens"),
    ({"sample_id": "a", "mode": "text", "answer": ["x"]}, "answer"),
])
def test_parse_errors_name_the_field(obj: dict, field: str) -> None:
    with pytest.raises(PredictionFormatError) as err:
        parse_prediction(obj)
    assert err.value.field == field and f"'{field}'" in str(err.value)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["choice", "number", "text"]),
                          st.integers(0, 10**6), st.booleans()), min_size=1, max_size=30))
def test_a_perfect_file_scores_100_percent(rows: list[tuple[str, int, bool]]) -> None:
    samples, preds = [], []
    for i, (kind, value, wrap) in enumerate(rows):
        s = {"uid": f"s{i}", "answer_type": kind, "domain": "d", "category": "c"}
        if kind == "choice":
            s["options"] = {"A": "x", "B": "y", "C": "z"}
            s["answer"] = "ABC"[value % 3]
        elif kind == "number":
            s["answer"] = f"{value:,}"
        else:
            s["answer"] = f"word{value} other"
        samples.append(s)
        ans = f"<answer>{s['answer']}</answer>" if wrap else s["answer"]
        preds += [{"sample_id": s["uid"], "mode": m, "answer": ans} for m in ("text", "adaptive")]
    report = score_submission(samples, preds, judge=OfflineJudge())
    for m in ("text", "adaptive"):
        acc = report.modes[m].accuracy
        assert acc.overall.percent == 100.0 and acc.missing == 0
        assert acc.overall.interval is not None and acc.overall.interval.low == 1.0


# ---- failure classes (spec runs.md; docs/metrics.md "Answered and failures")


def _ten() -> list[dict]:
    return [{"uid": f"s{i}", "domain": "ocr", "category": "table", "answer": f"word{i}"} for i in range(10)]


def test_failure_lines_count_wrong_are_not_answered_and_are_counted_by_class() -> None:
    from evaluation.reports import report_to_json

    lines: list[dict] = [{"sample_id": f"s{i}", "mode": "adaptive", "answer": f"<answer>word{i}</answer>"}
                         for i in range(6)]  # s0-s5 right
    lines.append({"sample_id": "s6", "mode": "adaptive", "answer": "<answer>nothing</answer>"})  # answered, wrong
    # The two failed attempts' responses hold what would otherwise read as the right answer.
    lines += [{"sample_id": "s7", "mode": "adaptive", "answer": None, "failure": "timeout",
               "response": "<answer>word7</answer>", "failure_detail": "no reply in 120 s"},
              {"sample_id": "s8", "mode": "adaptive", "answer": "", "failure": "max_turns",
               "response": "<answer>word8</answer>", "turns": 8, "run": {"prompt_version": "v1"}}]
    # s9 has no line: missing, not a failure
    report = score_submission(_ten(), lines, judge=OfflineJudge())
    mode = report.modes["adaptive"]
    acc = mode.accuracy
    assert (acc.overall.count, acc.overall.n, acc.missing) == (6, 10, 1)
    assert (mode.answered.count, mode.answered.n, mode.answered.percent) == (7, 10, 70.0)
    assert mode.failures == {"provider_error": 0, "timeout": 1, "content_filter": 0, "tool_error": 0,
                             "max_turns": 1}
    failed = {r.sample_id: r for r in report.records if r.failure}
    assert set(failed) == {"s7", "s8"}
    assert all(not r.correct and r.extracted == "" and r.decided_by == "rule" for r in failed.values())
    stored = report_to_json(report)["modes"]["adaptive"]
    assert stored["answered"] == {"count": 7, "n": 10, "interval": None, "value": 0.7, "percent": 70.0}
    assert stored["failures"]["timeout"] == 1 and stored["failures"]["max_turns"] == 1


def test_a_failure_line_is_wrong_on_every_path_into_the_scorer() -> None:
    # a typed Prediction built by hand (no validation) with an answer still counts as a failure
    from evaluation.metrics import Prediction

    report = score_submission(_ten(), [Prediction("s0", "text", answer="word0", failure="content_filter")],
                              judge=OfflineJudge())
    assert report.modes["text"].accuracy.overall.count == 0
    assert report.modes["text"].answered.count == 0
    assert report.modes["text"].failures["content_filter"] == 1
    with pytest.raises(PredictionFormatError) as excinfo:
        score_submission(_ten(), [{"sample_id": "s0", "mode": "text", "failure": "oops"}], judge=OfflineJudge())
    assert excinfo.value.field == "failure"
