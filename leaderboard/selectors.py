"""Reads for the public pages: benchmarks, the overview rows and every tab's table.

Each selector makes a fixed number of queries whatever the number of submissions (the tests count
them with 10 and with 100). Overview rows come from the derived ``BoardEntry`` table (one flat
``values()`` query); the tabs read the stored ``results`` of the public submissions.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

import orjson
from django.db.models import Case, Count, F, Max, Min, Prefetch, Q, QuerySet, TextField, Value, When
from django.db.models.fields.json import KT
from django.db.models.functions import Cast, Coalesce, Lower

from annotation.models import Benchmark, Domain
from evaluation.derived import Build, derived_read
from evaluation.metrics import rank_score
from evaluation.metrics.cost import cost_bounds
from evaluation.metrics.types import BOARD_MODES as MODES
from evaluation.models import ON_BOARD, Submission
from leaderboard import board, rank_read
from leaderboard.figures import NONE, Fig, cell_fig, mean_fig, path, rate_fig
from leaderboard.models import BoardCounts, BoardEntry, ReportedResult

ENTRY_FIELDS = (
    "submission_id", "submission__model_name", "submission__organisation", "submission__weights",
    "finished_at", "submission__is_demo", "headline_mode",
    "text_acc", "text_lo", "text_hi", "adaptive_acc", "adaptive_lo", "adaptive_hi",
    "oracle_acc", "oracle_lo", "oracle_hi", "mcc", "mcc_lo", "mcc_hi", "kcov", "kcov_lo", "kcov_hi", "kcov_n",
    "tool_eff", "tool_eff_lo", "tool_eff_hi", "tokens", "cost", "answered",
    "submission__first_finished_at", "submission__parameters_billions", "submission__license",
    "submission__release_date", "submission__model_url", "submission__paper_url",
    "provenance", "run_info", "digest", "digest_dev", "reasons",
)


def home_benchmarks() -> QuerySet[Benchmark]:
    domains = Domain.objects.annotate(sample_count=Count("categories__samples")).order_by("position")
    # Each benchmark's results_version keys its cached leaders (leaderboard.cache), so a submission
    # unpublished or deleted leaves the home page's leaders at once.
    return Benchmark.objects.annotate(
        sample_count=Count("samples", distinct=True),
        dev_count=Count("samples", filter=Q(samples__split="dev"), distinct=True),
    ).prefetch_related(Prefetch("domains", queryset=domains))


def board_build(benchmark: Benchmark) -> Build:
    """The board's last build (evaluation/derived.py): its pages say "updating" while it is behind."""
    return derived_read(benchmark, "board", payload=False)


def domains_of(benchmark: Benchmark) -> list[tuple[str, str]]:
    return list(Domain.objects.filter(benchmark=benchmark).order_by("position", "slug").values_list("slug", "name"))


def public_entries(benchmark: Benchmark, as_of: date | None = None) -> QuerySet[BoardEntry]:
    """The public rows of the last build; ``as_of`` keeps those first finished by the end of that day (UTC),
    see docs/leaderboard.md for what "as it stood" means. Whether each is still on the board is checked
    here, in the same query (an entry unpublished or deleted since the build never shows)."""
    rows = BoardEntry.objects.on_board().filter(benchmark=benchmark)
    if as_of is not None:  # rows finished before the column existed fall back to their last finish
        rows = rows.alias(first=Coalesce("submission__first_finished_at", "finished_at")).filter(
            first__lt=board.end_of_day(as_of))
    return rows.order_by("finished_at", "submission_id")


def _score(head: float | None, cost: float | None, bounds: tuple[float, float] | None) -> float | None:
    """The rank score in percent (the library's, on the headline accuracy and cost), or None."""
    return 100.0 * rank_score(head / 100.0, cost, *bounds) if bounds and head is not None and cost is not None else None


def _entry_row(v: dict[str, Any], bounds: tuple[float, float] | None) -> board.Row:
    def fig(name: str) -> Fig:
        return Fig(v[f"{name}_acc"], v[f"{name}_lo"], v[f"{name}_hi"], reason=(v["reasons"] or {}).get(f"{name}_acc"))

    head = v.get(f"{v['headline_mode']}_acc") if v["headline_mode"] else None
    score = _score(head, v["cost"], bounds)

    return board.Row(
        key=f"s{v['submission_id']}", submission_id=v["submission_id"], model_name=v["submission__model_name"],
        organisation=v["submission__organisation"], weights=v["submission__weights"],
        date=v["finished_at"], is_demo=v["submission__is_demo"], headline_mode=v["headline_mode"],
        text=fig("text"), adaptive=fig("adaptive"), oracle=fig("oracle"),
        mcc=Fig(v["mcc"], v["mcc_lo"], v["mcc_hi"], reason=(v["reasons"] or {}).get("mcc")),
        kcov=Fig(v["kcov"], v["kcov_lo"], v["kcov_hi"], v["kcov_n"], reason=(v["reasons"] or {}).get("kcov")),
        tool_eff=Fig(v["tool_eff"], v["tool_eff_lo"], v["tool_eff_hi"], reason=(v["reasons"] or {}).get("tool_eff")),
        tokens=v["tokens"], cost=v["cost"], reasons=v["reasons"] or {},
        answered=Fig(v["answered"]), rank_score=score, first_finished=v["submission__first_finished_at"],
        parameters_billions=v["submission__parameters_billions"], license=v["submission__license"],
        release_date=v["submission__release_date"], model_url=v["submission__model_url"],
        paper_url=v["submission__paper_url"], provenance=v["provenance"], run=v["run_info"] or {},
        digest=v["digest"], digest_dev=v["digest_dev"],
    )


