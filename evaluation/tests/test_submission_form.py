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


def test_the_form_asks_for_the_authors_full_pipeline_as_submit_and_the_api_do(
        web, bench, django_capture_on_commit_callbacks) -> None:
    """The upload form's full_pipeline (submit --full-pipeline, the API's full_pipeline): under VTC-Bench's
    rules, what their rule calls wrong goes to their judge, so with the offline judge it is undecided."""
    import html as html_lib

    from evaluation.api import SubmissionCreateInput
    from evaluation.management.commands.submit import Command
    from evaluation.models import FULL_PIPELINE_HELP

    Benchmark.objects.filter(pk=bench.pk).update(scoring="vtcbench")
    page = web.get("/submissions/new/tiny/").content.decode()
    box = re.search(r'<input type="checkbox" name="full_pipeline"[^>]*>', page)
    assert box and 'aria-describedby="id_full_pipeline_help"' in box.group(0)
    assert '<label for="id_full_pipeline">The authors&#x27; full pipeline:</label>' in page
    help_text = re.search(r'id="id_full_pipeline_help">(.*?)</span>', page).group(1)
    # one sentence wherever it is asked
    parser = Command().create_parser("manage.py", "submit")
    flag = next(a for a in parser._actions if a.dest == "full_pipeline")
    assert html_lib.unescape(help_text) == FULL_PIPELINE_HELP == flag.help
    assert SubmissionCreateInput().fields["full_pipeline"].help_text == FULL_PIPELINE_HELP

    subs = {}
    for ticked in (False, True):
        form = {"benchmark": "tiny", "file": upload(good_file()), "model_name": f"m-{ticked}"}
        if ticked:
            form["full_pipeline"] = "on"  # what a browser sends for a ticked box
        with django_capture_on_commit_callbacks(execute=True):  # scored eagerly once the upload commits
            response = web.post("/submissions/new/", form)
        assert response.status_code == 302
        subs[ticked] = Submission.objects.get(model_name=f"m-{ticked}")
    assert not subs[False].full_pipeline and subs[True].full_pipeline
    # good_file: s2 and s5 answered wrong ('99') in each mode
    assert subs[False].results["modes"]["text"]["accuracy"]["overall"]["value"] == pytest.approx(4 / 6)
    want = "2 of 6 rows need an LLM judge; 4 right of the 4 decided (100.0%)"
    assert subs[True].results["modes"]["text"]["accuracy"]["overall"]["reason"] == want
    page = web.get(subs[True].get_absolute_url()).content.decode()
    assert 'id="full-pipeline">Scored as <strong>the authors\' full pipeline</strong>' in page
    assert f"not available: {want}" in page
    assert 'id="full-pipeline"' not in web.get(subs[False].get_absolute_url()).content.decode()
