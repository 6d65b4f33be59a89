"""The upload form in headless Chromium with an author's format: chosen in the form, converted,
scored; a bad row shows in the error table by its row, as the person's file numbers it."""

from __future__ import annotations

import re
from unittest import mock

import pytest
from django.contrib.auth import get_user_model

from evaluation import pipeline, services
from evaluation.models import Submission
from evaluation.tests import author_shapes as shapes
from evaluation.tests.submission_helpers import UIDS, answer_of, make_benchmark


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_form_uploads_agentx_outputs_and_a_bad_vlmevalkit_table_shows_its_row(
        live_server, chromium, tmp_path, monkeypatch) -> None:  # noqa: F811
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    make_benchmark(tmp_path / "bench")
    get_user_model().objects.create_user("ada", "ada@example.org", "pw-ada-1")
    good = tmp_path / "agentx_outputs.json"
    good.write_bytes(shapes.agentx_outputs(shapes.generate(UIDS, {u: answer_of(u) for u in UIDS}, seed=5)))
    bad = tmp_path / "M_tiny.tsv"
    bad.write_text("index\tprediction\ns1\t1\nnope\t2\n")
    page = chromium.new_page()
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill('input[name="username"]', "ada")
    page.fill('input[name="password"]', "pw-ada-1")
    page.click('button[type="submit"], input[type="submit"]')
    page.wait_for_load_state()
    for path, fmt, model in ((good, "agentx", "agent-model"), (bad, "vlmevalkit", "table-model")):
        with mock.patch.object(services, "submission_enqueue", return_value=True):
            page.goto(f"{live_server.url}/submissions/new/tiny/")
            page.set_input_files('input[type="file"]', str(path))
            page.select_option('select[name="format"]', fmt)
            page.fill('input[name="model_name"]', model)
            page.click("#submit-button")
            page.wait_for_url(re.compile(r"/submissions/\d+/$"))
        sub = Submission.objects.get(model_name=model)
        assert sub.format == fmt and sub.source_file
        pipeline.submission_process_sync(submission=sub)
        if fmt == "agentx":
            page.wait_for_selector("#status-value:text('Done')", timeout=15_000)
            assert "Agent-X output list (.json), converted to our format" in page.inner_text("#file-format")
        else:
            page.wait_for_selector("#status-value:text('Failed')", timeout=15_000)
            assert page.inner_text("#error-table tbody tr td.error-line") == "line 3"
            assert "'nope' is not a sample of this benchmark" in page.inner_text("#error-table")
