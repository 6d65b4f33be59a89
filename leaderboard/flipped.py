""""What flipped": the samples where two submissions disagree, McNemar's two discordant cells.

Read from the board's last build: each ``BoardEntry`` stores a mode's correctness as a ``1``/``0``/``-``
string over the benchmark's non-aux samples in primary-key order (``services.sample_frame``), the same
vectors the paired tests use, so the counts here are the test's discordant counts (a missing prediction
counts as wrong, as in accuracy; a sample either answered undecided, ``?``, is neither right nor wrong and left
out, counted apart). One query reads the entries, one the samples' uids, splits and domains;
nothing else, so two submissions of 30,540 samples take well under a second (bench/bench_flipped.py).

Who sees what: test-split correctness is never public (docs/security.md), so the list shows the dev
split to everyone and every split to staff and to the owner of both submissions (``sees_every_sample``).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import AnonymousUser, User

from annotation.models import Benchmark, Sample, Split
from evaluation.metrics.types import BOARD_MODES
from evaluation.models import Submission
from leaderboard.board import UNDECIDED_BIT
from leaderboard.models import BoardEntry

PAGE = 100  # rows a page
CELLS = ("a", "b")  # "a": A right and B wrong; "b": A wrong and B right


def sees_every_sample(user: User | AnonymousUser, a: Submission, b: Submission) -> bool:
    """Staff, and whoever owns both submissions: they may see test-split correctness of both."""
    if not user.is_authenticated:
        return False
    return bool(user.is_staff or (a.owner_id == user.pk and b.owner_id == user.pk))


@dataclass(frozen=True, slots=True)
class Flip:
    uid: str
    domain: str
    category: str
    split: str
    a_right: bool  # else B is the one that got it right


@dataclass
class Flipped:
    mode: str
    modes: list[str]  # the modes both have vectors for
    domain: str  # a domain slug, "" for all
    domains: list[tuple[str, str]]  # (slug, name) of the benchmark
    cell: str  # "a", "b" or "" for both
    counts: dict[str, int]  # per cell, with the filters (domain, splits shown)
    hidden: int  # discordant samples of the test split not shown to this visitor (all domains)
    undecided: int  # samples left out because either answer is undecided (needs an LLM judge), with the filters
    every_split: bool
    rows: list[Flip]
    page: int
    pages: int

    @property
    def total(self) -> int:
        return self.counts["a"] + self.counts["b"]


def _sample_rows(benchmark: Benchmark) -> list[tuple[str, str, str, str, str]]:
    """(uid, split, domain slug, domain name, category name) of the non-aux samples, in the vectors' order."""
    return list(Sample.objects.filter(benchmark=benchmark, aux_line=False).order_by("pk").values_list(
        "uid", "split", "category__domain__slug", "category__domain__name", "category__name"))


def flipped(benchmark: Benchmark, a: Submission, b: Submission, *, mode: str = "", domain: str = "",
            cell: str = "", page: int = 1, every_split: bool = False) -> Flipped | None:
    """The discordant samples of ``mode`` (default: adaptive, else the first shared), filtered; None while
    either entry is missing or was built over another sample list than the benchmark has now (the board
    is updating)."""
    vectors = dict(BoardEntry.objects.filter(submission__in=(a.pk, b.pk)).values_list("submission_id", "correct"))
    if a.pk not in vectors or b.pk not in vectors:
        return None
    ca, cb = vectors[a.pk], vectors[b.pk]
    modes = [m for m in BOARD_MODES if ca.get(m) and cb.get(m) and len(ca[m]) == len(cb[m])]
    if mode not in modes:
        mode = "adaptive" if "adaptive" in modes else (modes[0] if modes else "")
    domains = list(benchmark.domains.order_by("position", "slug").values_list("slug", "name"))
    if domain not in {slug for slug, _ in domains}:
        domain = ""
    cell = cell if cell in CELLS else ""
    samples = _sample_rows(benchmark)
    va, vb = ca.get(mode, ""), cb.get(mode, "")
    if mode and len(va) != len(samples):
        return None  # samples were added or removed since the board's last build
    counts = {"a": 0, "b": 0}
    hidden = undecided = 0
    rows: list[Flip] = []
    for (uid, split, dslug, _, category), x, y in zip(samples, va, vb, strict=False):
        if UNDECIDED_BIT in (x, y):  # neither right nor wrong: no flip either way until a judge decides it
            undecided += not domain or dslug == domain
            continue
        if (x == "1") == (y == "1"):  # concordant ("0" against "-" is both wrong)
            continue
        if not every_split and split != Split.DEV:
            hidden += 1
            continue
        if domain and dslug != domain:
            continue
        which = "a" if x == "1" else "b"
        counts[which] += 1
        if not cell or cell == which:
            rows.append(Flip(uid, dslug, category, split, which == "a"))
    rows.sort(key=lambda f: not f.a_right)  # A's wins first, then B's, each in sample order
    pages = max(1, -(-len(rows) // PAGE))
    page = min(max(page, 1), pages)
    names = dict(domains)
    shown = [Flip(f.uid, names.get(f.domain, f.domain), f.category, f.split, f.a_right)
             for f in rows[(page - 1) * PAGE: page * PAGE]]
    return Flipped(mode, modes, domain, domains, cell, counts, hidden, undecided, every_split, shown, page, pages)
