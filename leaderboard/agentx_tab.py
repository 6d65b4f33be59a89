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
from evaluation.agentx_figures import submission_agentx
from evaluation.metrics.agentx import AgentXReport
from evaluation.metrics.agentx_judged import judged_means
from evaluation.metrics.types import Mean
from evaluation.models import Submission
from leaderboard.models import ReportedResult


EXACT_COLUMNS = (
    ("toolset_accuracy", "Toolset acc.", "F1 of the tool names against the reference's (multisets)"),
    ("tool_precision", "Tool precision", "Share of calls whose tool is the reference call's at the same position"),
    ("goal_accuracy", "Goal acc.", "Answer correct (rules, then the judge), factual and interpretive tasks"),
    ("goal_accuracy_generation", "Goal acc. w/ image gen.",
     "Generation call's arguments match the reference's, generative tasks"),
)
JUDGED_COLUMNS = ("Grounding score", "Tool accuracy", "Faithfulness", "Context score", "Factual precision",
                  "Semantic accuracy")
JUDGED_KEYS = ("grounding_score", "tool_accuracy", "faithfulness", "context_score", "factual_precision",
               "semantic_accuracy")
FIGURE_SET = "agentx"
NEEDS_JUDGE = "needs an LLM judge"


def _cell(key: str, m: Mean, note: str = "") -> dict:
    iv = m.interval
    return {"key": key, "n": m.n, "value": None if m.value is None else f"{100 * m.value:.1f}",
            "interval": f"[{100 * iv.low:.1f}, {100 * iv.high:.1f}]" if iv else "", "note": note,
            "mean": m.value, "low": iv.low if iv else None, "high": iv.high if iv else None}


def exact_cells(report: AgentXReport) -> list[dict]:
    """Per exact figure: the mean in %, its n and interval (None: no task has a value)."""
    out = []
    for key, _, _ in EXACT_COLUMNS:
        undecided = report.n_generative_undecided if key == "goal_accuracy_generation" else 0
        out.append(_cell(key, getattr(report, key),
                         f"{undecided} generative task{'s' if undecided != 1 else ''} undecided: the reference "
                         "names the generation tool without its arguments" if undecided else ""))
    return out


def judged_stored(results: dict | None) -> dict | None:
    """The remote judge's per-task values stored with the results; None: scored without one."""
    stored = (results or {}).get("agentx_judged")
    return stored if isinstance(stored, dict) and isinstance(stored.get("tasks"), dict) else None


def judged_cells(results: dict | None) -> list[dict]:
    """Per judged figure: the mean over the tasks with a value and its interval, or, when no LLM
    judge scored the submission, ``needs_judge`` (the pages say so instead of a number)."""
    stored = judged_stored(results)
    if stored is None:
        return [{"key": key, "needs_judge": True, "value": None} for key in JUDGED_KEYS]
    means = judged_means(stored["tasks"].values())
    return [{**_cell(key, means[key]), "needs_judge": False, "judge": stored.get("judge", "")} for key in JUDGED_KEYS]


@dataclass(frozen=True, slots=True)
class AgentXRow:
    submission_id: int
    model_name: str
    is_demo: bool
    report: AgentXReport
    judged: list

    @property
    def cells(self) -> list[dict]:
        return exact_cells(self.report)


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


def agentx_context(benchmark: Benchmark) -> dict:
    rows = []
    on_board = Submission.objects.on_board().filter(benchmark=benchmark).select_related("benchmark")
    for sub in on_board.order_by("finished_at", "pk"):
        report = submission_agentx(submission=sub)
        if report is not None and report.tasks:
            rows.append(AgentXRow(sub.pk, sub.model_name, sub.is_demo, report, judged_cells(sub.results)))
    rows.sort(key=lambda r: -(r.report.goal_accuracy.value or 0))
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
    report = submission_agentx(submission=submission)
    exact = exact_cells(report) if report is not None and report.tasks else []
    labels = [label for _, label, _ in EXACT_COLUMNS] + list(JUDGED_COLUMNS)
    return {"figures": list(zip(labels, exact + judged_cells(submission.results))) if exact else [],
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
