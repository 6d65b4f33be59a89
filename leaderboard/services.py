"""Writes of the leaderboard: its derived BoardEntry and EntryRank rows (reported results: reported.py).

``board_refresh`` brings a benchmark's board up to its ``results_version``: it rebuilds the entries
whose submission moved through the pipeline (``entries_sync``; the submissions changed since the last build read
from the change log, ``changed_since``) and updates the rank statistics by what changed (``rank_update``), or builds
them whole (``ranks_build``: positions, tie groups, each entry's own bootstrap interval and the rank interval
counted from them, neighbour tests). It runs as the
task ``board_refresh`` when the version moves (a submission finishes, is published, unpublished,
deleted or re-scored: ``evaluation.services.benchmark_results_bump``), and records the version it built
in the board's ``DerivedState`` (evaluation/derived.py). Readers never call it: they serve the last
build, filtered at read time (``BoardEntry.objects.on_board()``), marked as updating while it is behind.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC
from typing import Any

from django.db import transaction
from django.db.models import F, Q

from annotation.models import Annotation, AnnotationStatus, Benchmark, Sample
from evaluation.derived import derived_read, derived_refresh
from evaluation.metrics import entry_bounds, entry_bounds_mcc, intervals_from_bounds, neighbour_mcnemar, shared_ranks
from evaluation.metrics.types import BOARD_MODES
from evaluation.models import PredictionResult, Provenance, ResultsChange, Submission
from evaluation.provenance import file_claim, public_run
from evaluation.run_protocol import protocol_page
from evaluation.metrics.profiles import UNDECIDED
from leaderboard.board import UNDECIDED_BIT, Vectors, mcc_cells, mcc_pair_test, paired_test
from leaderboard.models import BoardCounts, BoardEntry, EntryRank, RankShift
from leaderboard.pareto_store import pareto_refresh
from leaderboard.progress_store import months_of, summary_update
from leaderboard.rank_update import RANKED, ordered_places, ranks_update
from leaderboard.selectors import entry_figures, figures_present
from leaderboard.wide_tabs import tables_build, tables_update

CHUNK = 200  # submissions whose prediction rows are read (and entries written) per round of queries


@dataclass(frozen=True, slots=True)
class SampleFrame:
    """The benchmark's non-aux samples in a fixed order, with what the per-domain table needs."""

    order: dict[int, int]  # sample pk -> position in the vectors
    domain: list[str]
    enhanced: list[bool]  # the approved annotation asks for a recovery transform (not in `w/o enh.`)


def sample_frame(benchmark: Benchmark) -> SampleFrame:
    rows = list(Sample.objects.filter(benchmark=benchmark, aux_line=False).order_by("pk")
                .values_list("pk", "category__domain__slug"))
    transforms = dict(Annotation.objects.filter(sample__benchmark=benchmark, status=AnnotationStatus.APPROVED)
                      .values_list("sample_id", "transform"))
    return SampleFrame(order={pk: i for i, (pk, _) in enumerate(rows)}, domain=[d for _, d in rows],
                       enhanced=[bool(transforms.get(pk)) for pk, _ in rows])


def _num(node: Any, key: str = "value") -> float | None:
    return node.get(key) if isinstance(node, dict) else None


def _rate(node: Any, scale: float = 100.0) -> tuple[float | None, float | None, float | None]:
    """(value, low, high) of a stored Rate, scaled (percent by default)."""
    if not isinstance(node, dict) or node.get("value") is None:
        return None, None, None
    iv = node.get("interval") or {}
    lo, hi = iv.get("low"), iv.get("high")
    return (node["value"] * scale, lo * scale if lo is not None else None, hi * scale if hi is not None else None)


def _interval_of_rate(node: Any) -> tuple[float | None, float | None]:
    """Tool effectiveness is stored without an interval; the library's bootstrap gives it from its counts."""
    from leaderboard.figures import rate_interval

    if not isinstance(node, dict) or not node.get("n"):
        return None, None
    iv = rate_interval(node["count"], node["n"])
    return (iv[0] * 100, iv[1] * 100) if iv else (None, None)


