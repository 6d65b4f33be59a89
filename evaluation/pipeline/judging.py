"""The judge a stage asks (``pipeline_judge``), and ``ProgressJudge``, which asks it chunk by chunk
while it moves the submission to ``judging`` and keeps the heartbeat going."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from django.conf import settings

from evaluation.judges import Judge, OfflineJudge
from evaluation.models import Submission, SubmissionStatus
from evaluation.pipeline.claims import _Beats, _Progress

S = SubmissionStatus


JUDGE_CHUNK = 256  # questions per judge call: bounded memory per batch, and a heartbeat between


class ProgressJudge:
    """Wraps the pipeline's judge: moves the submission to ``judging`` and reports progress per chunk."""

    def __init__(self, inner: Judge, submission_id: int, beats: _Beats | None = None) -> None:
        self.inner = inner
        self.name = inner.name  # the records' decided_by names the real judge
        self.pk = submission_id
        self.done = 0
        self.total = 0
        self.beats = beats or _Beats(submission_id, side=False)
        self.progress = _Progress(submission_id, self.beats)
        self.started = False
        # While the scorer streams (judge asked chunk by chunk) progress counts predictions, so
        # the judge only keeps the heartbeat going.
        self.count_questions = True

    def _run(self, method: str, questions: Sequence[Any]) -> list:
        if not self.started:
            self.started = True
            self.beats.update(status_in=[S.SCORING], status=S.JUDGING, progress_done=0, progress_total=0)
        self.total += len(questions)
        out: list = []
        call = getattr(self.inner, method)
        # At least one full round of a remote judge's batches in flight (20 x 16 = 320 by default).
        chunk = max(JUDGE_CHUNK, getattr(self.inner, "batch_size", 1) * getattr(self.inner, "max_concurrency", 1))
        for start in range(0, len(questions), chunk):
            out.extend(call(questions[start:start + chunk]))
            self.done += min(chunk, len(questions) - start)
            if self.count_questions:
                self.progress(self.done, self.total)
            else:
                self.progress.beat()
        return out

    def answer_equivalence(self, questions: Sequence[Any]) -> list:
        return self._run("answer_equivalence", questions)

    def key_step_matching(self, questions: Sequence[Any]) -> list:
        return self._run("key_step_matching", questions)

    def tool_call_validity(self, questions: Sequence[Any]) -> list:
        return self._run("tool_call_validity", questions)

    def step_scores(self, questions: Sequence[Any]) -> list:
        return self._run("step_scores", questions)

    # Agent-X's judged figures (asked only of a remote judge: see ``_agentx_judged``)
    def agentx_steps(self, questions: Sequence[Any]) -> list:
        return self._run("agentx_steps", questions)

    def agentx_tool_accuracy(self, questions: Sequence[Any]) -> list:
        return self._run("agentx_tool_accuracy", questions)

    def agentx_trace(self, questions: Sequence[Any]) -> list:
        return self._run("agentx_trace", questions)


AGENTX_FIGURE_SET = "agentx"


def _agentx_judged(sub: Submission, inner: Judge, judge: ProgressJudge) -> dict | None:
    """Agent-X's six judged figures per task, for a benchmark that declares the figure set and a
    judge that can answer them (the offline one cannot: the pages say "needs an LLM judge")."""
    if AGENTX_FIGURE_SET not in (sub.benchmark.figures or ()) or not hasattr(inner, "agentx_trace"):
        return None
    from evaluation.agentx_figures import submission_agentx_judge

    return submission_agentx_judge(submission=sub, judge=judge)


def pipeline_judge() -> Judge:
    """The OpenAI-compatible judge (with the database verdict cache) when configured, else offline."""
    if settings.JUDGE_OPENAI_BASE_URL:
        from evaluation.judge_cache import DatabaseVerdictCache
        from evaluation.judges.openai_judge import openai_judge_from_settings

        # Each batch's verdicts committed as it is answered (own connection), whatever becomes of the run.
        # A flaky judge is retried until the stage's time limit is near (a tenth of it left to finish).
        deadline = time.monotonic() + 0.9 * settings.CELERY_TASK_TIME_LIMIT
        return openai_judge_from_settings(settings, cache=DatabaseVerdictCache(own_connection=True), deadline=deadline)
    return OfflineJudge()


def judge_prompts(judge: Any) -> dict[str, str]:
    """The prompt versions the judge asks with (a remote judge's ``versions``); {} for the offline judge,
    which asks none. Stored in the results: the row digest's versions line names them."""
    versions = getattr(judge, "versions", None)
    return dict(versions) if isinstance(versions, dict) else {}
