"""docs/tools.md documents every tool exactly as the registry defines it."""

from __future__ import annotations

from pathlib import Path

from annotation.imagetools import REGISTRY
from annotation.imagetools.describe import registry_markdown

DOCS = Path(__file__).resolve().parents[2] / "docs" / "tools.md"


def test_the_reference_section_matches_the_registry():
    text = DOCS.read_text(encoding="utf-8")
    assert registry_markdown() in text, (
        "docs/tools.md is out of date: regenerate its Reference section with "
        "`python -m annotation.imagetools.describe`")
    for name in REGISTRY:
        assert f"#### `{name}`" in text
