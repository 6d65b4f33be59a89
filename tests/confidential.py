"""Test gold made unmistakable, so a test can look for it in a page: every test-split sample's answer,
key steps and reference toolchain carry a ``GOLD-`` marker (docs/security.md)."""

from __future__ import annotations

from annotation.models import Annotation, AnnotationStatus, Benchmark, KeyStep, ReferenceToolCall, Sample, Split

MARK = "GOLD-"


def mark_test_gold(benchmark: Benchmark) -> list[str]:
    """Write the markers into the test samples' gold; returns every marker written."""
    markers = []
    for sample in Sample.objects.filter(benchmark=benchmark, split=Split.TEST):
        answer = f"{MARK}ANSWER-{sample.uid}"
        Sample.objects.filter(pk=sample.pk).update(answer=answer)
        markers.append(answer)
        approved = Annotation.objects.filter(sample=sample, status=AnnotationStatus.APPROVED)
        approved.exclude(answer="").update(answer=answer)
        for step in KeyStep.objects.filter(annotation__in=approved):
            step.text = f"{MARK}STEP-{sample.uid}-{step.position}"
            step.save(update_fields=["text"])
            markers.append(step.text)
        for call in ReferenceToolCall.objects.filter(annotation__in=approved):
            call.args = {**call.args, "note": f"{MARK}CHAIN-{sample.uid}-{call.position}"}
            call.save(update_fields=["args"])
            markers.append(call.args["note"])
    return markers


def gold_in(body: str) -> list[str]:
    """The markers of test gold found in a response body (none may be there where gold is forbidden)."""
    found, start = [], 0
    while (at := body.find(MARK, start)) >= 0:
        end = at + len(MARK)
        while end < len(body) and (body[end].isalnum() or body[end] == "-"):
            end += 1
        found.append(body[at:end])
        start = end
    return found
