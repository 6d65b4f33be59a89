"""A submission's canonical per-sample records (evaluation.metrics.digest): the digests computed from its
stored ``PredictionResult`` rows, the records export, and the check ``manage.py verify_row`` runs.

Reads only: the pipeline stores what ``submission_digests`` returns when scoring finishes (in the
transaction that publishes the rows), and nothing here writes. docs/runs.md, "The verified tier".
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from annotation.models import Split
from evaluation.metrics import digest
from evaluation.models import PredictionResult, Submission

# The PredictionResult columns behind the canonical record (uid comes from the sample).
_COLUMNS = tuple(name for name in digest.CANONICAL_FIELDS if name != "uid")
NOT_AVAILABLE = "not available"


def header_of(*, scorer_version: str, judge: str, results: dict | None) -> str:
    """The versions line: the scorer version and judge stored with the submission, the judge's prompt
    versions its results record (an offline judge asks no prompt: {})."""
    prompts = (results or {}).get("judge_prompts") or {}
    return digest.header_line(scorer_version, judge, prompts)


def submission_header(submission: Submission) -> str:
    return header_of(scorer_version=submission.scorer_version, judge=submission.judge_name,
                     results=submission.results)


def records_of(*, submission_id: int, include_test: bool = True) -> Iterator[tuple[dict[str, Any], bool]]:
    """(canonical record, is dev) per stored row, streamed; ``include_test=False`` keeps the dev split's."""
    rows = PredictionResult.objects.filter(submission_id=submission_id)
    if not include_test:
        rows = rows.filter(sample__split=Split.DEV)
    for values in rows.order_by("sample__uid", "mode").values("sample__uid", "sample__split", *_COLUMNS).iterator(
            chunk_size=2000):
        values["uid"] = values.pop("sample__uid")
        split = values.pop("sample__split")
        yield digest.canonical_record(values), split == Split.DEV


def submission_digests(*, submission_id: int, header: str) -> dict[str, Any]:
    """The digests of the stored rows, as ``digest.digests_of`` gives them."""
    return digest.digests_of(header, records_of(submission_id=submission_id))


def stored_digests(submission: Submission) -> dict[str, Any]:
    parts = submission.digest_parts or {}
    return {"digest": submission.digest, "digest_dev": submission.digest_dev, "modes": parts.get("modes") or {},
            "dev_modes": parts.get("dev_modes") or {}}


def verify(submission: Submission) -> digest.Mismatch | None:
    """Recompute the digests from the stored rows and compare; None when the submission has none stored."""
    if not submission.digest:
        return None
    again = submission_digests(submission_id=submission.pk, header=submission_header(submission))
    return digest.compare(stored_digests(submission), again)


def export_lines(submission: Submission, *, include_test: bool) -> Iterator[bytes]:
    """The records export (``/b/<slug>/m/<id>/records.jsonl``): a header line with the versions and the
    stored digests (null when not available), then one canonical record per line with its split.
    ``include_test=False``: the dev split's records only, and the dev digests alone in the header."""
    stored = stored_digests(submission)
    head: dict[str, Any] = {
        "kind": "row-records", "submission_id": submission.pk, "benchmark": submission.benchmark.slug,
        "model": submission.model_name, "provenance": submission.provenance, "scope": "all" if include_test else "dev",
        "versions": json.loads(submission_header(submission)),  # the versions line, as an object
        "digest_dev": stored["digest_dev"] or None, "dev_modes": stored["dev_modes"],
    }
    if include_test:
        head.update(digest=stored["digest"] or None, modes=stored["modes"])
    yield (digest.dumps(head) + "\n").encode()
    for record, dev in records_of(submission_id=submission.pk, include_test=include_test):
        yield (digest.dumps({**record, "split": Split.DEV.value if dev else Split.TEST.value}) + "\n").encode()