def entry_fields(submission: Submission, rows: Iterable[tuple], frame: SampleFrame,
                 protocol_page: str = "") -> dict[str, Any]:
    """Every BoardEntry field for one submission (``protocol_page``: its benchmark's, named by an uploaded file's
    protocol claim, evaluation.provenance.file_claim); ``rows`` are (sample_id, mode, correct, decided_by, cost, tokens,
    n_calls). A mode's ``correct`` is a string over the frame's samples: 1 right, 0 wrong, - no line (wrong, as in
    accuracy), ? undecided (no rule decided it and only an LLM judge may: neither right nor wrong)."""
    res = submission.results or {}
    modes = res.get("modes") or {}
    headline = "adaptive" if "adaptive" in modes else ("text" if "text" in modes else next(iter(modes), ""))
    out: dict[str, Any] = {"benchmark_id": submission.benchmark_id, "scored_at": submission.scored_at,
                           "heartbeat_at": submission.heartbeat_at, "finished_at": submission.finished_at,
                           **entry_copies(submission.first_finished_at, submission.finished_at, submission.weights),
                           "headline_mode": headline}
    accuracy_nodes = {}
    for mode in BOARD_MODES:
        acc = (modes.get(mode) or {}).get("accuracy", {}).get("overall")
        out[f"{mode}_acc"], out[f"{mode}_lo"], out[f"{mode}_hi"] = _rate(acc)
        accuracy_nodes[f"{mode}_acc"] = acc  # its reason when rows need an LLM judge (metrics.md section 13)
    ms = res.get("mode_selection")
    if ms:
        iv = ms.get("interval") or {}
        out.update(mcc=ms.get("mcc"), mcc_lo=iv.get("low"), mcc_hi=iv.get("high"))
    else:
        out.update(mcc=None, mcc_lo=None, mcc_hi=None)
    process = (modes.get("adaptive") or {}).get("process") or {}
    kcov = process.get("kcov") or {}
    out["kcov"] = kcov["value"] * 100 if kcov.get("value") is not None else None
    out["kcov_n"] = kcov.get("n") or 0
    kcov_iv = kcov.get("interval") or {}
    out["kcov_lo"] = kcov_iv["low"] * 100 if kcov_iv.get("low") is not None else None
    out["kcov_hi"] = kcov_iv["high"] * 100 if kcov_iv.get("high") is not None else None
    tool_eff = process.get("tool_eff")
    out["tool_eff"] = _rate(tool_eff)[0]
    out["tool_eff_lo"], out["tool_eff_hi"] = _interval_of_rate(tool_eff)
    head = modes.get(headline) or {}
    out["tokens"] = _num((head.get("process") or {}).get("mean_tokens"))
    out["answered"] = _rate(head.get("answered"))[0]
    out["cost"] = _num((head.get("cost") or {}).get("mean_cost_usd"))
    out["headline_acc"] = out.get(f"{headline}_acc") if headline in BOARD_MODES else None  # the Progress tab's score
    # Why a figure is not available (no calls, steps or usage in the file), never a 0 (metrics.md section 14).
    nodes = {"kcov": kcov, "tool_eff": tool_eff or {}, "tokens": (head.get("process") or {}).get("mean_tokens") or {},
             "cost": (head.get("cost") or {}).get("mean_cost_usd") or {}, **accuracy_nodes}
    nodes["mcc"] = ms or {}  # undefined on an empty row or column of its confusion matrix
    out["reasons"] = {k: node["reason"] for k, node in nodes.items() if isinstance(node, dict) and node.get("reason")}
    run_info = (public_run(submission.run_record) if submission.provenance == Provenance.RUN
                else file_claim(res, protocol_page))
    out.update(provenance=submission.provenance, run_info=run_info,
               digest=submission.digest, digest_dev=submission.digest_dev)
    n = len(frame.domain)
    correct = {m: ["-"] * n for m in modes}
    costs = {m: [0.0] * n for m in modes}
    tokens = {m: [0] * n for m in modes}
    invoked = ["-"] * n if "adaptive" in modes else []
    for sample_id, mode, ok, decided_by, cost, toks, n_calls in rows:
        i = frame.order.get(sample_id)
        if i is None or mode not in correct:
            continue
        # "?": a row no rule decided (it needs an LLM judge): neither right nor wrong (metrics.md section 13)
        correct[mode][i] = UNDECIDED_BIT if decided_by == UNDECIDED else "1" if ok else "0"
        costs[mode][i] = cost or 0.0
        tokens[mode][i] = toks or 0
        if mode == "adaptive":
            invoked[i] = "1" if n_calls else "0"
    # Per domain, [right, samples, undecided] in w/o enh. and All: a missing line counts wrong, an undecided
    # row neither (leaderboard.figures.cell_fig reads it as the overview reads its accuracy).
    table: dict[str, dict[str, dict[str, list[int]]]] = {}
    for mode, bits in correct.items():
        per: dict[str, dict[str, list[int]]] = {}
        for i, bit in enumerate(bits):
            cell = per.setdefault(frame.domain[i], {"wo_enh": [0, 0, 0], "all": [0, 0, 0]})
            hit, open_ = bit == "1", bit == UNDECIDED_BIT
            for part in ("all",) if frame.enhanced[i] else ("all", "wo_enh"):
                cell[part][0] += hit
                cell[part][1] += 1
                cell[part][2] += open_
        table[mode] = per
    out.update(correct={m: "".join(b) for m, b in correct.items()}, costs=costs, token_counts=tokens,
               invoked="".join(invoked), domain_table=table)
    return out


