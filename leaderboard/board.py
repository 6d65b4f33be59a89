"""The overview table as plain data: rows, columns, sorting, filtering, rank score, neighbour tests.

No database access here: ``selectors`` reads the rows, this module orders and annotates them, so
the ordering logic can be tested on hand-made rows. Statistics come from ``evaluation.metrics``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from evaluation.metrics import mcnemar_exact, paired_bootstrap_mcc
from evaluation.metrics.mode_selection import cell
from evaluation.metrics.stats import PairedTest
from evaluation.metrics.types import fast_replace, fast_state
from leaderboard.figures import NONE, Fig, p_text

PAGE_SIZE = 50


@dataclass(frozen=True, slots=True)
class Row:
    key: str  # "s<submission id>" or "r<reported id>"
    model_name: str
    organisation: str = ""
    weights: str = ""
    date: datetime | None = None
    first_finished: datetime | None = None  # when it was first on the board (the as-of view and progress chart)
    submission_id: int | None = None
    is_demo: bool = False
    reported: bool = False
    citation: str = ""
    headline_mode: str = ""
    text: Fig = NONE
    adaptive: Fig = NONE
    oracle: Fig = NONE
    mcc: Fig = NONE
    kcov: Fig = NONE
    tool_eff: Fig = NONE
    answered: Fig = NONE  # share of samples answered in the headline mode (no failure class), percent
    tokens: float | None = None
    cost: float | None = None  # mean $ per sample in the headline mode
    rank_score: float | None = None
    parameters_billions: float | None = None
    license: str = ""
    release_date: date | None = None
    model_url: str = ""
    paper_url: str = ""
    # "run" (a hosted run of the platform's harness), "file" (an upload); "" for the authors' reported rows.
    provenance: str = ""
    # the public part of a run's record, or an upload's protocol claim (evaluation.provenance.file_claim)
    run: dict[str, Any] = field(default_factory=dict)
    digest: str = ""  # sha256 of the row's canonical records ("" when not available); digest_dev: the dev split's
    digest_dev: str = ""
    reasons: dict[str, str] = field(default_factory=dict)  # why a figure is not available (metrics.md section 14)
    rank: int = 0  # position in this view
    note: str = ""  # the paired test against the row above, in words
    significant: bool | None = None
    # On the whole board by the column sorted by (tested orderings only; services.ranks_build): the rank
    # shared with its tie group and the 95 % bootstrap range of its rank. None: not ranked.
    shared_rank: int | None = None
    rank_low: int | None = None
    rank_high: int | None = None

    @property
    def cost_10k(self) -> float | None:
        return None if self.cost is None else self.cost * 10_000

    @property
    def headline(self) -> Fig:
        return getattr(self, self.headline_mode) if self.headline_mode in ("text", "adaptive", "oracle") else NONE


# A page's rows are copied (numbered, annotated, read again) and pickled into the cache a few times a page: both
# without dataclasses' per-call ``fields()`` (evaluation.metrics.types).
row_replace = fast_replace(fast_state(Row))


@dataclass(frozen=True, slots=True)
class Column:
    key: str
    label: str
    better: str | None  # "higher", "lower" or None (not a figure)
    value: Callable[[Row], Any]
    title: str = ""


def _fig(name: str) -> Callable[[Row], Any]:
    return lambda r: getattr(r, name).value


COLUMNS: tuple[Column, ...] = (
    Column("model", "Model", None, lambda r: r.model_name.lower()),
    Column("organisation", "Organisation", None, lambda r: r.organisation.lower()),
    Column("weights", "Weights", None, lambda r: r.weights or "~"),
    Column("date", "Date", None, lambda r: r.date.timestamp() if r.date else None),
    Column("text", "Text acc. %", "higher", _fig("text"), "Accuracy without tools"),
    Column("adaptive", "Adaptive acc. %", "higher", _fig("adaptive"), "Accuracy when the model decides on tools"),
    Column("oracle", "Oracle acc. %", "higher", _fig("oracle"), "Accuracy given the key region and recovery"),
    Column("answered", "Answered %", "higher", _fig("answered"), "Samples with an answer and no failure class "
           "(timeout, provider error, ...), adaptive mode (text mode for models without adaptive predictions), "
           "over the same samples as accuracy; a failure counts as wrong"),
    Column("mcc", "MCC", "higher", _fig("mcc"), "Mode-selection Matthews correlation"),
    Column("kcov", "Key-step cov. %", "higher", _fig("kcov"), "Longest matched prefix of the key steps"),
    Column("tool_eff", "Tool eff. %", "higher", _fig("tool_eff"), "Valid tool calls over all calls"),
    Column("tokens", "Tokens", "lower", lambda r: r.tokens, "Mean input + output tokens per sample"),
    Column("cost", "$ / 10K", "lower", lambda r: r.cost_10k, "Average cost of 10,000 samples"),
    Column("rank", "Rank score", "higher", lambda r: r.rank_score, "RouterArena's accuracy-cost score, b = 0.1: "
           "0 for a row whose cost is at the upper bound of the cost range (the dearest), whatever its accuracy"),
)
COLUMN_BY_KEY = {c.key: c for c in COLUMNS}
DEFAULT_SORT = "adaptive"
TESTED = ("text", "adaptive", "oracle", "mcc")  # orderings whose neighbours get a paired test


# The size filter's choices (key -> label); "unknown" is the rows without a stated parameter count
# (the authors' reported rows among them). The bounds are in ``size_matches`` and ``selectors.SIZE_CONDITIONS``.
SIZES = {"lt10": "under 10B", "10-70": "10B to 70B", "gt70": "over 70B", "unknown": "size not stated"}


def size_matches(size: str, billions: float | None) -> bool:
    """Ranges: under 10B is < 10; 10B to 70B is 10 <= p <= 70; over 70B is > 70 (so 10B and 70B sit in the middle)."""
    if not size:
        return True
    if size == "unknown":
        return billions is None
    if billions is None:
        return False
    return {"lt10": billions < 10, "10-70": 10 <= billions <= 70, "gt70": billions > 70}[size]


def parse_day(raw: str) -> date | None:
    """A calendar day as YYYY-MM-DD, else None."""
    try:
        return date.fromisoformat(raw) if len(raw) == 10 else None
    except ValueError:
        return None


def end_of_day(day: date) -> datetime:
    """The first instant after ``day`` (UTC): a row finished before it was on the board that day."""
    return datetime.combine(day + timedelta(days=1), time.min, tzinfo=UTC)


# The query-string parameters Query.parse reads: the overview's page is cached by these alone.
QUERY_PARAMS = ("sort", "dir", "weights", "q", "page", "demo", "reported", "size", "as_of")


@dataclass(frozen=True, slots=True)
class Query:
    sort: str = DEFAULT_SORT
    desc: bool = True
    weights: str = ""  # "open" | "closed" | ""
    q: str = ""
    page: int = 1
    demo: bool = True  # show simulated demo entries
    reported: bool = True  # show the authors' reported rows
    size: str = ""  # a key of SIZES, or "" for every size
    as_of: date | None = None  # the board as it stood at the end of this day (UTC)
    as_of_invalid: str = ""  # an ``as_of`` that is not a date (the page says so and shows today's board)

    @classmethod
    def parse(cls, params: Any) -> Query:
        sort = params.get("sort", DEFAULT_SORT)
        if sort not in COLUMN_BY_KEY:
            sort = DEFAULT_SORT
        column = COLUMN_BY_KEY[sort]
        default_desc = column.better != "lower" and column.better is not None
        direction = params.get("dir", "")
        desc = default_desc if direction not in ("asc", "desc") else direction == "desc"
        weights = params.get("weights", "")
        try:
            page = max(1, int(params.get("page", 1)))
        except (TypeError, ValueError):
            page = 1
        size = params.get("size", "")
        raw_day = str(params.get("as_of", "") or "").strip()[:40]
        as_of = parse_day(raw_day) if raw_day else None
        return cls(sort=sort, desc=desc, weights=weights if weights in ("open", "closed") else "",
                   q=str(params.get("q", ""))[:100].strip(), page=page, demo=params.get("demo", "1") != "0",
                   reported=params.get("reported", "1") != "0", size=size if size in SIZES else "",
                   as_of=as_of, as_of_invalid=raw_day if raw_day and as_of is None else "")

    def params(self, **changes: Any) -> dict[str, str]:
        """Query-string parameters of this query with ``changes``, defaults left out."""
        q = replace(self, **changes)
        out: dict[str, str] = {}
        if q.sort != DEFAULT_SORT:
            out["sort"] = q.sort
        column = COLUMN_BY_KEY[q.sort]
        if q.desc != (column.better != "lower" and column.better is not None):
            out["dir"] = "desc" if q.desc else "asc"
        if q.weights:
            out["weights"] = q.weights
        if q.q:
            out["q"] = q.q
        if not q.demo:
            out["demo"] = "0"
        if not q.reported:
            out["reported"] = "0"
        if q.size:
            out["size"] = q.size
        if q.as_of:
            out["as_of"] = q.as_of.isoformat()
        if q.page > 1:
            out["page"] = str(q.page)
        return out


def filter_rows(rows: Sequence[Row], query: Query) -> list[Row]:
    """The rows the query keeps. As of a date, only submissions first finished by its end (reported rows
    carry no date, so they are left out)."""
    needle = query.q.lower()
    until = end_of_day(query.as_of) if query.as_of else None
    return [r for r in rows
            if (not query.weights or r.weights == query.weights)
            and (not needle or needle in r.model_name.lower() or needle in r.organisation.lower())
            and (query.demo or not r.is_demo) and (query.reported or not r.reported)
            and size_matches(query.size, r.parameters_billions)
            and (until is None or (not r.reported and (r.first_finished or r.date) is not None
                                   and (r.first_finished or r.date) < until))]


def sort_rows(rows: Sequence[Row], sort: str, desc: bool) -> list[Row]:
    """Stable sort by one column; rows without a value always go last, whatever the direction."""
    value = COLUMN_BY_KEY[sort].value
    known = [r for r in rows if value(r) is not None]
    unknown = [r for r in rows if value(r) is None]
    known.sort(key=value, reverse=desc)  # stable: equal values keep the selector's order
    return known + unknown


def ranked(rows: Sequence[Row], start: int = 1) -> list[Row]:
    """Rows numbered from ``start`` (only the rows shown are copied: the overview shows 50 of 1,000)."""
    return [row_replace(r, rank=i) for i, r in enumerate(rows, start)]


# In a stored correctness string (services.entry_fields): a row no rule decided, which only an LLM judge may
# (metrics.md section 13). Neither right nor wrong: left out of the mode-selection cells, and a mode's vector
# with one has no paired test (its accuracy is not available either).
UNDECIDED_BIT = "?"


@dataclass(frozen=True, slots=True)
class Vectors:
    correct: dict[str, str] = field(default_factory=dict)
    invoked: str = ""


def _bools(bits: str) -> list[bool]:
    return [b == "1" for b in bits]


def mcc_cells(v: Vectors) -> list[int]:
    """Per sample, the mode-selection cell of the text answer and the adaptive tool use; -1 where either
    is missing, or the text answer is undecided (whether it needed a tool is unknown until judged, as in
    ``aggregate.mode_selection_from_state``); [] when the vectors do not line up."""
    text, invoked = v.correct.get("text", ""), v.invoked
    if not text or len(text) != len(invoked):
        return []
    return [-1 if "-" in (t, i) or t == UNDECIDED_BIT else cell(t == "1", i == "1") for t, i in zip(text, invoked)]


def mcc_pair_test(ca: list[int], cb: list[int]) -> PairedTest | None:
    """The paired bootstrap of the MCC difference over the samples both have a cell for (``mcc_cells``)."""
    if not ca or len(ca) != len(cb):
        return None
    both = [(x, y) for x, y in zip(ca, cb) if x >= 0 and y >= 0]
    if not both:
        return None
    return paired_bootstrap_mcc([x for x, _ in both], [y for _, y in both])


TEST_NAMES = {"mcc": "paired bootstrap"}  # the others: exact McNemar


def paired_test(sort: str, upper: Vectors, lower: Vectors) -> PairedTest | None:
    """The paired test of metrics.md section 8 between two rows for the column sorted by, or None
    when their per-sample vectors do not allow one."""
    if sort == "mcc":
        return mcc_pair_test(mcc_cells(upper), mcc_cells(lower))
    a, b = upper.correct.get(sort, ""), lower.correct.get(sort, "")
    if not a or not b or len(a) != len(b) or UNDECIDED_BIT in a or UNDECIDED_BIT in b:
        return None
    return mcnemar_exact(_bools(a), _bools(b))


def neighbour_note(sort: str, p_value: float, significant: bool) -> tuple[str, bool]:
    name = TEST_NAMES.get(sort, "exact McNemar")
    if significant:
        return f"differs significantly from the row above ({name}, {p_text(p_value)})", True
    return f"not significantly different from the row above ({name}, {p_text(p_value)})", False


def paired_note(sort: str, upper: Vectors, lower: Vectors) -> tuple[str, bool | None]:
    test = paired_test(sort, upper, lower)
    return ("", None) if test is None else neighbour_note(sort, test.p_value, test.significant)


@dataclass(frozen=True, slots=True)
class Standing:
    """A row's stored place on the whole board by one ordering (leaderboard.models.EntryRank)."""

    shared_rank: int
    rank_low: int | None
    rank_high: int | None
    above: int | None
    p_above: float | None
    significant_above: bool | None


