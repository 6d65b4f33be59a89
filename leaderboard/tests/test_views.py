"""Pages, htmx fragments, exports and the API, as a visitor or a script sees them."""

from __future__ import annotations

import csv
import io
import re

import pytest
from django.urls import reverse

from leaderboard.tests import helpers

pytestmark = pytest.mark.django_db

TABS = ("domains", "mode-selection", "process", "toolchains", "cost")


def _text(response) -> str:  # noqa: ANN001
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", response.content.decode()))


def test_home_lists_benchmarks_with_sample_counts_and_leaders(client, hand) -> None:
    html = client.get("/").content.decode()
    assert "<strong>9</strong> samples" in html
    assert re.search(r"Alpha.*Gamma.*Beta", html, re.S)  # leaders by adaptive (else text) accuracy
    assert "Hidden" not in html and "Gone" not in html


def test_overview_is_a_full_page_and_an_htmx_fragment(client, hand) -> None:
    full = client.get("/b/hand/")
    assert full.status_code == 200
    assert "<html" in full.content.decode() and 'id="board"' in full.content.decode()
    assert "HX-Request" in full["Vary"]
    fragment = client.get("/b/hand/", HTTP_HX_REQUEST="true")
    body = fragment.content.decode()
    assert "<html" not in body and body.lstrip().startswith('<div id="board"')
    assert "Alpha" in body and "HX-Request" in fragment["Vary"]


def test_overview_shows_intervals_arrows_and_the_neighbour_verdict(client, hand) -> None:
    html = client.get("/b/hand/?sort=text").content.decode()
    assert "higher is better" in html and "lower is better" in html
    assert re.search(r"50\.0 <span class=\"ci\"[^>]*>\[\d+\.\d, \d+\.\d\]", html)  # Gamma's 4/8 with its interval
    assert "not significantly different from the row above" in html
    order = re.findall(r'data-key="s(\d+)"', html)
    assert order == [str(hand.gamma.pk), str(hand.beta.pk), str(hand.alpha.pk)]
    reverse_order = re.findall(r'data-key="s(\d+)"', client.get("/b/hand/?sort=text&dir=asc").content.decode())
    assert reverse_order == order[::-1]


def test_overview_filters(client, hand) -> None:
    html = client.get("/b/hand/?weights=open").content.decode()
    assert "Alpha" in html and ">Beta<" not in html
    assert "Gamma" not in client.get("/b/hand/?q=alp").content.decode()


@pytest.mark.parametrize("tab", TABS)
def test_every_tab_has_its_own_url_and_fragment(client, hand, tab) -> None:
    page = client.get(f"/b/hand/{tab}/")
    assert page.status_code == 200
    assert f'aria-current="page" class="current" data-tab="{tab}"' in page.content.decode()
    fragment = client.get(f"/b/hand/{tab}/", HTTP_HX_REQUEST="true").content.decode()
    assert "<html" not in fragment and "Alpha" in fragment


def test_unknown_benchmark_or_tab_is_404(client, hand) -> None:
    assert client.get("/b/nope/").status_code == 404
    assert client.get("/b/hand/nope/").status_code == 404


def test_domain_tab_has_both_subsets_per_domain(client, hand) -> None:
    html = client.get("/b/hand/domains/").content.decode()
    assert html.count(">w/o enh.</th>") == 6  # the five AdaptMMBench domains of the default taxonomy, and overall
    assert 'id="aux-table"' in html and "▲" in html


def test_cost_tab_draws_the_chart_with_frontier_and_baselines(client, hand) -> None:
    html = client.get("/b/hand/cost/?mode=adaptive&unit=usd").content.decode()
    assert 'id="pareto-chart-data"' in html and '"role": "frontier"' in html and "Oracle" in html
    tokens = client.get("/b/hand/cost/?mode=text&unit=tokens").content.decode()
    assert "tokens per sample" in tokens and "Gamma" in tokens