def entry_copies(first_finished_at: Any, finished_at: Any, weights: str) -> dict[str, Any]:
    """The submission's columns an entry keeps a copy of for the Progress months (``progress_store.month_summary``):
    when it was first scored (its first finish, else its finish), that month in UTC (YYYYMM), and its weights."""
    first = first_finished_at if first_finished_at is not None else finished_at
    month = first.astimezone(UTC) if first is not None else None
    return {"first_at": first, "first_month": month.year * 100 + month.month if month else None, "weights": weights}


COPIES = ("first_at", "first_month", "weights")  # entry_copies's, in its order


def entry_copies_sync(benchmark: Benchmark) -> int:
    """Bring every entry's copies (``entry_copies``) in step with its submission, for a refresh that compares the
    whole board (a bulk write, a repair): an entry is rebuilt when its submission moves through the pipeline (which
    sets ``first_finished_at``) or its details are edited (the heartbeat moves), but a bulk write may change them
    without. Reads each entry's submission (about 1 s at 100,000 entries); writes only the entries that differ."""
    wrong = {sid: copies for sid, *kept, first, finished, weights in BoardEntry.objects.filter(
             benchmark=benchmark).order_by().values_list("submission_id", *COPIES, "submission__first_finished_at",
                                                         "finished_at", "submission__weights")
             if tuple(kept) != tuple((copies := entry_copies(first, finished, weights)).values())}
    for sid, copies in wrong.items():
        BoardEntry.objects.filter(submission_id=sid).update(**copies)
    return len(wrong)


def stale_submission_ids(benchmark: Benchmark, among: set[int] | None = None) -> list[int]:
    """Public submissions without an entry, or moved through the pipeline since their entry was built; ``among``:
    of these submissions only (those changed since the last build, ``changed_since``), else of the whole board.

    Reads only columns SQLite keeps before ``results`` (status, visibility, heartbeat), through the
    benchmark index, so this check stays cheap with a thousand large result documents.
    """
    subs = Submission.objects.on_board().filter(benchmark=benchmark)
    if among is not None:
        subs = subs.filter(pk__in=among)
    return list(subs.filter(
        Q(board_entry__isnull=True) | Q(board_entry__heartbeat_at__isnull=True)
        | ~Q(board_entry__heartbeat_at=F("heartbeat_at"))
    ).order_by().values_list("pk", flat=True))  # no ORDER BY: Submission's default (created_at) is stored after results


def gone_submission_ids(benchmark: Benchmark, among: set[int] | None = None) -> list[int]:
    """Entries whose submission left the board (unpublished, deleted, sent back for a re-score); ``among``: of
    these submissions only, as ``stale_submission_ids``."""
    entries = BoardEntry.objects.filter(benchmark=benchmark)
    on_board = Submission.objects.on_board().filter(benchmark=benchmark)
    if among is not None:  # both sides restricted: SQLite would list every submission on the board for NOT IN
        entries, on_board = entries.filter(submission_id__in=among), on_board.filter(pk__in=among)
    return list(entries.exclude(submission_id__in=on_board.values("pk")).values_list("submission_id", flat=True))


MAX_VERSIONS = 10_000  # changes since the last build above which the refresh compares the whole board instead


