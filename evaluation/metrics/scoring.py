"""From a benchmark's samples and a prediction iterable to records and aggregates.

One pass reads each prediction (straight from its decoded dict when it is well formed: the
typed ``Prediction`` is built only for the unusual ones, by ``parse_prediction``, which also
names the field of a malformed one), decides everything the rules decide, and folds the
rule-decided figures into per-mode accumulators. The judge is then asked in batches (so a
remote judge can run them concurrently and a cache can answer many at once), and its verdicts
are folded in as they are applied. Records are lists filled in place and frozen into
``PredictionResult`` tuples at the end.

Everything is deterministic: the memos below only avoid recomputing pure functions (answer
extraction, rule matching, the tool validator, toolset and edit-distance figures), and every
mean is summed in file order, as before.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .aggregate import (
    SEEN,
    ModeAccumulator,
    mode_report,
    mode_selection_from_state,
    not_available,
    slot_state as _slot_state,
)
from .answers import extract_answer, rule_is_final, rule_match
from .author_figures import FIGURE_PROFILES, Collector
from .memo_keys import args_key
from .parse import parse_prediction
from .prepared import PreparedBenchmark, SampleInfo, ScoringError
from .profiles import GENERIC, JUDGED_PROFILES, UNDECIDED
from .process import best_iou, box_from_args, key_step_coverage
from .questions import (
    make_answer_question,
    make_key_step_question,
    make_step_score_question,
    make_tool_call_question,
)
from .stats import RESAMPLES, SEED
from .tool_effect import outputs_shown, tool_effect
from .toolchain import effective_chain, input_media, normalized_edit_distance, toolset_prf
from .types import (
    FAILURE_CLASSES,
    MODES,
    N_MODES,
    CallResult,
    Prediction,
    PredictionFormatError,
    PredictionResult,
    Sample,
    Step,
    SubmissionReport,
    ToolCall,
    make_step,
    make_tool_call,
)

if TYPE_CHECKING:  # the protocol lives with the judges; the library only calls its methods
    from evaluation.judges.base import Judge

ToolValidator = Callable[[str, Mapping[str, Any]], list[str]]  # the call's name and its args
DEFAULT_PROCESS_MODES = frozenset({"adaptive"})
OFFLINE_JUDGE = "offline"  # the built-in judge's name (evaluation/judges/offline.py)
STREAM_CHUNK = 4096  # predictions per chunk when records are streamed out (on_records)
_MODE_INDEX = {m: i for i, m in enumerate(MODES)}
_ADAPTIVE = _MODE_INDEX["adaptive"]
_new_tuple = tuple.__new__

# A record is built as a list in PredictionResult's field order, then frozen into the tuple.
(R_SID, R_MODE, R_EXTRACTED, R_CORRECT, R_DECIDED_BY, R_N_STEPS, R_N_CALLS, R_CALLS, R_L_TOTAL,
 R_L_EFF, R_L_GT, R_EFFECTIVE, R_PRF, R_EDIT, R_KEY_STEPS, R_KCOV, R_KCOV_ANY, R_STEP_SCORES,
 R_STEP_SCORE, R_IOU, R_TOKENS, R_COST, R_LATENCY, R_VERDICT, R_FAILURE) = range(25)
assert PredictionResult._fields[R_FAILURE] == "failure" and len(PredictionResult._fields) == 25
_FAILURE_INDEX = {c: i for i, c in enumerate(FAILURE_CLASSES)}


def _media_iou(calls: Sequence[ToolCall], names: Sequence[str], sample: Sample) -> float | None:
    """Best IoU of the zoom boxes against the regions, each box only against the regions on the
    medium its call's input comes from (a sample with several images; formats.md)."""
    best = None
    for call, name, medium in zip(calls, names, input_media(calls, sample.n_images)):
        if not _is_zoom(name) or (box := box_from_args(call.args)) is None:
            continue
        on = [r for r, ref in zip(sample.regions, sample.region_images) if ref == medium]
        got = best_iou([box], on) or 0.0  # a zoom into a medium without regions misses them all
        best = got if best is None else max(best, got)
    return best


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
    on_records: Callable[[list[PredictionResult]], None] | None = None,
    chunk_size: int = STREAM_CHUNK,
    scoring: str = GENERIC,
    full_pipeline: bool = False,
) -> SubmissionReport:
    """Score one submission. See docs/metrics.md for every figure and its denominator.

    Streaming: with ``on_records``, the predictions are scored ``chunk_size`` at a time (read,
    then the judge asked about that chunk), and each chunk's finished records are handed to
    ``on_records`` (a list, in file order) and then dropped, so memory stays bounded by a
    chunk; the report's ``records`` is then empty. Every figure and record is the same as
    without it; only the judge sees several smaller batches instead of one per kind.

    ``predictions`` holds decoded prediction objects (formats.md) or ``Prediction``s; a
    malformed object raises PredictionFormatError, an unknown sample or a repeated
    (sample, mode) raises ScoringError. ``tool_validator`` must be a pure function of
    (name, args): its answers are memoised per submission.

    ``scoring`` is the scoring profile (metrics.md section 13) when ``samples`` is not already a
    ``PreparedBenchmark`` (which carries its own). Under a profile other than generic the offline
    judge is not asked about answers: the authors' code without a judge ("exact matching") lets
    its rules decide alone; but under a profile whose authors always ask their judge about what the
    rule leaves open (``mmreason``), or any profile with ``full_pipeline`` (the authors' pipeline with its
    judge, not their exact matching), those rows are undecided: counted neither right nor wrong, and the
    accuracies they fall in are not available (``Rate.undecided``) until an LLM judge decides them.
    """
    # The cyclic GC would re-walk every live record many times while we allocate hundreds of
    # thousands of acyclic objects; nothing here builds reference cycles, so pause it.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        if on_records is not None and chunk_size < 1:
            raise ValueError("chunk_size must be at least 1")
        return _score(samples, predictions, judge=judge, tool_validator=tool_validator,
                      benchmark_tools=benchmark_tools, prices=prices, resolve_tool=resolve_tool,
                      process_modes=process_modes, judge_answers=judge_answers, seed=seed,
                      resamples=resamples, on_records=on_records,
                      chunk_size=chunk_size if on_records is not None else 0, scoring=scoring,
                      full_pipeline=full_pipeline)
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
    on_records: Callable[[list[PredictionResult]], None] | None,
    chunk_size: int,
    scoring: str,
    full_pipeline: bool,
) -> SubmissionReport:
    bench = samples if isinstance(samples, PreparedBenchmark) else PreparedBenchmark(
        samples, resolve_tool, scoring=scoring)
    profile = bench.scoring
    leave_open = False  # rows the authors' rule leaves to their judge stay undecided
    if profile != GENERIC and judge.name == OFFLINE_JUDGE:
        leave_open = judge_answers and (profile in JUDGED_PROFILES or full_pipeline)
        judge_answers = False
    infos_get = bench.infos.get
    resolve = bench.resolve
    resolved_get = bench.resolved.get
    judge_tag = f"judge:{judge.name}"
    accs = [ModeAccumulator(len(bench.groups)) for _ in MODES]
    # seen[N_MODES * sample index + mode index]: SEEN once the line is read (repeated lines), then
    # the finished record's correctness and tool use for mode selection (see _slot_state).
    seen = bytearray(N_MODES * len(bench.order))
    mode_index = _MODE_INDEX.get
    rows: list[list] = []  # the records of the current chunk (the whole file without streaming)
    row_slots: list[int] = []
    kept: list[PredictionResult] = []  # finished records, when not streamed
    n_records = 0
    q_answer: list[tuple[list, SampleInfo]] = []
    q_calls: list[list] = []  # the call entries [name, valid, decided_by, errors] to decide
    q_call_questions: list = []
    q_ks: list[tuple[list, SampleInfo, tuple[Step, ...]]] = []
    call_rows: list[list] = []  # rows with tool calls: their call entries become CallResults
    proc_call_rows: list[tuple[list, ModeAccumulator]] = []
    extract_memo: dict[str, str] = {}
    rule_memo: dict[tuple[int, str], int] = {}
    validate_memo: dict[tuple, tuple[str, ...]] = {}
    prf_memo: dict[tuple, tuple[float, float, float]] = {}
    edit_memo: dict[tuple, float] = {}
    price_in, price_out = prices if prices is not None else (0.0, 0.0)
    have_prices = prices is not None
    # The authors' own figures (HR-Bench's cycles, TreeBench's mean IoU, TIR-Bench's credit).
    figures = Collector(profile) if profile in FIGURE_PROFILES else None
    # Tool outputs shown (section 15): over the adaptive lines that record the images sent.
    shown = [0, 0]
    shown_recorded = False

    def flush() -> int:
        """Ask the judge about the pending records, fold its verdicts in, freeze the records and
        hand them out (or keep them); empty the pending lists. Returns how many were done."""
        if not rows:
            return 0
        # ---- the judge, in batches; its verdicts are folded into the accumulators as applied
        if q_answer:
            verdicts = judge.answer_equivalence(
                [make_answer_question(info.sample, row[R_EXTRACTED]) for row, info in q_answer])
            for (row, info), yes in zip(q_answer, verdicts):
                yes = bool(yes)
                row[R_VERDICT] = yes
                row[R_DECIDED_BY] = judge_tag
                row[R_CORRECT] = yes
                if yes:
                    acc = accs[_MODE_INDEX[row[R_MODE]]]
                    if info.aux:
                        acc.aux_correct += 1
                    else:
                        acc.correct[info.group] += 1
        if q_calls:
            for entry, ok in zip(q_calls, judge.tool_call_validity(q_call_questions)):
                entry[1] = bool(ok)
                entry[2] = judge_tag
        for row, acc in proc_call_rows:  # tool effectiveness, once every call is decided
            entries = row[R_CALLS]
            n_ok = sum(1 for e in entries if e[1])
            acc.valid_calls += n_ok
            acc.decided_calls += len(entries)
            acc.per_sample_eff.append(n_ok / len(entries))
        if q_ks:
            ks_verdicts = judge.key_step_matching(
                [make_key_step_question(info.sample, steps) for _, info, steps in q_ks])
            q_steps = []
            for (row, info, steps), step_verdicts in zip(q_ks, ks_verdicts):
                ks = tuple(map(bool, step_verdicts))
                kcov, kcov_any = key_step_coverage(ks)
                row[R_KEY_STEPS] = ks
                row[R_KCOV] = kcov
                row[R_KCOV_ANY] = kcov_any
                if not info.aux and kcov is not None and kcov_any is not None:  # both None, or neither
                    acc = accs[_MODE_INDEX[row[R_MODE]]]
                    acc.kcov.append(kcov)
                    acc.kcov_any.append(kcov_any)
                if steps:
                    valid_iter = iter(row[R_CALLS])
                    per_step = tuple(next(valid_iter)[1] if s.tool is not None else None
                                     for s in steps)
                    q_steps.append((row, info, steps, per_step))
            if q_steps:
                scored = judge.step_scores(
                    [make_step_score_question(info.sample, steps, per_step)
                     for _, info, steps, per_step in q_steps])
                for (row, info, _, _), scores in zip(q_steps, scored):
                    scores = tuple(map(float, scores))
                    row[R_STEP_SCORES] = scores
                    if scores:
                        mean = row[R_STEP_SCORE] = sum(scores) / len(scores)
                        if not info.aux:
                            accs[_MODE_INDEX[row[R_MODE]]].step_score.append(mean)

        # ---- freeze the records; note each one's state for mode selection
        new = _new_tuple
        for row in call_rows:
            row[R_CALLS] = tuple([new(CallResult, e) for e in row[R_CALLS]])
        records = [new(PredictionResult, row) for row in rows]
        for slot, row in zip(row_slots, rows):
            if figures is not None:
                figures.decided(slot, row[R_CORRECT], row[R_DECIDED_BY] == UNDECIDED)
            n_calls = row[R_N_CALLS]
            seen[slot] = _slot_state(row[R_CORRECT], n_calls, n_calls > 0 and any(not e[3] for e in row[R_CALLS]),
                                     row[R_DECIDED_BY] == UNDECIDED)
        n = len(records)
        for pending in (rows, row_slots, q_answer, q_calls, q_call_questions, q_ks, call_rows,
                        proc_call_rows):
            pending.clear()
        if on_records is not None:
            on_records(records)
        else:
            kept.extend(records)
        return n

    for obj in predictions:
        # ---- read the prediction: a well-formed dict directly, anything else via parse_prediction
        good = False
        if type(obj) is dict:
            # Any: the type() checks below decide whether the fast path may use them.
            sid: Any = obj.get("sample_id")
            mode: Any = obj.get("mode")
            answer: Any = obj.get("answer")
            response: Any = obj.get("response")
            if answer is None:
                answer = ""
            if response is None:
                response = ""
            usage = obj.get("usage")
            in_tok = out_tok = None
            if usage is not None and type(usage) is dict:
                in_tok = usage.get("input_tokens")
                out_tok = usage.get("output_tokens")
            turns = obj.get("turns")
            latency = obj.get("latency_ms")
            cost_usd = obj.get("cost_usd")
            answer_image = obj.get("answer_image")
            raw_steps = obj.get("steps")
            if (
                # a line with a failure class (rare) is read and checked by parse_prediction
                obj.get("failure") is None and obj.get("failure_detail") is None
                and type(sid) is str and sid and type(mode) is str and mode_index(mode) is not None
                and type(answer) is str and type(response) is str
                and (usage is None or type(usage) is dict)
                and (in_tok is None or (type(in_tok) is int and in_tok >= 0))
                and (out_tok is None or (type(out_tok) is int and out_tok >= 0))
                and (turns is None or (type(turns) is int and turns >= 0))
                and (latency is None or ((type(latency) is int or type(latency) is float)
                                         and latency >= 0))
                and (cost_usd is None or ((type(cost_usd) is int or type(cost_usd) is float)
                                          and cost_usd >= 0))
                and (answer_image is None or type(answer_image) is str)
            ):
                if raw_steps is None:
                    steps: tuple[Step, ...] = ()
                    good = True
                elif type(raw_steps) is list:
                    built = []
                    for st in raw_steps:
                        if type(st) is not dict:
                            break
                        thought = st.get("thought")
                        if thought is None:
                            thought = ""
                        elif type(thought) is not str:
                            break
                        tool = st.get("tool")
                        if tool is not None:
                            if type(tool) is not dict:
                                break
                            name = tool.get("name")
                            args = tool.get("args")
                            t_in = tool.get("input")
                            t_out = tool.get("output")
                            err = tool.get("error")
                            if args is None:
                                args = {}
                            if not (type(name) is str and name and type(args) is dict
                                    and (t_in is None or type(t_in) is str)
                                    and (t_out is None or type(t_out) is str)
                                    and (err is None or type(err) is str)):
                                break
                            tool = make_tool_call(name, args, t_in, t_out, err or None)
                        built.append(make_step(thought, tool))
                    else:
                        steps = tuple(built)
                        good = True
        failure = None
        if not good:
            p = obj if type(obj) is Prediction else parse_prediction(obj)
            sid, mode, answer, response, steps = p.sample_id, p.mode, p.answer, p.response, p.steps
            answer_image, in_tok, out_tok, turns = p.answer_image, p.input_tokens, p.output_tokens, p.turns
            latency, cost_usd, failure = p.latency_ms, p.cost_usd, p.failure

        # ---- the sample, and one line per (sample, mode)
        info = infos_get(sid)
        if info is None:
            raise ScoringError(f"sample_id {sid!r} is not in the benchmark")
        mi = mode_index(mode)
        if mi is None:  # only a hand-built Prediction gets here with another mode
            raise PredictionFormatError("mode", "one of " + ", ".join(MODES), mode)
        slot = N_MODES * info.index + mi
        if seen[slot]:
            raise ScoringError(f"duplicate prediction for sample {sid!r}, mode {mode!r}")
        acc = accs[mi]
        aux = info.aux
        process = mode in process_modes

        # ---- answer: extraction and rules (memoised: both are pure functions)
        if failure is not None:
            # The attempt ended without an answer: wrong, and final (no judge is asked), whatever
            # its response holds. It stays in every denominator, as a missing line does.
            extracted = ""
            rule_state: int | None = 2
        else:
            if response:
                extracted = extract_answer(answer, response, profile, info.sample.category)
            else:
                memo = extract_memo.get(answer)
                if memo is None:
                    memo = extract_memo[answer] = extract_answer(answer, "", profile)
                extracted = memo
            # 1: right; 0: wrong, a judge may decide; 2: wrong, and final (a number or choice rule)
            rkey = (info.gold_id, extracted)
            rule_state = rule_memo.get(rkey)
            if rule_state is None:
                rule_state = rule_memo[rkey] = (1 if rule_match(info.gold, extracted)
                                             else 2 if rule_is_final(info.gold, extracted) else 0)
        correct = rule_state == 1
        if figures is not None:
            fs = info.sample
            figures.read(slot, mode, fs.regions, fs.category, str(fs.answer), fs.question, extracted,
                         response if response.strip() else answer, failure is not None)

        # ---- usage and cost
        if in_tok is None and out_tok is None:
            tokens = None
        else:
            tokens = (in_tok or 0) + (out_tok or 0)
        if cost_usd is not None:
            cost = float(cost_usd)
        elif have_prices and tokens is not None:
            cost = ((in_tok or 0) * price_in + (out_tok or 0) * price_out) / 1e6
        else:
            cost = None

        # ---- tool calls
        l_gt = info.l_gt
        iou = None
        calls: Sequence[ToolCall]
        if steps:
            calls = [s.tool for s in steps if s.tool is not None]
        else:
            calls = ()
        n_calls = len(calls)
        if n_calls:
            names = []
            entries = []
            for s in steps:
                call = s.tool
                if call is None:
                    continue
                cname = call.name
                rn = resolved_get(cname)
                if rn is None:
                    rn = resolve(cname)
                names.append(rn)
                if benchmark_tools is not None and rn not in benchmark_tools:
                    errors: tuple[str, ...] = (
                        f"tool {cname!r} is not in this benchmark's tool set",)
                elif tool_validator is not None:
                    vkey = args_key(cname, call.args)
                    if vkey is not None:
                        cached = validate_memo.get(vkey)
                        if cached is None:
                            cached = validate_memo[vkey] = tuple(tool_validator(cname, call.args))
                        errors = cached
                    else:
                        errors = tuple(tool_validator(cname, call.args))
                else:
                    errors = ()
                if call.error:
                    errors = errors + (f"execution error: {call.error}",)
                if errors:
                    entries.append([cname, False, "rule", errors])
                else:
                    entry: list[Any] = [cname, None, "", ()]
                    entries.append(entry)
                    if process:
                        q_calls.append(entry)
                        q_call_questions.append(
                            make_tool_call_question(info.sample, call, s.thought))
            effective = effective_chain(calls, answer_image, info.sample.n_images)
            if process and info.zoomable:
                if info.sample.region_images:
                    iou = _media_iou(calls, names, info.sample)
                else:
                    boxes = [b for c, n in zip(calls, names) if _is_zoom(n)
                             and (b := box_from_args(c.args)) is not None]
                    iou = best_iou(boxes, info.sample.regions)
            if l_gt:
                pkey = (tuple(names), info.ref_names)
                prf = prf_memo.get(pkey)
                if prf is None:
                    prf = prf_memo[pkey] = toolset_prf(names, info.ref_names)
                ekey = (tuple([names[i] for i in effective]), info.ref_names)
                edit = edit_memo.get(ekey)
                if edit is None:
                    edit = edit_memo[ekey] = normalized_edit_distance(ekey[0], info.ref_names)
            else:
                prf = edit = None
        else:
            entries = ()  # type: ignore[assignment]  # one shared empty tuple for the (many) rows without calls
            effective = ()
            prf = info.empty_prf
            edit = info.empty_edit
        l_eff = len(effective)
        n_steps = turns if turns is not None else len(steps)

        row = [sid, mode, extracted, correct, "rule", n_steps, n_calls, entries, n_calls, l_eff,
               l_gt, effective, prf, edit, None, None, None, None, None, iou, tokens, cost,
               latency, None, failure]
        rows.append(row)
        row_slots.append(slot)
        seen[slot] = SEEN
        if n_calls:
            call_rows.append(row)
            if mi == _ADAPTIVE:
                # a decoded line carries its run record; a parsed one (the validation pass) what it says
                if type(obj) is dict:
                    found = outputs_shown(obj.get("steps"), obj["run"]) if "run" in obj else None
                    seen_out = found[:2] if found is not None else None
                else:
                    seen_out = getattr(obj, "outputs_shown", None)
                if seen_out is not None:
                    shown_recorded = True
                    shown[0] += seen_out[0]
                    shown[1] += seen_out[1]

        # ---- judge questions, and the rule-decided figures folded in now
        undecided = False
        if not rule_state:
            if judge_answers:
                q_answer.append((row, info))
            elif leave_open:
                undecided = True
                row[R_DECIDED_BY] = UNDECIDED
        acc.n_rows += 1
        if aux:
            if correct:
                acc.aux_correct += 1
            elif undecided:
                acc.aux_undecided += 1
        else:  # fold the rule-decided figures in now (see aggregate.mode_report)
            acc.n_main += 1
            if correct:
                acc.correct[info.group] += 1
            elif undecided:
                acc.undecided[info.group] += 1
            if failure is not None:
                acc.failures[_FAILURE_INDEX[failure]] += 1
            elif extracted:
                acc.answered += 1
            acc.steps += n_steps
            if n_calls:
                acc.calls += n_calls
                acc.with_calls += 1
                acc.efficiency.append(l_eff / n_calls)
                if process:
                    proc_call_rows.append((row, acc))
            if tokens is not None:
                acc.tokens += tokens
                acc.n_tokens += 1
            if latency is not None:
                acc.latency.append(latency)
            if cost is not None:
                acc.cost.append(cost)
            if iou is not None:
                acc.ious.append(iou)
            if l_gt:
                assert prf is not None and edit is not None  # computed above whenever the sample has a reference chain
                acc.n_ref += 1
                acc.mae_total += abs(n_calls - l_gt)
                acc.mae_eff += abs(l_eff - l_gt)
                if n_calls:  # no predicted tool: precision is undefined, not 0 (metrics.md section 14)
                    acc.precision.append(prf[0])
                acc.recall.append(prf[1])
                acc.f1.append(prf[2])
                acc.edit.append(edit)
        if process and info.has_keys:
            q_ks.append((row, info, steps))

        if len(rows) == chunk_size:
            n_records += flush()

    n_records += flush()
    modes = {
        m: mode_report(m, accs[i], bench, process=m in process_modes, seed=seed,
                       resamples=resamples)
        for i, m in enumerate(MODES) if accs[i].n_rows
    }
    # A figure with nothing under it is not available, with the reason, never 0 (section 14).
    file_calls = any(a.calls for a in accs)
    file_steps = any(a.steps for a in accs)
    file_usage = any(a.n_tokens or a.cost for a in accs)
    modes = {m: not_available(r, file_calls=file_calls, file_steps=file_steps, file_usage=file_usage)
             for m, r in modes.items()}
    return SubmissionReport(
        judge=judge.name,
        n_samples=len(bench.order),
        n_predictions=n_records,
        modes=modes,
        mode_selection=mode_selection_from_state(seen, bench.order, seed=seed,
                                                 resamples=resamples),
        tool_effect=tool_effect(seen, bench.order, shown_counts=(shown[0], shown[1]) if shown_recorded else None,
                                any_calls=file_calls, seed=seed, resamples=resamples),
        records=tuple(kept),
        scoring=bench.scoring,
        author_figures=figures.report(bench.order_samples(), N_MODES, _MODE_INDEX) if figures is not None else None,
    )
