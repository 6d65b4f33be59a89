"""`load_demo`, run twice once for this module (it takes tens of seconds): the AdaptMMBench-shaped
demo and the release-shaped demo benchmarks (VTC-Bench, MMReason, Agent-X) with their simulated
submissions, converted from the authors' output shapes and scored by the pipeline."""

from __future__ import annotations

from html import unescape
import json
import re
from dataclasses import dataclass
from io import StringIO
from itertools import permutations

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.core.management import call_command

from annotation.models import Annotation, Assignment, Benchmark, Category, Domain, ProposalRun, Sample, SampleMedia
from evaluation.demo import DEMO_PROPOSAL_MODEL, HARNESS_MODEL, HRBENCH_HARNESS_MODEL
from evaluation.metrics.tool_effect import group_from_counts, shown_rate
from evaluation.models import PredictionResult, Submission

RELEASES = {"vtc-bench-demo": "vtcbench", "mmreason-demo": "vlmevalkit", "agent-x-demo": "agentx"}
NAMES = {"vtc-bench-demo": "VTC-Bench demo (generated)", "mmreason-demo": "MMReason demo (generated)",
         "agent-x-demo": "Agent-X demo (generated)"}  # fmt: skip
# As each author's tooling writes it: a JSON line, a workbook (zip), a TSV header, a JSON list.
ORIGINAL_HEAD = {"jsonl": b'{"', "xlsx": b"PK", "tsv": b"in", "json": b"[\n"}


def _counts() -> dict[str, int]:
    return {
        "benchmarks": Benchmark.objects.count(), "domains": Domain.objects.count(),
        "categories": Category.objects.count(), "samples": Sample.objects.count(),
        "media": SampleMedia.objects.count(), "submissions": Submission.objects.count(),
        "results": PredictionResult.objects.count(), "users": get_user_model().objects.count(),
    }  # fmt: skip


# The demo is loaded (twice) once for the module (~30 s) and crawled (~4 s): on the embedded default too, the
# database a fresh machine's demo runs on, so every page it serves is read on SQLite as well.
pytestmark = [pytest.mark.slow, pytest.mark.every_path]

@dataclass
class Loaded:
    first: str
    second: str
    after_first: dict[str, int]
    after_second: dict[str, int]
    mails: int


@pytest.fixture(scope="module")
def loaded(django_db_setup, django_db_blocker) -> Loaded:  # noqa: ANN001
    with django_db_blocker.unblock():
        outbox = len(getattr(mail, "outbox", []))
        first, second = StringIO(), StringIO()
        call_command("load_demo", stdout=first)
        after_first = _counts()
        call_command("load_demo", stdout=second)  # safe to run twice
        yield Loaded(first.getvalue(), second.getvalue(), after_first, _counts(),
                     len(getattr(mail, "outbox", [])) - outbox)
        call_command("flush", interactive=False, verbosity=0)  # the data outlived every test's rollback


@pytest.fixture
def demo(loaded: Loaded, db) -> Loaded:  # noqa: ANN001
    return loaded


def _taxonomy(slug: str) -> dict[str, list[str]]:
    return {d.name: [c.name for c in d.categories.order_by("position")]
            for d in Domain.objects.filter(benchmark__slug=slug).order_by("position")}


def test_the_release_shaped_benchmarks_come_with_their_own_taxonomies(demo: Loaded) -> None:
    assert _taxonomy("vtc-bench-demo") == {  # the paper's tiers, given by --domain-of
        "Perception": ["ocr", "perceptual", "attention"], "Estimation": ["measure", "color", "counting"],
        "Reasoning": ["chart", "math", "spatial"]}  # fmt: skip
    disciplines = ["Math", "Business", "Science", "Engineering", "Social Sciences", "Health"]
    assert list(_taxonomy("mmreason-demo")) == disciplines
    assert _taxonomy("mmreason-demo")["Health"] == ["Pharmacology", "Nutrition"]
    assert _taxonomy("agent-x-demo") == {"All": ["Factual", "Interpretive", "Generative"]}
    counts = {slug: Sample.objects.filter(benchmark__slug=slug).count() for slug in RELEASES}
    assert counts == {"vtc-bench-demo": 27, "mmreason-demo": 25, "agent-x-demo": 20}
    # Read through the release readers: VTC's name-only chains, Agent-X's declared tools.
    vtc = Sample.objects.get(benchmark__slug="vtc-bench-demo", uid="counting_001")
    assert vtc.meta["model_tools_gt"] == '["Color Filter", "Connected Components"]'
    declared = Benchmark.objects.get(slug="agent-x-demo").declared_tools
    assert [t["name"] for t in declared][:2] == ["OCR", "ObjectCounter"]
    shared = Sample.objects.get(benchmark__slug="mmreason-demo", uid="25")  # its TSV image names row 1's
    assert shared.image_sha256 == Sample.objects.get(benchmark__slug="mmreason-demo", uid="1").image_sha256


