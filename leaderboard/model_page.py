"""Reads for the model page (every metric, per category, error breakdown, dev samples) and the compare page.

Per-sample detail is shown for dev-split samples only: test-split correctness stays hidden, as
in ``evaluation.selectors.prediction_results_for``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db.models import F, Q, QuerySet

from annotation.models import Annotation, AnnotationStatus, Benchmark, Category, Sample, Split
from evaluation.metrics import mcnemar_exact, paired_bootstrap_mcc
from evaluation.metrics.mode_selection import cell
from evaluation.metrics.profiles import UNDECIDED
from evaluation.metrics.types import MODES as RESULT_MODES
from evaluation.models import PredictionResult, Submission
from evaluation.templatetags.figures import NOT_RECORDED, failure_text
from evaluation.validation import iter_prediction_objects
from leaderboard.figures import Fig, cell_fig, mean_fig, path, plot_text, rate_fig
from leaderboard.board import TEST_NAMES, TESTED, UNDECIDED_BIT
from leaderboard import rank_read
from leaderboard.models import BoardEntry, EntryRank
from evaluation.metrics.types import BOARD_MODES as MODES


def public_submission(benchmark: Benchmark, pk: int) -> Submission | None:
    return Submission.objects.on_board().filter(benchmark=benchmark).select_related("owner").filter(pk=pk).first()


RANK_LABELS = {"text": "Text accuracy", "adaptive": "Adaptive accuracy", "oracle": "Oracle accuracy",
               "mcc": "Mode-selection MCC"}


@dataclass(frozen=True, slots=True)
class StandingRow:
    metric: str
    label: str
    rank: int  # shared with its tie group
    low: int | None
    high: int | None
    of: int  # entries ranked by this figure
    tied: int  # entries sharing the rank, this one included
    p_above: float | None
    significant_above: bool | None
    test: str


def standing_rows(benchmark: Benchmark, submission: Submission) -> list[StandingRow]:
    """The submission's stored whole-board ranks per tested ordering (services.ranks_build) as of the board's
    last build, moved by the changes since (``rank_read``): its rows, the shifts, per ordering the entries ranked
    and its tie group's ends (indexed queries)."""
    shifts = rank_read.shifts_of(benchmark)  # before the rows (rank_update.ranks_compact: a read straddling a fold)
    rows = list(EntryRank.objects.filter(submission=submission).values(*rank_read.ROW_FIELDS))
    if not rows:
        return []
    now = rank_read.ranks_now(benchmark, rows, shifts)
    out = []
    for m in TESTED:
        row = next((r for r in rows if r["metric"] == m), None)
        if row is None:
            continue
        mine = now[(m, submission.pk)]
        of = EntryRank.objects.filter(benchmark=benchmark, metric=m).count()
        following = rank_read.next_group_start(benchmark, m, row)
        end = rank_read.moved(following, shifts.get(m, []))[0] if following is not None else of + 1
        out.append(StandingRow(m, RANK_LABELS[m], mine.shared_rank, mine.rank_low, mine.rank_high, of,
                               end - mine.shared_rank, mine.p_above, mine.significant_above,
                               TEST_NAMES.get(m, "exact McNemar")))
    return out


METRICS = (  # (label, section, key, scale, digits)
    ("Accuracy %", "accuracy", "overall", 100.0, 1), ("Accuracy w/o enh. %", "accuracy", "wo_enh", 100.0, 1),
    ("Aux-line accuracy %", "accuracy", "aux_line", 100.0, 1),
    ("Key-step coverage %", "process", "kcov", 100.0, 1), ("Key-step any %", "process", "kcov_any", 100.0, 1),
    ("Tool effectiveness %", "process", "tool_eff", 100.0, 1), ("Steps", "process", "mean_steps", 1.0, 2),
    ("Tool calls", "process", "mean_calls", 1.0, 2), ("Tokens", "process", "mean_tokens", 1.0, 0),
    ("Latency ms", "process", "mean_latency_ms", 1.0, 0), ("Step score", "process", "step_score", 1.0, 2),
    ("Grounding IoU", "process", "grounding_iou", 1.0, 2), ("Grounding hit %", "process", "grounding_hit", 100.0, 1),
    ("TCR %", "toolchain", "tcr", 100.0, 1), ("MAE (all calls)", "toolchain", "mae_total", 1.0, 2),
    ("MAE (effective)", "toolchain", "mae_eff", 1.0, 2), ("Chain efficiency", "toolchain", "efficiency", 1.0, 2),
    ("Toolset F1", "toolchain", "toolset_f1", 1.0, 2), ("Edit distance", "toolchain", "edit_distance", 1.0, 2),
    ("$ per 10K samples", "cost", "mean_cost_usd", 10_000.0, 2),
)