def _stored_test(sort: str, upper: Row, lower: Row, standings: dict[int, Standing]) -> tuple[str, bool | None] | None:
    """The neighbours' test from the stored ranks when they are neighbours on the whole board too (in
    either direction); None when they are not (a filtered view) and the test must be run here."""
    for this, other in ((lower, upper), (upper, lower)):
        s = standings.get(this.submission_id)
        if s is not None and s.above == other.submission_id:
            return ("", None) if s.p_above is None else neighbour_note(sort, s.p_above, bool(s.significant_above))
    return None


def annotate_neighbours(rows: Sequence[Row], sort: str, vectors: dict[int, Vectors] | Callable[[], dict[int, Vectors]],
                        standings: dict[int, Standing] | None = None) -> list[Row]:
    """Say, on each row, whether it differs significantly from the row above (tested orderings only),
    and give it its whole-board rank, tie group and rank interval from ``standings``.

    Tests come from ``standings`` where the two rows are neighbours on the whole board; the others
    (filtered views) run here, on ``vectors`` (a dict, or a function returning it, called only then)."""
    if sort not in TESTED:
        return list(rows)
    standings = standings or {}
    loaded: dict[int, Vectors] | None = vectors if isinstance(vectors, dict) else None

    def vecs() -> dict[int, Vectors]:
        nonlocal loaded
        if loaded is None:
            loaded = vectors()  # type: ignore[operator]
        return loaded

    out = []
    for i, lower in enumerate(rows):
        note, sig = "", None
        upper = rows[i - 1] if i else None
        if upper is None:
            pass
        elif upper.reported or lower.reported:
            note = "not tested: reported figures come without per-sample results" if (
                getattr(upper, sort).known and getattr(lower, sort).known) else ""
        elif getattr(lower, sort).known:
            stored = _stored_test(sort, upper, lower, standings)
            if stored is not None:
                note, sig = stored
            elif upper.submission_id in vecs() and lower.submission_id in vecs():
                # the better row first, as ranks_build tests it (a bootstrap's draws depend on the order)
                a, b = (lower, upper) if getattr(upper, sort).value < getattr(lower, sort).value else (upper, lower)
                note, sig = paired_note(sort, vecs()[a.submission_id], vecs()[b.submission_id])
        s = standings.get(lower.submission_id) if lower.submission_id is not None else None
        ranks = {"shared_rank": s.shared_rank, "rank_low": s.rank_low, "rank_high": s.rank_high} if s else {}
        out.append(row_replace(lower, note=note, significant=sig, **ranks) if (upper or ranks) else lower)
    return out


@dataclass(frozen=True, slots=True)
class Page:
    rows: list[Row]
    number: int
    pages: int
    total: int
    # What the page shows now beyond the build's page it was made from (``selectors.overview_now``: the submissions'
    # columns read again): with the build and the query, a cache key for the page as shown, far cheaper than its repr.
    now: str = field(default="", compare=False)


def paginate(rows: Sequence[Row], page: int, size: int = PAGE_SIZE) -> Page:
    pages = max(1, -(-len(rows) // size))
    number = min(max(1, page), pages)
    return Page(ranked(rows[(number - 1) * size:number * size], (number - 1) * size + 1), number, pages, len(rows))