def test_a_multi_image_and_a_video_sample_exist_with_their_frames(demo: Loaded) -> None:
    agentx = Sample.objects.filter(benchmark__slug="agent-x-demo")
    videos = SampleMedia.objects.filter(sample__in=agentx, kind="video")
    assert videos.count() == 2
    for video in videos:
        assert video.duration == pytest.approx(2.0, abs=0.2)
        assert len(video.frames) >= 3 and video.file.storage.exists(video.frames[0]["name"])
        assert video.file.storage.exists(video.file.name) and video.file.name.endswith(".mp4")
    pairs = [s for s in agentx if s.media.filter(kind="image").count() == 2]
    assert len(pairs) == 3
    first, second = pairs[0].media.order_by("position")
    assert first.sha256 != second.sha256
    png_named_jpg = agentx.get(uid="3")  # task03.jpg is a PNG: sniffed by content
    assert png_named_jpg.media.get().file.name.endswith(".png")


def test_the_simulated_submissions_are_converted_and_scored_with_real_figures(demo: Loaded) -> None:
    subs = Submission.objects.filter(benchmark__slug__in=RELEASES).select_related("benchmark")
    assert subs.count() == 6
    accuracy: dict[str, list[float]] = {}
    for sub in subs:
        assert sub.status == "done" and sub.is_demo and sub.is_public and "(simulated)" in sub.model_name
        assert sub.description.startswith("Simulated demo entry")
        assert sub.format == RELEASES[sub.benchmark.slug]
        with sub.file.open("rb") as converted, sub.source_file.open("rb") as original:  # both kept
            assert {"sample_id", "mode", "answer"} <= set(json.loads(converted.readline()))
            assert original.read(2) == ORIGINAL_HEAD[sub.original_name.rsplit(".", 1)[1]]
        assert sub.n_predictions == Sample.objects.filter(benchmark=sub.benchmark).count()
        mode = "text" if sub.format == "vlmevalkit" else "adaptive"
        figures = sub.results["modes"][mode]
        accuracy.setdefault(sub.benchmark.slug, []).append(figures["accuracy"]["overall"]["value"])
        if mode == "adaptive":
            assert 0 < figures["toolchain"]["toolset_precision"]["value"] <= 1
            assert figures["process"]["tool_eff"]["value"] > 0.5  # the calls validated (registry or declared)
    for slug, values in accuracy.items():
        assert all(0.2 < v < 1 for v in values), (slug, values)
        assert abs(values[0] - values[1]) > 0.1, slug  # a stronger and a weaker model
    vtc_cost = Submission.objects.get(model_name="Sim-VTC-Agent (simulated)").results["modes"]["adaptive"]["cost"]
    assert vtc_cost["mean_cost_usd"]["value"] > 0  # token counts came through the conversation log
    xlsx = Submission.objects.get(model_name="Sim-Reasoner (simulated)")
    assert xlsx.original_name.endswith(".xlsx")


def test_running_it_twice_changes_nothing(demo: Loaded) -> None:
    assert demo.after_second == demo.after_first
    # adaptmm-demo, reported AdaptMMBench and Agent-X, three releases, the HR-Bench-shaped demo
    assert demo.after_first["benchmarks"] == 7
    assert re.search(r"hrbench-demo: 0 created, 0 updated, 12 unchanged", demo.second), demo.second
    assert "Reported results: 14 models on 'agent-x'" in demo.first
    for slug in RELEASES:
        assert re.search(rf"{slug}: 0 created, 0 updated, \d+ unchanged", demo.second), demo.second
    assert demo.mails == 0  # demo entries email no one


