"""The judge protocol (metrics.md section 9).

A judge answers four kinds of question (and a remote one three more, Agent-X's judged figures), each
in batches so that a remote judge can work
concurrently and consult its cache once per batch. Verdicts come back in question order.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

from evaluation.metrics.questions import (
    AnswerQuestion,
    KeyStepQuestion,
    StepScoreQuestion,
    ToolCallQuestion,
)

PROMPTS_DIR = Path(__file__).resolve().parent / "prompts"

# Bump a version (and add the new file) whenever a prompt's wording changes: cached verdicts
# are keyed by it, so old verdicts are never reused for a new question.
# v2: many questions per request ({"questions": [...]} -> {"answers": [...]}, each with its id).
PROMPT_VERSIONS: dict[str, str] = {
    "answer_equivalence": "v2",
    "key_step_matching": "v2",
    "tool_call_validity": "v2",
    "step_scores": "v2",
    # Agent-X's six judged figures (evaluation/metrics/agentx_judged.py): v1 single, v2 batch, as above.
    "agentx_steps": "v2",
    "agentx_tool_accuracy": "v2",
    "agentx_trace": "v2",
}
# v1: one question per request (the payload itself -> one verdict), for judges that cannot follow
# the batch format (JUDGE_OPENAI_BATCH=1).
SINGLE_PROMPT_VERSIONS: dict[str, str] = dict.fromkeys(PROMPT_VERSIONS, "v1")


class JudgeError(RuntimeError):
    """A judge could not produce a verdict (after its retries)."""

    # Set by the scoring stage when known: how many of the questions asked so far had a verdict.
    judged: int | None = None
    asked: int | None = None

    def judged_share(self) -> str:
        """"It judged 1,026 of the 2,010 questions asked (51 %) ..." for the reason a failed run gives."""
        if not self.asked:
            return "No question was judged."
        judged = self.judged or 0
        return (f"It judged {judged:,} of the {self.asked:,} questions asked ({100 * judged / self.asked:.0f} %); "
                "those verdicts are kept, so a re-score asks only the rest.")


class JudgeBudgetExceeded(JudgeError):
    """The next request would take the judge's spending past its budget; nothing more is sent."""


def load_prompt(kind: str, version: str | None = None) -> str:
    version = version or PROMPT_VERSIONS[kind]
    return (PROMPTS_DIR / f"{kind}.{version}.txt").read_text(encoding="utf-8")


@runtime_checkable
class Judge(Protocol):
    name: str

    def answer_equivalence(self, questions: Sequence[AnswerQuestion]) -> list[bool]: ...

    def key_step_matching(self, questions: Sequence[KeyStepQuestion]) -> list[tuple[bool, ...]]: ...

    def tool_call_validity(self, questions: Sequence[ToolCallQuestion]) -> list[bool]: ...

    def step_scores(self, questions: Sequence[StepScoreQuestion]) -> list[tuple[float, ...]]: ...
