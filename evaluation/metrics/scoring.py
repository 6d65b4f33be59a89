"""From a benchmark's samples and a prediction iterable to records and aggregates.

One pass builds a row per prediction with everything the rules decide; the judge is then
asked in batches (so a remote judge can run them concurrently and a cache can answer many at
once); a last pass turns rows into records and records into per-mode aggregates.
"""

from __future__ import annotations

import gc

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from .aggregate import mode_report, mode_selection
from .answers import GoldKey, compile_gold, extract_answer, rule_match
from .parse import parse_prediction
from .process import box_from_args, best_iou, key_step_coverage
from .questions import AnswerQuestion, KeyStepQuestion, StepScoreQuestion, ToolCallQuestion
from .stats import RESAMPLES, SEED
from .toolchain import effective_chain, normalized_edit_distance, toolset_prf
from .types import (
    MODES,
    CallResult,
    Prediction,
    PredictionResult,
    Sample,
    Step,
    SubmissionReport,
)

if TYPE_CHECKING:  # the protocol lives with the judges; the library only calls its methods
    from evaluation.judges.base import Judge

ToolValidator = Callable[[str, dict], list[str]]
DEFAULT_PROCESS_MODES = frozenset({"adaptive"})


class ScoringError(ValueError):
    """The prediction stream contradicts the benchmark (unknown sample, duplicate line)."""


def default_tool_name(name: str) -> str:
    return name.strip().lower().replace(" ", "_").replace("-", "_")


class SampleInfo:
    """What the scorer needs from one sample, computed once per benchmark."""

    __slots__ = ("sample", "gold", "aux", "ref_names", "l_gt", "zoomable")

    def __init__(self, sample: Sample, resolve: Callable[[str], str]) -> None:
        self.sample = sample
        self.gold: GoldKey = compile_gold(sample)
        self.aux = sample.aux_line
        self.ref_names: tuple[str, ...] = tuple(resolve(c.tool) for c in sample.toolchain)
        self.l_gt = len(sample.toolchain)
        self.zoomable = bool(sample.regions)


class PreparedBenchmark:
    """Samples digested once; reuse it to score many submissions of the same benchmark."""

    def __init__(self, samples: Iterable[Sample | Mapping[str, Any]],
                 resolve_tool: Callable[[str], str | None] | None = None) -> None:
        resolved: dict[str, str] = {}
        raw = resolve_tool

        def resolve(name: str) -> str:
            got = resolved.get(name)
            if got is None:
                got = (raw(name) if raw is not None else None) or default_tool_name(name)
                resolved[name] = got
            return got

        self.resolve = resolve
        self.infos: dict[str, SampleInfo] = {}
        for s in samples:
            sample = s if isinstance(s, Sample) else Sample.from_mapping(s)
            if sample.uid in self.infos:
                raise ScoringError(f"duplicate sample uid {sample.uid!r} in the benchmark")
            self.infos[sample.uid] = SampleInfo(sample, resolve)
        self.order = list(self.infos.values())


class _Row:
    __slots__ = ("p", "info", "extracted", "correct", "decided_by", "answer_verdict", "names",
                 "calls", "valid", "call_by", "errors", "effective", "ks", "scores", "iou")


def _is_zoom(name: str) -> bool:
    return "zoom" in name or "crop" in name


def score_submission(
    samples: Iterable[Sample | Mapping[str, Any]] | PreparedBenchmark,
    predictions: Iterable[Prediction | Mapping[str, Any]],
    *,
    judge: Judge,
    tool_validator: ToolValidator | None = None,
    benchmark_tools: frozenset[str] | None = None,
    prices: tuple[float, float] | None = None,
    resolve_tool: Callable[[str], str | None] | None = None,
    process_modes: frozenset[str] = DEFAULT_PROCESS_MODES,
    judge_answers: bool = True,
    seed: int = SEED,
    resamples: int = RESAMPLES,
) -> SubmissionReport:
    """Score one submission. See docs/metrics.md for every figure and its denominator.

    ``predictions`` holds decoded prediction objects (formats.md) or ``Prediction``s; a
    malformed object raises PredictionFormatError, an unknown sample or a repeated
    (sample, mode) raises ScoringError.
    """
    # The cyclic GC would re-walk every live record many times while we allocate hundreds of
    # thousands of acyclic objects; nothing here builds reference cycles, so pause it.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _score(samples, predictions, judge=judge, tool_validator=tool_validator,
                      benchmark_tools=benchmark_tools, prices=prices, resolve_tool=resolve_tool,
                      process_modes=process_modes, judge_answers=judge_answers, seed=seed,
                      resamples=resamples)
    finally:
        if gc_was_enabled:
            gc.enable()


