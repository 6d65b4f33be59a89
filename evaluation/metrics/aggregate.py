"""Per-mode aggregates from per-prediction records (metrics.md sections 2-7).

Aux-line samples appear only in their own accuracy table; every other figure is over the
non-aux samples, as the paper's overall figures are.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from .mode_selection import cell, confusion
from .stats import RESAMPLES, SEED, bootstrap_mcc, bootstrap_rate
from .types import (
    AccuracyTable,
    Confusion,
    CostReport,
    Mean,
    ModeReport,
    PredictionResult,
    ProcessReport,
    Rate,
    ToolchainReport,
)

if TYPE_CHECKING:
    from .scoring import SampleInfo


def _mean(values: Sequence[float]) -> Mean:
    return Mean(sum(values) / len(values), len(values)) if values else Mean(None, 0)


class _Tally:
    __slots__ = ("count", "n")

    def __init__(self) -> None:
        self.count = 0
        self.n = 0


def _rates(tallies: Mapping[str, _Tally], seed: int, resamples: int) -> dict[str, Rate]:
    return {k: _rate(t, seed, resamples) for k, t in sorted(tallies.items())}


def _rate(t: _Tally, seed: int, resamples: int) -> Rate:
    return Rate(t.count, t.n, bootstrap_rate(t.count, t.n, seed=seed, resamples=resamples))


def accuracy_table(records: Iterable[PredictionResult], order: Sequence[SampleInfo], *,
                   seed: int = SEED, resamples: int = RESAMPLES) -> AccuracyTable:
    """Correct over all benchmark samples of the table; a missing prediction counts wrong."""
    correct = {r.sample_id: r.correct for r in records}
    overall, wo_enh, aux = _Tally(), _Tally(), _Tally()
    domains: dict[str, _Tally] = {}
    categories: dict[str, _Tally] = {}
    missing = 0
    for info in order:
        s = info.sample
        got = correct.get(s.uid)
        hit = 1 if got else 0
        if info.aux:
            aux.n += 1
            aux.count += hit
            continue
        if got is None:
            missing += 1
        overall.n += 1
        overall.count += hit
        if not s.transform:
            wo_enh.n += 1
            wo_enh.count += hit
        d = domains.get(s.domain)
        if d is None:
            d = domains[s.domain] = _Tally()
        d.n += 1
        d.count += hit
        c = categories.get(s.category)
        if c is None:
            c = categories[s.category] = _Tally()
        c.n += 1
        c.count += hit
    overall_rate = _rate(overall, seed, resamples)
    return AccuracyTable(
        overall=overall_rate,
        by_domain=_rates(domains, seed, resamples),
        by_category=_rates(categories, seed, resamples),
        wo_enh=_rate(wo_enh, seed, resamples),
        all=overall_rate,
        aux_line=_rate(aux, seed, resamples),
        missing=missing,
    )


def mode_report(mode: str, records: Sequence[PredictionResult], order: Sequence[SampleInfo], *,
                process: bool, seed: int = SEED, resamples: int = RESAMPLES) -> ModeReport:
    aux_ids = {i.sample.uid for i in order if i.aux}
    main = [r for r in records if r.sample_id not in aux_ids] if aux_ids else list(records)
    steps = [r.n_steps for r in main]
    n_calls = [r.n_calls for r in main]
    tokens = [r.tokens for r in main if r.tokens is not None]
    latency = [r.latency_ms for r in main if r.latency_ms is not None]
    costs = [r.cost_usd for r in main if r.cost_usd is not None]

    kcov: list[float] = []
    kcov_any: list[float] = []
    step_score: list[float] = []
    ious: list[float] = []
    per_sample_eff: list[float] = []
    valid_calls = decided_calls = 0
    if process:
        for r in main:
            if r.kcov is not None:
                kcov.append(r.kcov)
                kcov_any.append(r.kcov_any)  # type: ignore[arg-type]
            if r.step_score is not None:
                step_score.append(r.step_score)
            if r.iou is not None:
                ious.append(r.iou)
            if r.calls:
                ok = sum(1 for c in r.calls if c.valid)
                valid_calls += ok
                decided_calls += len(r.calls)
                per_sample_eff.append(ok / len(r.calls))
    hits = sum(1 for v in ious if v >= 0.5)
    proc = ProcessReport(
        kcov=_mean(kcov),
        kcov_any=_mean(kcov_any),
        tool_eff=Rate(valid_calls, decided_calls),
        tool_eff_per_sample=_mean(per_sample_eff),
        mean_steps=_mean(steps),
        mean_calls=_mean(n_calls),
        mean_tokens=_mean(tokens),
        mean_latency_ms=_mean(latency),
        grounding_iou=_mean(ious),
        grounding_hit=Rate(hits, len(ious)),
        step_score=_mean(step_score),
    )

    with_ref = [r for r in main if r.l_gt > 0]
    prf = [r.toolset_prf for r in with_ref]
    chain = ToolchainReport(
        tcr=Rate(sum(1 for c in n_calls if c > 0), len(main)),
        mae_total=_mean([abs(r.l_total - r.l_gt) for r in with_ref]),
        mae_eff=_mean([abs(r.l_eff - r.l_gt) for r in with_ref]),
        efficiency=_mean([r.l_eff / r.l_total for r in main if r.l_total > 0]),
        toolset_precision=_mean([t[0] for t in prf]),  # type: ignore[index]
        toolset_recall=_mean([t[1] for t in prf]),  # type: ignore[index]
        toolset_f1=_mean([t[2] for t in prf]),  # type: ignore[index]
        edit_distance=_mean([r.edit_distance for r in with_ref]),  # type: ignore[misc]
    )
    return ModeReport(
        mode=mode,
        n_predictions=len(records),
        accuracy=accuracy_table(records, order, seed=seed, resamples=resamples),
        process=proc,
        toolchain=chain,
        cost=CostReport(mean_cost_usd=_mean(costs)),
    )


def mode_selection(text: Iterable[PredictionResult], adaptive: Iterable[PredictionResult],
                   infos: Mapping[str, SampleInfo], *, seed: int = SEED,
                   resamples: int = RESAMPLES) -> Confusion | None:
    """Confusion and MCC over non-aux samples with both a text and an adaptive prediction;
    None when no sample has both."""
    text_ok = {r.sample_id: r.correct for r in text if not infos[r.sample_id].aux}
    cells = [cell(text_ok[r.sample_id], r.n_calls > 0) for r in adaptive
             if r.sample_id in text_ok]
    if not cells:
        return None
    conf = confusion(cells)
    ci = bootstrap_mcc(conf.tp, conf.fp, conf.tn, conf.fn, seed=seed, resamples=resamples)
    return Confusion(conf.tp, conf.fp, conf.tn, conf.fn, conf.mcc, ci)
