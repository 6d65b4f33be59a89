"""leaderboard.wide_tabs.tables_update: the wide tabs' index a refresh updates by what changed (the changed
submissions' rows written again, the gone ones' deleted, the marks moved by them) equals the index built whole
from every submission's results (``tables_build``), field by field, after each change: a re-score with new
predictions, an unpublish, a publish, a deletion.
The 200-change sequence test (test_board_refresh_sequence.py, slow) runs the same comparison at length.
Runs on SQLite, and on PostgreSQL with DATABASE_URL set.
"""

from __future__ import annotations

import random

import pytest
from django.core.files.base import ContentFile
from django.db import transaction

from evaluation import pipeline
from evaluation.derived import derived_read
from evaluation.models import DerivedState
from evaluation.services import submission_delete, submission_rescore, submission_set_public
from leaderboard import wide_tabs
from leaderboard.services import board_refresh
from leaderboard.tests import helpers
from leaderboard.tests.test_board_refresh_sequence import _spec

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("window", [wide_tabs.WINDOW, 2])
def test_the_index_assembled_after_each_change_equals_the_index_built_whole(tmp_path, monkeypatch, window) -> None:
    """With windows of 2 values, a change that takes a column's best or second-best row away empties its window,
    and the refresh reads the column again (checked: it did)."""
    from leaderboard import services

    monkeypatch.setattr(wide_tabs, "WINDOW", window)
    read_again: list[str] = []
    windows = wide_tabs._windows

    def counted(benchmark, tab, rows):  # noqa: ANN001, ANN202
        read_again.append(tab)
        return windows(benchmark, tab, rows)

    updated: list[set[int]] = []

    def tables_update(benchmark, changed, gone):  # noqa: ANN001, ANN202 - the refresh's own, recorded
        updated.append(set(changed))
        return wide_tabs.tables_update(benchmark, changed, gone)

    monkeypatch.setattr(services, "tables_update", tables_update)
    rng = random.Random(7)
    benchmark = helpers.make_benchmark(tmp_path / "bench")
    subs = [helpers.submit(benchmark, _spec(rng, f"Model {i}"), refresh=False) for i in range(5)]
    board_refresh(benchmark_id=benchmark.pk)

    def finish(sub) -> None:  # noqa: ANN001 - a re-score's new results, from a new file
        submission_rescore(submission=sub, enqueue=False)
        sub.refresh_from_db()
        sub.file.save("p.jsonl", ContentFile(helpers.jsonl(helpers.prediction_lines(_spec(rng, sub.model_name)))))
        pipeline.submission_process_sync(submission=sub)

    changes = [lambda: finish(subs[0]), lambda: finish(subs[3]),
               lambda: submission_set_public(submission=subs[1], public=False),
               lambda: submission_set_public(submission=subs[1], public=True),
               lambda: submission_delete(submission=subs[2])]
    for change in changes:
        before = helpers.tab_index(benchmark)
        change()
        with monkeypatch.context() as m:
            m.setattr(wide_tabs, "_windows", counted)
            board_refresh(benchmark_id=benchmark.pk)
        refreshed = helpers.tab_index(benchmark)
        assert refreshed["orders"] != before["orders"]  # the change is seen on the tabs
        with transaction.atomic():  # the full build's index, compared, then the refresh's put back
            DerivedState.objects.filter(benchmark=benchmark, kind="board").update(
                payload={**derived_read(benchmark, "board").payload, **wide_tabs.tables_build(benchmark)})
            helpers.assert_same_tab_index(refreshed, helpers.tab_index(benchmark))
            transaction.set_rollback(True)
    assert len(updated) == len(changes) and subs[0].pk in updated[0]  # each refresh updated the index
    assert read_again if window == 2 else not read_again, read_again  # windows of 8 never ran out here
