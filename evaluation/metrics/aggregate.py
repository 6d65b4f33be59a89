"""Per-mode aggregates (metrics.md sections 2-7), folded in while scoring.

The scorer folds each record into its mode's ``ModeAccumulator`` while the record is in hand
(rule-decided figures in the reading pass, judge-decided ones as the verdicts are applied):
on 100,000 records a second pass is dominated by memory latency. ``mode_report`` turns an
accumulator into the report. Means are sums over lists kept in file order, so every figure
is the same, bit for bit, as a pass over the finished records gives.

Aux-line samples appear only in their own accuracy table; every other figure is over the
non-aux samples, as the paper's overall figures are.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from .mode_selection import cell, mcc, undefined_reason
from .profiles import undecided_reason
from .stats import RESAMPLES, SEED, bootstrap_mcc, bootstrap_mean, bootstrap_rate
from .types import (
    FAILURE_CLASSES,
    AccuracyTable,
    N_MODES,
    Confusion,
    CostReport,
    Mean,
    ModeReport,
    ProcessReport,
    Rate,
    ToolchainReport,
)

if TYPE_CHECKING:
    from .prepared import PreparedBenchmark, SampleInfo


def _mean(values: Sequence[float]) -> Mean:
    return Mean(sum(values) / len(values), len(values)) if values else Mean(None, 0)


def _mean_ci(values: Sequence[float], seed: int, resamples: int) -> Mean:
    """A mean with its bootstrap interval, for the per-sample figures whose values are few
    distinct fractions (coverage j/m, toolset figures, efficiency, step scores): their counts
    are drawn, a few milliseconds. Continuous values (IoU, latency, cost) would need index
    resampling, O(resamples * n): those means keep only their n, and so does this one in the
    unusual case of more than ``stats.MULTINOMIAL_MAX_DISTINCT`` distinct values."""
    if not values:
        return Mean(None, 0)
    return Mean(sum(values) / len(values), len(values),
                bootstrap_mean(values, seed=seed, resamples=resamples, resample_indices=False))


class _Tally:
    __slots__ = ("count", "n", "undecided")

    def __init__(self) -> None:
        self.count = 0
        self.n = 0
        self.undecided = 0


def _rates(tallies: Mapping[str, _Tally], seed: int, resamples: int) -> dict[str, Rate]:
    return {k: _rate(t, seed, resamples) for k, t in sorted(tallies.items())}


def _rate(t: _Tally, seed: int, resamples: int) -> Rate:
    if t.undecided:  # not available: no interval, the reason with the decided share (metrics.md section 13)
        return Rate(t.count, t.n, reason=undecided_reason(t.undecided, t.n, t.count), undecided=t.undecided)
    return Rate(t.count, t.n, bootstrap_rate(t.count, t.n, seed=seed, resamples=resamples))


class ModeAccumulator:
    """Running figures of one mode, folded in by the scorer while each record is in hand (a
    second pass over 100,000 records is dominated by memory latency). Lists keep file order,
    so their sums are those of a pass over the finished records, bit for bit."""

    __slots__ = ("n_rows", "n_main", "correct", "aux_correct", "steps", "calls", "with_calls",
                 "tokens", "n_tokens", "latency", "cost", "ious", "mae_total", "mae_eff",
                 "n_ref", "precision", "recall", "f1", "edit", "efficiency", "kcov", "kcov_any",
                 "step_score", "per_sample_eff", "valid_calls", "decided_calls", "answered",
                 "failures", "undecided", "aux_undecided")

    def __init__(self, n_groups: int) -> None:
        self.n_rows = 0  # every prediction of the mode, aux-line ones included
        self.n_main = 0  # non-aux predictions (the other non-aux samples are missing)
        self.correct = [0] * n_groups  # correct non-aux predictions per sample group
        self.aux_correct = 0
        self.steps = self.calls = self.with_calls = self.tokens = self.n_tokens = 0
        self.latency: list[float] = []
        self.cost: list[float] = []
        self.ious: list[float] = []
        self.mae_total = self.mae_eff = self.n_ref = 0
        self.precision: list[float] = []
        self.recall: list[float] = []
        self.f1: list[float] = []
        self.edit: list[float] = []
        self.efficiency: list[float] = []
        self.kcov: list[float] = []
        self.kcov_any: list[float] = []
        self.step_score: list[float] = []
        self.per_sample_eff: list[float] = []
        self.valid_calls = self.decided_calls = 0
        self.answered = 0  # non-aux lines with an answer and no failure class
        self.failures = [0] * len(FAILURE_CLASSES)  # non-aux lines per failure class
        self.undecided = [0] * n_groups  # non-aux lines left to an LLM judge, per sample group
        self.aux_undecided = 0




def _count_mean(total: int, n: int) -> Mean:
    return Mean(total / n, n) if n else Mean(None, 0)


def accuracy_table(acc: ModeAccumulator, bench: PreparedBenchmark, *, seed: int = SEED,
                   resamples: int = RESAMPLES) -> AccuracyTable:
    """Correct over all benchmark samples of the table; a missing prediction counts wrong."""
    correct = acc.correct
    overall, wo_enh, aux = _Tally(), _Tally(), _Tally()
    domains: dict[str, _Tally] = {}
    categories: dict[str, _Tally] = {}
    for (domain, category, plain), size, hit, open_ in zip(bench.groups, bench.group_sizes, correct, acc.undecided):
        d = domains.get(domain)
        if d is None:
            d = domains[domain] = _Tally()
        c = categories.get(category)
        if c is None:
            c = categories[category] = _Tally()
        for t in (overall, wo_enh, d, c) if plain else (overall, d, c):
            t.n += size
            t.count += hit
            t.undecided += open_
    aux.n = bench.n_aux
    aux.count = acc.aux_correct
    aux.undecided = acc.aux_undecided
    overall_rate = _rate(overall, seed, resamples)
    return AccuracyTable(
        overall=overall_rate,
        by_domain=_rates(domains, seed, resamples),
        by_category=_rates(categories, seed, resamples),
        wo_enh=_rate(wo_enh, seed, resamples),
        all=overall_rate,
        aux_line=_rate(aux, seed, resamples),
        missing=bench.n_main - acc.n_main,
    )


NO_CALLS = "no tool calls in this file"
NO_STEPS = "no steps in this file"
NO_USAGE = "no token usage or cost in this file"
NOT_JUDGED = "tool calls in this mode are not judged (only the process modes', adaptive by default)"


def _missing(what: str, mode: str, file_has: bool) -> str:
    """The reason a figure is not available (metrics.md section 14): nothing in the file carries it,
    or nothing in this mode's lines when other modes do."""
    return f"{what} ({mode} lines)" if file_has else what


