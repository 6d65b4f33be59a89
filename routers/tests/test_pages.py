"""The Routers tab, its files, and the web form (without a browser)."""

from __future__ import annotations

import csv
import io
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from evaluation.metrics.routing import split_samples
from routers.models import RouterSubmission
from routers.tests import helpers

pytestmark = pytest.mark.django_db
TEST = sorted(u for u, s in split_samples(helpers.UIDS).items() if s == "test")




def post_router(client, name: str, model: str, public: bool = True):  # noqa: ANN001, ANN201
    body = "\n".join(f'{{"sample_id": "{u}", "model": "{model}"}}' for u in TEST).encode()
    return client.post(f"/b/{helpers.SLUG}/routers/submit/", {"name": name, "is_public": "on" if public else "",
                                                              "file": SimpleUploadedFile("r.jsonl", body)})


def test_tab_shows_routers_baselines_and_models(benchmark, client, django_capture_on_commit_callbacks):
    client.force_login(helpers.user())
    with django_capture_on_commit_callbacks(execute=True):
        assert post_router(client, "Always Mid", "Mid").status_code == 302
        helpers.trained(benchmark)  # the reference router, trained by its task
    page = client.get(f"/b/{helpers.SLUG}/routers/").content.decode()
    for name in ("Always Mid", "Oracle", "kNN over TF-IDF (reference)", "Random", "Strongest on train (Big)",
                 "Cheapest on train (Small)", ">Big<", ">Mid<", ">Small<"):
        assert name in page
    assert 'data-tab="routers"' in page and 'id="routers-chart"' in page
    anonymous = Client()
    assert "Always Big" not in anonymous.get(f"/b/{helpers.SLUG}/routers/").content.decode()
    # A new router shows at once (the tab is not served from the page cache).
    with django_capture_on_commit_callbacks(execute=True):
        post_router(client, "Always Big", "Big")
    page = client.get(f"/b/{helpers.SLUG}/routers/").content.decode()
    assert "Always Big" in page[page.index('id="routers-table"'):]  # (the page's flash message names it too)
    assert "Always Big" in anonymous.get(f"/b/{helpers.SLUG}/routers/").content.decode()


def test_sorting_by_cost_puts_the_cheapest_first(benchmark, client):
    page = client.get(f"/b/{helpers.SLUG}/routers/?sort=cost&desc=0").content.decode()
    body = page[page.index('id="routers-table"'):]
    first = body[body.index("<tbody>"):].split('<th scope="row">')[1]
    assert first.startswith(("Small", "Cheapest on train (Small)"))


def test_private_and_failed_routers_stay_off_the_tab_and_files(benchmark, client, django_capture_on_commit_callbacks):
    client.force_login(helpers.user())
    with django_capture_on_commit_callbacks(execute=True):
        post_router(client, "Private one", "Mid", public=False)
        post_router(client, "Broken one", "GPT-9")
    mine = client.get(f"/b/{helpers.SLUG}/routers/submit/").content.decode()
    assert "line 1, field 'model': unknown model &#x27;GPT-9&#x27;" in mine
    assert RouterSubmission.objects.get(name="Private one").status == "done"
    for url in (f"/b/{helpers.SLUG}/routers/", f"/b/{helpers.SLUG}/routers.json", f"/b/{helpers.SLUG}/routers.csv"):
        body = client.get(url).content.decode()
        assert "Private one" not in body and "Broken one" not in body


def test_routers_json_and_csv(benchmark, client, django_capture_on_commit_callbacks):
    client.force_login(helpers.user())
    with django_capture_on_commit_callbacks(execute=True):
        post_router(client, "Always Mid", "Mid")
    data = client.get(f"/b/{helpers.SLUG}/routers.json").json()
    assert data["mode"] == "text" and data["models"] == ["Big", "Mid", "Small"] and data["split_seed"] == 42
    rows = {r["name"]: r for r in data["rows"]}
    assert rows["Always Mid"]["kind"] == "router" and rows["Always Mid"]["share"]["Mid"] == 1
    assert rows["Always Mid"]["accuracy"] == rows["Mid"]["accuracy"]
    assert rows["Oracle"]["oracle_gap_accuracy"] == 0
    table = list(csv.DictReader(io.StringIO(client.get(f"/b/{helpers.SLUG}/routers.csv").content.decode())))
    assert {r["name"] for r in table} == set(rows)