def metric_rows(results: dict) -> tuple[list[str], list[dict[str, Any]]]:
    # Every mode the scorer reports, blind included (leaderboard.services.MODES are the board's columns).
    modes = [m for m in RESULT_MODES if m in (results.get("modes") or {})]
    rows = []
    for label, section, key, scale, digits in METRICS:
        figs = []
        for mode in modes:
            node = path(results, "modes", mode, section, key)
            figs.append(rate_fig(node, scale) if isinstance(node, dict) and "count" in node else mean_fig(node, scale))
        if any(f.known or f.reason for f in figs):  # "not available" with its reason, never hidden as if 0
            rows.append({"label": label, "figs": figs, "digits": digits})
        if key == "overall":  # beside accuracy: how many samples got an answer at all, and why not
            rows += answered_rows(results, modes)
    return modes, rows


def answered_rows(results: dict, modes: list[str]) -> list[dict[str, Any]]:
    """The share answered (over accuracy's n) and the failures by class, per mode. Shown even when the
    results predate them (a dash saying so, ``NOT_RECORDED``), so an absent figure never reads as 0."""
    answered = [answered_fig(path(results, "modes", m)) for m in modes]
    counts = [failure_text(path(results, "modes", m, "failures")) for m in modes]
    return [{"label": "Answered %", "figs": answered, "digits": 1, "unknown": NOT_RECORDED,
             "title": "Samples with an answer and no failure class, over the same samples as accuracy"},
            {"label": "Failures", "texts": counts, "unknown": NOT_RECORDED,
             "title": "Lines whose attempt ended without an answer, by class; each counts as wrong"}]


def answered_fig(mode: Any) -> Fig:
    """A mode's stored share answered in percent (no interval: a count, not an estimate), or unknown."""
    node = mode.get("answered") if isinstance(mode, dict) else None
    if not isinstance(node, dict) or node.get("value") is None:
        return Fig(None)
    return Fig(node["value"] * 100, n=node.get("n"))


def category_rows(benchmark: Benchmark, results: dict, modes: list[str]) -> list[dict[str, Any]]:
    cats = Category.objects.filter(domain__benchmark=benchmark).select_related("domain").order_by(
        "domain__position", "domain__slug", "position", "slug")
    return [{"domain": c.domain.name, "category": c.name,
             "figs": [rate_fig(path(results, "modes", m, "accuracy", "by_category", c.slug)) for m in modes]}
            for c in cats]


ERROR_KINDS = (
    ("beyond", "Beyond the model", "wrong in every mode it was run in"),
    ("mode_selection", "Mode-selection error",
     "called no tool though its text answer was wrong, or called tools though its text answer was right"),
    ("wrong_region", "Zoomed into the wrong region", "IoU < 0.5 with every annotated region"),
    ("invalid_call", "Invalid tool call", "at least one call was judged invalid"),
    ("valid_but_wrong", "Wrong despite valid tool use", "every call valid, the answer still wrong"),
    ("other", "Other", "no tool call and no text-mode answer to compare with"),
)


@dataclass
class Breakdown:
    mode: str
    wrong: int
    total: int
    counts: dict[str, int] = field(default_factory=dict)
    undecided: int = 0  # of total: no rule decided them, only an LLM judge may (neither right nor wrong)

    def items(self) -> list[tuple[str, str, str, int, float]]:
        return [(k, label, why, self.counts.get(k, 0), 100.0 * self.counts.get(k, 0) / self.wrong if self.wrong else 0.0)
                for k, label, why in ERROR_KINDS]


def classify(adaptive: dict[str, Any], others: dict[str, bool]) -> str:
    """One wrong adaptive prediction's error kind, in AdaptMMBench's terms (first that applies)."""
    if others and not any(others.values()):
        return "beyond"
    calls = adaptive["calls"] or []
    if "text" in others and (others["text"] == bool(adaptive["n_calls"])):
        return "mode_selection"  # text wrong and no tools, or text right and tools
    if adaptive["iou"] is not None and adaptive["iou"] < 0.5:
        return "wrong_region"
    if any(c.get("valid") is False for c in calls):
        return "invalid_call"
    if adaptive["n_calls"]:
        return "valid_but_wrong"
    return "other"