def not_available(report: ModeReport, *, file_calls: bool, file_steps: bool, file_usage: bool) -> ModeReport:
    """The mode's figures with nothing under them as "not available" with the reason, never 0 with an
    interval [0, 0] (metrics.md section 14): the toolchain and tool figures when no line of the mode
    has a tool call, the step figures when none has a step, the cost and tokens when none has usage."""
    mode = report.mode
    proc, chain, cost = report.process, report.toolchain, report.cost
    if not proc.mean_calls.value:
        why = _missing(NO_CALLS, mode, file_calls)
        none = Mean(None, 0, reason=why)
        chain = ToolchainReport(tcr=Rate(0, 0, reason=why), mae_total=none, mae_eff=none, efficiency=none,
                                toolset_precision=none, toolset_recall=none, toolset_f1=none, edit_distance=none)
        proc = replace(proc, tool_eff=Rate(0, 0, reason=why), tool_eff_per_sample=Mean(None, 0, reason=why),
                       mean_calls=Mean(None, 0, reason=why), grounding_iou=Mean(None, 0, reason=why),
                       grounding_hit=Rate(0, 0, reason=why))
    if not proc.mean_steps.value:
        why = _missing(NO_STEPS, mode, file_steps)
        proc = replace(proc, mean_steps=Mean(None, 0, reason=why), kcov=Mean(None, 0, reason=why),
                       kcov_any=Mean(None, 0, reason=why), step_score=Mean(None, 0, reason=why))
    if cost.mean_cost_usd.value is None and proc.mean_tokens.value is None:
        why = _missing(NO_USAGE, mode, file_usage)
        cost = CostReport(mean_cost_usd=Mean(None, 0, reason=why))
        proc = replace(proc, mean_tokens=Mean(None, 0, reason=why))
    return replace(report, process=proc, toolchain=chain, cost=cost)


