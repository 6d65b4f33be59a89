"""The upload form's benchmark (preselected from the link it came from, scorable ones only), the units of
the results table, and the link from a finished submission to its row on the board."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model

from annotation.models import Benchmark
from evaluation import services
from evaluation.models import Submission
from evaluation.tests.submission_helpers import good_file, make_benchmark, upload

pytestmark = pytest.mark.django_db


@pytest.fixture
def bench(tmp_path) -> Benchmark:
    return make_benchmark(tmp_path)


@pytest.fixture
def paper_only() -> Benchmark:
    """A results-only entry, as load_reported_results makes it: a paper's figures, no samples."""
    return Benchmark.objects.create(slug="paper-only", name="Paper Only", version="paper v1")


@pytest.fixture
def web(client):
    client.force_login(get_user_model().objects.create_user("ada", "ada@example.org", "pw"))
    return client


def _options(page: str) -> list[str]:
    select = re.search(r'<select name="benchmark".*?</select>', page, re.S).group(0)
    return re.findall(r'<option value="([^"]*)"', select)


def test_the_boards_submit_link_preselects_its_benchmark(web, bench) -> None:
    board = web.get("/b/tiny/").content.decode()
    link = re.search(r'<a href="([^"]+)" id="submit-predictions"', board).group(1)
    assert link == "/submissions/new/?benchmark=tiny"
    assert 'value="tiny" selected' in web.get(link).content.decode()
    assert 'value="tiny" selected' not in web.get("/submissions/new/").content.decode()
    assert 'value="tiny" selected' in web.get("/submissions/new/tiny/").content.decode()


def test_a_results_only_benchmark_is_neither_offered_nor_accepted(web, bench, paper_only) -> None:
    assert _options(web.get("/submissions/new/").content.decode()) == ["", "tiny"]
    response = web.post("/submissions/new/", {"benchmark": "paper-only", "file": upload(good_file()), "model_name": "m"})
    assert response.status_code == 400 and "Select a valid choice" in response.content.decode()
    assert not Submission.objects.exists()
    # come from its page: told why it is not there, nothing preselected
    page = web.get("/submissions/new/?benchmark=paper-only").content.decode()
    assert "Paper Only holds only the results its authors reported" in page and 'value="tiny" selected' not in page
    assert web.get("/submissions/new/paper-only/").status_code == 200
    assert 'id="submit-predictions"' not in web.get("/b/paper-only/").content.decode()


def _done(bench: Benchmark, capture, *, public: bool) -> Submission:  # noqa: ANN001
    owner = get_user_model().objects.get(username="ada")
    with capture(execute=True):  # the pipeline's stages run eagerly once the upload commits
        sub = services.submission_create(benchmark=bench, owner=owner, file=upload(good_file()),
                                         model_name="Ada-VL 7B", is_public=public, enforce_limits=False)
    sub.refresh_from_db()
    assert sub.status == "done"
    return sub


def test_a_finished_public_submission_links_to_its_row_on_the_board(web, bench, django_capture_on_commit_callbacks) -> None:
    sub = _done(bench, django_capture_on_commit_callbacks, public=True)
    page = web.get(sub.get_absolute_url()).content.decode()
    link = re.search(r'<a href="([^"]+)" id="board-row"', page).group(1).replace("&amp;", "&")
    assert link == f"/b/tiny/?q=Ada-VL+7B#row-s{sub.pk}"
    board = web.get(link.split("#")[0]).content.decode()
    assert f'<tr class="" id="row-s{sub.pk}"' in board


def test_a_private_submission_has_no_board_link(web, bench, django_capture_on_commit_callbacks) -> None:
    sub = _done(bench, django_capture_on_commit_callbacks, public=False)
    assert 'id="board-row"' not in web.get(sub.get_absolute_url()).content.decode()


def test_the_results_table_writes_every_share_in_percent_and_cost_per_10k(web, bench, django_capture_on_commit_callbacks) -> None:
    sub = _done(bench, django_capture_on_commit_callbacks, public=False)
    page = web.get(sub.get_absolute_url()).content.decode()
    table = re.search(r'<table id="results-table">.*?</table>', page, re.S).group(0)
    # The numeric cells' text, tags dropped (a figure that is not available is a dash in a titled span).
    rows = [[re.sub(r"<[^>]+>", "", cell).strip() for cell in re.findall(r'<td class="num"[^>]*>(.*?)</td>', tr, re.S)]
            for tr in re.findall(r"<tr><td>.*?</tr>", table, re.S)]
    assert rows
    for accuracy, interval, _n, answered, kcov, tool_eff, cost in rows:
        assert re.fullmatch(r"\d+\.\d%", accuracy), accuracy
        assert re.fullmatch(r"\d+\.\d%–\d+\.\d%", interval), interval
        for share in (answered, kcov, tool_eff):  # a fraction like 0.667 would be a second unit for the same kind
            assert re.fullmatch(r"\d+\.\d%|–", share), share
        assert re.fullmatch(r"\$[\d,.]+|–", cost), cost
    assert any(r[5] != "–" for r in rows) or any(r[4] != "–" for r in rows)  # at least one process share shown


def test_the_api_refuses_a_results_only_benchmark_with_the_reason(api, paper_only, django_capture_on_commit_callbacks) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post("/api/v1/benchmarks/paper-only/submissions/",
                            {"file": upload(good_file()), "model_name": "m"}, format="multipart")
    assert response.status_code == 400
    assert "Paper Only holds only the results its authors reported: it has no samples" in response.json()["detail"]
    assert not Submission.objects.exists()  # refused before anything is stored
