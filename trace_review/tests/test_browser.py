"""In headless Chromium: an annotator judges a trace with the keyboard alone, and the agreement page
shows the new verdicts."""

from __future__ import annotations

import os

import pytest

from annotation.models import Role
from trace_review import services
from trace_review.tests.helpers import PASSWORD, make_user, make_world

# Playwright's sync API runs an event loop in this thread; the ORM calls of the fixtures stay synchronous.
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]



@pytest.fixture
def page(live_server, transactional_db, chromium, tmp_path):
    world = make_world(tmp_path / "bench")
    make_user("annotator", world.benchmark, Role.ANNOTATOR)
    # One person per trace, so a single verdict already makes a human majority the judge is compared with.
    services.batch_create(benchmark=world.benchmark, name="Browser batch", size=3, people_per_trace=1,
                          submission=world.alpha)
    pg = chromium.new_page()
    pg.base = live_server.url  # type: ignore[attr-defined]
    yield pg


def _units(page, kind: str) -> int:
    cell = page.locator(f'section.judge tr[data-kind="{kind}"] td.units')
    return sum(int(t) for t in cell.all_inner_texts())


def test_an_annotator_reviews_a_trace_with_the_keyboard_and_the_agreement_page_updates(page) -> None:
    page.goto(f"{page.base}/review/agreement/")
    before = _units(page, "answer")

    page.goto(f"{page.base}/accounts/login/?next=/review/")
    page.fill("input[name=username]", "annotator")
    page.fill("input[name=password]", PASSWORD)
    page.keyboard.press("Enter")
    page.wait_for_url(f"{page.base}/review/")
    # Keyboard only from here: Tab to the batch's "Next trace" button and press it.
    button = page.locator("button.next-trace")
    for _ in range(40):
        if page.evaluate("document.activeElement && document.activeElement.classList.contains('next-trace')"):
            break
        page.keyboard.press("Tab")
    assert button.evaluate("b => b === document.activeElement")
    page.keyboard.press("Enter")
    page.wait_for_url("**/review/a/*/")
    first_trace = page.url

    questions = page.locator("fieldset.q")
    n = questions.count()
    assert n >= 3  # the answer and the two gold key steps at least
    assert page.locator("fieldset.q input:checked").count() == 0  # nothing pre-filled, no judge shown
    # One key per verdict: y for every yes/no question, h (half) for every step score; each moves on.
    for i in range(n):
        kind = questions.nth(i).get_attribute("data-kind")
        page.keyboard.press("y" if kind == "binary" else "h")
    assert page.locator("fieldset.q input:checked").count() == n
    assert "All answered" in page.inner_text("#verdict-status")
    page.keyboard.press("c")
    page.keyboard.type("judged from the keyboard")
    page.keyboard.press("Escape")
    page.keyboard.press("Enter")  # save and next
    page.wait_for_url(lambda url: "/review/a/" in url and url != first_trace)

    page.goto(f"{page.base}/review/agreement/")
    assert _units(page, "answer") == before + 1
    assert page.locator('section.judge tr[data-kind="key_steps"]').count() >= 1


@pytest.mark.parametrize("width", [1440, 390])
def test_a_half_filled_verdict_saved_with_the_mouse_names_the_questions_still_open(page, width) -> None:
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{page.base}/accounts/login/?next=/review/")
    page.fill("input[name=username]", "annotator")
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{page.base}/review/")
    page.click("button.next-trace")
    page.wait_for_url("**/review/a/*/")
    # The mouse answers the first question only, then presses "Save".
    page.click("#q-answer input[value='1']")
    page.click("#verdict-form button[value=stay]")
    alert = page.locator("#verdict-errors")
    alert.wait_for()
    text = alert.inner_text()
    assert "still open" in text and "key step 1" in text and "key step 2" in text
    assert "Expected" not in text
    assert "the final answer" not in text  # answered, so not named
    # The open questions are marked where the person looks for them; the answered one is kept and not marked.
    assert page.locator("fieldset.q.still-open").count() >= 2
    assert page.locator("#q-key_step_0 .open-mark").is_visible()
    assert page.locator("#q-answer input[value='1']").is_checked()
    assert not page.locator("#q-answer.still-open").count()
    assert page.evaluate("document.documentElement.scrollWidth") <= width