def test_the_home_page_lists_the_new_benchmarks_with_simulated_leaders(demo: Loaded, client) -> None:  # noqa: ANN001
    html = client.get("/").content.decode()
    for slug, name in NAMES.items():
        section = html.split(f'id="bench-{slug}"', 1)[1].split("</section>", 1)[0]
        assert name in section and "Generated demo data" in section
        assert "simulated demo" in section and "(simulated)" in section  # leaders, labelled
    assert "Perception: 9" in html and "Social Sciences: 4" in html
    mmreason = html.split('id="bench-mmreason-demo"', 1)[1]
    assert "<strong>25</strong> samples (9 in the public dev split)" in mmreason


def test_the_adaptmm_demo_keeps_its_five_labelled_submissions(demo: Loaded) -> None:
    demo_subs = Submission.objects.filter(benchmark__slug="adaptmm-demo", is_demo=True).exclude(
        model_name__startswith="Sim-Blind").exclude(model_name=HARNESS_MODEL)
    assert demo_subs.count() == 5
    assert all(s.status == "done" and s.is_public and "(simulated)" in s.model_name
               and s.description.startswith("Simulated demo entry") for s in demo_subs)
    modes = {m for s in demo_subs for m in s.results["modes"]}
    assert modes == {"text", "adaptive", "oracle"}
    mccs = [s.results["mode_selection"]["mcc"] for s in demo_subs if s.results["mode_selection"]]
    assert max(mccs) > 0.5 and min(mccs) < 0.2  # good and poor mode selection
    assert len({s.prices for s in demo_subs}) == 5


def test_the_harness_row_is_labelled_and_its_traces_show_steps_and_tool_images(demo: Loaded, client) -> None:  # noqa: ANN001
    sub = Submission.objects.get(benchmark__slug="adaptmm-demo", model_name=HARNESS_MODEL)
    assert sub.status == "done" and sub.is_public and sub.is_demo
    assert "simulated model" in sub.model_name and "simulated model" in sub.description
    assert set(sub.results["modes"]) == {"text", "adaptive", "oracle"}
    board = client.get("/b/adaptmm-demo/").content.decode()
    assert HARNESS_MODEL in board
    # Made by the platform's harness, so a run row, as its description says (issue 38, item 6), never "submitted file".
    row = re.search(rf'<tr [^>]*data-key="s{sub.pk}"[^>]*>(.*?)</tr>', board, re.S).group(1)
    assert sub.provenance == "run" and 'data-provenance="run"' in row and "submitted file" not in row
    assert sub.run_record["declared_model"] in sub.run_record["model_ids"]  # no mismatch to report
    page = client.get(f"/b/adaptmm-demo/m/{sub.pk}/").content.decode()
    assert "simulated model" in page
    result = PredictionResult.objects.filter(submission=sub, mode="adaptive", n_calls__gt=0,
                                             sample__split="dev").select_related("sample").first()
    assert result is not None
    detail = client.get(f"/b/adaptmm-demo/m/{sub.pk}/s/{result.sample.uid}/")
    assert detail.status_code == 200
    html = detail.content.decode()
    image_url = f"/b/adaptmm-demo/m/{sub.pk}/s/{result.sample.uid}/adaptive/img1.png"
    assert result.calls[0]["name"] in html and image_url in html
    image = client.get(image_url)
    assert image.status_code == 200 and image["Content-Type"] == "image/png"


def test_three_simulated_blind_submissions_make_the_guessability_audit_flag_samples(demo: Loaded, client) -> None:  # noqa: ANN001
    blind = Submission.objects.filter(benchmark__slug="adaptmm-demo", model_name__startswith="Sim-Blind")
    assert blind.count() == 3  # GUESSABLE_MIN_BLIND: fewer and nothing would be decided
    for sub in blind:
        assert sub.status == "done" and sub.is_demo and sub.is_public and "(simulated)" in sub.model_name
        assert sub.description.startswith("Simulated demo entry") and "blind only" in sub.description
        assert set(sub.results["modes"]) == {"blind"}
    samples = Sample.objects.filter(benchmark__slug="adaptmm-demo")
    flags = [s.guessable for s in samples]
    assert None not in flags  # every sample audited
    assert 0 < flags.count(True) < len(flags) / 2, flags.count(True)  # some guessable, most not
    html = client.get("/b/adaptmm-demo/guessability/").content.decode()
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))
    assert "Not audited yet" not in text and "Sim-Blind-Large (simulated)" in text
    assert "Guessable share per domain" in text


