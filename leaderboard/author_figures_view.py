"""The authors' own figures (results["author_figures"], evaluation/metrics/author_figures.py) as the model page
and the board's exports show them: per mode, each figure labelled with the rule that makes it; "not available"
with the reason where the rule leaves it undefined (never 0)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# profile -> (the authors' rule, [(key, label, path into a mode's figures)]); the key names the figure in the
# exports (leaderboard.csv's author_<key>_<mode> columns).
RULES: dict[str, tuple[str, list[tuple[str, str, tuple[str, ...]]]]] = {
    "hrbench": ("HR-Bench's report_acc_hrbench: accuracy per cycle, averaged over cycles",
                [("cycle_average", "Accuracy, average over cycles", ("average", "all"))]),
    "treebench": ("TreeBench's get_dimension_rating", [("overall", "Overall accuracy", ("Overall",)),
                                                       ("miou", "Mean IoU of the boxes", ("mIoU",))]),
    "tirbench": ("TIR-Bench's calculate_score.py", [("score", "Score", ("score",))]),
}
NOT_SCORED = "scored before the authors' figures were computed (a re-score adds them)"


@dataclass(frozen=True, slots=True)
class AuthorFigure:
    mode: str
    label: str
    percent: float | None
    reason: str  # why not available, when percent is None
    key: str = ""


def author_figures(results: dict[str, Any] | None) -> tuple[str, list[AuthorFigure]]:
    """(the rule's name, one AuthorFigure per mode and figure); ("", []) for a benchmark without them."""
    figures = (results or {}).get("author_figures")
    if not isinstance(figures, dict) or figures.get("profile") not in RULES:
        return "", []
    rule, wanted = RULES[figures["profile"]]
    out = []
    for mode, per_mode in figures.items():
        if mode == "profile" or not isinstance(per_mode, dict):
            continue
        for key, label, path in wanted:
            if per_mode.get("not_available"):
                out.append(AuthorFigure(mode, label, None, str(per_mode.get("reason") or "undefined on this file"),
                                        key))
                continue
            value: Any = per_mode
            for step in path:
                value = value.get(step) if isinstance(value, dict) else None
            if isinstance(value, int | float):
                out.append(AuthorFigure(mode, label, 100 * float(value), "", key))
            else:
                out.append(AuthorFigure(mode, label, None, "no row of the benchmark has what it needs", key))
    return rule, out