def _score(
    samples: Iterable[Sample | Mapping[str, Any]] | PreparedBenchmark,
    predictions: Iterable[Prediction | Mapping[str, Any]],
    *,
    judge: Judge,
    tool_validator: ToolValidator | None,
    benchmark_tools: frozenset[str] | None,
    prices: tuple[float, float] | None,
    resolve_tool: Callable[[str], str | None] | None,
    process_modes: frozenset[str],
    judge_answers: bool,
    seed: int,
    resamples: int,
) -> SubmissionReport:
    bench = samples if isinstance(samples, PreparedBenchmark) else PreparedBenchmark(
        samples, resolve_tool)
    infos = bench.infos
    resolve = bench.resolve
    judge_tag = f"judge:{judge.name}"
    seen: set[tuple[str, str]] = set()
    rows: list[_Row] = []
    q_answer: list[tuple[_Row, AnswerQuestion]] = []
    q_calls: list[tuple[_Row, int, ToolCallQuestion]] = []
    q_ks: list[tuple[_Row, KeyStepQuestion]] = []

    for obj in predictions:
        p = obj if type(obj) is Prediction else parse_prediction(obj)
        info = infos.get(p.sample_id)
        if info is None:
            raise ScoringError(f"sample_id {p.sample_id!r} is not in the benchmark")
        key = (p.sample_id, p.mode)
        if key in seen:
            raise ScoringError(f"duplicate prediction for sample {p.sample_id!r}, mode {p.mode!r}")
        seen.add(key)
        row = _Row()
        row.p = p
        row.info = info
        row.extracted = extracted = extract_answer(p.answer, p.response)
        row.correct = correct = rule_match(info.gold, extracted)
        row.decided_by = "rule"
        row.answer_verdict = None
        if not correct and judge_answers:
            q_answer.append((row, AnswerQuestion(info.sample, extracted)))
        process = p.mode in process_modes
        calls = [s.tool for s in p.steps if s.tool is not None]
        row.calls = calls
        row.ks = row.scores = row.iou = None
        if calls:
            names = [resolve(c.name) for c in calls]
            valid: list[bool | None] = []
            errors: list[tuple[str, ...]] = []
            call_by: list[str] = []
            thoughts = [s.thought for s in p.steps if s.tool is not None]
            for i, call in enumerate(calls):
                errs: list[str] = []
                if benchmark_tools is not None and names[i] not in benchmark_tools:
                    errs.append(f"tool {call.name!r} is not in this benchmark's tool set")
                elif tool_validator is not None:
                    errs.extend(tool_validator(call.name, call.args))
                if call.error:
                    errs.append(f"execution error: {call.error}")
                errors.append(tuple(errs))
                if errs:
                    valid.append(False)
                    call_by.append("rule")
                else:
                    valid.append(None)
                    call_by.append("")
                    if process:
                        q_calls.append((row, i, ToolCallQuestion(info.sample, call, thoughts[i])))
            row.names, row.valid, row.errors, row.call_by = names, valid, errors, call_by
            row.effective = effective_chain(calls, p.answer_image)
            if process and info.zoomable:
                boxes = [b for c, n in zip(calls, names) if _is_zoom(n)
                         and (b := box_from_args(c.args)) is not None]
                row.iou = best_iou(boxes, info.sample.regions)
        else:
            row.names = row.valid = row.errors = row.call_by = ()
            row.effective = ()
        if process and info.sample.key_steps:
            q_ks.append((row, KeyStepQuestion(info.sample, p.steps)))
        rows.append(row)

    if q_answer:
        for (row, _), yes in zip(q_answer, judge.answer_equivalence([q for _, q in q_answer])):
            row.answer_verdict = bool(yes)
            row.decided_by = judge_tag
            row.correct = bool(yes)
    if q_calls:
        for (row, i, _), ok in zip(q_calls, judge.tool_call_validity([q for _, _, q in q_calls])):
            row.valid[i] = bool(ok)
            row.call_by[i] = judge_tag
    if q_ks:
        for (row, _), verdicts in zip(q_ks, judge.key_step_matching([q for _, q in q_ks])):
            row.ks = tuple(bool(v) for v in verdicts)
        q_steps = []
        for row, _ in q_ks:
            steps: tuple[Step, ...] = row.p.steps
            if not steps:
                continue
            valid_iter = iter(row.valid)
            per_step = tuple(next(valid_iter) if s.tool is not None else None for s in steps)
            q_steps.append((row, StepScoreQuestion(row.info.sample, steps, per_step)))
        if q_steps:
            for (row, _), scores in zip(q_steps, judge.step_scores([q for _, q in q_steps])):
                row.scores = tuple(float(s) for s in scores)

    records = tuple(_record(row, prices) for row in rows)
    by_mode: dict[str, list[PredictionResult]] = {}
    for rec in records:
        by_mode.setdefault(rec.mode, []).append(rec)
    modes = {
        m: mode_report(m, by_mode[m], bench.order, process=m in process_modes,
                       seed=seed, resamples=resamples)
        for m in MODES if m in by_mode
    }
    return SubmissionReport(
        judge=judge.name,
        n_samples=len(bench.order),
        n_predictions=len(records),
        modes=modes,
        mode_selection=mode_selection(by_mode.get("text", ()), by_mode.get("adaptive", ()),
                                      infos, seed=seed, resamples=resamples),
        records=records,
    )


