"""The sample browser's previous / next (issue 38, item 7): over the samples this visitor may browse, in the
benchmark's order; a visitor never gets a link to a test-split sample."""

from __future__ import annotations

import re

from django.contrib.auth import get_user_model
from django.urls import reverse


def _pager(client, hand, uid: str) -> tuple[str | None, str | None]:  # noqa: ANN001
    page = client.get(reverse("leaderboard:sample", args=["hand", hand.alpha.pk, uid])).content.decode()
    prev = re.search(r'<a rel="prev" href="[^"]*/s/([^/"]+)/"', page)
    nxt = re.search(r'<a rel="next" href="[^"]*/s/([^/"]+)/"', page)
    return (prev.group(1) if prev else None, nxt.group(1) if nxt else None)


def test_a_visitor_steps_through_the_dev_samples_only(client, hand) -> None:
    # The file's order: s1 s2 (dev) s3 s4 (test) s5 (dev) s6 s7 (test) s8 s9 (dev).
    assert _pager(client, hand, "s1") == (None, "s2")
    assert _pager(client, hand, "s2") == ("s1", "s5")
    assert _pager(client, hand, "s9") == ("s8", None)
    page = client.get(reverse("leaderboard:sample", args=["hand", hand.alpha.pk, "s1"])).content.decode()
    assert "First sample" in page


def test_staff_step_through_every_split(client, hand) -> None:
    client.force_login(get_user_model().objects.create_user("staff", is_staff=True))
    assert _pager(client, hand, "s2") == ("s1", "s3")
    assert _pager(client, hand, "s4") == ("s3", "s5")