WRITES = re.compile(r"^\s*(INSERT|UPDATE|DELETE|REPLACE)\b", re.I)
SKIP = ("/admin/", "/static/", "/accounts/logout/", "/media/")
LOCKS = re.compile(r"\bFOR (UPDATE|SHARE|NO KEY UPDATE)\b|\bpg_advisory|\bLOCK TABLE\b|\bBEGIN IMMEDIATE\b", re.I)
# The most queries one page read may make (the largest page of the demo crawl, the home page, makes 22; the bound
# leaves room for a page that grows, and catches a query per row).
MAX_QUERIES_PER_PAGE = 40


def _links(html: str) -> list[str]:
    return [h.replace("&amp;", "&") for h in re.findall(r'href="(/[^"#]*)"', html)]


# Pages of one kind the crawl reads at most: the kind is the URL's route, its benchmark and its query's parameter
# names, so every kind of page of every benchmark is read, several times over, and the crawl is not spent on one
# kind (the demo has ~280 sample trace pages, ~75 ms each: three quarters of an unbounded crawl's time).
PAGES_PER_KIND = 6


def _kind(url: str) -> str:
    from django.urls import Resolver404, resolve

    path, _, query = url.partition("?")
    try:
        match = resolve(path)
    except Resolver404:
        return path
    names = sorted({part.split("=")[0] for part in query.split("&") if part})
    return f"{match.route} {match.kwargs.get('slug', '')} {','.join(names)}"


def test_an_anonymous_crawl_after_an_unpublish_with_no_worker_never_writes_and_never_waits(demo: Loaded,
                                                                                          client) -> None:  # noqa: ANN001
    """docs/architecture.md, "Derived figures": after a change, with no worker to run the refreshes, every
    public page a visitor can reach from the home page reads the last build: no INSERT, UPDATE or DELETE, no
    lock taken (nothing a read could wait on), a bounded number of queries per page whatever the board holds,
    and the unpublished row gone at once. (How long a page takes is measured in bench/, not here: a test that
    timed it failed whenever the machine was busy.)"""
    from typing import Any

    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from evaluation import services

    gone = Submission.objects.filter(benchmark__slug="adaptmm-demo", is_public=True, status="done",
                                     model_name__startswith="Sim-").order_by("pk").first()
    services.submission_set_public(submission=gone, public=False)  # its on-commit refresh never runs here
    seen: set[str] = set()
    kinds: dict[str, int] = {}
    pages = 0
    queue = ["/", "/api/v1/benchmarks/", "/b/adaptmm-demo/routers/", "/b/adaptmm-demo/guessability/"]
    writes, locks, many, errors = [], [], [], []
    while queue and pages < 1000:
        url = queue.pop(0)
        if url in seen or url.startswith(SKIP):
            continue
        seen.add(url)
        kind = _kind(url)
        kinds[kind] = kinds.get(kind, 0) + 1
        if kinds[kind] > PAGES_PER_KIND:
            continue
        pages += 1
        with CaptureQueriesContext(connection) as ctx:
            response: Any = client.get(url)
            body = b"".join(response.streaming_content) if response.streaming else response.content
        queries = ctx.captured_queries
        writes += [f"{url}: {q['sql'][:120]}" for q in queries if WRITES.match(q["sql"])]
        locks += [f"{url}: {q['sql'][:120]}" for q in queries if LOCKS.search(q["sql"])]
        if len(queries) > MAX_QUERIES_PER_PAGE:
            many.append(f"{url}: {len(queries)} queries")
        if response.status_code >= 500:
            errors.append(f"{url}: {response.status_code}")
        if response.status_code == 200 and response.get("Content-Type", "").startswith("text/html"):
            queue += [u for u in _links(body.decode("utf-8", "replace")) if u not in seen]
    routes = {kind.split(" ")[0] for kind in kinds}
    # The crawl reached the boards, their tabs, models, samples' traces, downloads and reviews, and ran out of
    # links before its bound: every kind of page reachable from the home page was read.
    assert {"b/<slug:slug>/", "b/<slug:slug>/<slug:tab>/", "b/<slug:slug>/m/<int:pk>/",
            "b/<slug:slug>/m/<int:pk>/s/<str:uid>/", "b/<slug:slug>/data/<slug:split>.<slug:kind>",
            "review/verified/<int:pk>/", "api/v1/benchmarks/<slug:slug>/leaderboard/"} <= routes, sorted(routes)
    assert not queue and pages > 100, (pages, sorted(kinds))
    assert not writes, "\n".join(writes[:20])
    assert not locks, "\n".join(locks[:20])
    assert not errors, errors
    assert not many, many
    board = client.get("/b/adaptmm-demo/").content.decode()
    assert f'data-key="s{gone.pk}"' not in board and 'id="board-updating"' in board
    assert gone.model_name not in client.get("/api/v1/benchmarks/adaptmm-demo/leaderboard/").content.decode()


