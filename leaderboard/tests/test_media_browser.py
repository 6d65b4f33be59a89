"""Media in headless Chromium: a video sample in the sample browser (poster and sampled frames
shown), and a sample with two images in the workbench (switching images, a box drawn on img1)."""

from __future__ import annotations

import os

import pytest

from annotation.models import Region, Role
from annotation.tests.workbench_helpers import PASSWORD, make_user
from annotation.workbench.assignments import assignment_claim_next, assignment_skip
from leaderboard.tests.media_bench import SLUG, make_media_benchmark, submit_media

# Playwright's sync API runs an event loop in this thread; the ORM calls of the fixtures stay synchronous.
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def page(live_server, transactional_db, chromium):  # noqa: ANN001, ANN201, ARG001
    context = chromium.new_context(viewport={"width": 1500, "height": 1000})
    pg = context.new_page()
    pg.set_default_timeout(15000)
    yield pg


def loaded_images(page, selector: str) -> list[dict]:  # noqa: ANN001
    """The images under `selector` as the browser decoded them (natural size 0: broken)."""
    page.wait_for_function(f"() => [...document.querySelectorAll('{selector}')].every(i => i.complete)")
    return page.eval_on_selector_all(selector, "els => els.map(i => ({alt: i.alt, w: i.naturalWidth, h: i.naturalHeight}))")


def test_a_video_sample_in_the_sample_browser_shows_its_poster_and_frames(page, live_server, tmp_path) -> None:
    benchmark = make_media_benchmark(tmp_path)
    sub = submit_media(benchmark)
    page.goto(f"{live_server.url}/b/{SLUG}/m/{sub.pk}/")
    page.click("#sample-list a[data-uid=vid]")  # opens the sample in the panel (htmx)
    page.wait_for_selector("figure.medium[data-kind=video] video")
    frames = loaded_images(page, "figure.medium[data-kind=video] .video-frames img")
    assert len(frames) == 8 and all((f["w"], f["h"]) == (64, 48) for f in frames)
    assert frames[0]["alt"] == "img0 frame 1 at 0.2 s" and frames[-1]["alt"] == "img0 frame 8 at 3.7 s"
    # The player shows the poster until played, and the browser can read the video's metadata.
    video = page.locator("figure.medium[data-kind=video] video")
    assert video.get_attribute("poster") == page.locator(".video-frames img").first.get_attribute("src")
    page.evaluate("() => { const v = document.querySelector('figure.medium video'); v.preload = 'metadata'; v.load(); }")
    page.wait_for_function("() => { const v = document.querySelector('figure.medium video'); "
                           "return v.readyState >= 1 || v.error !== null; }")
    # Chromium without proprietary codecs cannot decode MPEG-4 Part 2; the poster and frames are
    # what every browser shows, so that is what is asserted above. When it can, the size is right.
    size = page.evaluate("(() => { const v = document.querySelector('figure.medium video'); "
                         "return v.error ? null : [v.videoWidth, v.videoHeight]; })()")
    assert size in (None, [64, 48])
    assert "video, 64 × 48, 4.0 s; 8 frames sampled" in page.inner_text("figure.medium[data-kind=video] figcaption")


def test_switching_between_images_in_the_workbench(page, live_server, tmp_path) -> None:
    benchmark = make_media_benchmark(tmp_path)
    annotator = make_user("ann", benchmark, Role.ANNOTATOR)
    assignment = assignment_claim_next(user=annotator, benchmark=benchmark)
    while assignment.sample.uid != "pair":  # the queue's order is the file's: vid comes first
        assignment_skip(assignment=assignment)
        assignment = assignment_claim_next(user=annotator, benchmark=benchmark)
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", "ann")
    page.fill("#id_password", PASSWORD)
    page.click("form.card button[type=submit]")
    page.wait_for_load_state()
    page.goto(f"{live_server.url}/annotate/a/{assignment.pk}/")
    tabs = page.locator(".medium-tab")
    assert [" ".join(t.split()) for t in tabs.all_inner_texts()] == ["img0 120×90", "img1 160×64"]
    assert page.get_attribute(".medium-tab[data-ref=img0]", "aria-pressed") == "true"
    assert page.get_attribute("#canvas", "viewBox") == "0 0 120 90"
    assert page.locator("#medium-note").is_hidden()

    page.click(".medium-tab[data-ref=img1]")
    assert page.get_attribute(".medium-tab[data-ref=img1]", "aria-pressed") == "true"
    assert page.get_attribute(".medium-tab[data-ref=img0]", "aria-pressed") == "false"
    assert page.get_attribute("#canvas", "viewBox") == "0 0 160 64"
    assert "/media/1/still" in page.get_attribute("#stage-image", "href")
    assert page.locator("#medium-note").is_visible() and page.inner_text("#medium-ref") == "img1"
    assert page.locator("#t-rotate").is_disabled()  # the recovery transform is img0's
    # The stage shows the second image: its pixels are the second file's colour.
    colour = page.evaluate("""async () => {
        const img = new Image(); img.src = document.getElementById('stage-image').getAttribute('href');
        await img.decode(); const c = document.createElement('canvas'); c.width = img.width; c.height = img.height;
        const g = c.getContext('2d'); g.drawImage(img, 0, 0);
        return [img.width, img.height, ...g.getImageData(5, 5, 1, 1).data.slice(0, 3)];
    }""")
    assert colour[:2] == [160, 64] and all(abs(a - b) <= 6 for a, b in zip(colour[2:], [20, 180, 60]))

    # A box drawn now is on img1; switching back to img0 hides it, and the save keeps its image.
    svg = page.locator("#canvas").bounding_box()
    page.evaluate("window.WB.boxes.checkpoint()")
    page.mouse.move(svg["x"] + svg["width"] * 0.3, svg["y"] + svg["height"] * 0.45)
    page.mouse.down()
    page.mouse.move(svg["x"] + svg["width"] * 0.6, svg["y"] + svg["height"] * 0.55, steps=5)
    page.mouse.up()
    assert page.locator("#box-list li").count() == 1
    page.click(".medium-tab[data-ref=img0]")
    assert page.locator("#box-list li").count() == 0
    assert page.get_attribute("#canvas", "viewBox") == "0 0 120 90"
    assert page.locator("#t-rotate").is_enabled()
    page.click("#save-btn")
    page.wait_for_function("() => document.getElementById('save-status').textContent.startsWith('Saved')")
    (region,) = Region.objects.filter(annotation=assignment.annotation)
    assert region.image_ref == "img1" and region.x2 <= 160 and region.y2 <= 64
    page.reload()
    page.click(".medium-tab[data-ref=img1]")
    assert page.locator("#box-list li").count() == 1