def _record(row: _Row, prices: tuple[float, float] | None) -> PredictionResult:
    p: Prediction = row.p
    info: SampleInfo = row.info
    n_calls = len(row.calls)
    ks = row.ks
    kcov, kcov_any = key_step_coverage(ks) if ks is not None else (None, None)
    scores = row.scores
    in_tok, out_tok = p.input_tokens, p.output_tokens
    tokens = None if in_tok is None and out_tok is None else (in_tok or 0) + (out_tok or 0)
    if p.cost_usd is not None:
        cost = float(p.cost_usd)
    elif prices is not None and tokens is not None:
        cost = ((in_tok or 0) * prices[0] + (out_tok or 0) * prices[1]) / 1e6
    else:
        cost = None
    if info.l_gt:
        prf = toolset_prf(row.names, info.ref_names)
        edit = normalized_edit_distance([row.names[i] for i in row.effective], info.ref_names)
    else:
        prf = edit = None
    if n_calls:
        calls = tuple(
            CallResult(c.name, v, by, e)
            for c, v, by, e in zip(row.calls, row.valid, row.call_by, row.errors)
        )
    else:
        calls = ()
    return PredictionResult(
        sample_id=p.sample_id,
        mode=p.mode,
        extracted=row.extracted,
        correct=row.correct,
        decided_by=row.decided_by,
        n_steps=p.turns if p.turns is not None else len(p.steps),
        n_calls=n_calls,
        calls=calls,
        l_total=n_calls,
        l_eff=len(row.effective),
        l_gt=info.l_gt,
        effective=row.effective,
        toolset_prf=prf,
        edit_distance=edit,
        key_steps=ks,
        kcov=kcov,
        kcov_any=kcov_any,
        step_scores=scores,
        step_score=sum(scores) / len(scores) if scores else None,
        iou=row.iou,
        tokens=tokens,
        cost_usd=cost,
        latency_ms=p.latency_ms,
        answer_verdict=row.answer_verdict,
    )
