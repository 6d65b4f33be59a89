"""The validation stage's first step: a prediction file in an author's shape becomes ours.

Runs in the worker, not in the upload request: a 200 MB VLMEvalKit table or VTC-Bench log
takes seconds to read and must not hold a web request (or a web process's memory). The upload
(``source_file``) is kept as it came; the converted JSON Lines go to ``file``, and the rest of
the pipeline reads only that. Conversion happens once: a re-score (or a stage re-sent by the
sweeper after a crash later on) reuses the converted file. A file in our format is only sniffed:
when it is plainly another kind (an Excel table, a VTC-Bench log...), one message says so.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from django.conf import settings
from django.core.files import File

from evaluation import converters
from evaluation.benchmark_cache import other_benchmark_of, prepared_benchmarks, tool_hooks
from evaluation.models import Submission
from evaluation.selectors import conversion_context
from evaluation.services import file_failure_reason, submission_fail, submission_heartbeat

_BEAT_SECONDS = 0.5
WARNINGS_KEPT = 100  # the first conversion warnings kept on the submission
# Formats whose converter needs the benchmark's split orders or media counts (converters.BenchmarkContext).
CONTEXT_FORMATS = frozenset({"inspect", "lmms-eval", "vlmevalkit"})


def submission_file_ready(*, submission: Submission) -> bool:
    """Make ``submission.file`` a prediction file in our format. False when the submission failed
    (the file is of the wrong kind or could not be converted; the reason and errors are stored)."""
    sub = submission
    if sub.format == "jsonl" or not sub.source_file:
        return _check_ours(sub)
    if sub.file:
        return True  # converted by an earlier run
    _, sample_pks, uids = prepared_benchmarks.get(sub.benchmark)
    resolve, _validate = tool_hooks(sub.benchmark)
    last = [time.monotonic()]

    def progress(items: int) -> None:
        now = time.monotonic()
        if now - last[0] >= _BEAT_SECONDS:
            last[0] = now
            submission_heartbeat(submission_id=sub.pk, progress_done=items, progress_total=0)

    try:
        with sub.source_file.open("rb") as src, tempfile.TemporaryFile() as out:
            report = converters.convert(
                src, out, fmt=sub.format, filename=sub.original_name, sample_ids=uids, resolve_tool=resolve,
                max_errors=settings.SUBMISSION_MAX_ERRORS, max_line_bytes=settings.SUBMISSION_MAX_LINE_BYTES,
                progress=progress, benchmark=sub.benchmark.slug, locate=other_benchmark_of(sub.benchmark),
                context=conversion_context(benchmark=sub.benchmark) if sub.format in CONTEXT_FORMATS else None,
            )
            if report.ok:
                out.seek(0)
                sub.file.save(f"{Path(sub.source_file.name).stem}.converted.jsonl", File(out), save=False)
                Submission.objects.filter(pk=sub.pk).update(file=sub.file.name,
                                                            conversion_warnings=report.warnings[:WARNINGS_KEPT])
                return True
    except OSError as exc:  # the source unreadable, or the disk full while writing the converted file
        submission_fail(submission_id=sub.pk, reason=file_failure_reason(exc, "converted"))
        return False
    errors = [e.as_dict() for e in report.errors]
    label = dict(converters.FORMAT_CHOICES)[sub.format]
    if len(errors) == 1 and errors[0]["line"] is None:
        reason = f"The file could not be converted from {label}: {errors[0]['message']} Nothing was scored."
    else:
        more = " (only the first ones are listed)" if report.truncated else ""
        reason = (f"The file could not be converted from {label}: {len(errors)} problem"
                  f"{'s' if len(errors) != 1 else ''}{more}, each with its row or line and field. Nothing was "
                  "scored; fix them and upload the file again.")
    submission_fail(submission_id=sub.pk, reason=reason, errors=errors, truncated=report.truncated)
    return False


def _check_ours(sub: Submission) -> bool:
    """A file uploaded as our format that is plainly another kind fails with one message."""
    try:
        with sub.file.open("rb") as stream:
            kind, wrong = converters.check_kind(stream, fmt="jsonl", filename=sub.original_name)
    except OSError:
        return True  # the validation reports an unreadable file itself
    if wrong is None or kind.name in ("empty", "jsonl_other", "json", "text", "utf16"):
        # Not recognisably another kind: the validator's line-by-line messages say more.
        return True
    submission_fail(submission_id=sub.pk, reason=wrong + " Nothing was scored.",
                    errors=[{"line": None, "where": "file", "field": "", "message": wrong}])
    return False
