"""The pipeline's stages: validate, then score (rules, judge, aggregates, store, notify).

Each stage first *claims* the submission (``_claim``): a conditional UPDATE on its status and
its claim token, so a task delivered twice, or re-sent by the sweeper, runs the stage at most
once at a time (the second delivery logs "already claimed" and returns), and a stage that
already finished is a no-op. While the stage runs, a thread renews the claim's heartbeat
(``_Lease``); a claim whose heartbeat is older than SUBMISSION_STUCK_SECONDS belongs to a dead
worker and may be taken over. Each claim counts as an attempt; the claim after the last one
fails the submission with a reason.

Stages never send messages: they return, and the task sends the next stage
(``evaluation.tasks``; the import direction is tasks -> pipeline -> services). Scoring streams its rows as the scorer makes them, but they,
the aggregates and ``done`` become visible in one transaction (delete, then insert; see
``_ResultWriter``), so a crash at any point leaves either the old state or the new one, never
a half, and a re-run never duplicates a row. The prepared benchmark is cached per worker
process (``prepared_benchmarks``), keyed by the benchmark's content version.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import timedelta
from typing import Any

import orjson
from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connection, connections, transaction
from django.db.models import F, JSONField, Q
from django.db.models.functions import Coalesce
from django.utils import timezone

from evaluation.benchmark_cache import benchmark_tool_set, other_benchmark_of, prepared_benchmarks, tool_hooks
from evaluation.conversion import submission_file_ready
from evaluation.guessability import guessability_refresh_for
from evaluation.judges import Judge, JudgeBudgetExceeded, JudgeError, OfflineJudge
from evaluation.metrics import PredictionFormatError, PreparedBenchmark, ScoringError, score_submission
from evaluation.metrics.run_lines import RunLines
from evaluation.models import ACTIVE_STATUSES, PredictionResult, Submission, SubmissionStatus
from evaluation.records import header_of, submission_digests
from evaluation.reports import record_fields, report_to_json, scorer_version
from evaluation.services import (
    attempts_exhausted_reason,
    benchmark_results_bump,
    submission_fail,
    submission_heartbeat,
    submission_notify,
)
from evaluation.validation import (ValidationReport, iter_prediction_objects, iter_validated, tool_call_checker,
                                  validate_predictions)

log = logging.getLogger(__name__)
S = SubmissionStatus
_PROGRESS_SECONDS = 0.5
JUDGE_CHUNK = 256  # questions per judge call: bounded memory per batch, and a heartbeat between


def new_claim_token() -> str:
    """Names the worker process (host and pid, for the health page and the logs) and the delivery."""
    return f"{socket.gethostname()[:30]}:{os.getpid()}:{uuid.uuid4().hex[:12]}"


def _claim(submission_id: int, allowed: Sequence[str], to: str, token: str) -> bool:
    """Take the stage for this delivery; False (and nothing done) if another live delivery holds it,
    the stage moved on, or the tries are used up (then the submission fails with a reason).

    ``token`` is this delivery's; a retry of it (same token: a lost connection, a judge failure)
    takes its own claim back without counting a new attempt. Any other delivery takes the
    stage only if nobody holds it or the holder's heartbeat is stale (its worker died).
    """
    now = timezone.now()
    stale = now - timedelta(seconds=settings.SUBMISSION_STUCK_SECONDS)
    stage = Submission.objects.filter(pk=submission_id, status__in=list(allowed))
    fields = {"status": to, "heartbeat_at": now, "claim_token": token, "progress_done": 0, "progress_total": 0}
    if stage.filter(claim_token=token).update(**fields):
        return True
    free = Q(claim_token="") | Q(heartbeat_at__lt=stale)
    if stage.filter(free, attempts__lt=settings.SUBMISSION_MAX_ATTEMPTS).update(
            **fields, attempts=F("attempts") + 1):
        return True
    row = stage.filter(free).values("status", "attempts").first()
    if row is not None:  # free to take, but every try has been used
        submission_fail(submission_id=submission_id, reason=attempts_exhausted_reason(
            submission_id=submission_id, stage=row["status"], attempts=row["attempts"]))
    elif stage.exists():
        log.info("submission %s: already claimed by a live worker; this delivery does nothing", submission_id)
    return False


class _Lease:
    """Renews the claim's heartbeat every SUBMISSION_HEARTBEAT_SECONDS from a thread with its own
    database connection, whatever the stage is doing (reading a large benchmark, waiting on a
    judge), so the sweeper can call a claim dead after SUBMISSION_STUCK_SECONDS of silence
    without ever mistaking a slow stage for one.

    It stops renewing after CELERY_TASK_TIME_LIMIT: a stage hung that long goes stale like a dead
    one and is sent again (it holds no lock a new run would wait for; if it ever wakes, its claim
    is gone and its result is rolled back at the end). Not started inside an open transaction
    (unit tests): a second connection could not see the rows, or would wait on SQLite's lock.
    """

    def __init__(self, submission_id: int, token: str) -> None:
        self.pk = submission_id
        self.token = token
        self.stop = threading.Event()
        self.thread: threading.Thread | None = None

    def __enter__(self) -> _Lease:
        if not connection.in_atomic_block:
            self.thread = threading.Thread(target=self._run, name=f"lease-{self.pk}", daemon=True)
            self.thread.start()
        return self

    def _run(self) -> None:
        give_up = time.monotonic() + settings.CELERY_TASK_TIME_LIMIT
        try:
            while not self.stop.wait(settings.SUBMISSION_HEARTBEAT_SECONDS):
                if time.monotonic() > give_up:
                    log.error("submission %s: the stage has run past CELERY_TASK_TIME_LIMIT; no longer "
                              "renewing its claim (the sweeper will send it again)", self.pk)
                    return
                try:
                    held = Submission.objects.filter(pk=self.pk, claim_token=self.token,
                                                     status__in=ACTIVE_STATUSES).update(heartbeat_at=timezone.now())
                except DatabaseError as exc:  # the database is away; the stage sees it too
                    log.warning("submission %s: could not renew the claim (%s)", self.pk, exc)
                    connection.close()
                    continue
                if not held:
                    return  # finished, or taken over after a stale heartbeat
        finally:
            connection.close()  # this thread's own connection

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        if self.thread is not None:
            self.thread.join(timeout=30)


class _Beats:
    """Where the scoring stage writes its heartbeat, progress and the move to ``judging``.

    On PostgreSQL the result rows are written inside one long transaction, so these go through
    a second, autocommit connection: the submission page, the sweeper and the tests see them
    live (the transaction does not lock the submission's row until its very end). On SQLite
    (one writer at a time) the rows are staged in a connection-private TEMP table instead and
    these are plain autocommit writes on the default connection. Inside an outer transaction
    (tests, a caller's atomic block) they go with it.
    """

    def __init__(self, submission_id: int, *, side: bool = True) -> None:
        self.pk = submission_id
        self.side = None
        if side and connection.vendor == "postgresql" and not connection.in_atomic_block:
            self.side = connections.create_connection(DEFAULT_DB_ALIAS)

    def update(self, *, status_in: Sequence[str] | None = None, **fields: Any) -> None:
        fields["heartbeat_at"] = timezone.now()
        if self.side is None:
            qs = Submission.objects.filter(pk=self.pk)
            if status_in is not None:
                qs = qs.filter(status__in=list(status_in))
            qs.update(**fields)
            return
        meta = Submission._meta
        q = self.side.ops.quote_name
        sets = ", ".join(f"{q(meta.get_field(k).column)} = %s" for k in fields)
        sql = f"UPDATE {q(meta.db_table)} SET {sets} WHERE {q(meta.pk.column)} = %s"
        params = [*fields.values(), self.pk]
        if status_in is not None:
            sql += f" AND {q(meta.get_field('status').column)} IN ({', '.join(['%s'] * len(status_in))})"
            params.extend(status_in)
        with self.side.cursor() as cursor:
            cursor.execute(sql, params)

    def close(self) -> None:
        if self.side is not None:
            self.side.close()
            self.side = None


class _Progress:
    """Throttled progress reports, which double as the heartbeat the sweeper watches."""

    def __init__(self, submission_id: int, beats: _Beats | None = None) -> None:
        self.pk = submission_id
        self.beats = beats
        self.last = 0.0

    def __call__(self, done: int, total: int, *, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self.last >= _PROGRESS_SECONDS:
            self.last = now
            if self.beats is not None:
                self.beats.update(progress_done=done, progress_total=max(total, done))
            else:
                submission_heartbeat(submission_id=self.pk, progress_done=done, progress_total=max(total, done))

    def beat(self) -> None:
        now = time.monotonic()
        if now - self.last >= _PROGRESS_SECONDS:
            self.last = now
            if self.beats is not None:
                self.beats.update()
            else:
                submission_heartbeat(submission_id=self.pk)


# ------------------------------------------------------------------------------------ validate


class _Invalid(Exception):
    """The file failed validation while it was being scored: roll the scoring back."""


def submission_validate(*, submission_id: int, token: str = "") -> bool:
    """Validate the file. With the offline judge, score it in the same pass (see
    ``_validate_and_score``): the file is read and decoded once, and the submission goes from
    ``validating`` straight to ``done``. With a remote judge, move it to ``scoring`` and return
    True: the caller sends the scoring stage, which can be retried on its own when the judge fails.
    """
    token = token or new_claim_token()
    if not _claim(submission_id, (S.QUEUED, S.VALIDATING), S.VALIDATING, token):
        return False
    with _Lease(submission_id, token):
        return _validate(submission_id, token)


def _validate(submission_id: int, token: str) -> bool:
    sub = Submission.objects.select_related("benchmark").get(pk=submission_id)
    Submission.objects.filter(pk=submission_id, started_at__isnull=True).update(started_at=timezone.now())
    if not submission_file_ready(submission=sub):  # an author's format converted first (evaluation/conversion.py)
        return False
    prepared, sample_pks, uids = prepared_benchmarks.get(sub.benchmark)  # and ready for scoring
    size = max(sub.file_size, 1)
    judge = None if settings.JUDGE_OPENAI_BASE_URL else pipeline_judge()
    try:
        if type(judge) is OfflineJudge:
            report = _validate_and_score(sub, prepared, sample_pks, uids, judge, token)
            if report is None:
                return False  # scored: done (or another run finished it)
        else:
            progress = _Progress(submission_id)
            resolve, validate = tool_hooks(sub.benchmark)
            with sub.file.open("rb") as stream:
                report = validate_predictions(
                    stream, sample_ids=uids, benchmark=sub.benchmark.slug,
                    max_line_bytes=settings.SUBMISSION_MAX_LINE_BYTES, max_errors=settings.SUBMISSION_MAX_ERRORS,
                    progress=lambda lines, read: progress(min(read, size), size),
                    check_call=tool_call_checker(resolve, validate, benchmark_tool_set(sub.benchmark, resolve)),
                    locate=other_benchmark_of(sub.benchmark),
                )
    except OSError as exc:
        submission_fail(submission_id=submission_id,
                        reason=f"The uploaded file could not be read ({exc}); please upload it again.")
        return False
    errors = [e.as_dict() for e in report.errors]
    if not report.ok:
        more = " (only the first ones are listed)" if report.truncated else ""
        submission_fail(
            submission_id=submission_id, errors=errors, truncated=report.truncated,
            reason=f"The file has {len(errors)} error{'s' if len(errors) != 1 else ''}{more}; nothing was "
                   "scored. Fix the lines listed and upload the file again.",
        )
        return False
    estimate = _judge_estimate(sub)
    return bool(Submission.objects.filter(pk=submission_id, status=S.VALIDATING, claim_token=token).update(
        judge_estimate=estimate,
        status=S.SCORING, claim_token="", attempts=0, heartbeat_at=timezone.now(), errors=[],
        errors_truncated=False, n_lines=report.n_lines, n_predictions=report.n_predictions,
        coverage=report.coverage, tool_notes=report.tool_notes_json(), progress_done=0,
        progress_total=report.n_predictions,
    ))


def _judge_estimate(sub: Submission) -> dict:
    """What the remote judge will be asked, shown before it is paid; {} if it cannot be made."""
    from evaluation.judge_estimate import judge_estimate

    judge = pipeline_judge()
    try:
        return judge_estimate(submission=sub, judge=judge)  # type: ignore[arg-type]
    except Exception:  # noqa: BLE001 - an estimate never stops a submission; the scoring reports errors
        log.warning("submission %s: no judge estimate", sub.pk, exc_info=True)
        return {}
    finally:
        if hasattr(judge, "close"):
            judge.close()


def _validate_and_score(sub: Submission, prepared: PreparedBenchmark, sample_pks: dict[str, int],
                        uids: list[str], judge: Judge, token: str) -> ValidationReport | None:
    """One pass over the file: each line is validated, and the ``Prediction`` validation made
    of it goes straight to the scorer, whose rows stream into the database (``_ResultWriter``);
    ``done`` is set, with the validation's figures, in the transaction that publishes them.

    Returns None when scored (or when another run had finished it). Returns the validation
    report when the file has errors (the scoring is rolled back at the first one, the rest of
    the file is still checked to list them), or when the scoring could not finish here (a
    judge error; the caller then sends the scoring stage as for a remote judge).
    """
    pk = sub.pk
    size = max(sub.file_size, 1)
    benchmark = sub.benchmark
    resolve, validate = tool_hooks(benchmark)
    tools = benchmark_tool_set(benchmark, resolve)
    report = ValidationReport()
    beats = _Beats(pk)
    try:
        progress = _Progress(pk, beats)
        scoring_judge = ProgressJudge(judge, pk, beats)
        scoring_judge.count_questions = False
        writer = _ResultWriter(pk, sample_pks, token, statuses=(S.VALIDATING,))
        scored: Any = None

        def mark_done() -> None:
            results = report_to_json(scored)
            results.update(report.run_lines.as_json(), judge_prompts=judge_prompts(judge))
            now = timezone.now()
            Submission.objects.filter(pk=pk).update(
                **_digest_fields(pk, results, scored.judge),
                status=S.DONE, claim_token="", results=results, scorer_version=scorer_version(benchmark.scoring), judge_name=scored.judge,
                finished_at=now, first_finished_at=Coalesce("first_finished_at", now), scored_at=now,
                heartbeat_at=now, attempts=0, failure_reason="", errors=[], errors_truncated=False, n_lines=report.n_lines, n_predictions=report.n_predictions,
                coverage=report.coverage, tool_notes=report.tool_notes_json(), progress_done=report.n_predictions,
                progress_total=report.n_predictions,
            )
            benchmark_results_bump(benchmark_id=benchmark.pk)
            transaction.on_commit(lambda: submission_notify(submission_id=pk))
            transaction.on_commit(lambda: guessability_refresh_for(submission_id=pk))

        with sub.file.open("rb") as stream:
            lines = iter_validated(
                stream, report, sample_ids=uids, benchmark=benchmark.slug,
                max_line_bytes=settings.SUBMISSION_MAX_LINE_BYTES, max_errors=settings.SUBMISSION_MAX_ERRORS,
                progress=lambda n, read: progress(min(read, size), size),
                check_call=tool_call_checker(resolve, validate, tools),
                locate=other_benchmark_of(benchmark),
            )

            def good() -> Iterator[Any]:
                for pred in lines:
                    if report.errors:
                        raise _Invalid
                    yield pred
                if report.errors:
                    raise _Invalid

            try:
                with writer:
                    scored = score_submission(
                        prepared, good(), judge=scoring_judge, tool_validator=validate, benchmark_tools=tools,
                        prices=sub.prices, resolve_tool=resolve, on_records=writer.write, chunk_size=SCORE_CHUNK,
                    )
                    writer.finish(mark_done)
                return None
            except (_Invalid, JudgeError, ScoringError, PredictionFormatError, ValueError):
                for _ in lines:  # finish the validation (the scoring was rolled back)
                    pass
                if report.ok:
                    log.warning("submission %s: scoring in the validation pass failed; sending the scoring "
                                "stage", pk, exc_info=True)
                return report
    finally:
        beats.close()


# ------------------------------------------------------------------------------------ score


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
        return openai_judge_from_settings(settings, cache=DatabaseVerdictCache(own_connection=True))
    return OfflineJudge()


def _counted(objs: Iterable[Any], progress: _Progress, total: int) -> Iterator[Any]:
    n = 0
    for n, obj in enumerate(objs, 1):
        if n % 2000 == 0:
            progress(n, total)
        yield obj
    progress(n, total, force=True)


def _seen(objs: Iterable[Any], run_lines: RunLines) -> Iterator[Any]:
    """The decoded lines, each counted by ``run_lines`` (which record the endpoint's model/response ids)."""
    for obj in objs:
        run_lines.see(obj)
        yield obj


def judge_prompts(judge: Any) -> dict[str, str]:
    """The prompt versions the judge asks with (a remote judge's ``versions``); {} for the offline judge,
    which asks none. Stored in the results: the row digest's versions line names them."""
    versions = getattr(judge, "versions", None)
    return dict(versions) if isinstance(versions, dict) else {}


def _digest_fields(submission_id: int, results: dict, judge: str) -> dict[str, Any]:
    """The row's digests over the rows just written (same transaction), so verify_row recomputes them from
    exactly what is stored. Sorting is in Python: a database collation would order uids differently."""
    header = header_of(scorer_version=scorer_version(str(results.get("scoring") or "generic")), judge=judge,
                       results=results)
    d = submission_digests(submission_id=submission_id, header=header)
    return {"digest": d["digest"], "digest_dev": d["digest_dev"],
            "digest_parts": {"modes": d["modes"], "dev_modes": d["dev_modes"]}}


_INSERT_BATCH = 5000
SCORE_CHUNK = 4096  # predictions scored (and judged) per chunk; their rows are written at once


def _as_json(value: Any) -> str | None:
    return None if value is None else orjson.dumps(value).decode()


class _Done(Exception):
    """Another run finished (or failed) the submission meanwhile: roll this run's rows back."""


class _ResultWriter:
    """Writes the scorer's records as PredictionResult rows while it streams them, and makes
    them, the aggregates and ``done`` visible at once, or not at all.

    PostgreSQL: one transaction opened before scoring deletes the rows of an earlier attempt,
    COPYs each chunk, and at the end locks the submission, checks it is still being scored and
    sets ``done``; a crash or an error anywhere rolls every row back. SQLite allows one writer
    at a time, so a multi-second write transaction would stall every other write (heartbeats,
    uploads): each chunk goes to a TEMP table private to this connection (gone with it if the
    worker dies), and one short transaction moves them to the table and sets ``done``.
    Rows are built without model instances (a 91k-row file would otherwise spend most of its
    time and memory in Model.__init__ and the ORM's SQL compiler).
    """

    def __init__(self, submission_id: int, sample_pks: dict[str, int], token: str,
                 statuses: Sequence[str] = (S.SCORING, S.JUDGING)) -> None:
        self.pk = submission_id
        self.sample_pks = sample_pks
        self.token = token  # the claim: if another delivery took the stage over, this one's rows go
        self.statuses = tuple(statuses)  # the stage's: anything else means another run finished it
        fields = [f for f in PredictionResult._meta.concrete_fields if not f.primary_key]
        self.is_json = [isinstance(f, JSONField) for f in fields]
        self.names = [f.attname for f in fields]
        q = connection.ops.quote_name
        self.table = q(PredictionResult._meta.db_table)
        self.columns = ", ".join(q(f.column) for f in fields)
        self.placeholders = ", ".join(["%s"] * len(fields))
        self.pg = connection.vendor == "postgresql"
        self.stage = q(f"evaluation_stage_{submission_id}")
        self.build_rows = self._row_builder(self.names, self.is_json)
        self.atomic: Any = None
        self.n = 0

    def __enter__(self) -> _ResultWriter:
        if self.pg:
            self.atomic = transaction.atomic()
            self.atomic.__enter__()
            PredictionResult.objects.filter(submission_id=self.pk).delete()
        else:
            with connection.cursor() as cursor:
                cursor.execute(f"DROP TABLE IF EXISTS temp.{self.stage}")
                cursor.execute(f"CREATE TEMP TABLE {self.stage} AS SELECT {self.columns} FROM {self.table} "
                               "WHERE 0")
        return self

    def _rows(self, records: Iterable[Any]) -> Iterator[tuple]:
        return self.build_rows(records, self.pk, self.sample_pks)

    @staticmethod
    def _row_builder(names: Sequence[str], is_json: Sequence[bool]) -> Callable[..., Iterator[tuple]]:
        """A generator function yielding each record's row in column order: ``record_fields``
        gives the values, JSON columns are serialised. Generated once per writer, so a row is one
        tuple display instead of a loop over 25 columns (91,620 rows: 1.52 s -> 0.78 s)."""
        parts = []
        for name, json_column in zip(names, is_json):
            value = {"submission_id": "pk", "sample_id": "sample_pks[rec.sample_id]"}.get(name, f"v[{name!r}]")
            parts.append(f"as_json({value})" if json_column else value)
        source = ("def build(records, pk, sample_pks):\n"
                  "    for rec in records:\n"
                  "        v = record_fields(rec)\n"
                  f"        yield ({', '.join(parts)},)\n")
        namespace: dict[str, Any] = {"record_fields": record_fields, "as_json": _as_json}
        exec(source, namespace)  # noqa: S102  (source built above from the model's field names)
        return namespace["build"]

    def write(self, records: list[Any]) -> None:
        self.n += len(records)
        with connection.cursor() as cursor:
            if self.pg:
                with cursor.cursor.copy(f"COPY {self.table} ({self.columns}) FROM STDIN") as copy:
                    for row in self._rows(records):
                        copy.write_row(row)
                return
            sql = f"INSERT INTO temp.{self.stage} ({self.columns}) VALUES ({self.placeholders})"
            for start in range(0, len(records), _INSERT_BATCH):
                cursor.executemany(sql, list(self._rows(records[start:start + _INSERT_BATCH])))

    def finish(self, mark_done: Callable[[], None]) -> bool:
        """Publish the rows and call ``mark_done`` in the same transaction; False (nothing
        written) when the submission is no longer being scored by this claim."""
        if self.pg:
            if not self._still_ours():
                raise _Done
            mark_done()
            return True
        with transaction.atomic():
            if not self._still_ours():
                return False
            PredictionResult.objects.filter(submission_id=self.pk).delete()
            with connection.cursor() as cursor:
                cursor.execute(f"INSERT INTO {self.table} ({self.columns}) SELECT {self.columns} "
                               f"FROM temp.{self.stage}")
            mark_done()
        return True

    def _still_ours(self) -> bool:
        locked = Submission.objects.select_for_update().filter(pk=self.pk).values_list("status", "claim_token").first()
        if locked is None or locked[0] not in self.statuses:
            return False
        if locked[1] != self.token:
            log.warning("submission %s: the stage was taken over by %s (this run's heartbeat went stale); "
                        "this run's results are dropped", self.pk, locked[1] or "the sweeper")
            return False
        return True

    def __exit__(self, kind: Any, exc: Any, tb: Any) -> bool:
        if self.pg:
            self.atomic.__exit__(kind, exc, tb)
            return kind is _Done
        try:
            with connection.cursor() as cursor:
                cursor.execute(f"DROP TABLE IF EXISTS temp.{self.stage}")
        except Exception:  # noqa: BLE001 - the connection may be gone; the TEMP table with it
            if kind is None:
                raise
        return False


def submission_score(*, submission_id: int, token: str = "") -> None:
    """Score a validated submission. A JudgeError propagates (the task retries it with backoff,
    with the same ``token``: see ``submission_hold``).

    The scorer streams its records chunk by chunk (the judge asked per chunk) and they are
    written as they come (see _ResultWriter): the worker never holds a whole file's records.
    """
    token = token or new_claim_token()
    if not _claim(submission_id, (S.SCORING, S.JUDGING), S.SCORING, token):
        return
    with _Lease(submission_id, token):
        _score(submission_id, token)


def submission_hold(*, submission_id: int, token: str, seconds: float) -> bool:
    """Keep the claim while a retry of this delivery waits ``seconds`` (the sweeper leaves it
    alone until then plus SUBMISSION_STUCK_SECONDS; other deliveries find it claimed)."""
    until = timezone.now() + timedelta(seconds=seconds)
    return bool(Submission.objects.filter(pk=submission_id, claim_token=token, status__in=ACTIVE_STATUSES)
                .update(heartbeat_at=until))


def _score(submission_id: int, token: str) -> None:
    sub = Submission.objects.select_related("benchmark").get(pk=submission_id)
    benchmark = sub.benchmark
    prepared, sample_pks, _ = prepared_benchmarks.get(benchmark)
    resolve, validate = tool_hooks(benchmark)
    tools = benchmark_tool_set(benchmark, resolve)
    beats = _Beats(submission_id)
    inner = pipeline_judge()  # made outside the result transaction: its verdicts are kept apart from it
    try:
        judge = ProgressJudge(inner, submission_id, beats)
        judge.count_questions = False
        progress = _Progress(submission_id, beats)
        writer = _ResultWriter(submission_id, sample_pks, token)
        report = None
        agentx: dict | None = None
        run_lines = RunLines()

        def mark_done() -> None:
            results = report_to_json(report)
            if agentx is not None:
                results["agentx_judged"] = agentx
            if isinstance(getattr(inner, "usage", None), dict):  # what the remote judge used (and cost)
                results["judge_usage"] = dict(inner.usage)
            results.update(run_lines.as_json(), judge_prompts=judge_prompts(inner))
            now = timezone.now()
            Submission.objects.filter(pk=submission_id).update(
                **_digest_fields(submission_id, results, report.judge),
                status=S.DONE, claim_token="", results=results, scorer_version=scorer_version(benchmark.scoring), judge_name=report.judge,
                finished_at=now, first_finished_at=Coalesce("first_finished_at", now), scored_at=now,
                heartbeat_at=now, attempts=0, failure_reason="", progress_done=F("n_predictions"), progress_total=F("n_predictions"),
            )
            benchmark_results_bump(benchmark_id=benchmark.pk)
            transaction.on_commit(lambda: submission_notify(submission_id=submission_id))
            transaction.on_commit(lambda: guessability_refresh_for(submission_id=submission_id))

        try:
            with writer, sub.file.open("rb") as stream:
                report = score_submission(
                    prepared,
                    _counted(_seen(iter_prediction_objects(stream, settings.SUBMISSION_MAX_LINE_BYTES), run_lines),
                             progress, sub.n_predictions),
                    judge=judge, tool_validator=validate, benchmark_tools=tools, prices=sub.prices,
                    resolve_tool=resolve, on_records=writer.write, chunk_size=SCORE_CHUNK,
                )
                agentx = _agentx_judged(sub, inner, judge)
                writer.finish(mark_done)
        except JudgeBudgetExceeded as exc:  # not retried: the next try would spend as much
            submission_fail(submission_id=submission_id,
                            reason=f"Judging stopped before the budget was exceeded: {exc}. The verdicts "
                                   "already paid for are kept; staff can re-score it (after raising "
                                   "JUDGE_BUDGET_USD) and only the questions left are asked.")
            return
        except (ScoringError, PredictionFormatError, ValueError) as exc:
            # Validation passed, so the benchmark changed under the file (a sample removed) or a bug.
            submission_fail(submission_id=submission_id,
                            reason=f"The file could not be scored: {exc}. Upload it again; if this repeats, "
                                   "tell the benchmark's maintainers.")
            return
    finally:
        beats.close()
        if hasattr(inner, "close"):
            inner.close()


def submission_process_sync(*, submission: Submission) -> Submission:
    """Run the whole pipeline in this process (``--sync``, demo data, tests); no broker involved."""
    submission_validate(submission_id=submission.pk)
    submission.refresh_from_db()
    if submission.status == S.SCORING:
        submission_score(submission_id=submission.pk)
        submission.refresh_from_db()
    return submission
