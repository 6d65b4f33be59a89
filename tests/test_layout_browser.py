"""The site's layout in headless Chromium (docs/layout.md): no page scrolls sideways on a phone, the
menu folds at phone width and offers trace review, the leaderboard's tables fit a laptop by default,
keep the model in view when scrolled, and remember the columns a visitor chose.

The world is the leaderboard's hand-made benchmark scored through the real pipeline (the fixtures of
the leaderboard and trace-review browser tests), with one person who owns the submissions, annotates
and reviews traces, so one sign-in reaches every page.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import pytest

from annotation.models import Benchmark, Role
from annotation.tests.test_workbench_browser import browser  # noqa: F401 - the module's Chromium, a fixture
from annotation.workbench.access import role_grant
from annotation.workbench.assignments import assignment_claim_next
from evaluation.models import Submission
from leaderboard.tabs import tab_url, tabs_for
from leaderboard.tests import helpers as lb
from trace_review import services as trace_services

# Playwright's sync API runs an event loop in this thread; the ORM calls of the fixtures stay synchronous.
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PASSWORD = "pw-for-layout-1"
PHONE = {"width": 390, "height": 844}
# A long organisation (its column does not wrap): with every column shown the overview is wider than 1440 px.
DELTA = lb.ModelSpec("Delta Multimodal Reasoning Consortium VLM 72B", {"text": ("s1", "s2"), "adaptive": ("s1", "s2", "s5")},
                     tools=("s1",), prices=(0.5, 1.5))
SIDEWAYS = "() => document.scrollingElement.scrollWidth - window.innerWidth"
# For the failure message: the outermost elements that reach past the window's right edge.
CULPRITS = """() => [...document.querySelectorAll('body *')].filter(el => {
    const r = el.getBoundingClientRect();
    return r.right > window.innerWidth + 1 && !el.parentElement.closest('.table-wrap')
      && el.parentElement.getBoundingClientRect().right <= window.innerWidth + 1;
  }).slice(0, 5).map(el => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + '.' + [...el.classList].join('.')
                     + ' ' + Math.round(el.getBoundingClientRect().right) + 'px')"""


@dataclass
class World:
    benchmark: Benchmark
    alpha: Submission
    beta: Submission
    base: str


@pytest.fixture
def world(live_server, transactional_db, tmp_path) -> World:  # noqa: ANN001
    benchmark = lb.make_benchmark(tmp_path / "bench")
    alpha, beta = lb.submit(benchmark, lb.ALPHA), lb.submit(benchmark, lb.BETA)
    lb.submit(benchmark, DELTA)
    person = lb.owner()  # owns the submissions; staff
    person.set_password(PASSWORD)
    person.save(update_fields=["password"])
    role_grant(benchmark=benchmark, user=person, role=Role.ANNOTATOR)
    assignment_claim_next(user=person, benchmark=benchmark)
    trace_services.batch_create(benchmark=benchmark, name="Layout batch", size=2, people_per_trace=1, submission=alpha)
    return World(benchmark, alpha, beta, live_server.url)


def sign_in(page, base: str) -> None:  # noqa: ANN001
    page.goto(f"{base}/accounts/login/")
    page.fill("#id_username", lb.owner().username)
    page.fill("#id_password", PASSWORD)
    page.click("main form button[type=submit]")
    page.wait_for_url(f"{base}/")


def test_no_page_scrolls_sideways_at_phone_width_and_the_menu_folds(browser, world: World) -> None:
    context = browser.new_context(viewport=PHONE)
    page = context.new_page()
    page.set_default_timeout(15_000)
    base, slug = world.base, world.benchmark.slug
    sign_in(page, base)

    # The menu: folded behind its button, it opens onto every link, trace review's included, on screen.
    link = page.locator("#nav-trace-review")
    assert page.locator(".nav-toggle").is_visible() and not link.is_visible()
    assert page.evaluate(SIDEWAYS) <= 0
    page.click(".nav-toggle")
    assert link.is_visible()
    box = link.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
    page.keyboard.press("Escape")
    assert not link.is_visible()
    page.click(".nav-toggle")
    link.click()
    page.wait_for_url(f"{base}/review/")

    page.click("button.next-trace")
    page.wait_for_url("**/review/a/*/")
    trace = page.url.removeprefix(base)
    pages = ["/", *[tab_url(world.benchmark, t.slug) for t in tabs_for(world.benchmark)],
             f"/b/{slug}/m/{world.alpha.pk}/", f"/b/{slug}/compare/?a={world.alpha.pk}&b={world.beta.pk}",
             "/submissions/", "/submissions/new/", f"/submissions/{world.alpha.pk}/", "/annotate/", "/review/", trace]
    assert len(pages) >= 15
    wide = {}
    for path in pages:
        page.goto(base + path)
        page.wait_for_load_state("networkidle")
        extra = page.evaluate(SIDEWAYS)
        if extra > 0:
            wide[path] = (extra, page.evaluate(CULPRITS))
    assert not wide, f"pages wider than a 390 px phone (px beyond the window): {wide}"
    # The overview's table is far wider than the phone: it scrolls inside its own box.
    page.goto(f"{base}/b/{slug}/")
    assert page.evaluate("() => { const w = document.querySelector('#overview-table').closest('.table-wrap');"
                         " return w.scrollWidth > w.clientWidth; }")
    context.close()


def _wrap_fits(page, table: str) -> bool:  # noqa: ANN001
    return page.evaluate("(id) => { const w = document.getElementById(id).closest('.table-wrap');"
                         " return w.scrollWidth <= w.clientWidth; }", table)


def test_every_tab_fits_a_1366_px_laptop_in_its_default_columns(browser, world: World) -> None:
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    tables = 0
    for tab in tabs_for(world.benchmark):
        page.goto(world.base + tab_url(world.benchmark, tab.slug))
        page.wait_for_load_state("networkidle")
        assert page.evaluate(SIDEWAYS) <= 0, tab.slug
        for table in page.locator("main table.board-table").evaluate_all("ts => ts.map(t => t.id)"):
            tables += 1
            assert _wrap_fits(page, table), f"{tab.slug}: #{table} scrolls sideways at 1366 px"
    assert tables >= 8
    page.close()


def test_the_model_column_stays_in_view_and_the_chosen_columns_survive_a_reload(browser, world: World) -> None:
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    url = f"{world.base}/b/{world.benchmark.slug}/"
    page.goto(url)
    org = page.locator('#overview-table thead th:has(a[data-sort="organisation"])')
    assert org.count() == 1 and not org.is_visible()  # hidden by default, so the overview fits
    assert _wrap_fits(page, "overview-table")

    # Show every column: the long organisation makes the table wider than the screen.
    page.click('.col-chooser[data-for="overview-table"] summary')
    for box in page.locator('.col-chooser[data-for="overview-table"] input[type=checkbox]').all():
        box.check()
    assert org.is_visible()
    assert not _wrap_fits(page, "overview-table")
    page.locator("#overview-table").evaluate("t => { t.closest('.table-wrap').scrollLeft = 100000; }")
    # Scrolled to the far right: the rank score is in view, and so are the model's name and rank,
    # on top of the columns sliding under them.
    assert page.locator('a[data-sort="rank"]').evaluate(
        "a => a.getBoundingClientRect().right <= a.closest('.table-wrap').getBoundingClientRect().right + 1")
    for selector in ("#overview-table tbody tr:first-child th.model", "#overview-table tbody tr:first-child td:first-child",
                     "#overview-table thead th:has(a[data-sort=model])"):
        assert page.locator(selector).evaluate(
            """el => { const r = el.getBoundingClientRect(), w = el.closest('.table-wrap').getBoundingClientRect();
                       const hit = document.elementFromPoint(r.left + 8, r.top + r.height / 2);
                       return r.left >= w.left - 1 && el.contains(hit); }"""), selector

    # A window too short for the table: the box scrolls down, and the header row stays on top of it.
    page.set_viewport_size({"width": 1440, "height": 300})
    wrap = page.locator("#overview-table").evaluate_handle("t => t.closest('.table-wrap')")
    assert wrap.evaluate("w => w.scrollHeight > w.clientHeight")
    wrap.evaluate("w => { w.scrollIntoView(); w.scrollTop = 100000; }")
    header = page.locator('#overview-table thead th:has(a[data-sort="mcc"])')
    assert header.evaluate(
        """th => { const r = th.getBoundingClientRect(), w = th.closest('.table-wrap').getBoundingClientRect();
                   return Math.abs(r.top - w.top) <= 1
                       && th.contains(document.elementFromPoint(r.left + 8, r.top + r.height / 2)); }""")
    page.set_viewport_size({"width": 1440, "height": 900})

    # Hide the text accuracy: gone from the header and from every row, and still gone after a reload.
    page.locator('.col-chooser[data-for="overview-table"] input[value="text"]').uncheck()
    text = page.locator('#overview-table thead th:has(a[data-sort="text"])')
    assert not text.is_visible()
    n_cells = page.locator("#overview-table thead th").count()
    assert page.locator("#overview-table tbody tr:first-child > :not(.col-hidden)").count() == n_cells - 1
    page.reload()
    assert not text.is_visible() and org.is_visible()
    assert page.locator('.col-chooser[data-for="overview-table"] input[value="text"]').is_checked() is False
    # Sorting swaps the table through htmx: the choice holds there too.
    page.click('a[data-sort="mcc"]')
    page.wait_for_function("() => location.search.includes('sort=mcc')"
                           " && document.querySelector('#overview-table th.sorted a[data-sort=mcc]')")
    assert not text.is_visible()
    # "Default columns" forgets the choice.
    page.click('.col-chooser[data-for="overview-table"] summary')
    page.click('.col-chooser[data-for="overview-table"] button')
    assert text.is_visible() and not org.is_visible()
    page.reload()
    assert text.is_visible() and not org.is_visible()
    context.close()
