"""Human verdicts as JSON Lines, each beside the judge's verdicts on the same questions.

One line per (trace, person), so a judge study can be re-run elsewhere without the database:
the people's labels, the judge's labels and who decided each, and the gold key steps they were
judged against.
"""

from __future__ import annotations

from collections.abc import Iterator

import orjson

from annotation.models import Benchmark
from evaluation.metrics.profiles import UNDECIDED
from trace_review.models import HumanVerdict
from trace_review.selectors import judge_rows

FORMAT_VERSION = 1


def verdict_lines(*, benchmark: Benchmark | None = None, chunk: int = 500) -> Iterator[bytes]:
    verdicts = (HumanVerdict.objects.select_related("trace__batch__benchmark", "trace__submission", "trace__sample",
                                                    "reviewer").order_by("trace_id", "reviewer_id"))
    if benchmark is not None:
        verdicts = verdicts.filter(trace__batch__benchmark=benchmark)
    batch: list[HumanVerdict] = []
    for verdict in verdicts.iterator(chunk_size=chunk):
        batch.append(verdict)
        if len(batch) >= chunk:
            yield from _lines(batch)
            batch = []
    if batch:
        yield from _lines(batch)


def _lines(verdicts: list[HumanVerdict]) -> Iterator[bytes]:
    results = judge_rows([(v.trace.submission_id, v.trace.sample_id, v.trace.mode) for v in verdicts])
    for v in verdicts:
        t = v.trace
        pr = results.get((t.submission_id, t.sample_id, t.mode))
        yield orjson.dumps({
            "format": FORMAT_VERSION,
            "benchmark": t.batch.benchmark.slug, "batch": t.batch_id, "trace": t.pk,
            "submission": t.submission_id, "model_name": t.submission.model_name,
            "sample_id": t.sample.uid, "split": t.sample.split, "mode": t.mode,
            "reviewer": v.reviewer.get_username(),
            "created_at": v.created_at.isoformat(), "updated_at": v.updated_at.isoformat(),
            "human": {"answer_correct": v.answer_correct, "key_steps": v.key_steps, "calls": v.calls,
                      "step_scores": v.step_scores, "comment": v.comment},
            "judge": None if pr is None else {
                "name": t.submission.judge_name, "answer_decided_by": pr.decided_by,
                # null when no rule decided it (it needs an LLM judge): neither right nor wrong, as the API says
                "answer_correct": None if pr.decided_by == UNDECIDED else pr.correct,
                "key_steps": pr.key_steps, "calls": [{"valid": c.get("valid"), "decided_by": c.get("decided_by")}
                                                     for c in pr.calls],
                "step_scores": pr.step_scores,
            },
        }) + b"\n"