def changed_since(benchmark: Benchmark, version: int) -> set[int] | None:
    """The submissions changed after the board's build at ``version`` (``ResultsChange``, written with each move
    of ``results_version``), or None where that is not known and the whole board must be compared: a change to
    any submission (a bulk write), or a version up to the benchmark's without its row (moved before the log
    existed, or pruned). Versions commit in order, so every change up to ``benchmark.results_version`` (read
    before the build) is there; a later one seen too is processed now and again at the next refresh."""
    current = benchmark.results_version
    if current - version > MAX_VERSIONS:
        return None
    rows = list(ResultsChange.objects.filter(benchmark=benchmark, version__gt=version).values_list(
        "version", "submission_id", "anything"))
    if any(anything for _, _, anything in rows) or not set(range(version + 1, current + 1)) <= {v for v, _, _ in rows}:
        return None
    return {sid for _, sid, _ in rows if sid is not None}


def entries_sync(benchmark: Benchmark, ids: list[int] | None = None) -> int:
    """Build or rebuild the stale entries of ``benchmark``; returns how many were written."""
    ids = stale_submission_ids(benchmark) if ids is None else ids
    if not ids:
        return 0
    frame = sample_frame(benchmark)
    page = protocol_page(benchmark)
    written = 0
    for start in range(0, len(ids), CHUNK):
        chunk = ids[start:start + CHUNK]
        subs = Submission.objects.filter(pk__in=chunk).only("pk", "benchmark_id", "scored_at", "heartbeat_at",
                                                            "finished_at", "first_finished_at", "weights", "results",
                                                            "provenance", "run_record", "digest", "digest_dev")
        rows: dict[int, list[tuple]] = {pk: [] for pk in chunk}
        for sub_id, *rest in PredictionResult.objects.filter(submission_id__in=chunk).values_list(
            "submission_id", "sample_id", "mode", "correct", "decided_by", "cost_usd", "tokens", "n_calls"
        ):
            rows[sub_id].append(tuple(rest))
        entries = [BoardEntry(submission_id=sub.pk, **entry_fields(sub, rows[sub.pk], frame, page))
                   for sub in subs]
        with transaction.atomic():
            # Delete and insert in bulk: a fixed number of queries per chunk, whatever its size. Two
            # requests syncing at once build identical rows, so the loser's conflict is ignored.
            BoardEntry.objects.filter(submission_id__in=chunk).delete()
            BoardEntry.objects.bulk_create(entries, ignore_conflicts=True)
        written += len(entries)
    return written


# ------------------------------------------------------------------------------------ ranks

@dataclass(frozen=True, slots=True)
class _Kept:
    """A stored neighbour test (p, significant) by (metric, entry above, entry), still valid if neither
    entry was rebuilt since it was computed: the test is a seeded function of the two vectors."""

    tests: dict[tuple[str, int, int], tuple[float, bool]]
    unchanged: set[int]


def _kept_tests(benchmark: Benchmark) -> _Kept:
    state = derived_read(benchmark, "board", payload=False).built_at
    if state is None:
        return _Kept({}, set())
    tests = {(m, above, sid): (p, bool(sig)) for m, above, sid, p, sig in EntryRank.objects.filter(
        benchmark=benchmark, metric="mcc", p_above__isnull=False).values_list(
        "metric", "above", "submission_id", "p_above", "significant_above")}
    unchanged = set(BoardEntry.objects.filter(benchmark=benchmark, built_at__lt=state).values_list(
        "submission_id", flat=True))
    return _Kept(tests, unchanged)