def test_csv_export_has_every_public_row_with_intervals(client, hand) -> None:
    response = client.get("/b/hand/leaderboard.csv")
    assert response["Content-Type"].startswith("text/csv")
    assert "attachment" in response["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert [r["model"] for r in rows] == ["Alpha", "Beta", "Gamma"]  # by adaptive accuracy, Gamma (none) last
    assert float(rows[0]["adaptive"]) == pytest.approx(75.0)
    assert float(rows[0]["adaptive_low"]) <= 75.0 <= float(rows[0]["adaptive_high"])


def test_json_export_and_leaderboard_api_agree(client, hand) -> None:
    export = client.get("/b/hand/leaderboard.json").json()
    api = client.get("/api/v1/benchmarks/hand/leaderboard/").json()
    assert export["rows"] == api["rows"]
    alpha = api["rows"][0]
    assert alpha["model"] == "Alpha" and alpha["mcc"]["low"] is not None and alpha["source"] == "submission"


def test_benchmark_api_lists_domains_categories_and_counts(client, hand) -> None:
    listing = client.get("/api/v1/benchmarks/").json()
    assert [b["slug"] for b in listing] == ["hand"]
    detail = client.get("/api/v1/benchmarks/hand/").json()
    assert detail["counts"] == {"samples": 9, "dev": 5, "test": 4, "aux_line": 1, "reported_results": 0}
    ocr = next(d for d in detail["domains"] if d["slug"] == "ocr")
    assert ocr["sample_count"] == 4 and {c["slug"] for c in ocr["categories"]} >= {"chart", "table"}
    assert client.get("/api/v1/benchmarks/nope/").status_code == 404


def test_model_page_shows_metrics_categories_errors_and_dev_samples(client, hand) -> None:
    page = client.get(reverse("leaderboard:model", args=["hand", hand.alpha.pk]))
    text = _text(page)
    assert "Zoomed into the wrong region" in text and "Mode-selection error" in text
    assert 'id="category-table"' in page.content.decode()
    uids = re.findall(r'data-uid="([^"]+)"', page.content.decode())
    assert uids == ["s1", "s2", "s5", "s8", "s9"]  # dev split only


def test_private_or_deleted_models_have_no_page(client, hand) -> None:
    for sub in (hand.private, hand.deleted):
        assert client.get(reverse("leaderboard:model", args=["hand", sub.pk])).status_code == 404


def test_sample_view_shows_steps_verdicts_and_rerun_images(client, hand) -> None:
    url = reverse("leaderboard:sample", args=["hand", hand.alpha.pk, "s1"])
    fragment = client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert "<html" not in fragment
    assert "Rotate the image upright." in fragment and "zoom_in" in fragment and "valid" in fragment
    images = re.findall(r'src="([^"]+\.png)"', fragment)
    assert len(images) == 3  # the sample itself, then rotate's and zoom's outputs
    for src in images:
        response = client.get(src)
        assert response.status_code == 200 and response.content[:8] == b"\x89PNG\r\n\x1a\n"
    full = client.get(url).content.decode()
    assert "<html" in full and "Rotate the image upright." in full


def test_test_split_samples_cannot_be_opened(client, hand) -> None:
    assert client.get(reverse("leaderboard:sample", args=["hand", hand.alpha.pk, "s3"])).status_code == 404
    assert client.get(reverse("leaderboard:sample_image", args=["hand", hand.alpha.pk, "s3", "text", "img0"])
                      ).status_code == 404


def test_compare_page_reports_paired_tests_and_domain_differences(client, hand) -> None:
    html = client.get(f"/b/hand/compare/?a={hand.alpha.pk}&b={hand.beta.pk}").content.decode()
    assert "exact McNemar" in html and "paired bootstrap" in html
    assert "not significantly different" in html or "significant difference" in html
    assert 'id="domain-diff-data"' in html
    assert client.get(f"/b/hand/compare/?a={hand.alpha.pk}&b={hand.private.pk}").status_code == 404
    assert client.get("/b/hand/compare/").status_code == 200


def test_plotly_is_a_static_file_of_this_site(client, hand) -> None:
    from django.contrib.staticfiles import finders

    assert 'data-plotly-src="/static/vendor/plotly.min.js"' in client.get("/b/hand/").content.decode()
    found = finders.find("vendor/plotly.min.js")  # what collectstatic and WhiteNoise serve
    assert found
    with open(found, "rb") as f:
        assert b"plotly" in f.read(2000).lower()


def test_demo_entries_are_labelled(client, hand) -> None:
    from evaluation.models import Submission

    Submission.objects.filter(pk=hand.beta.pk).update(is_demo=True)
    assert "simulated demo" in client.get("/b/hand/").content.decode()
    rows = client.get("/b/hand/leaderboard.json").json()["rows"]
    assert next(r for r in rows if r["model"] == "Beta")["simulated_demo"] is True
    assert ">Beta<" not in client.get("/b/hand/?demo=0").content.decode()


def test_helpers_benchmark_is_what_the_tests_assume(hand) -> None:
    assert helpers.UIDS[-1] == "s9"


def test_overview_shows_key_step_coverage_with_its_interval(client, hand) -> None:
    from leaderboard import selectors

    row = next(r for r in selectors.board_rows(hand.benchmark) if r.model_name == "Alpha")
    assert row.kcov.value is not None and row.kcov.lo is not None and row.kcov.hi is not None
    html = client.get("/b/hand/").content.decode()
    assert (f'{row.kcov.value:,.1f} <span class="ci" title="95 % bootstrap interval">'
            f'[{row.kcov.lo:,.1f}, {row.kcov.hi:,.1f}]</span>') in html
