"""The open taxonomy: a file's own domains and categories, variants merged, a manifest to close the set."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Benchmark, Category, Domain, Sample
from annotation.taxonomy import ADAPTMMBENCH_DOMAINS
from annotation.tests.benchmark_files import sample_line, write_benchmark

pytestmark = pytest.mark.django_db


def run_import(path: Path | list[Path], slug: str = "bench", **kwargs: object) -> str:
    out = StringIO()
    paths = [str(p) for p in path] if isinstance(path, list) else [str(path)]
    call_command("import_benchmark", *paths, slug=slug, stdout=out, stderr=StringIO(), no_progress=True, **kwargs)
    return out.getvalue()


def import_errors(path: Path, **kwargs: object) -> str:
    with pytest.raises(CommandError) as excinfo:
        run_import(path, slug="bad", **kwargs)
    assert Benchmark.objects.filter(slug="bad").count() == 0
    return str(excinfo.value)


def line(uid: str, domain: str, category: str, **kw: object) -> dict:
    return sample_line(uid, domain=domain, category=category, **kw)


def taxonomy_of(slug: str = "bench") -> dict[str, dict[str, str]]:
    return {
        d.name: {c.slug: c.name for c in d.categories.all()}
        for d in Domain.objects.filter(benchmark__slug=slug).prefetch_related("categories")
    }


def test_domains_and_categories_are_the_files_own_and_variants_merge(tmp_path: Path) -> None:
    lines = [
        line("a", "Real-world", "Counting"),
        line("b", "realworld", "counting"),
        line("c", "real_world", "Spatial Reasoning"),
        line("d", "Real-world", "spatial-reasoning"),
        line("e", "Astronomy", "Star charts"),
    ]
    out = run_import(write_benchmark(tmp_path, lines))
    # One domain for the three spellings, named by the most frequent one; a domain no manifest declared.
    assert taxonomy_of() == {
        "Real-world": {"counting": "Counting", "spatial_reasoning": "Spatial Reasoning"},
        "Astronomy": {"star_charts": "Star charts"},
    }
    assert Domain.objects.count() == 2 and Category.objects.count() == 3
    # The import prints every domain and category with its count.
    assert "Real-world: 4\n    Counting: 2\n    Spatial Reasoning: 2\n  Astronomy: 1\n    Star charts: 1" in out
    assert Sample.objects.get(uid="b").category.domain.name == "Real-world"


def test_reimport_with_another_spelling_keeps_one_domain(tmp_path: Path) -> None:
    run_import(write_benchmark(tmp_path / "v1", [line("a", "Real World", "Counting")]))
    run_import(write_benchmark(tmp_path / "v2", [line("a", "real-world", "counting"), line("b", "REAL_WORLD", "COUNTING")]))
    assert Domain.objects.filter(benchmark__slug="bench").count() == 1
    assert Category.objects.count() == 1
    assert set(Sample.objects.values_list("category__slug", flat=True)) == {"counting"}


def write_manifest(folder: Path, domains: dict) -> None:
    (folder / "benchmark.json").write_text(json.dumps({"name": "Closed", "domains": domains}))


@pytest.mark.parametrize(
    ("sample", "expected"),
    [
        pytest.param(
            line("b", "astrology", "counting"),
            "line 2, field 'domain': unknown domain 'astrology'; expected one of real_world, ocr, gui, knowledge, math",
            id="unknown-domain",
        ),
        pytest.param(
            line("b", "real_world", "chart"),
            "line 2, field 'category': unknown category 'chart' in domain 'real_world'",
            id="unknown-category",
        ),
    ],
)
def test_a_manifest_closes_the_set(tmp_path: Path, sample: dict, expected: str) -> None:
    write_benchmark(tmp_path, [line("a", "ocr", "chart"), sample])
    write_manifest(tmp_path, ADAPTMMBENCH_DOMAINS)
    assert expected in import_errors(tmp_path / "benchmark.jsonl")


def test_a_manifest_matches_variants_of_its_names(tmp_path: Path) -> None:
    write_benchmark(tmp_path, [line("a", "Real-world", "Counting"), line("b", "realworld", "counting")])
    write_manifest(tmp_path, ADAPTMMBENCH_DOMAINS)
    run_import(tmp_path / "benchmark.jsonl")
    assert set(Sample.objects.values_list("category__domain__slug", "category__slug")) == {("real_world", "counting")}
    # The declared set is kept whole: the empty domains are there for the tables.
    assert Domain.objects.count() == 5


def test_domain_of_supplies_the_papers_grouping(tmp_path: Path) -> None:
    lines = [line("a", "All", "ocr"), line("b", "All", "Measure"), line("c", "All", "math")]
    out = run_import(
        write_benchmark(tmp_path, lines),
        domain_of=["ocr=Perception", "measure=Estimation", "math=Reasoning", "colour=Estimation"]
    )
    assert taxonomy_of() == {
        "Perception": {"ocr": "ocr"},
        "Estimation": {"measure": "Measure"},
        "Reasoning": {"math": "math"},
    }
    assert "Perception: 1" in out


def test_domain_of_that_matches_nothing_is_warned(tmp_path: Path) -> None:
    err = StringIO()
    call_command(
        "import_benchmark", str(write_benchmark(tmp_path, [line("a", "All", "ocr")])), slug="b",
        domain_of=["colour=Estimation"], no_progress=True, stdout=StringIO(), stderr=err,
    )  # fmt: skip
    assert "--domain-of names a category no sample has: 'colour'" in err.getvalue()


def test_domain_of_needs_an_equals_sign(tmp_path: Path) -> None:
    message = import_errors(write_benchmark(tmp_path, [line("a", "x", "y")]), domain_of=["ocr"])
    assert "--domain-of 'ocr': expected CATEGORY=DOMAIN" in message


@pytest.mark.parametrize("field", ["domain", "category"])
def test_a_name_over_100_characters_is_a_line_and_field_message(tmp_path: Path, field: str) -> None:
    long_name = "Very long " * 11  # 110 characters
    sample = sample_line("b", **{"domain": "ocr", "category": "chart", field: long_name})
    message = import_errors(write_benchmark(tmp_path, [line("a", "ocr", "chart"), sample]))
    assert f"line 2, field '{field}': 110 characters long; a {field} name has at most 100" in message


def test_a_name_of_exactly_100_characters_imports(tmp_path: Path) -> None:
    name = "n" * 100
    run_import(write_benchmark(tmp_path, [line("a", name, name)]))
    assert Domain.objects.get().name == name


def test_pages_show_the_benchmarks_own_taxonomy(tmp_path: Path, client) -> None:  # noqa: ANN001
    lines = [line("a", "All", "ocr"), line("b", "All", "measure"), line("c", "All", "measure")]
    run_import(write_benchmark(tmp_path, lines), slug="vtc", domain_of=["ocr=Perception", "measure=Estimation"])
    home = client.get("/").content.decode()
    assert "<li>Perception: 1</li><li>Estimation: 2</li>" in home
    domains_tab = client.get("/b/vtc/domains/")
    assert domains_tab.status_code == 200
    page = domains_tab.content.decode()
    assert "Perception" in page and "Estimation" in page
    for theirs in ("Real-world", "GUI", "Knowledge"):
        assert theirs not in page and theirs not in home


LONG = "Very long " * 11  # 110 characters


@pytest.mark.parametrize(("domains", "expected"), [
    pytest.param({"ocr": {"name": LONG, "categories": {"chart": "Chart"}}},
                 "field 'domains.ocr.name': 110 characters long; a domain name has at most 100", id="domain-name"),
    pytest.param({"ocr": {"name": "OCR", "categories": {"chart": LONG}}},
                 "field 'domains.ocr.categories.chart': 110 characters long; a category name has at most 100",
                 id="category-name"),
    pytest.param({"o" * 70: {"categories": {"chart": "Chart"}}},
                 f"field 'domains.{'o' * 70}': 70 characters long; a domain slug has at most 64", id="domain-slug"),
    pytest.param({"ocr": {"name": "OCR", "categories": {"c" * 70: "Chart"}}},
                 f"field 'domains.ocr.categories.{'c' * 70}': 70 characters long; a category slug has at most 64",
                 id="category-slug"),
])
def test_a_manifest_name_over_the_limit_is_a_field_message(tmp_path: Path, domains: dict, expected: str) -> None:
    write_benchmark(tmp_path, [line("a", "ocr", "chart")])
    write_manifest(tmp_path, domains)
    assert expected in import_errors(tmp_path / "benchmark.jsonl")
