"""The authors' figures as the model page lists them: a figure the rule leaves undefined is "not available"
with the reason, never 0 (leaderboard/author_figures_view.py)."""

from __future__ import annotations

from leaderboard.author_figures_view import author_figures


def test_undefined_figures_say_why_and_are_never_zero() -> None:
    results = {"author_figures": {
        "profile": "tirbench",
        "adaptive": {"not_available": True, "reason": "3 of 12 rows need an LLM judge (the authors' extraction)"},
        "text": {"score": 0.25, "tasks": {}, "n": 12},
    }}
    rule, figures = author_figures(results)
    assert rule == "TIR-Bench's calculate_score.py"
    by_mode = {f.mode: f for f in figures}
    assert by_mode["adaptive"].percent is None and "3 of 12 rows need an LLM judge" in by_mode["adaptive"].reason
    assert by_mode["text"].percent == 25.0


def test_treebench_gives_accuracy_and_mean_iou_and_none_where_no_row() -> None:
    results = {"author_figures": {"profile": "treebench", "text": {"Overall": 0.5, "mIoU": None, "n": 0}}}
    _, figures = author_figures(results)
    assert [(f.label, f.percent) for f in figures] == [("Overall accuracy", 50.0), ("Mean IoU of the boxes", None)]
    assert figures[1].reason


def test_no_authors_figures_no_section() -> None:
    assert author_figures({"modes": {}}) == ("", [])