def _metric_ranks(benchmark: Benchmark, metric: str, places: list[tuple[int, float, Any]], vectors: dict[int, Any],
                  kept: _Kept) -> list[EntryRank]:
    ids = [sid for sid, _, _ in places]
    tests: list[Any] = [None] * len(ids)
    if metric == "mcc":
        # A paired bootstrap costs ~3 ms a pair (1,000 multinomial draws): pairs whose entries did not
        # change keep their test, so a finish recomputes two, not 10,000.
        # once per entry, not per pair; one byte a cell (10,000 entries x 30,000 samples: 300 MB, not 2.4 GB)
        cells = [array("b", mcc_cells(vectors[sid])) for sid in ids]
        for i in range(1, len(ids)):
            above, sid = ids[i - 1], ids[i]
            old = kept.tests.get((metric, above, sid)) if {above, sid} <= kept.unchanged else None
            tests[i] = _Stored(*old) if old else mcc_pair_test(cells[i - 1], cells[i])
    else:
        bits = [vectors[sid].correct.get(metric, "") for sid in ids]
        if bits and len({len(b) for b in bits}) == 1 and bits[0]:
            tests = neighbour_mcnemar(bits)  # the stored "0"/"1" strings, read by NumPy
        else:  # vectors of different lengths (the benchmark changed under some entries): pair by pair
            for i in range(1, len(ids)):
                tests[i] = paired_test(metric, vectors[ids[i - 1]], vectors[ids[i]])
    sig = [t.significant if t is not None else None for t in tests]
    shared = shared_ranks(sig)
    # Each entry's own bootstrap interval, over the entries with vectors of the common length (all of them,
    # normally); the rank intervals are counted from those (metrics.md, "Honest ranks").
    if metric == "mcc":
        rows = dict(zip(ids, cells))
    else:
        rows = {sid: vectors[sid].correct.get(metric, "") for sid in ids}
    lengths = [len(r) for r in rows.values() if r]
    common = max(set(lengths), key=lengths.count) if lengths else 0
    ranked = [sid for sid in ids if common and len(rows[sid]) == common]
    bounds_of = entry_bounds_mcc if metric == "mcc" else entry_bounds
    own = dict(zip(ranked, bounds_of([rows[sid] for sid in ranked]))) if ranked else {}
    intervals = intervals_from_bounds([own.get(sid) for sid in ids])
    out = []
    for i, (sid, value, finished) in enumerate(places):
        iv, test, b = intervals[i], tests[i], own.get(sid)
        out.append(EntryRank(
            submission_id=sid, benchmark_id=benchmark.pk, metric=metric, value=value, finished_at=finished,
            position=i + 1, starts_group=shared[i] == i + 1,
            rank_low=iv.low if iv else None, rank_high=iv.high if iv else None,
            stat_low=b.low if b else None, stat_high=b.high if b else None,
            above=ids[i - 1] if i else None, p_above=test.p_value if test else None,
            significant_above=test.significant if test else None))
    return out


def ranks_build(benchmark: Benchmark) -> list[EntryRank]:
    """Every public entry's EntryRank per ranked ordering (not saved): a few queries, each entry's own bootstrap
    (entries x samples x 1,000 resamples of multiply-adds) and sorts of the bounds (docs/performance.md)."""
    vectors = {sid: Vectors(correct=c, invoked=inv) for sid, c, inv in BoardEntry.objects.on_board()
               .filter(benchmark=benchmark).order_by().values_list("submission_id", "correct", "invoked")}
    kept = _kept_tests(benchmark)
    out: list[EntryRank] = []
    for metric, field in RANKED.items():
        places = [p for p in ordered_places(benchmark, field) if p[0] in vectors]
        out += _metric_ranks(benchmark, metric, places, vectors, kept)
    return out


def ranks_save(benchmark: Benchmark) -> None:
    """The board's ranks built whole and stored in place of the last build's, its recorded shifts cleared."""
    ranks = ranks_build(benchmark)
    RankShift.objects.filter(benchmark_id=benchmark.pk).delete()
    EntryRank.objects.filter(benchmark_id=benchmark.pk).delete()
    EntryRank.objects.bulk_create(ranks, batch_size=2000)


def board_counts_save(benchmark: Benchmark, present: dict[str, Any], tables: dict[str, Any]) -> None:
    """The build's counts (``figures_present``) and the Tools tab's row count, in their own narrow row."""
    tools = ((tables.get("tab_index") or {}).get("tabs") or {}).get("tools") or {}
    BoardCounts.objects.update_or_create(benchmark=benchmark, defaults={
        "counts": {**present, "tools_rows": tools.get("count") or 0}})


@dataclass(frozen=True, slots=True)
class _Stored:
    p_value: float
    significant: bool


def _entries_of(submission_ids: Iterable[int]) -> Any:
    """The entries of these submissions (the benchmark's: a change log's), by the submission key alone: with the
    benchmark in the query too, SQLite's planner (no statistics) walks the benchmark's index over every entry
    (0.5 s at 100,000) instead of looking the few up."""
    return BoardEntry.objects.filter(submission_id__in=list(submission_ids))


