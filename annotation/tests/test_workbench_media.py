"""The workbench with several media, and with a stored image that cannot be decoded (issue 13):
the preview, the chain runner and the verifier say so instead of answering 500."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse

from annotation.imagetools import load_image
from annotation.models import Benchmark, Region, Role, Sample
from annotation.services import benchmark_import
from annotation.tests.benchmark_files import sample_line
from annotation.tests.media_files import truncated, write_image, write_video
from annotation.tests.workbench_helpers import PASSWORD, bench, make_user, payload, people  # noqa: F401
from annotation.workbench import previews
from annotation.workbench.assignments import assignment_claim_next

pytestmark = pytest.mark.django_db


def client_for(user) -> Client:  # noqa: ANN001
    client = Client()
    assert client.login(username=user.username, password=PASSWORD)
    return client


@pytest.fixture
def damage():  # noqa: ANN201
    """damage(sample, data): replace (None: delete) the stored image, as a failed disk or a bad
    restore would; put back afterwards, since stored files are shared by content hash."""
    kept: list[tuple[Path, bytes]] = []

    def apply(sample: Sample, data: bytes | None) -> None:
        path = Path(sample.image.path)
        kept.append((path, path.read_bytes()))
        if data is None:
            path.unlink()
        else:
            path.write_bytes(data)
        previews._cache.clear()

    yield apply
    for path, original in kept:
        path.write_bytes(original)
    previews._cache.clear()


@pytest.mark.parametrize("data", [truncated("PNG"), None], ids=["truncated", "missing"])
def test_an_undecodable_stored_image_gets_a_message_not_a_500(bench, people, damage, data) -> None:  # noqa: F811
    assignment = assignment_claim_next(user=people["ann1"], benchmark=bench)
    damage(assignment.sample, data)
    client = client_for(people["ann1"])
    preview = client.get(reverse("annotation:preview", args=[assignment.sample_id]), {"transform": "[]"})
    assert preview.status_code == 422
    assert "The sample's image could not be read" in preview.content.decode()
    ran = client.post(reverse("annotation:run_chain", args=[assignment.pk]),
                      {"chain": json.dumps([{"tool": "rotate", "args": {"angle": 90}}])})
    assert ran.status_code == 200
    html = ran.content.decode()
    assert 'data-ok="false"' in html and "The sample&#x27;s image could not be read" in html
    verified = client.post(reverse("annotation:verify_chain", args=[assignment.pk])).content.decode()
    assert "There is no saved toolchain" in verified  # nothing saved yet: the usual answer
    saved = client.post(reverse("annotation:save", args=[assignment.pk]),
                        json.dumps({"version": 1, "data": payload(toolchain=[{"tool": "rotate", "args": {"angle": 90},
                                                                              "verdict": "valid"}])}),
                        content_type="application/json")
    assert saved.status_code == 200, saved.content
    verified = client.post(reverse("annotation:verify_chain", args=[assignment.pk])).content.decode()
    assert "Not verified: The sample&#x27;s image could not be read" in verified


def test_reimporting_repairs_a_damaged_stored_image(tmp_path, damage) -> None:
    lines = [sample_line("s0", transform=[], regions=[], toolchain=[])]
    from annotation.tests.benchmark_files import write_benchmark

    path = write_benchmark(tmp_path, lines, size=(70, 50))
    benchmark_import(path=path, slug="heal")
    sample = Sample.objects.get(uid="s0")
    damage(sample, truncated("PNG"))
    benchmark_import(path=path, slug="heal")  # the file as given, same hash: the damaged copy is replaced
    assert load_image(Path(sample.image.path)).shape[:2] == (50, 70)


@pytest.fixture
def media_bench(tmp_path: Path) -> Benchmark:
    write_image(tmp_path / "left.png", (80, 120), (200, 90, 30))
    write_image(tmp_path / "right.png", (160, 64), (20, 180, 60))
    write_video(tmp_path / "clip.mp4", frames=24)
    lines = [sample_line("multi", image=None, images=["left.png", "right.png", "clip.mp4"], transform=[],
                         regions=[{"box": [1, 2, 30, 40], "image": "img1"}], toolchain=[])]
    (tmp_path / "benchmark.jsonl").write_text(json.dumps(lines[0]) + "\n")
    benchmark_import(path=tmp_path / "benchmark.jsonl", slug="mm")
    return Benchmark.objects.get(slug="mm")


def test_the_item_page_lists_every_medium_and_serves_their_parts(media_bench) -> None:
    annotator = make_user("ann", media_bench, Role.ANNOTATOR)
    assignment = assignment_claim_next(user=annotator, benchmark=media_bench)
    client = client_for(annotator)
    html = client.get(reverse("annotation:item", args=[assignment.pk])).content.decode()
    assert html.count('class="medium-tab"') == 3 and "img2 · video" in html
    editor = json.loads(html.split('<script id="editor-data" type="application/json">')[1].split("</script>")[0])
    media = editor["media"]
    assert [(m["ref"], m["kind"], m["width"], m["height"]) for m in media] == [
        ("img0", "image", 80, 120), ("img1", "image", 160, 64), ("img2", "video", 64, 48)]
    still = client.get(media[1]["still"])
    assert still["Content-Type"] == "image/jpeg" and load_image(still.content).shape[:2] == (64, 160)
    assert len(media[2]["frames"]) == 8
    frame = client.get(media[2]["frames"][3]["url"])
    assert frame["Content-Type"] == "image/jpeg" and load_image(frame.content).shape[:2] == (48, 64)
    video = client.get(media[2]["file"])
    assert video["Content-Type"] == "video/mp4" and video.content[4:8] == b"ftyp"
    sample_pk = assignment.sample_id
    assert client.get(reverse("annotation:medium", args=[sample_pk, 3, "still"])).status_code == 404
    assert client.get(reverse("annotation:medium", args=[sample_pk, 0, "frame-0"])).status_code == 404
    outsider = make_user("outsider")
    assert client_for(outsider).get(media[1]["still"]).status_code == 403


def test_saving_boxes_and_a_chain_on_the_second_image(media_bench) -> None:
    annotator = make_user("ann", media_bench, Role.ANNOTATOR)
    assignment = assignment_claim_next(user=annotator, benchmark=media_bench)
    client = client_for(annotator)
    regions = [{"box": [5, 5, 20, 20], "label": "a"}, {"box": [10, 10, 150, 60], "label": "b", "image": "img1"}]
    chain = [{"tool": "zoom_in", "args": {"bbox": [10, 10, 150, 60]}, "input": "img1", "output": "img3"}]
    saved = client.post(reverse("annotation:save", args=[assignment.pk]),
                        json.dumps({"version": 1, "data": payload(regions=regions, toolchain=chain)}),
                        content_type="application/json")
    assert saved.status_code == 200, saved.content
    stored = Region.objects.filter(annotation=assignment.annotation)
    assert [(r.image_ref, r.as_box()) for r in stored] == [("img0", [5, 5, 20, 20]), ("img1", [10, 10, 150, 60])]
    # A box that fits img0 (80x120) but not img1 (160x64) is refused on img1 only.
    bad = payload(regions=[{"box": [0, 0, 70, 100], "image": "img1"}])
    refused = client.post(reverse("annotation:save", args=[assignment.pk]),
                          json.dumps({"version": 2, "data": bad}), content_type="application/json")
    assert refused.status_code == 200 and refused.json()["held"] == ["frame"]  # the boxes kept as stored, the rest saved
    assert "regions[1]: [0, 0, 70, 100] lies outside img1 (160x64)" in refused.json()["errors"]
    assert [(r.image_ref, r.as_box()) for r in stored.all()] == [("img0", [5, 5, 20, 20]), ("img1", [10, 10, 150, 60])]
    # The chain runs on img1: its thumbnails are every medium, then the output.
    html = client.post(reverse("annotation:run_chain", args=[assignment.pk]), {"chain": json.dumps(chain)}).content.decode()
    assert 'data-ok="true"' in html and "1. img3 = zoom_in(img1)" in html
    assert [ref for ref in ("img0", "img1", "img2", "img3") if f'data-ref="{ref}"' in html] == ["img0", "img1", "img2", "img3"]