def error_breakdown(submission: Submission) -> Breakdown | None:
    """Every wrong adaptive prediction on a non-aux sample, by kind (aggregates only: test samples count too)."""
    rows = PredictionResult.objects.filter(submission=submission, sample__aux_line=False).values(
        "sample_id", "mode", "correct", "decided_by", "n_calls", "calls", "iou")
    by_sample: dict[int, dict[str, dict]] = {}
    for r in rows:
        by_sample.setdefault(r["sample_id"], {})[r["mode"]] = r
    adaptive = [m for m in by_sample.values() if "adaptive" in m]
    if not adaptive:
        return None
    counts: Counter[str] = Counter()
    wrong = undecided = 0
    for modes in adaptive:
        if modes["adaptive"]["decided_by"] == UNDECIDED:  # not wrong (metrics.md section 13)
            undecided += 1
            continue
        if modes["adaptive"]["correct"]:
            continue
        wrong += 1
        # an undecided answer in another mode is neither right nor wrong: it tells nothing about this error
        others = {m: r["correct"] for m, r in modes.items() if m != "adaptive" and r["decided_by"] != UNDECIDED}
        counts[classify(modes["adaptive"], others)] += 1
    return Breakdown("adaptive", wrong, len(adaptive), dict(counts), undecided)


def dev_samples(submission: Submission) -> list[dict[str, Any]]:
    """Dev-split samples with this submission's verdict per mode: True, False, or None where no rule decided it
    (it needs an LLM judge). One query."""
    out: dict[int, dict[str, Any]] = {}
    for r in PredictionResult.objects.filter(submission=submission, sample__split=Split.DEV).order_by(
        "sample__position", "sample__uid", "mode"
    ).values("sample_id", "sample__uid", "sample__category__name", "mode", "correct", "decided_by"):
        item = out.setdefault(r["sample_id"], {"uid": r["sample__uid"], "category": r["sample__category__name"],
                                               "modes": {}})
        item["modes"][r["mode"]] = None if r["decided_by"] == UNDECIDED else r["correct"]
    return list(out.values())


def browsable_sample(benchmark: Benchmark, uid: str, *, every_split: bool = False) -> Sample | None:
    """A sample the browser may show: a dev-split one for anyone; any split when ``every_split`` (staff, the
    submissions' owner: ``flipped.sees_every_sample``), whose gold the page still shows only with ``sees_gold``."""
    found = Sample.objects.select_related("category__domain", "benchmark").filter(benchmark=benchmark, uid=uid)
    return found.first() if every_split else found.filter(split=Split.DEV).first()


def sample_neighbours(sample: Sample, *, every_split: bool = False) -> tuple[str | None, str | None]:
    """The uids of the browsable samples before and after ``sample`` in the benchmark's order (None at an end):
    the sample browser's previous / next, over the same samples ``browsable_sample`` lets this visitor see."""
    rows = Sample.objects.filter(benchmark_id=sample.benchmark_id)
    if not every_split:
        rows = rows.filter(split=Split.DEV)
    key = (sample.position, sample.uid)
    before = rows.filter(Q(position__lt=key[0]) | Q(position=key[0], uid__lt=key[1])).order_by("-position", "-uid")
    after = rows.filter(Q(position__gt=key[0]) | Q(position=key[0], uid__gt=key[1])).order_by("position", "uid")
    return (before.values_list("uid", flat=True).first(), after.values_list("uid", flat=True).first())


def sample_key_steps(sample: Sample) -> list[str]:
    ann = Annotation.objects.filter(sample=sample, status=AnnotationStatus.APPROVED).prefetch_related(
        "key_steps").first()
    return [k.text for k in ann.key_steps.all()] if ann else []


def sample_results(submission: Submission, sample: Sample) -> QuerySet[PredictionResult]:
    return PredictionResult.objects.filter(submission=submission, sample=sample).order_by("mode")


def prediction_lines(submission: Submission, uid: str) -> dict[str, dict[str, Any]]:
    """The prediction file's lines for one sample, by mode (the steps with their thoughts and tool arguments)."""
    found: dict[str, dict[str, Any]] = {}
    try:
        with submission.file.open("rb") as stream:
            for obj in iter_prediction_objects(stream, settings.SUBMISSION_MAX_LINE_BYTES):
                if isinstance(obj, dict) and str(obj.get("sample_id")) == uid:
                    found[str(obj.get("mode"))] = obj
    except (FileNotFoundError, ValueError):
        return found
    return found


# ------------------------------------------------------------------------------------ compare


