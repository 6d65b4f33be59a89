"""The authors' own figures (results["author_figures"], evaluation/metrics/author_figures.py) as the model page
shows them: per mode, each figure labelled with the rule that makes it; "not available" with the reason where
the rule leaves it undefined (never 0)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# profile -> (the authors' rule, [(label, path into a mode's figures)])
RULES: dict[str, tuple[str, list[tuple[str, tuple[str, ...]]]]] = {
    "hrbench": ("HR-Bench's report_acc_hrbench: accuracy per cycle, averaged over cycles",
                [("Accuracy, average over cycles", ("average", "all"))]),
    "treebench": ("TreeBench's get_dimension_rating", [("Overall accuracy", ("Overall",)),
                                                       ("Mean IoU of the boxes", ("mIoU",))]),
    "tirbench": ("TIR-Bench's calculate_score.py", [("Score", ("score",))]),
}


@dataclass(frozen=True, slots=True)
class AuthorFigure:
    mode: str
    label: str
    percent: float | None
    reason: str  # why not available, when percent is None


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
        for label, path in wanted:
            if per_mode.get("not_available"):
                out.append(AuthorFigure(mode, label, None, str(per_mode.get("reason") or "undefined on this file")))
                continue
            value: Any = per_mode
            for key in path:
                value = value.get(key) if isinstance(value, dict) else None
            if isinstance(value, int | float):
                out.append(AuthorFigure(mode, label, 100 * float(value), ""))
            else:
                out.append(AuthorFigure(mode, label, None, "no row of the benchmark has what it needs"))
    return rule, out
