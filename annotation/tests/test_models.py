"""Invariants hold in the database itself, for every writer."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction

from annotation.models import (Annotation, AnnotationStatus, Benchmark, Category, Domain, KeyStep, ReferenceToolCall, Region,
                               Sample)

pytestmark = pytest.mark.django_db


@pytest.fixture
def category() -> Category:
    benchmark = Benchmark.objects.create(slug="b", name="B")
    domain = Domain.objects.create(benchmark=benchmark, slug="ocr", name="OCR")
    return Category.objects.create(domain=domain, slug="chart", name="Chart")


def make_sample(category: Category, **overrides: object) -> Sample:
    fields = dict(
        benchmark=category.domain.benchmark, category=category, uid="s1", image="x.png", image_sha256="0" * 64,
        width=10, height=10, question="Q?", answer="4", answer_type="number",
    )  # fmt: skip
    fields.update(overrides)
    return Sample.objects.create(**fields)


def violates(create) -> bool:
    try:
        with transaction.atomic():
            create()
    except IntegrityError:
        return True
    return False


def test_uid_is_unique_within_a_benchmark_only(category: Category) -> None:
    make_sample(category)
    assert violates(lambda: make_sample(category))
    other = Benchmark.objects.create(slug="other", name="Other")
    other_cat = Category.objects.create(domain=Domain.objects.create(benchmark=other, slug="d", name="D"), slug="c", name="C")
    make_sample(other_cat)  # the same uid in another benchmark is fine
    assert Sample.objects.filter(uid="s1").count() == 2


@pytest.mark.parametrize(
    "overrides",
    [
        {"answer_type": "choice"},  # choice without options
        {"options": {"A": "x", "B": "y"}},  # options on a number sample
        {"tolerance": -0.5},
        {"width": 0},
        {"answer": ""},
        {"split": "val"},
        {"answer_type": "essay"},
    ],
)
def test_sample_constraints(category: Category, overrides: dict) -> None:
    assert violates(lambda: make_sample(category, **overrides))


def test_a_valid_choice_sample_is_accepted(category: Category) -> None:
    sample = make_sample(category, answer_type="choice", options={"A": "x", "B": "y"}, answer="A")
    assert sample.pk


def test_region_boxes_must_be_well_formed(category: Category) -> None:
    annotation = Annotation.objects.create(sample=make_sample(category))
    assert violates(lambda: Region.objects.create(annotation=annotation, position=0, x1=5, y1=0, x2=5, y2=3))
    assert violates(lambda: Region.objects.create(annotation=annotation, position=0, x1=-1, y1=0, x2=5, y2=3))
    Region.objects.create(annotation=annotation, position=0, x1=0, y1=0, x2=5, y2=3)
    assert violates(lambda: Region.objects.create(annotation=annotation, position=0, x1=1, y1=1, x2=2, y2=2))


def test_only_one_approved_annotation_per_sample(category: Category) -> None:
    sample = make_sample(category)
    Annotation.objects.create(sample=sample, status=AnnotationStatus.APPROVED)
    Annotation.objects.create(sample=sample, status=AnnotationStatus.SUBMITTED)
    assert violates(lambda: Annotation.objects.create(sample=sample, status=AnnotationStatus.APPROVED))


def test_key_steps_and_tool_calls_keep_their_order_and_references(category: Category) -> None:
    annotation = Annotation.objects.create(sample=make_sample(category))
    KeyStep.objects.create(annotation=annotation, position=0, text="Read the axis.")
    assert violates(lambda: KeyStep.objects.create(annotation=annotation, position=0, text="Again."))
    assert violates(lambda: KeyStep.objects.create(annotation=annotation, position=1, text=""))
    ReferenceToolCall.objects.create(annotation=annotation, position=0, tool="rotate", output_ref="img1")
    assert violates(lambda: ReferenceToolCall.objects.create(annotation=annotation, position=1, tool="rotate", output_ref="img1"))
    assert violates(lambda: ReferenceToolCall.objects.create(annotation=annotation, position=1, tool="rotate", output_ref="img0"))


def test_fixed_cost_bounds_come_in_pairs_and_in_order() -> None:
    assert violates(lambda: Benchmark.objects.create(slug="c1", name="x", cost_min=0.01))
    assert violates(lambda: Benchmark.objects.create(slug="c2", name="x", cost_min=0.2, cost_max=0.1))
    Benchmark.objects.create(slug="c3", name="x", cost_min=0.0000044, cost_max=0.2)
