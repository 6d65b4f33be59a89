"""The pipeline's stages: validate, then score (rules, judge, aggregates, store, notify).

Each stage first *claims* the submission (``_claim``): a conditional UPDATE on its status and
its claim token, so a task delivered twice, or re-sent by the sweeper, runs the stage at most
once at a time (the second delivery logs "already claimed" and returns), and a stage that
already finished is a no-op. While the stage runs, a thread renews the claim's heartbeat
(``_Lease``); a claim whose heartbeat is older than SUBMISSION_STUCK_SECONDS belongs to a dead
worker and may be taken over. Each claim counts as an attempt; the claim after the last one
fails the submission with a reason.

A stage never sends the next stage or a retry: it returns, and the task sends them
(``evaluation.tasks``; the import direction is tasks -> pipeline -> services). A stage that ends
a submission does send, through ``services`` and on commit: the results-changed tasks
(``benchmark_results_bump``) and the owner's email (``submission_notify``). Scoring streams its
rows as the scorer makes them, but they, the aggregates and ``done`` become visible in one
transaction (delete, then insert; see
``_ResultWriter``), so a crash at any point leaves either the old state or the new one, never
a half, and a re-run never duplicates a row. The prepared benchmark is cached per worker
process (``prepared_benchmarks``), keyed by the benchmark's content version.

The modules: ``claims`` (the claim and its heartbeat), ``validating`` and ``scoring`` (the two
stages), ``judging`` (the judge a stage asks), ``finishing`` (the result rows and ``done``).
"""

from __future__ import annotations

# prepared_benchmarks and tool_hooks: callers (tests, benches) have long found them here.
from evaluation.benchmark_cache import prepared_benchmarks, tool_hooks
from evaluation.models import Submission, SubmissionStatus
from evaluation.pipeline.claims import _claim, _Lease, new_claim_token, submission_hold
from evaluation.pipeline.finishing import SCORE_CHUNK, _ResultWriter
from evaluation.pipeline.judging import AGENTX_FIGURE_SET, JUDGE_CHUNK, ProgressJudge, judge_prompts, pipeline_judge
from evaluation.pipeline.scoring import submission_score
from evaluation.pipeline.validating import submission_validate

__all__ = [
    "AGENTX_FIGURE_SET", "JUDGE_CHUNK", "SCORE_CHUNK", "ProgressJudge", "_Lease", "_ResultWriter", "_claim",
    "judge_prompts", "new_claim_token", "pipeline_judge", "prepared_benchmarks", "submission_hold",
    "submission_process_sync", "submission_score", "submission_validate", "tool_hooks",
]
S = SubmissionStatus


def submission_process_sync(*, submission: Submission) -> Submission:
    """Run the whole pipeline in this process (``--sync``, demo data, tests); no broker involved."""
    submission_validate(submission_id=submission.pk)
    submission.refresh_from_db()
    if submission.status == S.SCORING:
        submission_score(submission_id=submission.pk)
        submission.refresh_from_db()
    return submission
