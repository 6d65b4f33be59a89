"""Workbench pages as people use them: who may open what, the save endpoint, previews, review,
export, and "Draft with LLM" with and without an endpoint."""

from __future__ import annotations

import io
import json
import threading
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest
from django.test import Client
from django.urls import reverse

from annotation.imagetools import load_image
from annotation.models import KeyStepDraft
from annotation.tests.workbench_helpers import PASSWORD, bench, payload, people  # noqa: F401
from annotation.workbench.assignments import assignment_claim_next

pytestmark = pytest.mark.django_db


def client_for(user) -> Client:  # noqa: ANN001
    client = Client()
    assert client.login(username=user.username, password=PASSWORD)
    return client


def post_json(client: Client, url: str, body: dict):  # noqa: ANN201
    return client.post(url, json.dumps(body), content_type="application/json")


def test_anonymous_visitors_are_sent_to_login(bench, people) -> None:
    assignment = assignment_claim_next(user=people["ann1"], benchmark=bench)
    for url in [reverse("annotation:queue"), assignment.get_absolute_url(),
                reverse("annotation:review_list", args=[bench.slug]),
                reverse("annotation:preview", args=[assignment.sample_id])]:
        response = Client().get(url)
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/"), url


def test_an_annotator_cannot_open_another_annotators_assignment(bench, people) -> None:
    theirs = assignment_claim_next(user=people["ann1"], benchmark=bench)
    intruder = client_for(people["ann2"])
    assert intruder.get(theirs.get_absolute_url()).status_code == 404
    assert post_json(intruder, reverse("annotation:save", args=[theirs.pk]), {"version": 1, "data": payload()}).status_code == 404
    assert intruder.get(reverse("annotation:history", args=[theirs.pk])).status_code == 404
    # ... nor its image, until they work on the sample themselves.
    assert client_for(people["outsider"]).get(reverse("annotation:preview", args=[theirs.sample_id])).status_code == 403


def test_an_annotator_cannot_open_the_review_pages(bench, people) -> None:
    assignment = assignment_claim_next(user=people["ann1"], benchmark=bench)
    client = client_for(people["ann1"])
    assert client.get(reverse("annotation:review_list", args=[bench.slug])).status_code == 403
    assert client.get(reverse("annotation:review_sample", args=[assignment.sample_id])).status_code == 403
    assert client.get(reverse("annotation:export_zip", args=[bench.slug])).status_code == 403


def test_a_person_without_the_annotator_role_cannot_claim(bench, people) -> None:
    response = client_for(people["outsider"]).post(reverse("annotation:claim_next", args=[bench.slug]))
    assert response.status_code == 403


def test_next_item_opens_the_editor_with_the_frame_size(bench, people) -> None:
    client = client_for(people["ann1"])
    response = client.post(reverse("annotation:claim_next", args=[bench.slug]))
    page = client.get(response["Location"])
    assert page.status_code == 200
    html = page.content.decode()
    assert 'viewBox="0 0 200 100"' in html and "Draft with LLM" in html
    assert "No LLM endpoint is configured" in html  # the button says why it is disabled
    assert "s0" in client.get(reverse("annotation:queue")).content.decode()


def test_the_save_endpoint_answers_409_with_the_message_on_a_stale_version(bench, people) -> None:
    assignment = assignment_claim_next(user=people["ann1"], benchmark=bench)
    client = client_for(people["ann1"])
    url = reverse("annotation:save", args=[assignment.pk])
    ok = post_json(client, url, {"version": 1, "data": payload()})
    assert ok.status_code == 200 and ok.json()["version"] == 2
    stale = post_json(client, url, {"version": 1, "data": payload(answer="5")})
    assert stale.status_code == 409 and "kept as draft" in stale.json()["message"]
    history = client.get(reverse("annotation:history", args=[assignment.pk])).content.decode()
    assert "Stale edit kept as a draft" in history and "Restore this kept draft" in history
    bad = post_json(client, url, {"version": 2, "data": payload(regions=[{"box": [0, 0, 500, 50]}])})
    # The boxes kept as stored, the rest saved (test_workbench_saving_keeps_typing.py), the problem said.
    assert bad.status_code == 200 and bad.json()["held"] == ["frame"] and "outside the image" in bad.json()["errors"][0]