# What a tab shows when it has nothing: the templates' empty states (leaderboard/templates/leaderboard/tabs/).
EMPTY_STATES = ("No public results", "No model has both", "No pool yet", "Not audited yet", 'id="pareto-empty"',
                "No row has", "No public submission has a headline", "No auxiliary-line results. ")


def _tab_panel(html: str) -> str:
    return html.split('class="tab-panel"', 1)[1]


def _only_dashes(panel: str) -> bool:
    """The tab's first table has rows, and every figure cell in them is a dash."""
    body = panel.split("<tbody>", 1)[1].split("</tbody>", 1)[0] if "<tbody>" in panel else ""
    cells = [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r'<td class="num[^"]*"[^>]*>(.*?)</td>', body, re.S)]
    return bool(cells) and all(c in ("", "–", "—", "-") for c in cells)


def test_every_tab_the_navigation_offers_on_the_demo_boards_has_something_to_show(demo: Loaded, client) -> None:  # noqa: ANN001
    """Issue 26, item 1: a tab with no data for a board is not offered, so a visitor never opens an empty state."""
    problems, offered = [], {}
    for benchmark in Benchmark.objects.order_by("slug"):
        html = client.get(f"/b/{benchmark.slug}/").content.decode()
        tabs = re.findall(r'data-tab="([\w-]+)"', html.split('class="tab-panel"', 1)[0])
        offered[benchmark.slug] = tabs
        for tab in tabs:
            page = client.get(f"/b/{benchmark.slug}/" if tab == "overview" else f"/b/{benchmark.slug}/{tab}/")
            panel = _tab_panel(page.content.decode())
            shown = [m for m in EMPTY_STATES if m in panel]
            if shown or _only_dashes(panel):
                problems.append(f"{benchmark.slug} {tab}: {shown or 'only dashes'}")
    assert not problems, "\n".join(problems)
    assert offered["agent-x"][0] == "agentx" and "overview" not in offered["agent-x"], offered["agent-x"]
    assert "routers" in offered["adaptmm-demo"] and "guessability" in offered["adaptmm-demo"]  # not vacuous
    # A board of reported figures alone opens on the tab that holds them.
    landing = client.get("/b/agent-x/").content.decode()
    assert re.search(r'aria-current="page"[^>]*data-tab="agentx"', landing) and 'id="agentx-citation"' in landing


def test_the_home_cards_of_the_reported_boards_show_their_reported_leaders(demo: Loaded, client) -> None:  # noqa: ANN001
    home = client.get("/").content.decode()
    for slug in ("adaptmmbench", "agent-x"):
        card = home.split(f'id="bench-{slug}"', 1)[1].split("</section>", 1)[0]
        assert "No public results yet" not in card and "0</strong> samples" not in card, card[:600]
        assert card.count('<span class="badge reported">') >= 3, card[:600]  # three leaders, each reported


