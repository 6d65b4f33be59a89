"""A release's router split (SPLITS/*.jsonl) instead of the seeded one."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from routers.models import RouterSubmission
from routers.pool import pool_load
from routers.tests import helpers

pytestmark = pytest.mark.django_db


def write_splits(folder, train, dev, test, extra: str = "") -> None:  # noqa: ANN001
    folder.mkdir(exist_ok=True)
    for name, uids in (("train", train), ("dev", dev), ("test", test)):
        (folder / f"{name}.jsonl").write_text("\n".join(json.dumps({"sample_id": u}) for u in uids) + "\n")
    if extra:
        with (folder / "test.jsonl").open("a") as fh:
            fh.write(extra)


def test_the_release_split_replaces_the_seeded_one(benchmark, tmp_path):
    pool_load(benchmark)  # the seeded split is drawn first
    folder = tmp_path / "SPLITS"
    write_splits(folder, helpers.UIDS[:10], helpers.UIDS[10:12], helpers.UIDS[12:18])  # q18, q19 in no file
    out = io.StringIO()
    call_command("import_router_splits", helpers.SLUG, str(folder), stdout=out)
    assert out.getvalue().strip() == "10 train, 2 dev, 6 test"
    data = pool_load(benchmark)
    assert data.track.split_source == "release"
    assert [data.samples[i].uid for i in data.rows("test")] == helpers.UIDS[12:18]
    assert "q19" not in data.split and len(data.pool.samples) == 18  # unlisted samples stay out


def test_every_problem_names_file_and_line_and_nothing_changes(benchmark, tmp_path):
    before = pool_load(benchmark).split
    folder = tmp_path / "SPLITS"
    write_splits(folder, ["q00", "nope"], ["q00"], ["q01"], extra="{bad\n")
    err = io.StringIO()
    with pytest.raises(CommandError, match="3 problem"):
        call_command("import_router_splits", helpers.SLUG, str(folder), stderr=err)
    assert err.getvalue().splitlines() == [
        f"train.jsonl line 2: sample_id 'nope' is not a sample of {helpers.SLUG}",
        "dev.jsonl line 1: sample_id 'q00' is already in train.jsonl line 1",
        "test.jsonl line 2: not a JSON object with a sample_id",
    ]
    assert pool_load(benchmark).split == before


def test_refused_once_routers_were_submitted(benchmark, tmp_path):
    RouterSubmission.objects.create(benchmark=benchmark, owner=helpers.user(), name="r", file="x")
    folder = tmp_path / "SPLITS"
    write_splits(folder, helpers.UIDS[:14], helpers.UIDS[14:16], helpers.UIDS[16:])
    with pytest.raises(CommandError):
        call_command("import_router_splits", helpers.SLUG, str(folder), stderr=io.StringIO())
    assert pool_load(benchmark).track.split_source == "seed"