def _reported_row(rep: ReportedResult) -> board.Row:
    f = rep.figures or {}
    acc = f.get("accuracy") or {}

    def overall(mode: str) -> Fig:
        pair = (acc.get(mode) or {}).get("overall")
        return Fig(pair[1], digits=2) if pair else NONE

    ms = f.get("mode_selection") or {}
    pr = f.get("process") or {}
    return board.Row(
        key=f"r{rep.pk}", model_name=rep.model_name, organisation=rep.organisation, weights=rep.weights,
        reported=True, citation=rep.source, headline_mode="adaptive",
        text=overall("text"), adaptive=overall("adaptive"), oracle=overall("oracle"),
        mcc=Fig(ms.get("mcc"), digits=2), kcov=Fig(pr.get("kcov"), digits=2), tool_eff=Fig(pr.get("tool_eff"), digits=2),
        tokens=pr.get("tokens"),
    )


def board_rows(benchmark: Benchmark) -> list[board.Row]:
    """Every public row of the benchmark (submissions, then reported results), with rank scores.

    Rows are built once with their score (no copies): the exports and the API list every row.
    """
    values = list(public_entries(benchmark).values(*ENTRY_FIELDS))
    fixed = (benchmark.cost_min, benchmark.cost_max) if benchmark.cost_min and benchmark.cost_max else None
    bounds = fixed or cost_bounds([v["cost"] for v in values if v["cost"] is not None])
    rows = [_entry_row(v, bounds) for v in values]
    return rows + [_reported_row(r) for r in ReportedResult.objects.filter(benchmark=benchmark)]


def standings(benchmark: Benchmark, metric: str | None = None, submission_ids: list[int] | None = None,
              shifts: dict[str, list[rank_read.Shift]] | None = None) -> dict[str, dict[int, board.Standing]]:
    """The stored whole-board ranks ({metric: {submission id: Standing}}), of one ordering and some submissions, or
    all: those of the board's last build, as moved by the changes since (``rank_read``; the rows and the shifts, two
    queries, and a group's first entry where a row's is not among them). ``shifts``: the orderings', if read already
    (the overview's page has read its ordering's)."""
    # by (submission, metric), the unique index, when the rows are named: the page's 50 of 10,000
    if submission_ids is not None:
        if not submission_ids:
            return {}
        where, params = f"submission_id IN ({', '.join(['%s'] * len(submission_ids))})", list(submission_ids)
    else:
        where, params = "benchmark_id = %s", [getattr(benchmark, "pk", benchmark)]
    if metric is not None:
        where, params = f"{where} AND metric = %s", [*params, metric]
    if shifts is None:  # read before the rows (``rank_update.ranks_compact``: a read straddling a fold)
        shifts = rank_read.shifts_of(benchmark, [metric] if metric is not None else None)
    rows = rank_read.rows_of(where, params, rank_read.ROW_FIELDS)
    out: dict[str, dict[int, board.Standing]] = {}
    for (metric_, sid), now in rank_read.ranks_now(benchmark, rows, shifts).items():
        out.setdefault(metric_, {})[sid] = board.Standing(now.shared_rank, now.rank_low, now.rank_high, now.above,
                                                          now.p_above, now.significant_above)
    return out


def board_vectors(submission_ids: list[int]) -> dict[int, board.Vectors]:
    """Per-sample correctness and tool use of the given rows, for the neighbour tests (one query)."""
    return {sid: board.Vectors(correct=c, invoked=inv) for sid, c, inv in BoardEntry.objects.filter(
        submission_id__in=submission_ids).values_list("submission_id", "correct", "invoked")}