def mode_report(mode: str, acc: ModeAccumulator, bench: PreparedBenchmark, *, process: bool,
                seed: int = SEED, resamples: int = RESAMPLES) -> ModeReport:
    n_main = acc.n_main
    ious = acc.ious if process else []
    hits = sum(1 for v in ious if v >= 0.5)
    proc = ProcessReport(
        kcov=_mean_ci(acc.kcov, seed, resamples),
        kcov_any=_mean_ci(acc.kcov_any, seed, resamples),
        # calls of a mode outside process_modes are not judged: nothing to divide by (section 14)
        tool_eff=Rate(acc.valid_calls, acc.decided_calls, reason=None if process or not acc.calls else NOT_JUDGED),
        tool_eff_per_sample=(_mean_ci(acc.per_sample_eff, seed, resamples) if process or not acc.calls
                             else Mean(None, 0, reason=NOT_JUDGED)),
        mean_steps=_count_mean(acc.steps, n_main),
        mean_calls=_count_mean(acc.calls, n_main),
        mean_tokens=_count_mean(acc.tokens, acc.n_tokens),
        mean_latency_ms=_mean(acc.latency),
        grounding_iou=_mean(ious),
        grounding_hit=Rate(hits, len(ious)),
        step_score=_mean_ci(acc.step_score, seed, resamples),
    )
    chain = ToolchainReport(
        tcr=Rate(acc.with_calls, n_main),
        mae_total=_count_mean(acc.mae_total, acc.n_ref),
        mae_eff=_count_mean(acc.mae_eff, acc.n_ref),
        efficiency=_mean_ci(acc.efficiency, seed, resamples),
        toolset_precision=_mean_ci(acc.precision, seed, resamples),
        toolset_recall=_mean_ci(acc.recall, seed, resamples),
        toolset_f1=_mean_ci(acc.f1, seed, resamples),
        edit_distance=_mean_ci(acc.edit, seed, resamples),
    )
    return ModeReport(
        mode=mode,
        n_predictions=acc.n_rows,
        accuracy=accuracy_table(acc, bench, seed=seed, resamples=resamples),
        process=proc,
        toolchain=chain,
        cost=CostReport(mean_cost_usd=_mean(acc.cost)),
        # the denominator of accuracy's overall figure: every non-aux sample of the benchmark
        answered=Rate(acc.answered, bench.n_main),
        failures=dict(zip(FAILURE_CLASSES, acc.failures)),
    )


# Mode selection needs, per (sample, mode), only whether the record is correct and whether it
# used a tool: the scorer keeps that in one byte per slot instead of the record.
SEEN = 1  # read, not finished yet
_CORRECT = 2
_CALLS = 4
_UNDECIDED = 8  # the answer needs an LLM judge: neither right nor wrong, so out of the confusion
_VALID_CALL = 16  # at least one call passed its tool's schema and ran (tool_effect, metrics.md section 15)


def slot_state(correct: bool, n_calls: int, valid_call: bool = False, undecided: bool = False) -> int:
    """The byte ``mode_selection_from_state`` and ``tool_effect`` read for a finished record."""
    return (SEEN | (_CORRECT if correct else 0) | (_CALLS if n_calls > 0 else 0) | (_VALID_CALL if valid_call else 0)
            | (_UNDECIDED if undecided else 0))


def mode_selection_from_state(state: bytearray, order: Sequence[SampleInfo], *,
                              seed: int = SEED, resamples: int = RESAMPLES) -> Confusion | None:
    """Confusion and MCC over non-aux samples with both a text and an adaptive prediction
    (``state[N_MODES * i + m]``: the ``slot_state`` byte of sample i in mode m, MODES order, 0 where
    no line); None when no sample has both."""
    counts = [0, 0, 0, 0]
    for i, info in enumerate(order):
        text = state[N_MODES * i]
        if not text or info.aux or text & _UNDECIDED:  # whether text needed a tool is unknown until judged
            continue
        adaptive = state[N_MODES * i + 1]
        if adaptive:
            counts[cell(bool(text & _CORRECT), bool(adaptive & _CALLS))] += 1
    if not any(counts):
        return None
    tp, fp, tn, fn = counts
    reason = undefined_reason(tp, fp, tn, fn)
    if reason is not None:  # not 0.00 [0.00, 0.00]: undefined (metrics.md section 14)
        return Confusion(tp, fp, tn, fn, None, None, reason)
    ci = bootstrap_mcc(tp, fp, tn, fn, seed=seed, resamples=resamples)
    return Confusion(tp, fp, tn, fn, mcc(tp, fp, tn, fn), ci)
