"""The admin health page: staff only; the oldest active submission, its age, and the sweeper's last run."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from evaluation import services
from evaluation.models import Submission, SweepRun
from evaluation.tests.submission_helpers import good_file, make_benchmark, upload

pytestmark = pytest.mark.django_db
URL = "/submissions/health/"


def test_only_staff_see_the_health_page(client) -> None:
    assert client.get(URL).status_code == 302  # to the login page
    client.force_login(get_user_model().objects.create_user("ada", "ada@example.org", "pw"))
    assert client.get(URL).status_code == 302  # a researcher is sent to log in as staff
    client.force_login(get_user_model().objects.create_user("boss", is_staff=True))
    assert client.get(URL).status_code == 200


def test_the_page_shows_the_oldest_active_submission_its_age_and_the_last_sweep(
        client, tmp_path, settings) -> None:
    settings.SUBMISSION_ALERT_AGE_SECONDS = 3600
    bench = make_benchmark(tmp_path)
    owner = get_user_model().objects.create_user("ada", "ada@example.org", "pw")
    old, new = (services.submission_create(benchmark=bench, owner=owner, file=upload(good_file()), model_name=m,
                                           enforce_limits=False, enqueue=False) for m in ("old-model", "new-model"))
    Submission.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(hours=2), status="judging",
                                                claim_token="host-a:4242:abc", attempts=2)
    client.force_login(get_user_model().objects.create_user("boss", is_staff=True))
    page = client.get(URL).content.decode()
    assert "Never ran." in page and "Messages waiting" in page and "is the sweeper's worker (with beat) running?" in page
    oldest = page.split('<table id="oldest">')[1].split("</table>")[0]
    assert f"#{old.pk}</a> old-model" in oldest and "new-model" not in oldest
    assert f"#{new.pk}</a> new-model on tiny (ada): queued" in page  # the oldest one waiting in the queue
    assert "over the alert age of 3600 s" in page and "host-a:4242:abc" in page and "attempt 2 of 3" in page
    SweepRun.objects.create(pk=1, ran_at=timezone.now(), resent=1, failed=0)
    page = client.get(URL).content.decode()
    assert "re-sent 1, failed 0" in page and "is the sweeper" not in page
    Submission.objects.filter(pk=old.pk).update(status="done")
    page = client.get(URL).content.decode()
    assert f"#{new.pk}</a> new-model" in page and "over the alert age" not in page