def test_the_preview_is_the_transformed_image(bench, people) -> None:
    assignment = assignment_claim_next(user=people["ann1"], benchmark=bench)
    client = client_for(people["ann1"])
    url = reverse("annotation:preview", args=[assignment.sample_id])
    rotated = client.get(url, {"transform": json.dumps([{"op": "rotate", "angle": 90}])})
    assert rotated["Content-Type"] == "image/jpeg"  # previews are JPEG (docs/performance.md)
    assert load_image(rotated.content).shape[:2] == (200, 100)  # 200x100 turned a quarter
    oracle = client.get(url, {"oracle": "1", "transform": "[]", "regions": json.dumps([[10, 10, 60, 40]])})
    assert oracle["Content-Type"] == "image/jpeg"
    assert load_image(oracle.content).shape[:2] == (30, 50)
    exact = client.get(url, {"transform": json.dumps([{"op": "rotate", "angle": 90}]), "format": "png"})
    assert exact["Content-Type"] == "image/png" and exact.content.startswith(b"\x89PNG")
    assert load_image(exact.content).shape[:2] == (200, 100)
    bad = client.get(url, {"transform": json.dumps([{"op": "rotate", "angle": "x"}])})
    assert bad.status_code == 400


def test_running_a_chain_shows_every_intermediate_image(bench, people) -> None:
    assignment = assignment_claim_next(user=people["ann1"], benchmark=bench)
    chain = [{"tool": "rotate", "args": {"angle": 90}}, {"tool": "zoom_in", "args": {"bbox": [0, 0, 50, 50]}}]
    html = client_for(people["ann1"]).post(reverse("annotation:run_chain", args=[assignment.pk]),
                                           {"chain": json.dumps(chain)}).content.decode()
    assert html.count("data:image/png;base64,") == 3  # img0, img1, img2
    assert "2. img2 = zoom_in(img1)" in html
    failing = [{"tool": "zoom_in", "args": {"bbox": [0, 0, 5000, 50]}}]
    html = client_for(people["ann1"]).post(reverse("annotation:run_chain", args=[assignment.pk]),
                                           {"chain": json.dumps(failing)}).content.decode()
    assert 'data-ok="false"' in html and "step 1 (zoom_in)" in html


def test_a_reviewer_approves_and_the_item_exports(bench, people) -> None:
    a1 = assignment_claim_next(user=people["ann1"], benchmark=bench)
    a2 = assignment_claim_next(user=people["ann2"], benchmark=bench)
    for assignment, user, box in [(a1, "ann1", [10, 20, 50, 60]), (a2, "ann2", [11, 20, 50, 60])]:
        r = post_json(client_for(people[user]), reverse("annotation:save", args=[assignment.pk]),
                      {"version": 1, "data": payload(regions=[{"box": box}]), "submit": True})
        assert r.status_code == 200, r.json()
    reviewer = client_for(people["rev"])
    page = reviewer.get(reverse("annotation:review_sample", args=[a1.sample_id])).content.decode()
    assert "mean IoU" in page and "ann1" in page and "ann2" in page and "imported" in page
    parts = {f"source_{p}": a2.annotation_id for p in ("regions", "answer", "key_steps", "toolchain")}
    response = reviewer.post(reverse("annotation:review_sample", args=[a1.sample_id]), {"action": "approve", **parts})
    assert response.status_code == 302
    export = reviewer.get(reverse("annotation:export_zip", args=[bench.slug]))
    with zipfile.ZipFile(io.BytesIO(b"".join(export.streaming_content))) as zf:
        lines = [json.loads(x) for x in zf.read("benchmark.jsonl").decode().splitlines()]
    assert next(x for x in lines if x["uid"] == "s0")["regions"] == [[11, 20, 50, 60]]
    coco = reviewer.get(reverse("annotation:export_coco", args=[bench.slug])).json()
    assert [11, 20, 39, 40] in [a["bbox"] for a in coco["annotations"]]