@dataclass(slots=True)
class _Counted:
    """``figures_present`` brought up by what changed: the last build's counts, less the changed entries' before
    the refresh, plus theirs after (an aggregate over a few rows, not the board)."""

    benchmark: Benchmark
    changed: set[int]
    last: dict[str, int] | None
    before_counts: dict[str, int]

    @classmethod
    def before(cls, benchmark: Benchmark, changed: set[int]) -> _Counted:
        last = BoardCounts.objects.filter(benchmark_id=benchmark.pk).values_list("counts", flat=True).first()
        return cls(benchmark, changed, last if isinstance(last, dict) else None,
                   entry_figures(_entries_of(changed)))

    def after(self) -> dict[str, int] | None:
        """The counts now, or None (count the board): no counts stored, or the entries' number does not add up
        (an entry deleted outside the refresh)."""
        if self.last is None:
            return None
        now = entry_figures(_entries_of(self.changed))
        try:
            counts = {k: self.last[k] - self.before_counts[k] + now[k] for k in now}
        except KeyError:
            return None
        if counts["entries"] != BoardEntry.objects.filter(benchmark=self.benchmark).count():
            return None
        return figures_present(self.benchmark, counts)


def board_refresh(*, benchmark_id: int, full: bool = False) -> int | None:
    """Build the board's entries and ranks for the benchmark's current ``results_version`` and return that
    version (None: no such benchmark). Idempotent: two queries when they are current. Two refreshes of
    one benchmark take turns on its DerivedState row (evaluation/derived.py).

    The ranks are updated by what changed since the last build (``rank_update.ranks_update``: the entries
    rebuilt, added or dropped now) when that can be done exactly, else built whole (``ranks_build``); ``full``:
    built whole, even at the current version (the staff command ``board_rebuild``, a repair)."""

    def build(benchmark: Benchmark) -> dict[str, Any]:
        last = derived_read(benchmark, "board", payload=False)
        previous = None if full else last.built_at
        # What changed since the last build, from the change log; else (the first build, a repair, a bulk write)
        # every submission compared with its entry.
        changed = None if previous is None else changed_since(benchmark, last.version)
        stale = stale_submission_ids(benchmark, changed)
        counted = None if changed is None else _Counted.before(benchmark, changed)
        progress_months = None if changed is None else months_of(benchmark, changed)  # before the change
        entries_sync(benchmark, stale)
        if changed is None:  # the whole board compared: the entries' copies too (a bulk write may move them)
            entry_copies_sync(benchmark)
        # Entries of submissions that left the board (unpublished, deleted, sent back for a re-score) go;
        # readers filter them out at read time already (BoardEntry.objects.on_board()).
        gone = gone_submission_ids(benchmark, changed)
        BoardEntry.objects.filter(submission_id__in=gone).delete()
        if last.built_at is not None:  # the changes the last build saw are done with (only the board reads them)
            ResultsChange.objects.filter(benchmark=benchmark, version__lte=last.version).delete()
        if previous is None or not ranks_update(benchmark, set(stale) | set(gone)):
            ranks_save(benchmark)
        # What the navigation offers (tabs.tabs_with_data) is derived too: counted here, read by pages.
        # The wide tabs' rows in each order and their marks, so that a page of them computes its own rows only:
        # the changed submissions' rows written again, the gone ones' deleted, the marks moved by them (wide_tabs).
        tables = tables_build(benchmark) if previous is None else tables_update(benchmark, stale, gone)
        pareto_refresh(benchmark, None if previous is None else {*stale, *gone})  # the Cost & Pareto tab's figures
        if progress_months is not None:  # the Progress tab's: the months the changed were in, before or after
            progress_months |= months_of(benchmark, changed or ())
        progress = summary_update(benchmark, None if previous is None else derived_read(
            benchmark, "board", part="progress").payload, progress_months)
        counted_now = counted.after() if counted is not None else None
        present = counted_now if counted_now is not None else figures_present(benchmark)
        board_counts_save(benchmark, present, tables)  # the counts the overview reads by key (BoardCounts)
        return {**tables, "progress": progress}

    return derived_refresh(benchmark_id=benchmark_id, kind="board", build=build, force=full)
