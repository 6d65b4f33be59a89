"""The scoring library: plain Python, no Django, no import of the project's apps.

Entry points: ``score_submission`` (samples + predictions + judge -> SubmissionReport),
``parse_prediction`` (one decoded JSON object -> Prediction) and the per-metric functions of
the submodules. Definitions: docs/metrics.md.
"""

from .answers import (
    compile_gold,
    extract_answer,
    normalize_text,
    parse_number,
    rule_is_final,
    rule_match,
)
from .cost import Point, pareto_frontier, prediction_cost, rank_score, routing_baselines
from .mode_selection import confusion, mcc
from .parse import parse_prediction
from .profiles import NEEDS_JUDGE, PROFILE_LABELS, PROFILE_NOTES, PROFILES
from .questions import AnswerQuestion, KeyStepQuestion, StepScoreQuestion, ToolCallQuestion
from .scoring import PreparedBenchmark, ScoringError, score_submission
from .ranks import (
    Bounds,
    RankInterval,
    entry_bounds,
    entry_bounds_mcc,
    intervals_from_bounds,
    neighbour_mcnemar,
    rank_intervals,
    rank_intervals_mcc,
    shared_ranks,
)
from .stats import bootstrap_mcc, bootstrap_mean, bootstrap_rate, mcnemar_exact, mcnemar_from_counts, paired_bootstrap_mcc
from .toolchain import effective_chain, normalized_edit_distance, toolset_prf
from .types import (
    Prediction,
    PredictionFormatError,
    PredictionResult,
    Sample,
    Step,
    SubmissionReport,
    ToolCall,
)

__all__ = [
    "AnswerQuestion", "Bounds",
    "KeyStepQuestion", "NEEDS_JUDGE", "PROFILES", "PROFILE_LABELS", "PROFILE_NOTES", "Point", "Prediction",
    "PredictionFormatError",
    "PredictionResult", "PreparedBenchmark", "RankInterval", "Sample", "ScoringError", "Step",
    "StepScoreQuestion", "SubmissionReport", "ToolCall", "ToolCallQuestion", "bootstrap_mcc",
    "bootstrap_mean", "bootstrap_rate", "compile_gold", "confusion", "effective_chain", "entry_bounds", "entry_bounds_mcc",
    "extract_answer", "intervals_from_bounds",
    "mcc", "mcnemar_exact", "mcnemar_from_counts", "neighbour_mcnemar", "normalize_text",
    "normalized_edit_distance",
    "paired_bootstrap_mcc", "pareto_frontier", "parse_number", "parse_prediction",
    "prediction_cost", "rank_intervals", "rank_intervals_mcc", "rank_score", "routing_baselines", "rule_is_final", "rule_match",
    "score_submission", "shared_ranks",
    "toolset_prf",
]
