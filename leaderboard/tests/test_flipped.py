"""leaderboard/flipped.py and the compare pages that show it: the samples where two submissions differ
(McNemar's discordant cells), who sees which split, and one sample's two traces side by side."""

from __future__ import annotations

import re

from django.contrib.auth import get_user_model
from django.test import Client

from evaluation.models import Submission
from leaderboard import flipped
from leaderboard.tests import helpers


def _uids(html: str) -> dict[str, str]:
    """{uid: cell} of the flipped table's rows."""
    table = html.split('id="flipped-table"', 1)[1].split("</table>", 1)[0]
    return {uid: cell for cell, uid in re.findall(r'<tr data-cell="(\w)">\s*<th scope="row"><a [^>]*>([^<]+)</a>', table)}


def test_the_flipped_list_is_the_mcnemar_discordant_cells_dev_split_for_a_visitor(client, hand) -> None:
    # Adaptive: Alpha right on s1 s2 s3 s5 s6 s8, Beta on s2 s5 s6: only A right on s1, s3 (test), s8.
    html = client.get(f"/b/hand/compare/?a={hand.alpha.pk}&b={hand.beta.pk}").content.decode()
    assert _uids(html) == {"s1": "a", "s8": "a"}
    assert "3 where only A is right, 0 where only B is" not in html  # the test-split one is not listed ...
    assert re.search(r"Dev split only: 1 more discordant sample of the test split", html)  # ... but said
    # The same two the other way round, in the text mode (Alpha s2 s5; Beta s1 s2 s5): B alone right on s1.
    html = client.get(f"/b/hand/compare/?a={hand.alpha.pk}&b={hand.beta.pk}&mode=text").content.decode()
    assert _uids(html) == {"s1": "b"}
    # Filters: a domain with none, and one cell.
    html = client.get(f"/b/hand/compare/?a={hand.alpha.pk}&b={hand.beta.pk}&domain=ocr").content.decode()
    assert _uids(html) == {"s8": "a"}
    html = client.get(f"/b/hand/compare/?a={hand.alpha.pk}&b={hand.beta.pk}&cell=b").content.decode()
    assert 'id="flipped-table"' not in html and 'id="flipped-none"' in html


def test_staff_and_the_owner_of_both_see_every_split_others_the_dev_split(hand) -> None:
    found = flipped.flipped(hand.benchmark, hand.alpha, hand.beta, every_split=True)
    assert found is not None and {f.uid for f in found.rows} == {"s1", "s3", "s8"} and found.hidden == 0
    users = get_user_model().objects
    owner, other = users.create_user("both", password="pw"), users.create_user("other", password="pw")
    Submission.objects.filter(pk__in=(hand.alpha.pk, hand.beta.pk)).update(owner=owner)
    a, b = Submission.objects.get(pk=hand.alpha.pk), Submission.objects.get(pk=hand.beta.pk)
    assert flipped.sees_every_sample(owner, a, b)
    assert not flipped.sees_every_sample(other, a, b)
    Submission.objects.filter(pk=hand.beta.pk).update(owner=other)  # owning one of the two is not enough
    assert not flipped.sees_every_sample(owner, a, Submission.objects.get(pk=hand.beta.pk))
    Submission.objects.filter(pk=hand.beta.pk).update(owner=owner)
    for user, listed, side_by_side in ((owner, {"s1": "a", "s3": "a", "s8": "a"}, 200),
                                       (other, {"s1": "a", "s8": "a"}, 404)):
        c = Client()
        c.force_login(user)
        assert _uids(c.get(f"/b/hand/compare/?a={a.pk}&b={b.pk}").content.decode()) == listed
        page = c.get(f"/b/hand/compare/{a.pk}/{b.pk}/s/s3/")
        assert page.status_code == side_by_side
        if side_by_side == 200:  # the owner sees the test sample's traces, never its gold answer
            assert "Gold answer" not in page.content.decode() and "is not shown" in page.content.decode()


def test_one_sample_opens_both_traces_side_by_side(client, hand) -> None:
    html = client.get(f"/b/hand/compare/{hand.alpha.pk}/{hand.beta.pk}/s/s1/?mode=adaptive").content.decode()
    a, b = html.split('data-side="a"', 1)[1].split('data-side="b"', 1)
    assert "A: Alpha" in a and "right" in a and "rotate(" in a and "zoom_in(" in a  # Alpha's calls ...
    assert f"/b/hand/m/{hand.alpha.pk}/s/s1/adaptive/img1.png" in a  # ... with their re-run images
    assert "B: Beta" in b and "wrong" in b and f"/b/hand/m/{hand.beta.pk}/s/s1/adaptive/img1.png" in b
    assert "Gold answer" in html  # a dev sample's gold is public
    assert client.get(f"/b/hand/compare/{hand.alpha.pk}/{hand.private.pk}/s/s1/").status_code == 404
    assert client.get(f"/b/hand/compare/{hand.alpha.pk}/{hand.beta.pk}/s/s3/").status_code == 404  # test split


def test_the_compare_form_starts_from_the_boards_two_leaders_never_a_blind_entry(client, hand) -> None:
    helpers.submit(hand.benchmark, helpers.ModelSpec("Aardvark blind", {"blind": helpers.UIDS}))  # first by name
    html = client.get("/b/hand/compare/").content.decode()
    selected = re.findall(r'<option value="\d+" selected>([^<]+) \(#', html)
    assert selected == ["Alpha", "Beta"]  # adaptive accuracy's two leaders