def compare_defaults(benchmark: Benchmark) -> list[int]:
    """The compare form's first choices: the board's two leaders among entries with a board mode (a blind-only
    entry shares no mode with the others, so comparing with it shows nothing)."""
    return list(BoardEntry.objects.on_board().filter(benchmark=benchmark, headline_mode__in=MODES).order_by(
        F("adaptive_acc").desc(nulls_last=True), F("text_acc").desc(nulls_last=True), "submission_id")
        .values_list("submission_id", flat=True)[:2])


@dataclass
class ModeTest:
    mode: str
    a: Fig
    b: Fig
    diff: float | None  # None: not tested (``test`` says why)
    p_value: float | None
    significant: bool | None
    discordant: tuple[int, int] | None
    test: str


# A mode's accuracy with undecided rows is not available (metrics.md section 13): nothing to test its difference of.
NOT_TESTED_UNDECIDED = "not tested: rows need an LLM judge"


def compare(benchmark: Benchmark, a: Submission, b: Submission) -> dict[str, Any]:
    """Paired tests (metrics.md section 8) on the samples both were scored on, per mode, and MCC; None while
    either has no entry yet (published since the board's last build)."""
    ea, eb = (BoardEntry.objects.filter(submission=a).first(), BoardEntry.objects.filter(submission=b).first())
    if ea is None or eb is None:
        return None
    tests: list[ModeTest] = []
    for mode in MODES:
        ba, bb = ea.correct.get(mode), eb.correct.get(mode)
        if not ba or not bb or len(ba) != len(bb):
            continue
        if UNDECIDED_BIT in ba or UNDECIDED_BIT in bb:  # an undecided row is neither right nor wrong
            tests.append(ModeTest(mode, rate_fig(path(a.results, "modes", mode, "accuracy", "overall")),
                                  rate_fig(path(b.results, "modes", mode, "accuracy", "overall")), None, None, None,
                                  None, NOT_TESTED_UNDECIDED))
            continue
        t = mcnemar_exact([c == "1" for c in ba], [c == "1" for c in bb])
        tests.append(ModeTest(mode, rate_fig(path(a.results, "modes", mode, "accuracy", "overall")),
                              rate_fig(path(b.results, "modes", mode, "accuracy", "overall")), 100 * t.statistic,
                              t.p_value, t.significant, t.discordant, "exact McNemar"))
    mcc_test = None
    ta, tb = ea.correct.get("text", ""), eb.correct.get("text", "")
    defined = ea.mcc is not None and eb.mcc is not None  # an undefined MCC has no difference to test
    if defined and ta and tb and ea.invoked and eb.invoked and len({len(ta), len(tb), len(ea.invoked),
                                                                    len(eb.invoked)}) == 1:
        both = [i for i in range(len(ta)) if "-" not in (ta[i], tb[i], ea.invoked[i], eb.invoked[i])
                and UNDECIDED_BIT not in (ta[i], tb[i])]  # as the MCC itself: an undecided text answer is left out
        if both:
            t = paired_bootstrap_mcc([cell(ta[i] == "1", ea.invoked[i] == "1") for i in both],
                                     [cell(tb[i] == "1", eb.invoked[i] == "1") for i in both])
            ms_a, ms_b = a.results.get("mode_selection") or {}, b.results.get("mode_selection") or {}
            mcc_test = ModeTest("mode selection", Fig(ms_a.get("mcc")), Fig(ms_b.get("mcc")), t.statistic,
                                t.p_value, t.significant, None, f"paired bootstrap on {len(both)} samples")
    common = [t.mode for t in tests if t.p_value is not None]
    mode = "adaptive" if "adaptive" in common else (common[0] if common else "")
    domains = list(benchmark.domains.order_by("position", "slug").values_list("slug", "name"))
    diffs = []
    for slug, name in domains:
        fa = cell_fig((ea.domain_table.get(mode) or {}).get(slug, {}).get("all"))
        fb = cell_fig((eb.domain_table.get(mode) or {}).get(slug, {}).get("all"))
        if fa.known and fb.known:
            diffs.append({"domain": name, "a": fa.value, "b": fb.value, "diff": fa.value - fb.value})
    chart = {"data": [{"type": "bar", "x": [plot_text(d["domain"]) for d in diffs], "y": [d["diff"] for d in diffs],
                       "hovertemplate": "%{x}: %{y:+.1f} points<extra></extra>", "meta": {"role": "domain-diff"}}],
             "layout": {"yaxis": {"title": {"text": f"{mode} accuracy, A − B (points)"}, "zeroline": True},
                        "margin": {"t": 10}, "height": 320}}
    return {"tests": tests, "mcc_test": mcc_test, "diff_mode": mode, "diffs": diffs, "chart": chart}
