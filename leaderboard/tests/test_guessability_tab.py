"""The Guessability tab: the guessable share per domain and accuracy with guessable samples left out,
from hand-made blind submissions scored through the real pipeline (numbers computed by hand)."""

from __future__ import annotations

import re

import pytest

from leaderboard.tests import helpers
from leaderboard.tests.helpers import ALPHA, ModelSpec

pytestmark = pytest.mark.django_db

# s1: 2 of 3 blind right (= k, guessable); s2: 2 (guessable); s5: 2 (guessable); s6: 1 (k - 1, not)
BLIND = [ModelSpec("Blind A", {"blind": ("s1", "s2", "s5")}), ModelSpec("Blind B", {"blind": ("s1", "s5", "s6")}),
         ModelSpec("Blind C", {"blind": ("s2",)})]


@pytest.fixture
def bench(tmp_path, django_capture_on_commit_callbacks):
    benchmark = helpers.make_benchmark(tmp_path)

    def submit(spec: ModelSpec, public: bool = True):  # noqa: ANN202
        with django_capture_on_commit_callbacks(execute=True):
            return helpers.submit(benchmark, spec, public=public)
    benchmark.submit_for_test = submit
    return benchmark


def cells(html: str, row_attr: str) -> list[str]:
    row = re.search(rf"<tr {row_attr}>(.*?)</tr>", html, re.S)
    assert row, row_attr
    return re.findall(r'<td class="num">([^<]*)</td>', row.group(1))


def offered(benchmark) -> list[str]:  # noqa: ANN001
    """The tabs offered, computed (the cache holds them by the builds): the audited count read from the shares
    alone equals the tab's own."""
    from leaderboard.guessable import guessability_audited, guessability_context
    from leaderboard.tabs import tabs_with_data

    assert guessability_audited(benchmark) == guessability_context(benchmark)["audited"]
    return [t.slug for t in tabs_with_data(benchmark)]


def test_the_tab_shows_shares_per_domain_and_accuracy_without_guessable_samples(client, bench) -> None:
    alpha = bench.submit_for_test(ALPHA)
    for spec in BLIND[:2]:
        bench.submit_for_test(spec)
    html = client.get(f"/b/{bench.slug}/guessability/").content.decode()
    assert "Not audited yet: fewer than 3 public blind submissions." in html
    bench.submit_for_test(ModelSpec("Private blind", {"blind": ("s6", "s7")}), public=False)
    assert "Not audited yet" in client.get(f"/b/{bench.slug}/guessability/").content.decode()  # private: not counted
    assert "guessability" not in offered(bench)  # the navigation offers it once there is an audit

    bench.submit_for_test(BLIND[2])
    html = client.get(f"/b/{bench.slug}/guessability/").content.decode()
    shares = re.findall(r'<tr data-domain="([^"]+)"><th scope="row">[^<]*</th>'
                        r'<td class="num">(\d+)</td><td class="num">(\d+)</td>', html)
    assert [(g, n) for _, g, n in shares] == [("2", "4"), ("1", "4"), ("0", "1")]  # real world, OCR, math
    # Alpha adaptive: 6 of 8 non-aux right; without s1, s2, s5 it has s3, s6, s8 of s3, s4, s6, s7, s8
    assert cells(html, f'data-submission="{alpha.pk}" data-mode="adaptive"') == ["75.0", "60.0"]
    # Alpha text (s2, s5, s9): 2 of 8 (s9 is aux); without guessable: 0 of 5
    assert cells(html, f'data-submission="{alpha.pk}" data-mode="text"') == ["25.0", "0.0"]
    blind_a = re.search(r'data-submission="(\d+)" data-mode="blind"><th scope="row">Blind A<', html)
    assert blind_a and cells(html, f'data-submission="{blind_a.group(1)}" data-mode="blind"') == ["37.5", "0.0"]
    assert "Private blind" not in html
    assert "guessability" in offered(bench)


def test_the_model_page_of_a_blind_submission_has_a_blind_column(client, bench) -> None:
    sub = bench.submit_for_test(BLIND[0])
    html = client.get(f"/b/{bench.slug}/m/{sub.pk}/").content.decode()
    head = re.search(r'id="metrics-table".*?</thead>', html, re.S)
    assert head and ">Blind</th>" in head.group(0)
    # a dev sample's page shows the blind line beside the other modes
    page = client.get(f"/b/{bench.slug}/m/{sub.pk}/s/s1/").content.decode()
    assert 'data-mode="blind"' in page


def test_accuracy_over_rows_left_to_an_llm_judge_is_not_available_with_the_reason(client, bench) -> None:
    """Under MMReason's rules the offline judge leaves every reply their exact match does not accept undecided
    (docs/metrics.md section 13): the tab's shares are not available then, never the undecided counted wrong."""
    from annotation.models import Benchmark

    Benchmark.objects.filter(pk=bench.pk).update(scoring="mmreason")
    bench.refresh_from_db()
    alpha = bench.submit_for_test(ALPHA)
    for spec in BLIND:  # the blind answers right are the same guesses: an undecided one guesses nothing
        bench.submit_for_test(spec)
    html = client.get(f"/b/{bench.slug}/guessability/").content.decode()
    row = re.search(rf'<tr data-submission="{alpha.pk}" data-mode="text">(.*?)</tr>', html, re.S).group(1)
    # text: s2 and s5 right, the six others undecided; without s1, s2, s5: s3, s4, s6, s7, s8, all undecided
    assert "not available: 6 of 8 rows need an LLM judge; 2 right of the 2 decided (100.0%)" in row
    assert "not available: 5 of 5 rows need an LLM judge; none decided" in row
    row = re.search(rf'<tr data-submission="{alpha.pk}" data-mode="adaptive">(.*?)</tr>', html, re.S).group(1)
    assert "not available: 2 of 5 rows need an LLM judge; 3 right of the 3 decided (100.0%)" in row
    oracle = cells(html, f'data-submission="{alpha.pk}" data-mode="oracle"')
    assert oracle == ["100.0", "100.0"]  # all decided: a share as before
