"""Benchmark taxonomies: AdaptMMBench's five domains (the paper's Tables 6 and 7), and the
open taxonomy a file brings when no manifest declares one. Plain Python: no Django import.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Callable

# The reported AdaptMMBench entry and the demo declare these; a file without a manifest brings its own.
ADAPTMMBENCH_DOMAINS: dict[str, dict] = {
    "real_world": {
        "name": "Real-world",
        "categories": {
            "attribute": "Attribute",
            "counting": "Counting",
            "integration": "Integration",
            "physical": "Physical",
            "spatial": "Spatial",
        },
    },
    "ocr": {
        "name": "OCR",
        "categories": {"chart": "Chart", "diagram": "Diagram", "document": "Document", "table": "Table"},
    },
    "gui": {
        "name": "GUI",
        "categories": {
            "android": "Android",
            "linux": "Linux",
            "mac": "Mac",
            "web": "Web",
            "windows": "Windows",
            "ios": "iOS",
        },
    },
    "knowledge": {
        "name": "Knowledge",
        "categories": {"biology": "Biology", "chemistry": "Chemistry", "geography": "Geography", "physics": "Physics"},
    },
    "math": {
        "name": "Math",
        "categories": {"algebra": "Algebra", "geometry": "Geometry", "logic": "Logic", "statistics": "Statistics"},
    },
}


# ---------------------------------------------------------------------------------------------
# The taxonomy a file brings (open), or the one a manifest declares (closed)


NAME_MAX_LENGTH = 100  # Domain.name and Category.name
SLUG_MAX_LENGTH = 64
ONE_LEVEL_DOMAIN = "All"  # the domain of a release that has categories only (docs/formats.md)


def merge_key(name: str) -> str:
    """`Real-world`, `realworld`, `real_world` and `Real World` are one name."""
    return re.sub(r"[\s_\-]+", "", name.casefold())


def slug_for(name: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "_", name.casefold()).strip("_")[:SLUG_MAX_LENGTH].strip("_")
    # A name with no ASCII letter or digit (a Chinese category) still needs a stable slug.
    return slug or "t_" + hashlib.sha1(name.encode()).hexdigest()[:10]


class TaxonomyCollector:
    """Places each sample's (domain, category) and counts them.

    Open (no declared domains): the names in the file, in their own words, variants merged; the
    most frequent spelling names the group. Closed: a manifest's domains, matched by slug or by
    a variant of the slug or name; anything else is an error.
    `domain_of` maps a category (any variant) to its domain, overriding the file's (the paper's
    grouping of a one-level release).
    """

    def __init__(self, declared: dict[str, dict] | None = None, domain_of: dict[str, str] | None = None) -> None:
        self.declared = declared
        self.domain_of = {merge_key(k): v for k, v in (domain_of or {}).items()}
        self.used_mapping: set[str] = set()
        self._domains: dict[str, _Group] = {}  # merge key -> group, in order of first appearance
        self._slugs: set[str] = set()

    def place(self, domain: object, category: object, err: Callable[[str, str], None]) -> tuple[str, str] | None:
        ok = _check_name("domain", domain, err) & _check_name("category", category, err)
        if not ok:
            return None
        assert isinstance(domain, str) and isinstance(category, str)
        mapped = self.domain_of.get(merge_key(category))
        if mapped is not None:
            self.used_mapping.add(merge_key(category))
            domain = mapped
        if self.declared is not None:
            return self._place_declared(domain, category, err)
        group = self._group(self._domains, domain, self._slugs)
        sub = self._group(group.children, category, group.child_slugs)
        group.spellings[domain] += 1
        sub.spellings[category] += 1
        return group.slug, sub.slug

    def _place_declared(self, domain: str, category: str, err: Callable[[str, str], None]) -> tuple[str, str] | None:
        assert self.declared is not None
        d_slug = _find(self.declared, domain)
        if d_slug is None:
            err("domain", f"unknown domain {domain!r}; expected one of {', '.join(self.declared)}")
            return None
        categories = self.declared[d_slug]["categories"]
        c_slug = _find({s: {"name": n} for s, n in categories.items()}, category)
        if c_slug is None:
            err("category", f"unknown category {category!r} in domain {d_slug!r}; expected one of {', '.join(categories)}")
            return None
        group = self._domains.setdefault(d_slug, _Group(d_slug))
        group.spellings[self.declared[d_slug]["name"]] += 1
        sub = group.children.setdefault(c_slug, _Group(c_slug))
        sub.spellings[categories[c_slug]] += 1
        return d_slug, c_slug

    @staticmethod
    def _group(groups: dict[str, _Group], name: str, slugs: set[str]) -> _Group:
        key = merge_key(name)
        group = groups.get(key)
        if group is None:
            slug, n = slug_for(name), 2
            while slug in slugs:  # two names that differ only in punctuation: keep both
                slug, n = f"{slug_for(name)[: SLUG_MAX_LENGTH - 4]}_{n}", n + 1
            slugs.add(slug)
            group = groups[key] = _Group(slug)
        return group

    def domains(self) -> dict[str, dict]:
        """The manifest's `domains` shape; declared ones keep every declared category."""
        if self.declared is not None:
            return self.declared
        return {
            g.slug: {"name": g.name, "categories": {c.slug: c.name for c in g.children.values()}}
            for g in self._domains.values()
        }

    def counts(self) -> list[tuple[str, int, list[tuple[str, int]]]]:
        """(domain name, samples, [(category name, samples)]) in order of first appearance."""
        return [
            (g.name, sum(c.total for c in g.children.values()), [(c.name, c.total) for c in g.children.values()])
            for g in self._domains.values()
        ]

    def unused_mapping(self) -> list[str]:
        return [k for k in self.domain_of if k not in self.used_mapping]


class _Group:
    __slots__ = ("slug", "spellings", "children", "child_slugs")

    def __init__(self, slug: str) -> None:
        self.slug = slug
        self.spellings: Counter[str] = Counter()
        self.children: dict[str, _Group] = {}
        self.child_slugs: set[str] = set()

    @property
    def name(self) -> str:
        # The most frequent spelling; on a tie, the first seen (Counter keeps insertion order).
        return self.spellings.most_common(1)[0][0]

    @property
    def total(self) -> int:
        return sum(self.spellings.values())


def _check_name(field: str, value: object, err: Callable[[str, str], None]) -> bool:
    if not isinstance(value, str) or not value.strip():
        err(field, "expected a non-empty string")
        return False
    problem = too_long(value, f"{field} name")
    if problem:
        err(field, problem)
        return False
    return True


def too_long(value: str, what: str, limit: int = NAME_MAX_LENGTH) -> str | None:
    """Why a name (or, with SLUG_MAX_LENGTH, a slug) does not fit its column; None when it does."""
    if len(value) > limit:
        return f"{len(value)} characters long; a {what} has at most {limit}"
    return None


def _find(groups: dict[str, dict], name: str) -> str | None:
    if name in groups:
        return name
    key = merge_key(name)
    for slug, spec in groups.items():
        if merge_key(slug) == key or merge_key(str(spec.get("name", ""))) == key:
            return slug
    return None
