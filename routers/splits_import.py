"""A release's router split (VL-RouterBench's SPLITS/{train,dev,test}.jsonl, one {"sample_id"} a line)."""

from __future__ import annotations

import json
from pathlib import Path

from django.db import transaction

from annotation.models import Benchmark
from evaluation.metrics.routing import SPLITS
from routers.models import RouterSplitSample, RouterSubmission, RouterTrack
from routers.pool import default_mode, release_ids

MAX_ERRORS = 50


class SplitsRejected(Exception):
    def __init__(self, errors: list[str]) -> None:
        super().__init__("; ".join(errors))
        self.errors = errors


def router_splits_import(*, benchmark: Benchmark, folder: Path) -> dict[str, int]:
    """Replace the benchmark's router split by the release's; all or nothing, every problem named by file and line.

    Refused once a router has been submitted: its figures stand on the split it was scored on.
    """
    uids = release_ids(benchmark)  # a sample's uid, or VL-RouterBench's "<Dataset>/<id>" for it
    errors: list[str] = []
    seen: dict[int, str] = {}
    rows: list[tuple[int, str]] = []
    for split in SPLITS:
        path = folder / f"{split}.jsonl"
        if not path.is_file():
            errors.append(f"{path.name}: missing (the folder needs train.jsonl, dev.jsonl and test.jsonl)")
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                uid = json.loads(line).get("sample_id")
            except (json.JSONDecodeError, AttributeError):
                errors.append(f"{path.name} line {n}: not a JSON object with a sample_id")
                continue
            uid = str(uid) if uid is not None else ""
            pk = uids.get(uid)
            if pk is None:
                errors.append(f"{path.name} line {n}: sample_id {uid!r} "
                              + ("matches two samples" if uid in uids else f"is not a sample of {benchmark.slug}"))
            elif pk in seen:
                errors.append(f"{path.name} line {n}: sample_id {uid!r} is already in {seen[pk]}")
            else:
                seen[pk] = f"{path.name} line {n}"
                rows.append((pk, split))
            if len(errors) >= MAX_ERRORS:
                break
    if errors:
        raise SplitsRejected(errors)
    if RouterSubmission.objects.filter(benchmark=benchmark).exists():
        raise SplitsRejected([f"{benchmark.slug} already has router submissions: their figures stand on the "
                              "current split, which therefore cannot change"])
    with transaction.atomic():
        track, _ = RouterTrack.objects.select_for_update().get_or_create(
            benchmark=benchmark, defaults={"mode": default_mode(benchmark)})
        RouterSplitSample.objects.filter(track=track).delete()
        RouterSplitSample.objects.bulk_create([RouterSplitSample(track=track, sample_id=pk, split=sp) for pk, sp in rows])
        track.split_source = "release"
        track.save(update_fields=["split_source"])
    return {s: sum(1 for _, sp in rows if sp == s) for s in SPLITS}