def test_the_tools_tab_tells_the_three_tool_models_apart(demo: Loaded, client) -> None:  # noqa: ANN001
    """docs/metrics.md section 15: Sim-Adaptive-Pro's tools help; Sim-ToolHappy's hurt on OCR; the harness row calls
    tools its model is never shown (tool outputs shown 0 %), and its tool contribution's interval holds 0."""
    subs = {s.model_name: s for s in Submission.objects.filter(benchmark__slug="adaptmm-demo", deleted_at__isnull=True)}
    pro, happy, harness = (subs[name] for name in ("Sim-Adaptive-Pro (simulated)", "Sim-ToolHappy (simulated)",
                                                   HARNESS_MODEL))

    def figures(sub: Submission, domain: str | None = None):  # noqa: ANN202 - the library's ToolEffectGroup
        effect = sub.results["tool_effect"]
        group = effect["by_domain"][domain] if domain else effect["overall"]
        return group_from_counts(group, has_oracle=effect["has_oracle"])

    assert figures(pro).contribution.interval.low > 0
    assert figures(happy, "ocr").contribution.interval.high < 0
    assert shown_rate(harness.results["tool_effect"]["shown"]).percent == 0.0
    blind = figures(harness)
    assert blind.contribution.interval.low <= 0 <= blind.contribution.interval.high
    assert blind.solved == blind.broken == 0
    html = client.get("/b/adaptmm-demo/tools/").content.decode()
    keys = re.findall(r'<tr [^>]*data-key="(s\d+)" data-mode', html)
    assert keys.index(f"s{pro.pk}") < keys.index(f"s{harness.pk}")  # best tool contribution first
    row = re.search(rf'<tr [^>]*data-key="s{harness.pk}"[^>]*>(.*?)</tr>', html, re.S).group(1)
    assert re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)[-1].startswith("0.00")  # tool outputs shown
    model = client.get(f"/b/adaptmm-demo/m/{happy.pk}/").content.decode()
    assert "OCR" in re.search(r'id="model-tools">(.*?)</table>', model, re.S).group(1)
    trace = PredictionResult.objects.filter(submission=harness, mode="adaptive", n_calls__gt=0,
                                            sample__split="dev").select_related("sample").first()
    page = client.get(f"/b/adaptmm-demo/m/{harness.pk}/s/{trace.sample.uid}/").content.decode()
    assert "output never shown to the model" in page