# What each overview column sorts by in the database: the same order as ``board.COLUMNS``' Python
# values (strings lower-cased, an empty weights label as "~"). The rank score is the scoring
# library's function of the cost bounds, so it is computed in Python (``_ranked_ids``), not re-typed in SQL.
SORT_EXPRESSIONS = {
    "model": Lower("submission__model_name"),
    "organisation": Lower("submission__organisation"),
    "weights": Case(When(submission__weights="", then=Value("~")), default=F("submission__weights")),
    "date": F("finished_at"),
    "text": F("text_acc"), "adaptive": F("adaptive_acc"), "oracle": F("oracle_acc"), "mcc": F("mcc"),
    "kcov": F("kcov"), "tool_eff": F("tool_eff"), "answered": F("answered"), "tokens": F("tokens"),
    "cost": F("cost") * Value(10_000.0),
}


# ``board.size_matches`` as conditions on the database.
SIZE_CONDITIONS = {
    "lt10": Q(submission__parameters_billions__lt=10),
    "10-70": Q(submission__parameters_billions__gte=10, submission__parameters_billions__lte=70),
    "gt70": Q(submission__parameters_billions__gt=70),
    "unknown": Q(submission__parameters_billions__isnull=True),
}


def _entry_filter(query: board.Query) -> Q:
    """``board.filter_rows`` for board entries, as a condition on the database (``as_of`` is in ``public_entries``)."""
    cond = Q()
    if query.weights:
        cond &= Q(submission__weights=query.weights)
    if query.size:
        cond &= SIZE_CONDITIONS[query.size]
    if query.q:
        cond &= Q(submission__model_name__icontains=query.q) | Q(submission__organisation__icontains=query.q)
    if not query.demo:
        cond &= Q(submission__is_demo=False)
    return cond


def _entries_by_id(ids: list[int], fields: tuple[str, ...], on_board: bool = False) -> list[dict[str, Any]]:
    """The entries of ``ids`` in that order, through the unique (submission) index, no sort; ``on_board``: those
    whose submission is on the board now (``on_board_now``)."""
    checked = tuple(f"submission__{name}" for name in ON_BOARD) if on_board else ()
    got = {v["submission_id"]: v for v in BoardEntry.objects.filter(submission_id__in=ids).order_by().values(
        *fields, *checked) if not on_board or on_board_now(v, "submission__")}
    return [got[sid] for sid in ids if sid in got]


def on_board_now(values: dict[str, Any], prefix: str = "") -> bool:
    """``ON_BOARD`` checked on a row read by primary key, with its submission's ``ON_BOARD`` columns (under
    ``prefix``). Put in the query, the condition made SQLite's planner (no statistics) walk every done
    submission through the status index instead of the page's 50 by key: 400 ms at 100,000 entries."""
    return all(values[f"{prefix}{name}"] == value for name, value in ON_BOARD.items())


