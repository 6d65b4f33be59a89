"""Labels a visitor reads: a benchmark's version as written ("v1.0", "paper v1", never "vpaper v1"), and
the "?" links beside judged figures named for screen readers."""

from __future__ import annotations

import re

import pytest

from leaderboard.reported import reported_results_load

pytestmark = pytest.mark.django_db


def test_a_worded_version_is_not_prefixed_with_v(client, hand) -> None:
    reported, _ = reported_results_load()
    assert reported.version == "paper v1"
    home = client.get("/").content.decode()
    board = client.get(f"/b/{reported.slug}/").content.decode()
    assert "vpaper" not in home and "vpaper" not in board
    assert '<span class="muted">paper v1</span>' in board and '<span class="muted">paper v1</span>' in home
    assert '<span class="muted">v1.0</span>' in client.get("/b/hand/").content.decode()  # a number keeps its v


def test_every_question_mark_link_has_a_name_saying_what_it_opens(client, hand) -> None:
    html = client.get("/b/hand/").content.decode()
    links = re.findall(r'<a class="agreement-link" href="[^"]+"[^>]*>(.*?)</a>', html)
    assert links
    for inner in links:
        # the visible "?" is hidden from screen readers, which read the text beside it
        assert inner.startswith('<span aria-hidden="true">?</span>')
        spoken = re.sub(r'<span aria-hidden="true">.*?</span>|<[^>]+>', "", inner)
        assert re.fullmatch(r"\w+: how far the judge behind its (key-step coverage|tool effectiveness) agrees with people",
                            spoken), spoken