def test_reject_sends_the_comment_to_the_annotators_queue(bench, people) -> None:
    a1 = assignment_claim_next(user=people["ann1"], benchmark=bench)
    post_json(client_for(people["ann1"]), reverse("annotation:save", args=[a1.pk]),
              {"version": 1, "data": payload(), "submit": True})
    client_for(people["rev"]).post(reverse("annotation:review_sample", args=[a1.sample_id]),
                                   {"action": "reject", "annotation": a1.annotation_id,
                                    f"comment_{a1.annotation_id}": "Box too tight."})
    queue = client_for(people["ann1"]).get(reverse("annotation:queue")).content.decode()
    assert "Box too tight." in queue and "Returned by a reviewer" in queue


class FakeOpenAI(ThreadingHTTPServer):
    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[dict] = []


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append(body)
        reply = {"id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
                 "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant",
                             "content": '```json\n["Find the squares.", "Count them: 3."]\n```'}}]}
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


def test_draft_with_llm_calls_the_endpoint_with_the_versioned_prompt_and_image(
    bench, people, settings, django_capture_on_commit_callbacks
) -> None:
    server = FakeOpenAI()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    settings.JUDGE_OPENAI_BASE_URL = f"http://127.0.0.1:{server.server_address[1]}/v1"
    settings.JUDGE_OPENAI_API_KEY = "test"
    settings.JUDGE_OPENAI_MAX_RETRIES = 0
    try:
        assignment = assignment_claim_next(user=people["ann1"], benchmark=bench)
        client = client_for(people["ann1"])
        with django_capture_on_commit_callbacks(execute=True):
            html = client.post(reverse("annotation:draft_steps", args=[assignment.pk])).content.decode()
        draft = KeyStepDraft.objects.get()
        assert draft.status == "done" and draft.steps == ["Find the squares.", "Count them: 3."]
        assert draft.prompt_version == "key_steps_v1"
        content = server.requests[0]["messages"][0]["content"]
        assert "How many squares" in content[0]["text"] and content[1]["image_url"]["url"].startswith("data:image/png")
        polled = client.get(reverse("annotation:draft_status", args=[draft.pk])).content.decode()
        assert "Count them: 3." in polled and "Add these as unverified steps" in polled
        assert "Drafting" in html or "Count them" in html
        # Run twice (a redelivered task): nothing happens the second time.
        from annotation.tasks import draft_key_steps

        draft_key_steps(draft.pk)
        assert len(server.requests) == 1
    finally:
        server.shutdown()


def test_draft_with_llm_without_an_endpoint_says_why(bench, people, settings) -> None:
    settings.JUDGE_OPENAI_BASE_URL = None
    assignment = assignment_claim_next(user=people["ann1"], benchmark=bench)
    html = client_for(people["ann1"]).post(reverse("annotation:draft_steps", args=[assignment.pk])).content.decode()
    assert "No LLM endpoint is configured" in html and not KeyStepDraft.objects.exists()


def test_the_preview_of_a_large_image_is_downscaled(tmp_path, people) -> None:  # noqa: ARG001
    from annotation.tests.workbench_helpers import make_benchmark, make_user

    big = make_benchmark(tmp_path / "big", n=1, size=(3200, 1600), slug="big")
    user = make_user("big-ann", big, "annotator")
    assignment = assignment_claim_next(user=user, benchmark=big)
    png = client_for(user).get(reverse("annotation:preview", args=[assignment.sample_id])).content
    image = load_image(png)
    assert image.shape[:2] == (800, 1600) and isinstance(image, np.ndarray)
