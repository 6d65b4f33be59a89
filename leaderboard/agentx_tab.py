"""The "Agent-X" tab, on benchmarks whose manifest declares the figure set (``figures: ["agentx"]``):
Agent-X's Table 3 figures per public submission. The exact ones are computed
(evaluation/agentx_figures.py); the judged ones say "needs an LLM judge", never a number. The authors'
reported rows (leaderboard/reported.py) show all ten as printed, badged, with their judge."""

from __future__ import annotations

from dataclasses import dataclass

from annotation.models import Benchmark
from evaluation.agentx_figures import submission_agentx
from evaluation.metrics.agentx import AgentXReport
from leaderboard.models import ReportedResult
from leaderboard.services import public_submissions

EXACT_COLUMNS = (
    ("toolset_accuracy", "Toolset acc.", "F1 of the tool names against the reference's (multisets)"),
    ("tool_precision", "Tool precision", "Share of calls whose tool is the reference call's at the same position"),
    ("goal_accuracy", "Goal acc.", "Answer correct (rules, then the judge), factual and interpretive tasks"),
    ("goal_accuracy_generation", "Goal acc. w/ image gen.", "Generation call's arguments match the reference's, generative tasks"),
)
JUDGED_COLUMNS = ("Grounding score", "Tool accuracy", "Faithfulness", "Context score", "Factual precision",
                  "Semantic accuracy")
JUDGED_KEYS = ("grounding_score", "tool_accuracy", "faithfulness", "context_score", "factual_precision",
               "semantic_accuracy")
FIGURE_SET = "agentx"


@dataclass(frozen=True, slots=True)
class AgentXRow:
    submission_id: int
    model_name: str
    is_demo: bool
    report: AgentXReport

    @property
    def cells(self) -> list[dict]:
        """Per exact figure: the mean in %, its n and interval (None: no task has a value)."""
        out = []
        for key, _, _ in EXACT_COLUMNS:
            m = getattr(self.report, key)
            iv = m.interval
            undecided = self.report.n_generative_undecided if key == "goal_accuracy_generation" else 0
            out.append({"key": key, "n": m.n,
                        "value": None if m.value is None else f"{100 * m.value:.1f}",
                        "interval": f"[{100 * iv.low:.1f}, {100 * iv.high:.1f}]" if iv else "",
                        "note": f"{undecided} generative task{'s' if undecided != 1 else ''} undecided: "
                                "the reference names the generation tool without its arguments" if undecided else ""})
        return out


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


def _pct(value: float | None) -> str | None:
    return None if value is None else f"{100 * value:.0f}"


def shows_agentx(benchmark: Benchmark) -> bool:
    return FIGURE_SET in (benchmark.figures or ())


def agentx_context(benchmark: Benchmark) -> dict:
    rows = []
    for sub in public_submissions(benchmark).select_related("benchmark").order_by("finished_at", "pk"):
        report = submission_agentx(submission=sub)
        if report is not None and report.tasks:
            rows.append(AgentXRow(sub.pk, sub.model_name, sub.is_demo, report))
    rows.sort(key=lambda r: -(r.report.goal_accuracy.value or 0))
    reported = [ReportedAgentXRow(r.model_name, r.figures["agentx"], r.figures.get("judge", ""), r.figures.get("table", ""))
                for r in ReportedResult.objects.filter(benchmark=benchmark).order_by("position")
                if r.figures.get("agentx")]
    reported.sort(key=lambda r: -(r.figures.get("goal_accuracy") or 0))
    return {"rows": rows, "reported": reported, "citation": benchmark.citation if reported else "",
            "exact_columns": EXACT_COLUMNS, "judged_columns": JUDGED_COLUMNS}
