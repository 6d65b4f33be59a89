"""The "Agent-X" tab, on benchmarks whose manifest declares the figure set (``figures: ["agentx"]``):
Agent-X's Table 3 figures per public submission. The exact ones are computed
(evaluation/agentx_figures.py); the judged ones are the remote judge's per-task values stored with the
results (``results["agentx_judged"]``), or "needs an LLM judge" when the submission was scored by the
offline judge, never a number. The authors' reported rows (leaderboard/reported.py) show all ten as
printed, badged, with their judge. Also the model page's Agent-X table, the per-task page and the
exports' Agent-X columns."""

from __future__ import annotations

from dataclasses import dataclass

from annotation.models import Benchmark, Sample, Split
from evaluation.agentx_figures import (EXACT_COLUMNS, FIGURE_SET, JUDGED_COLUMNS, JUDGED_KEYS, NEEDS_JUDGE,
                                       judged_stored, submission_agentx)
from evaluation.derived import derived_read
from evaluation.models import Submission
from leaderboard.models import ReportedResult

__all__ = ["EXACT_COLUMNS", "JUDGED_COLUMNS", "JUDGED_KEYS", "NEEDS_JUDGE", "agentx_context", "model_figures",
           "per_task", "shows_agentx"]


@dataclass(frozen=True, slots=True)
class AgentXRow:
    submission_id: int
    model_name: str
    is_demo: bool
    cells: list  # the four exact figures (evaluation.agentx_figures.exact_cells)
    judged: list  # the six judged ones, or "needs an LLM judge" (judged_cells)
    goal: float | None  # goal accuracy, the tab's order


@dataclass(frozen=True, slots=True)
class ReportedAgentXRow:
    """A model's ten figures as Agent-X's authors print them (leaderboard/data/agentx_reported.json),
    in %; every one judged by their judge (GPT-4o), the exact four included."""

    model_name: str
    figures: dict
    judge: str
    table: str

    @property
    def exact(self) -> list[str | None]:
        return [_pct(self.figures.get(key)) for key, _, _ in EXACT_COLUMNS]

    @property
    def judged(self) -> list[str | None]:
        return [_pct(self.figures.get(key)) for key in JUDGED_KEYS]


def _pct1(value: float | None) -> str | None:
    return None if value is None else f"{100 * value:.1f}"


def _pct(value: float | None) -> str | None:
    return None if value is None else f"{100 * value:.0f}"


def shows_agentx(benchmark: Benchmark) -> bool:
    return FIGURE_SET in (benchmark.figures or ())


def _built(benchmark: Benchmark) -> dict[str, dict]:
    """{submission id (str): its figures} of the last build of the derived kind "agentx" (agentx_build)."""
    return (derived_read(benchmark, "agentx").payload or {}).get("rows", {})


def agentx_context(benchmark: Benchmark) -> dict:
    """The tab's rows: the last build's figures of the submissions still on the board (checked here)."""
    built = _built(benchmark)
    rows = []
    for pk, name, demo in (Submission.objects.on_board().filter(benchmark=benchmark).order_by("finished_at", "pk")
                           .values_list("pk", "model_name", "is_demo")):
        figs = built.get(str(pk))
        if figs is not None:
            rows.append(AgentXRow(pk, name, demo, figs["cells"], figs["judged"], figs["goal"]))
    rows.sort(key=lambda r: -(r.goal or 0))
    reported = [ReportedAgentXRow(r.model_name, r.figures["agentx"], r.figures.get("judge", ""), r.figures.get("table", ""))
                for r in ReportedResult.objects.filter(benchmark=benchmark).order_by("position")
                if r.figures.get("agentx")]
    reported.sort(key=lambda r: -(r.figures.get("goal_accuracy") or 0))
    return {"rows": rows, "reported": reported, "citation": benchmark.citation if reported else "",
            "exact_columns": EXACT_COLUMNS, "judged_columns": JUDGED_COLUMNS}


def model_figures(benchmark: Benchmark, submission: Submission) -> dict | None:
    """The model page's Agent-X table: the ten means (None when the benchmark has no such figures)."""
    if not shows_agentx(benchmark):
        return None
    figs = _built(benchmark).get(str(submission.pk))
    labels = [label for _, label, _ in EXACT_COLUMNS] + list(JUDGED_COLUMNS)
    return {"figures": list(zip(labels, figs["cells"] + figs["judged"])) if figs else [],
            "judge": (judged_stored(submission.results) or {}).get("judge", "")}


def per_task(submission: Submission, *, sees_test: bool) -> dict:
    """The per-task page: each task's ten values (0-1). Test-split tasks only for those who may see
    test gold (staff): a task's figures against the reference would tell its gold apart."""
    report = submission_agentx(submission=submission)
    stored = judged_stored(submission.results)
    judged = stored["tasks"] if stored else {}
    splits = dict(Sample.objects.filter(benchmark=submission.benchmark).values_list("uid", "split"))
    rows, hidden = [], 0
    for t in report.tasks if report is not None else ():
        if splits.get(t.uid) != Split.DEV and not sees_test:
            hidden += 1
            continue
        values = judged.get(t.uid) or {}
        rows.append({"uid": t.uid, "split": splits.get(t.uid, ""),
                     "exact": [(key, _pct1(getattr(t, key))) for key, _, _ in EXACT_COLUMNS],
                     "judged": [(key, _pct1(values.get(key))) for key in JUDGED_KEYS] if stored else None})
    return {"rows": rows, "hidden": hidden, "judge": (stored or {}).get("judge", ""),
            "prompts": (stored or {}).get("prompts", {}), "exact_columns": EXACT_COLUMNS,
            "judged_columns": JUDGED_COLUMNS, "needs_judge": NEEDS_JUDGE}