def test_the_hrbench_demo_shows_that_only_a_zoom_reads_the_detail(demo: Loaded, client) -> None:  # noqa: ANN001
    """Issue 35: the HR-Bench-shaped demo (a dozen large images, a small tag each) run by the harness: text mode
    (a 1 MP view) reads no tag, adaptive mode zooms at it on the original and reads every one."""
    sub = Submission.objects.get(benchmark__slug="hrbench-demo", model_name=HRBENCH_HARNESS_MODEL)
    assert sub.is_demo and sub.is_public and sub.status == "done"
    assert Benchmark.objects.get(slug="hrbench-demo").scoring == "hrbench"
    board = client.get("/b/hrbench-demo/").content.decode()
    row = board.split(HRBENCH_HARNESS_MODEL, 1)[1].split("</tr>", 1)[0]
    cells = [" ".join(re.sub(r"<[^>]+>", " ", c).split()) for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
    assert "0.0 [0.0, 0.0]" in cells and "100.0 [100.0, 100.0]" in cells  # text, adaptive
    tools = client.get("/b/hrbench-demo/tools/").content.decode()
    row = re.search(rf'<tr [^>]*data-key="s{sub.pk}"[^>]*>(.*?)</tr>', tools, re.S).group(1)
    text = " ".join(re.sub(r"<[^>]+>", " ", row).split())
    assert "Text → adaptive 0.00 [0.00, 0.00]" in text  # text mode reads no tag
    assert "▲ best 100.00 [100.00, 100.00]" in text  # adaptive: every tag, and a tool contribution of 100 pp


def test_the_model_page_shows_the_authors_cycle_figure(demo: Loaded, client) -> None:  # noqa: ANN001
    """Issue 35: HR-Bench's own figure (accuracy per cycle, averaged over cycles), labelled with its rule."""
    sub = Submission.objects.get(benchmark__slug="hrbench-demo", model_name=HRBENCH_HARNESS_MODEL)
    page = client.get(f"/b/hrbench-demo/m/{sub.pk}/").content.decode()
    table = re.search(r'<table class="board-table" id="model-author-figures">(.*?)</table>', page, re.S).group(1)
    text = " ".join(unescape(re.sub(r"<[^>]+>", " ", table)).split())
    assert "HR-Bench's report_acc_hrbench" in text
    assert "adaptive Accuracy, average over cycles 100.0" in text and "text Accuracy, average over cycles 0.0" in text
    other = client.get(f"/b/adaptmm-demo/m/{Submission.objects.get(model_name=HARNESS_MODEL).pk}/").content.decode()
    assert "model-author-figures" not in other  # a benchmark without the authors' figure shows none


def _iou(a: list[float], b: list[float]) -> float:
    w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - w * h
    return w * h / union if union else 0.0


def _overlap(a: str, b: str) -> float:
    words_a, words_b = set(re.findall(r"\w+", a.lower())), set(re.findall(r"\w+", b.lower()))
    return len(words_a & words_b) / len(words_a | words_b) if words_a | words_b else 1.0


def _best_one_to_one(gold: list[list[float]], proposed: list[list[float]]) -> list[float]:
    """Each approved box's IoU under the one-to-one pairing with the largest total (every pairing tried; an
    approved box left without a partner counts 0)."""
    padded = proposed + [None] * len(gold)  # type: ignore[list-item]
    best: list[float] = []
    for chosen in permutations(range(len(padded)), len(gold)):
        values = [0.0 if padded[j] is None else _iou(g, padded[j]) for g, j in zip(gold, chosen, strict=True)]
        if sum(values) > sum(best) or not best:
            best = values
    return best


def test_the_demo_proposal_run_gives_annotator1_proposals_and_the_quality_page_its_figures(
        demo: Loaded, client) -> None:  # noqa: ANN001
    runs = ProposalRun.objects.filter(model=DEMO_PROPOSAL_MODEL)
    assert runs.count() == 1  # made once, though load_demo ran twice
    run = runs.get()
    assert run.status == "done" and "simulated model" in run.model and run.api_key_encrypted == ""
    assert f"Proposal run (the simulated model, served locally): run {run.pk}, done" in demo.first
    annotator = get_user_model().objects.get(username="annotator1")
    queued = list(Assignment.objects.filter(sample__benchmark=run.benchmark, annotator=annotator, status="active")
                  .order_by("created_at", "pk").values_list("sample_id", flat=True)[:4])
    proposals = {p.sample_id: p for p in run.proposals.all()}
    assert queued and set(queued) <= set(proposals)  # the annotator's next items come with proposals
    assert all(proposals[s].regions and not proposals[s].errors for s in queued)

    # The quality page's box IoU and key-step coverage for the run, against a hand computation over its items with an
    # approved annotation: a step is covered when a proposed one shares at least half their words (docs/annotation.md).
    ious: list[float] = []
    coverage: list[float] = []
    for sample_id, proposal in proposals.items():
        gold = Annotation.objects.filter(sample_id=sample_id, status="approved").first()
        if gold is None:
            continue
        gold_boxes = [[r.x1, r.y1, r.x2, r.y2] for r in gold.regions.order_by("position") if r.image_ref == "img0"]
        if gold_boxes:
            ious += _best_one_to_one(gold_boxes, [r["box"] for r in proposal.regions])
        steps = [s.text for s in gold.key_steps.order_by("position")]
        if steps:
            covered = [any(_overlap(g, p) >= 0.5 for p in proposal.key_steps) for g in steps]
            coverage.append(next((i for i, c in enumerate(covered) if not c), len(covered)) / len(steps))
    assert ious and coverage, "the demo run holds items with an approved annotation, boxes and steps"
    client.force_login(get_user_model().objects.get(username="admin"))
    rows = client.get(f"/runs/proposals/{run.benchmark.slug}/quality.json").json()["rows"]
    row = next(r for r in rows if r["runs"] == [run.pk] and r["label"].startswith("run"))
    assert row["boxes_left_out_other_frame"] == 0
    assert row["box_iou_mean"] == {"value": round(sum(ious) / len(ious), 4), "n": len(ious)}
    assert row["kcov"] == {"value": round(sum(coverage) / len(coverage), 4), "n": len(coverage)}