def _merge_page(total_entries: int, reported: list[tuple[int, board.Row]], page: int,
                fetch: Any, size: int = board.PAGE_SIZE) -> tuple[list[board.Row], int, int, int]:
    """One page of the entries merged with the reported rows at their positions.

    ``reported`` holds (position in the merged order, row); ``fetch(offset, limit)`` returns that slice
    of the entries in order. Returns (rows, page number, pages, total rows).
    """
    total = total_entries + len(reported)
    pages = max(1, -(-total // size))
    number = min(max(1, page), pages)
    start, end = (number - 1) * size, min(number * size, total)
    placed = {p: r for p, r in reported if start <= p < end}
    before = sum(1 for p, _ in reported if p < start)
    entries = iter(fetch(start - before, (end - start) - len(placed)))
    rows = []
    for position in range(start, end):
        row = placed.get(position) or next(entries, None)
        if row is not None:  # None only if entries vanished between the count and the read
            rows.append(row)
    return rows, number, pages, total


def overview(benchmark: Benchmark, query: board.Query) -> board.Page:
    """One page of the overview: filtered, sorted and sliced by the database, 50 rows built.

    The same rows, order and notes as ``board.paginate(board.sort_rows(board.filter_rows(board_rows(b))))``
    (a test holds the two together): entries tie in the selector's order (finished, then id), reported
    rows follow the entries they tie with, rows without a value go last. The reported rows (a paper's
    dozen) are placed by counting the entries that sort before each, in the same query as the total.
    """
    column = board.COLUMN_BY_KEY[query.sort]
    reported = board.sort_rows(board.filter_rows(
        [_reported_row(r) for r in ReportedResult.objects.filter(benchmark=benchmark)], query), query.sort, query.desc)
    known = [r for r in reported if column.value(r) is not None]
    tested = query.sort in board.TESTED
    fields = ENTRY_FIELDS
    public = public_entries(benchmark, query.as_of)
    cond = _entry_filter(query)
    fixed = (benchmark.cost_min, benchmark.cost_max) if benchmark.cost_min and benchmark.cost_max else None
    built = _overview_built(benchmark, query, known)
    shifts: dict[str, list[rank_read.Shift]] | None = None  # the ranks' shifts, where the page has read them

    if built is not None:  # the unfiltered view of a ranked column: the build's counts, order and bounds
        total, before_known, bounds, fetch, shifts = built
        bounds = fixed or bounds
    elif query.sort in SORT_EXPRESSIONS:
        keyed = public.annotate(sort_key=SORT_EXPRESSIONS[query.sort])
        cmp = "sort_key__gte" if query.desc else "sort_key__lte"  # ties: entries before reported rows
        agg = keyed.aggregate(
            total=Count("pk", filter=cond), cmin=Min("cost"), cmax=Max("cost"),
            **{f"r{i}": Count("pk", filter=cond & Q(**{cmp: column.value(r)})) for i, r in enumerate(known)})
        bounds = fixed or ((agg["cmin"], agg["cmax"]) if agg["cmin"] is not None else None)
        order = F("sort_key").desc(nulls_last=True) if query.desc else F("sort_key").asc(nulls_last=True)
        ordered = keyed.filter(cond).order_by(order, "finished_at", "submission_id")
        total, before_known = agg["total"], [agg[f"r{i}"] for i in range(len(known))]

        def fetch(offset: int, limit: int) -> list[dict[str, Any]]:
            # The slice's ids first (sorted on the entries alone), then their rows with the submissions'
            # columns: SQLite joined all 10,000 before sorting when asked for both at once.
            wanted = list(ordered.values_list("submission_id", flat=True)[offset:offset + limit]) if limit > 0 else []
            return _entries_by_id(wanted, fields)
    else:  # the rank score: computed with the library for every filtered entry, from three columns
        if fixed:
            bounds = fixed
        else:
            agg = public.aggregate(cmin=Min("cost"), cmax=Max("cost"))
            bounds = (agg["cmin"], agg["cmax"]) if agg["cmin"] is not None else None
        keys = []
        for sid, mode, text, adaptive, oracle, cost in public.filter(cond).values_list(
                "submission_id", "headline_mode", "text_acc", "adaptive_acc", "oracle_acc", "cost"):
            head = {"text": text, "adaptive": adaptive, "oracle": oracle}.get(mode)
            keys.append((sid, _score(head, cost, bounds)))
        scored = [k for k in keys if k[1] is not None]
        scored.sort(key=lambda k: k[1], reverse=query.desc)  # stable, as board.sort_rows
        ids = [sid for sid, _ in scored] + [sid for sid, s in keys if s is None]
        total = len(ids)
        before_known = [sum(1 for _, s in scored if (s >= column.value(r) if query.desc else s <= column.value(r)))
                        for r in known]

        def fetch(offset: int, limit: int) -> list[dict[str, Any]]:
            return _entries_by_id(ids[offset:offset + limit], fields)

    positions = [(i + n, r) for i, (n, r) in enumerate(zip(before_known, known))]
    positions += [(total + len(known) + j, r) for j, r in enumerate(reported[len(known):])]

    def fetch_rows(offset: int, limit: int) -> list[board.Row]:
        return [_entry_row(v, bounds) for v in fetch(offset, limit)]

    rows, number, pages, count = _merge_page(total, positions, query.page, fetch_rows)
    rows = board.ranked(rows, (number - 1) * board.PAGE_SIZE + 1)
    if not tested:
        return board.Page(rows, number, pages, count)
    # Tests and ranks were computed when the results changed (services.ranks_build); the page's 50 rows
    # read theirs. Only neighbours that are not neighbours on the whole board (a filtered view) are
    # tested here, on vectors read just for them.
    ids = [r.submission_id for r in rows if r.submission_id is not None]
    # The stored ranks are today's board's: a board as of a past date has its neighbours tested here.
    stored = standings(benchmark, query.sort, ids, shifts).get(query.sort, {}) if query.as_of is None else {}
    return board.Page(board.annotate_neighbours(rows, query.sort, lambda: board_vectors(ids), stored),
                      number, pages, count)


def _overview_built(benchmark: Benchmark, query: board.Query, known: list[board.Row]) -> tuple[Any, ...] | None:
    """The overview's unfiltered view of a ranked column in its descending order (the default view) read from
    the board's build by index, in a time that does not grow with the board: the count and the cost bounds the
    refresh stored (``figures_present``), the page's entries by their stored position (``EntryRank``: entries
    with a value, in the overview's order; those without follow, by finish and id), a reported row's place by
    the position of the first entry below it. The page is the build's, as the overview's cached pages are:
    what must hold at once is applied when it is shown (``overview_now``). Returns (count, the reported rows'
    places, cost bounds, ``fetch(offset, limit)``, the ordering's shifts as ``standings`` takes them); None where it
    does not apply (a filter, another column or order, a board built before the counts were stored)."""
    from leaderboard.rank_update import RANKED

    field_name = RANKED.get(query.sort)
    plain = not (query.weights or query.size or query.q) and query.demo and query.as_of is None
    present = figures_present_built(benchmark) if field_name and query.desc and plain else {}
    if "cost_min" not in present or query.sort not in present:
        return None
    total, ranked = present["entries"], present[query.sort]
    order = (F(field_name).desc(), "finished_at", "submission_id")
    entries = BoardEntry.objects.filter(benchmark=benchmark)
    before_known = []
    shifts = rank_read.shifts_of(benchmark, [query.sort]).get(query.sort, [])  # the ranks' shifts since the build
    for row in known:
        below = entries.filter(**{f"{field_name}__lt": board.COLUMN_BY_KEY[query.sort].value(row)}).order_by(
            *order).values_list("submission_id", flat=True).first()
        position = rank_read.position_now(benchmark, query.sort, below, shifts) if below is not None else ranked + 1
        if position is None:
            return None
        before_known.append(position - 1)

    def fetch(offset: int, limit: int) -> list[dict[str, Any]]:
        ids: list[int] = []
        if offset < ranked and limit > 0:
            ids += rank_read.page_ids(benchmark, query.sort, offset, min(offset + limit, ranked) - offset, shifts)
        if offset + limit > ranked:
            ids += entries.filter(**{f"{field_name}__isnull": True}).order_by("finished_at", "submission_id").values_list(
                "submission_id", flat=True)[max(0, offset - ranked):offset + limit - ranked]
        return _entries_by_id(ids, ENTRY_FIELDS, on_board=True)  # a row that left since the build is not shown

    bounds = (present["cost_min"], present["cost_max"]) if present["cost_min"] is not None else None
    return total, before_known, bounds, fetch, {query.sort: shifts}


# The submission's own columns an overview row shows or is filtered by (ENTRY_FIELDS' ``submission__`` ones), by
# the Row field each fills: read again for a cached page's rows (``overview_now``).
SUBMISSION_ROW_FIELDS = {
    "model_name": "model_name", "organisation": "organisation", "weights": "weights", "is_demo": "is_demo",
    "first_finished_at": "first_finished", "parameters_billions": "parameters_billions", "license": "license",
    "release_date": "release_date", "model_url": "model_url", "paper_url": "paper_url",
}


def overview_now(page: board.Page, query: board.Query) -> board.Page:
    """A page of the overview as computed from the board's build (``overview``, cached by that build), as it
    reads now: the rows whose submission has left the board since (unpublished, deleted, sent back for a
    re-score) taken out, and each submission's own columns (name, organisation, weights, ...) read again,
    with the query's filters applied to them. One query by primary key: the same with 10 or 10,000 entries.

    The rest is the build's until its refresh has run (the page says "Updating"): the count, the positions
    and the neighbour tests (a row's note may speak of a row taken out above it), as the ranks already were."""
    ids = [r.submission_id for r in page.rows if r.submission_id is not None]
    now = {v.pop("pk"): v for v in Submission.objects.filter(pk__in=ids).order_by().values(
        "pk", *SUBMISSION_ROW_FIELDS, *ON_BOARD) if on_board_now(v)}
    for v in now.values():
        for name in ON_BOARD:
            del v[name]
    rows = []
    for row in page.rows:
        if row.submission_id is None:  # the authors' reported rows: no submission to leave the board
            rows.append(row)
        elif row.submission_id in now:
            read = now[row.submission_id]
            rows.append(board.row_replace(row, **{SUBMISSION_ROW_FIELDS[k]: v for k, v in read.items()}))
    # The rows as read now, by primary key (``now``'s order is the database's): the page shown is the build's page
    # (named by the build and the query) with these, so they key its HTML (views.board) in place of its 50 rows' repr.
    shown = repr(sorted((pk, tuple(v.values())) for pk, v in now.items()))
    return board.Page(board.filter_rows(rows, query), page.number, page.pages, page.total, now=shown)


def figures_present_built(benchmark: Benchmark) -> dict[str, int]:
    """``figures_present`` as the board's last build counted it (services.board_refresh: ``BoardCounts``, read by
    its key, the one copy); counted here only for a board not built since the counts were stored (a read either
    way)."""
    if hasattr(benchmark, "board_counts"):  # read with the benchmark (cache.benchmark_for_page: a page's request)
        counts = benchmark.board_counts
    else:
        counts = BoardCounts.objects.filter(benchmark_id=benchmark.pk).values_list("counts", flat=True).first()
    return counts if isinstance(counts, dict) else figures_present(benchmark)


def entry_figures(entries: QuerySet[BoardEntry]) -> dict[str, int]:
    """``figures_present``'s counts over these entries (one aggregate over their narrow columns, never their
    vectors); the board's refresh counts the changed entries' before and after (services._Counted)."""
    return entries.aggregate(
        entries=Count("pk"), text=Count("text_acc"), adaptive=Count("adaptive_acc"), oracle=Count("oracle_acc"),
        mcc=Count("mcc"), tool_eff=Count("tool_eff"), cost=Count("cost"), tokens=Count("tokens"))


def entry_cost_bounds(entries: QuerySet[BoardEntry]) -> dict[str, float | None]:
    """The overview's cost bounds over these entries (``_overview_built``), each end read by the cost index."""
    priced = entries.filter(cost__isnull=False).values_list("cost", flat=True)
    return {"cost_min": priced.order_by("cost").first(), "cost_max": priced.order_by("-cost").first()}


def figures_present(benchmark: Benchmark, entries: dict[str, int] | None = None) -> dict[str, Any]:
    """How many public rows have each kind of figure, for the tabs offered (``tabs.tabs_with_data``) and the
    overview's unfiltered pages (``overview``: the count, the ranked rows, the cost bounds): the entries' counts
    (``entry_figures`` over the board's, unless given: the refresh's, brought up by what changed, over the entries
    left once those that left the board were dropped), the cost bounds and the reported rows' figure keys."""
    if entries is None:
        on_board = BoardEntry.objects.on_board().filter(benchmark=benchmark)
        found: dict[str, Any] = {**entry_figures(on_board), **entry_cost_bounds(on_board)}
    else:
        found = {**entries, **entry_cost_bounds(BoardEntry.objects.filter(benchmark=benchmark))}
    for figures in ReportedResult.objects.filter(benchmark=benchmark).values_list("figures", flat=True):
        figures = figures or {}
        for key in ("accuracy", "mode_selection", "process", "agentx"):
            found[f"reported_{key}"] = found.get(f"reported_{key}", 0) + bool(figures.get(key))
        found["reported_tokens"] = found.get("reported_tokens", 0) + bool((figures.get("process") or {}).get("tokens"))
    return found


def leaders(benchmark: Benchmark, n: int = 3) -> list[board.Row]:
    """The home page's leaders: best headline (adaptive, else text) accuracy."""
    rows = [r for r in board_rows(benchmark) if r.headline.known]
    rows.sort(key=lambda r: r.headline.value, reverse=True)
    return rows[:n]


@dataclass(frozen=True, slots=True)
class ReportedLeader:
    model_name: str
    figure: Fig  # in percent, at the paper's precision


def reported_goal_leaders(benchmark: Benchmark, n: int = 3) -> list[ReportedLeader]:
    """For a board whose authors report Agent-X's figures but no accuracy: its leaders by goal accuracy, as printed."""
    rows = []
    for rep in ReportedResult.objects.filter(benchmark=benchmark).only("model_name", "figures"):
        value = ((rep.figures or {}).get("agentx") or {}).get("goal_accuracy")
        if value is not None:
            rows.append(ReportedLeader(rep.model_name, Fig(100 * value, digits=1)))
    rows.sort(key=lambda r: -(r.figure.value or 0))
    return rows[:n]


# ----------------------------------------------------------------------------------- the tabs


@dataclass(frozen=True, slots=True)
class TabSource:
    """One public row's results for the tabs: a submission's stored results, or a reported row's figures."""

    key: str
    model_name: str
    organisation: str
    weights: str
    submission_id: int | None
    is_demo: bool
    reported: bool
    results: dict = field(default_factory=dict)
    domain_table: dict = field(default_factory=dict)
    finished_at: Any = None  # a submission's: the sources' order is (finished_at, submission id), then the reported


def board_table_index(benchmark: Benchmark, tab: str) -> dict[str, Any] | None:
    """What the board's last build stored of a wide tab's index in its payload (``wide_tabs.tables_build``: {count,
    marks}; its rows in order are ``TabIndexRow`` rows), that part alone; None for a build made before it existed."""
    stored = derived_read(benchmark, "board", part=f"tab_index__tabs__{tab}").payload
    return stored if isinstance(stored, dict) else None


def tab_sources(benchmark: Benchmark, parts: Sequence[tuple[str, ...]] | None = None,
                domain_table: bool = True, submission_ids: Collection[int] | None = None) -> list[TabSource]:
    """The rows of the board's last build that are still on it (of ``submission_ids`` only, when given: a
    page's), then the reported rows.

    ``parts``: the paths into a submission's results the tab reads (``("modes", "adaptive", "process")``);
    only those are read, extracted by the database, and the row's ``results`` holds them alone (None:
    the whole results). ``domain_table``: read the entries' per-domain counts (the domain tab's).
    A submission's results are ~25 KB of JSON; decoding them whole for every row was most of an uncached
    tab (Django's JSONField decodes with the standard library: 1.5 of 2.4 s at 1,000 entries)."""
    wanted = list(parts) if parts is not None else None
    columns: list[Any] = [Cast("results", TextField())] if wanted is None else [
        KT("results__" + "__".join(p)) for p in wanted]
    found = Submission.objects.on_board().filter(benchmark=benchmark, board_entry__isnull=False)
    if submission_ids is not None:
        found = found.filter(pk__in=list(submission_ids))
    rows = found.order_by(
        "finished_at", "pk").values_list("pk", "model_name", "organisation", "weights", "is_demo", "finished_at",
                                         Cast("board_entry__domain_table", TextField()) if domain_table
                                         else Value(None, output_field=TextField()), *columns)
    out = []
    for pk, name, org, weights, demo, finished, table, *texts in rows:
        if wanted is None:
            results = _json(texts[0]) or {}
        else:
            results = {}
            for p, text in zip(wanted, texts):
                if text is not None:
                    node = results
                    for key in p[:-1]:
                        node = node.setdefault(key, {})
                    node[p[-1]] = _part(text)
        out.append(TabSource(f"s{pk}", name, org, weights, pk, demo, False, results, _json(table) or {}, finished))
    return out + reported_sources(benchmark)


def reported_sources(benchmark: Benchmark) -> list[TabSource]:
    """The authors' reported rows as the tabs read them (a paper's dozen), after the submissions."""
    return [TabSource(f"r{r.pk}", r.model_name, r.organisation, r.weights, None, False, True, r.figures or {})
            for r in ReportedResult.objects.filter(benchmark=benchmark)]


def _json(text: str | None) -> Any:
    return orjson.loads(text) if text else None


def _part(text: str) -> Any:
    """A part of the results as the database extracted it: JSON, or a string's text (PostgreSQL's ->> and
    SQLite's json_extract give a JSON string unquoted: the Tools tab's reason)."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return text


@dataclass
class Cell:
    fig: Fig
    place: int = 0  # 1 best, 2 second best within its column and mode


@dataclass
class TableRow:
    source: TabSource
    mode: str
    cells: list[Cell]


def domain_table(benchmark: Benchmark, sources: list[TabSource]) -> tuple[list[tuple[str, str]], list[TableRow]]:
    """AdaptMMBench Table 3: model x mode rows; per domain (and overall) `w/o enh.` and `All` accuracy."""
    domains = domains_of(benchmark)
    rows: list[TableRow] = []
    for src in sources:
        for mode in MODES:
            cells: list[Cell] = []
            if src.reported:
                acc = path(src.results, "accuracy", mode)
                if not acc:
                    continue
                for slug, _ in [*domains, ("overall", "")]:
                    pair = acc.get(slug) or [None, None]
                    cells += [Cell(Fig(pair[0], digits=2)), Cell(Fig(pair[1], digits=2))]
            else:
                table = src.domain_table.get(mode)
                overall = path(src.results, "modes", mode, "accuracy")
                if table is None or overall is None:
                    continue
                for slug, _ in domains:  # a cell with undecided rows: not available, as the overall columns
                    d = table.get(slug) or {}
                    cells += [Cell(cell_fig(d.get("wo_enh"))), Cell(cell_fig(d.get("all")))]
                cells += [Cell(rate_fig(overall.get("wo_enh"))), Cell(rate_fig(overall.get("all")))]
            rows.append(TableRow(src, mode, cells))
    for col in range(len(rows[0].cells) if rows else 0):
        _mark_column(rows, col, True)
    return domains, rows


def aux_table(sources: list[TabSource]) -> list[tuple[TabSource, list[Fig]]]:
    """Auxiliary-line samples, their own table (left out of the overall figures, as in the paper)."""
    out = []
    for src in sources:
        if src.reported:
            aux = src.results.get("aux_line") or {}
            figs = [Fig(aux.get(m), digits=2) for m in MODES]
        else:
            figs = [rate_fig(path(src.results, "modes", m, "accuracy", "aux_line")) for m in MODES]
        if any(f.known or (f.n or 0) > 0 for f in figs):
            out.append((src, figs))
    return out


@dataclass
class ModeSelectionRow:
    source: TabSource
    tp: int | None
    fp: int | None
    tn: int | None
    fn: int | None
    mcc: Fig


def mode_selection(sources: list[TabSource]) -> list[ModeSelectionRow]:
    out = []
    for src in sources:
        ms = src.results.get("mode_selection")
        if not ms:
            continue
        iv = ms.get("interval") or {}
        out.append(ModeSelectionRow(src, ms.get("tp"), ms.get("fp"), ms.get("tn"), ms.get("fn"),
                                    Fig(ms.get("mcc"), iv.get("low"), iv.get("high"), ms.get("n"),
                                        reason=ms.get("reason"))))
    out.sort(key=lambda r: r.mcc.value if r.mcc.value is not None else -2, reverse=True)
    return out


PROCESS_COLUMNS = (  # (label, key, better, scale): Table 2's columns and the grounding / step-score extras
    ("Key-step cov. %", "kcov", "higher", 100.0), ("Key-step any %", "kcov_any", "higher", 100.0),
    ("Tool eff. %", "tool_eff", "higher", 100.0), ("Steps", "mean_steps", "lower", 1.0),
    ("Tools", "mean_calls", "lower", 1.0), ("Tokens", "mean_tokens", "lower", 1.0),
    ("Step score", "step_score", "higher", 1.0), ("Grounding IoU", "grounding_iou", "higher", 1.0),
    ("Grounding hit %", "grounding_hit", "higher", 100.0),
)
# On an MMReason-shaped benchmark (manifest figures "mmreason") the step score is MMReason's: labelled
# so, with the version of our judge prompt (the authors' prompt is unreleased; docs/metrics.md section 6).
MMREASON_STEP_LABEL = "MMReason step score"


def process_columns(figures: list[str] | tuple[str, ...]) -> tuple:
    if "mmreason" not in (figures or ()):
        return PROCESS_COLUMNS
    return tuple((MMREASON_STEP_LABEL, *c[1:]) if c[1] == "step_score" else c for c in PROCESS_COLUMNS)


REPORTED_PROCESS = {"kcov": "kcov", "tool_eff": "tool_eff", "mean_steps": "steps", "mean_calls": "tools",
                    "mean_tokens": "tokens"}

TOOLCHAIN_COLUMNS = (
    ("TCR %", "tcr", "higher", 100.0), ("MAE (all calls)", "mae_total", "lower", 1.0),
    ("MAE (effective)", "mae_eff", "lower", 1.0), ("Efficiency", "efficiency", "higher", 1.0),
    ("Toolset P", "toolset_precision", "higher", 1.0), ("Toolset R", "toolset_recall", "higher", 1.0),
    ("Toolset F1", "toolset_f1", "higher", 1.0), ("Edit distance", "edit_distance", "lower", 1.0),
)


def _node_fig(node: Any, scale: float) -> Fig:
    return rate_fig(node, scale) if isinstance(node, dict) and "count" in node else mean_fig(node, scale)


def _metric_rows(sources: list[TabSource], section: str, columns: tuple, modes: tuple[str, ...]) -> list[TableRow]:
    rows = []
    for src in sources:
        for mode in modes:
            if src.reported:
                if section != "process" or mode != "adaptive" or not src.results.get("process"):
                    continue
                pr = src.results["process"]
                cells = [Cell(Fig(pr.get(REPORTED_PROCESS[k]), digits=2) if k in REPORTED_PROCESS else Fig(None))
                         for _, k, _, _ in columns]
            else:
                node = path(src.results, "modes", mode, section)
                if node is None:
                    continue
                cells = [Cell(_node_fig(node.get(k), scale)) for _, k, _, scale in columns]
            rows.append(TableRow(src, mode, cells))
    for col, (_, _, better, _) in enumerate(columns):
        _mark_column(rows, col, better == "higher")
    return rows


def best_values(values: Iterable[float | None], higher: bool, n: int = 2) -> list[float]:
    """A column's best ``n`` distinct values, best first (``higher``: higher is better); its first two are the
    values marked ▲ and △ (``place``). The one statement of the rule: the wide tabs' index keeps more of them
    (leaderboard.wide_tabs), so that a change to the board moves its marks without reading the column again."""
    return sorted({v for v in values if v is not None}, reverse=higher)[:n]


def place(value: float | None, best: Sequence[float | None]) -> int:
    """A cell's mark: 1 (▲) for the column's best value, 2 (△) for its second-best distinct one, else 0."""
    if value is None:
        return 0
    return 1 if len(best) > 0 and value == best[0] else 2 if len(best) > 1 and value == best[1] else 0


def _mark_column(rows: list[TableRow], col: int, higher: bool) -> None:
    for mode in {r.mode for r in rows}:
        group = [r for r in rows if r.mode == mode]
        best = best_values((r.cells[col].fig.value for r in group), higher)
        for r in group:
            r.cells[col].place = place(r.cells[col].fig.value, best)


mark_column = _mark_column  # the Tools tab's columns too (leaderboard.tools_tab)


def process_table(sources: list[TabSource], columns: tuple = PROCESS_COLUMNS) -> list[TableRow]:
    """AdaptMMBench Table 2 (adaptive mode), with step score and grounding beside it."""
    return _metric_rows(sources, "process", columns, ("adaptive",))


def toolchain_table(sources: list[TabSource]) -> list[TableRow]:
    return _metric_rows(sources, "toolchain", TOOLCHAIN_COLUMNS, ("adaptive", "oracle"))
