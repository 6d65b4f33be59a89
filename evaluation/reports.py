"""The scorer's typed results as stored JSON (Submission.results) and table rows (PredictionResult).

``report_to_json`` keeps every field of the library's dataclasses and adds the derived values a
reader wants without recomputing them (a Rate's ``value`` and ``percent``, a Confusion's ``n``,
the cost per 10k samples). The per-prediction ``records`` are not in it: they are rows.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from evaluation.metrics.tool_effect import stored as tool_effect_stored
from evaluation.metrics.types import Confusion, CostReport, PredictionResult, Rate, SubmissionReport

RESULTS_FORMAT = 3  # bump when the shape of Submission.results changes (2: answered, failures per mode;
# 3: tool_effect, and mode_selection.mcc null with its reason when undefined)


def _plain(obj: Any) -> Any:
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        out = {f.name: _plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
        if out.get("reason", "") is None:
            del out["reason"]  # only a figure that is not available says why (metrics.md section 14)
        if isinstance(obj, Rate):
            out["value"] = obj.value
            out["percent"] = obj.percent
            if obj.undecided:
                out["decided_value"] = obj.decided_value  # beside "k of n rows need an LLM judge"
            else:
                del out["undecided"]
        elif isinstance(obj, Confusion):
            out["n"] = obj.n
        elif isinstance(obj, CostReport):
            out["per_10k_usd"] = obj.per_10k_usd
        return out
    if isinstance(obj, Mapping):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    return obj


def report_to_json(report: SubmissionReport) -> dict[str, Any]:
    return {
        "format": RESULTS_FORMAT,
        "judge": report.judge,
        "scoring": report.scoring,
        "n_samples": report.n_samples,
        "n_predictions": report.n_predictions,
        "modes": {mode: _plain(m) for mode, m in report.modes.items()},
        "mode_selection": _plain(report.mode_selection),
        "tool_effect": tool_effect_stored(report.tool_effect),  # its integers (metrics.md section 15)
        **({"author_figures": _plain(report.author_figures)} if report.author_figures is not None else {}),
    }


def record_fields(rec: PredictionResult) -> dict[str, Any]:
    """The PredictionResult model's fields for one scorer record (sample and submission aside)."""
    return {
        "mode": rec.mode,
        "correct": rec.correct,
        "decided_by": rec.decided_by,
        "extracted": rec.extracted,
        "answer_verdict": rec.answer_verdict,
        "n_steps": rec.n_steps,
        "n_calls": rec.n_calls,
        "l_eff": rec.l_eff,
        "l_gt": rec.l_gt,
        "calls": [
            {"name": c.name, "valid": c.valid, "decided_by": c.decided_by, "errors": list(c.errors)}
            for c in rec.calls
        ],
        "effective": list(rec.effective),
        "toolset_prf": list(rec.toolset_prf) if rec.toolset_prf is not None else None,
        "edit_distance": rec.edit_distance,
        "key_steps": list(rec.key_steps) if rec.key_steps is not None else None,
        "kcov": rec.kcov,
        "kcov_any": rec.kcov_any,
        "step_scores": list(rec.step_scores) if rec.step_scores is not None else None,
        "step_score": rec.step_score,
        "iou": rec.iou,
        "tokens": rec.tokens,
        "cost_usd": rec.cost_usd,
        "latency_ms": rec.latency_ms,
    }


def scorer_version(scoring: str = "generic") -> str:
    """A fingerprint of the scoring library and judges' source: it changes whenever they do, and the
    scoring profile (metrics.md section 13) when it is not generic (``metrics-<hash>+vtcbench``).

    Stored with every result, so ``rescore_all`` can tell which submissions an old scorer made, or the
    rules of a profile the benchmark no longer has.
    """
    base = _library_version()
    return base if scoring == "generic" else f"{base}+{scoring}"


@cache
def _library_version() -> str:
    root = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for folder in ("metrics", "judges"):
        for path in sorted((root / folder).rglob("*")):
            if path.is_file() and path.suffix in (".py", ".txt"):
                digest.update(path.relative_to(root).as_posix().encode())
                digest.update(path.read_bytes())
    return f"metrics-{digest.hexdigest()[:12]}"