def test_the_form_needs_a_sign_in(benchmark, client):
    response = client.get(f"/b/{helpers.SLUG}/routers/submit/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_a_benchmark_without_a_pool(tmp_path, client, django_capture_on_commit_callbacks):
    helpers.make_benchmark(tmp_path)  # samples, no scored submissions
    page = client.get(f"/b/{helpers.SLUG}/routers/")
    assert page.status_code == 200 and "No pool yet" in page.content.decode()
    assert client.get(f"/b/{helpers.SLUG}/routers.json").json()["rows"] == []
    client.force_login(helpers.user())
    with django_capture_on_commit_callbacks(execute=True):
        post_router(client, "Too early", "Big")
    assert RouterSubmission.objects.get().failure_reason == "the benchmark has no priced public models in its pool yet"


def test_router_page_shows_shares_per_model_and_domain(benchmark, client, django_capture_on_commit_callbacks):
    owner = helpers.user()
    client.force_login(owner)
    with django_capture_on_commit_callbacks(execute=True):
        post_router(client, "Always Mid", "Mid")
        post_router(client, "Secret", "Big", public=False)
    mid, secret = RouterSubmission.objects.get(name="Always Mid"), RouterSubmission.objects.get(name="Secret")
    page = Client().get(f"/b/{helpers.SLUG}/routers/{mid.pk}/").content.decode()
    assert "scored on pool version 1" in page
    share = page[page.index('id="share-table"'):]
    assert "<th scope=\"row\">Mid</th><td class=\"num\">100.0%</td>" in share  # shares in %, as everywhere
    figures = page[page.index('id="router-figures"'):page.index("</dl>")]
    assert re.search(r"<dt>Accuracy</dt><dd>\d+\.\d% \(95 % interval \d+\.\d%–\d+\.\d%\)", figures)
    assert re.search(r"<dt>Rank score</dt><dd>\d+\.\d <", figures) and "per sample" not in figures
    domains = page[page.index('id="domain-share-table"'):]
    odd = sum(helpers.UIDS.index(u) % 2 for u in TEST)  # chart questions are the odd ones, in domain "ocr"
    assert ("ocr" in domains) == (odd > 0) and ("real_world" in domains) == (odd < len(TEST))
    assert "per_sample" not in page
    # The tab links to it, and tests each row against the row above.
    tab = Client().get(f"/b/{helpers.SLUG}/routers/").content.decode()
    assert f'href="/b/{helpers.SLUG}/routers/{mid.pk}/"' in tab and "p = " in tab
    # A private router: its owner sees it, nobody else.
    assert Client().get(f"/b/{helpers.SLUG}/routers/{secret.pk}/").status_code == 404
    assert client.get(f"/b/{helpers.SLUG}/routers/{secret.pk}/").status_code == 200


def test_vl_routerbench_table2_is_shown_badged_and_cited(benchmark, client):
    from django.core.management import call_command

    out = io.StringIO()
    call_command("load_router_reported", helpers.SLUG, stdout=out)
    call_command("load_router_reported", helpers.SLUG, stdout=out)  # twice: still one row per router
    assert out.getvalue().count("13 reported router rows") == 2
    page = client.get(f"/b/{helpers.SLUG}/routers/").content.decode()
    reported = page[page.index('id="routers-reported-table"'):]
    assert "VL-RouterBench, Table 2" in reported and "<span class=\"badge reported\">reported</span>" in reported
    row = reported[reported.index(">RouterDC <"):].split("</tr>")[0]
    assert ">74.59<" in row and ">77.52<" in row and ">$1.04<" in row and ">1<" in row
    main = page[page.index('id="routers-table"'):page.index('id="routers-reported-table"')]
    assert "RouterDC" not in main  # never mixed with rows scored on this pool
    data = client.get(f"/b/{helpers.SLUG}/routers.json").json()
    assert [r["name"] for r in data["reported"]][:3] == ["Oracle", "Strongest", "Cheapest"]
    assert {r["name"] for r in data["rows"]}.isdisjoint({"RouterDC", "ZOOTER"})
