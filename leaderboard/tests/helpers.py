"""A hand-made benchmark, hand-made prediction files scored through the real pipeline, and clones.

Nine samples over two domains (and one aux-line sample): some need a recovery transform (not in
`w/o enh.`), some sit on the dev split. Each model's file says exactly which samples it answers
right in which mode and where it calls tools, so every figure can be checked by hand and against
``evaluation.metrics.score_submission``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.files.base import ContentFile
from django.utils import timezone

from annotation.models import Benchmark
from annotation.services import benchmark_import
from annotation.taxonomy import ADAPTMMBENCH_DOMAINS
from annotation.tests.benchmark_files import sample_line, write_benchmark
from evaluation import pipeline, services
from evaluation.judges import OfflineJudge
from evaluation.metrics import score_submission
from evaluation.models import PredictionResult, Submission
from evaluation.selectors import scoring_samples

SLUG = "hand"
ROTATE = [{"op": "rotate", "angle": 90}]
# uid: (domain, category, split, needs recovery, aux line)
SAMPLES = {
    "s1": ("real_world", "counting", "dev", True, False),
    "s2": ("real_world", "counting", "dev", False, False),
    "s3": ("real_world", "counting", "test", True, False),
    "s4": ("real_world", "spatial", "test", False, False),
    "s5": ("ocr", "chart", "dev", False, False),
    "s6": ("ocr", "chart", "test", False, False),
    "s7": ("ocr", "table", "test", True, False),
    "s8": ("ocr", "table", "dev", False, False),
    "s9": ("math", "geometry", "dev", False, True),
}
UIDS = tuple(SAMPLES)


def answer_of(uid: str) -> str:
    return str(UIDS.index(uid) + 1)


def make_benchmark(folder: Path, slug: str = SLUG) -> Benchmark:
    lines = []
    for uid, (domain, category, split, enhanced, aux) in SAMPLES.items():
        chain = [{"tool": "rotate", "args": {"angle": 90}, "input": "img0", "output": "img1"},
                 {"tool": "zoom_in", "args": {"bbox": [10, 10, 60, 40]}, "input": "img1", "output": "img2"}]
        lines.append(sample_line(uid, domain=domain, category=category, split=split, aux_line=aux,
                                 answer=answer_of(uid), transform=ROTATE if enhanced else [],
                                 toolchain=chain if enhanced else [{**chain[1], "input": "img0"}]))
    # An AdaptMMBench-like benchmark: its manifest declares the paper's five domains.
    benchmark_import(path=write_benchmark(folder, lines, manifest={"domains": ADAPTMMBENCH_DOMAINS}), slug=slug)
    return Benchmark.objects.get(slug=slug)


@dataclass(frozen=True)
class ModelSpec:
    """Which samples a model answers right per mode, and where its adaptive run calls tools."""

    name: str
    right: dict[str, tuple[str, ...]]
    tools: tuple[str, ...] = ()
    prices: tuple[float, float] | None = (1.0, 4.0)
    weights: str = "closed"
    tokens: int = 1000
    bad_zoom: tuple[str, ...] = ()  # adaptive calls that zoom far from the annotated region
    extra: dict = field(default_factory=dict)


def prediction_lines(spec: ModelSpec) -> list[dict]:
    out = []
    for mode, right in spec.right.items():
        for uid in UIDS:
            line: dict = {"sample_id": uid, "mode": mode,
                          "answer": f"<answer>{answer_of(uid) if uid in right else '99'}</answer>",
                          "usage": {"input_tokens": spec.tokens, "output_tokens": 100}}
            if mode == "adaptive" and uid in spec.tools:
                box = [200, 200, 210, 210] if uid in spec.bad_zoom else [10, 10, 60, 40]
                steps = [{"thought": "Zoom into the region.", "tool": {"name": "zoom_in", "args": {"bbox": box}}}]
                if SAMPLES[uid][3]:
                    steps.insert(0, {"thought": "Rotate the image upright.",
                                     "tool": {"name": "rotate", "args": {"angle": 90}}})
                line["steps"] = steps + [{"thought": "Count the squares."}]
                line["usage"] = {"input_tokens": spec.tokens * 2, "output_tokens": 150}
            out.append(line)
    return out


def jsonl(lines: list[dict]) -> bytes:
    return ("\n".join(json.dumps(x) for x in lines) + "\n").encode()


def owner():  # noqa: ANN201
    user, _ = get_user_model().objects.get_or_create(username="lb-staff", defaults={"is_staff": True})
    return user


def submit(benchmark: Benchmark, spec: ModelSpec, *, public: bool = True, refresh: bool = True) -> Submission:
    """A submission of ``spec``'s predictions, scored; with ``refresh``, the board's derived figures rebuilt after it
    (a fixture that submits several at once refreshes after the last: the rebuild reads the whole board)."""
    prices = {"price_input_per_mtok": spec.prices[0], "price_output_per_mtok": spec.prices[1]} if spec.prices else {}
    sub = services.submission_create(
        benchmark=benchmark, owner=owner(), file=ContentFile(jsonl(prediction_lines(spec)), name="p.jsonl"),
        model_name=spec.name, is_public=public, enforce_limits=False, enqueue=False, weights=spec.weights,
        organisation=f"{spec.name} Lab", **prices,
    )
    sub = pipeline.submission_process_sync(submission=sub)
    assert sub.status == "done", sub.failure_reason
    if refresh:
        refreshed(benchmark)
    return sub


def refreshed(benchmark: Benchmark) -> Benchmark:
    """What the worker does on the bump's commit (which a test's transaction never reaches): every derived
    kind's refresh (settings.RESULTS_CHANGED_TASKS). Pages only read what it built."""
    from evaluation.queueing import results_changed_run

    benchmark.refresh_from_db(fields=["results_version"])
    results_changed_run(benchmark_id=benchmark.pk)
    return benchmark


def library_report(benchmark: Benchmark, spec: ModelSpec):  # noqa: ANN201 - SubmissionReport
    """What the scoring library says about the same file, computed without the pipeline or the database rows."""
    from evaluation.pipeline import tool_hooks

    samples, _ = scoring_samples(benchmark=benchmark)
    resolve, validate = tool_hooks(benchmark)
    return score_submission(samples, prediction_lines(spec), judge=OfflineJudge(), tool_validator=validate,
                            prices=spec.prices, resolve_tool=resolve)


ALPHA = ModelSpec("Alpha", {"text": ("s2", "s5", "s9"), "adaptive": ("s1", "s2", "s3", "s5", "s6", "s8"),
                            "oracle": ("s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8")},
                  tools=("s1", "s3", "s6", "s7", "s8"), bad_zoom=("s7",), weights="open", prices=(2.0, 8.0))
BETA = ModelSpec("Beta", {"text": ("s1", "s2", "s5"), "adaptive": ("s2", "s5", "s6")}, tools=("s1", "s4"),
                 prices=(0.1, 0.4), tokens=500)
GAMMA = ModelSpec("Gamma", {"text": ("s2", "s4", "s5", "s6")}, prices=None, weights="")


def clone(template: Submission, n: int, *, prefix: str = "Clone") -> list[Submission]:
    """``n`` finished public copies of a scored submission, rows and all, in a few bulk queries."""
    now = timezone.now()
    subs = Submission.objects.bulk_create([
        Submission(benchmark=template.benchmark, owner=template.owner, model_name=f"{prefix} {i:04d}",
                   organisation="Clones", weights="open" if i % 2 else "closed", is_public=True,
                   status="done", results=template.results, file=template.file.name, scorer_version="x",
                   judge_name=template.judge_name, price_input_per_mtok=1.0 + i, price_output_per_mtok=2.0,
                   finished_at=now, scored_at=now)
        for i in range(n)
    ])
    rows = list(PredictionResult.objects.filter(submission=template).values())
    PredictionResult.objects.bulk_create([
        PredictionResult(**{**r, "id": None, "submission_id": sub.pk}) for sub in subs for r in rows
    ], batch_size=2000)
    services.benchmark_results_bump(benchmark_id=template.benchmark_id)  # as the pipeline does when one finishes
    refreshed(template.benchmark)
    return subs


def tab_index(benchmark: Benchmark) -> dict:
    """The wide tabs' index as the board's last build left it: every stored order's rows in order (what the pages
    read, a range each), every index row's fields (ids aside) and the payload's counts, marks and windows."""
    from evaluation.derived import derived_read
    from leaderboard.models import TabIndexRow
    from leaderboard.wide_tabs import ORDER_FIELDS

    rows = TabIndexRow.objects.filter(benchmark=benchmark).order_by("order", *ORDER_FIELDS).values()
    orders: dict[str, list[tuple[str, str]]] = {}
    fields = {}
    for row in rows:
        row.pop("id")
        orders.setdefault(row["order"], []).append((row["key"], row["mode"]))
        fields[(row["order"], row["key"], row["mode"])] = row
    payload = derived_read(benchmark, "board").payload
    return {"orders": orders, "rows": fields, "tabs": payload["tab_index"], "windows": payload["tab_windows"]}


def assert_same_tab_index(refreshed: dict, rebuilt: dict) -> None:
    """The index a refresh left equals a full build's, field by field: the rows in each order, each row's fields,
    the counts and marks; each window the refresh moved holds the full build's best values with their counts
    (as many as it kept: a window loses values when rows leave, and is read again when it runs out)."""
    assert refreshed["orders"].keys() == rebuilt["orders"].keys()
    for order, rows in rebuilt["orders"].items():
        assert refreshed["orders"][order] == rows, order
    assert refreshed["rows"] == rebuilt["rows"]
    assert refreshed["tabs"] == rebuilt["tabs"]
    assert refreshed["windows"].keys() == rebuilt["windows"].keys()
    for tab, modes in rebuilt["windows"].items():
        assert refreshed["windows"][tab].keys() == modes.keys(), tab
        for mode, entry in modes.items():
            mine = refreshed["windows"][tab][mode]
            assert mine["n"] == entry["n"], (tab, mode)
            for kept, full in zip(mine["columns"], entry["columns"], strict=True):
                if full is None:
                    assert kept is None
                    continue
                assert len(kept[1]) >= 2 or kept[0], (tab, mode, kept)
                assert kept[1] == full[1][:len(kept[1])], (tab, mode, kept, full)
                assert not kept[0] or full[0] and kept[1] == full[1], (tab, mode, kept, full)


CHANGES = ("publish", "unpublish", "rescore", "finish", "delete")


def random_change(rng: Any, subs: list[Submission], new_spec: Callable[[str], ModelSpec], *, keep: int = 20,
                  unpublish: Callable[[Submission], bool] | None = None) -> str:
    """One random change to the board, through the services, as visitors and owners make them: a publish, an
    unpublish (of a submission ``unpublish`` accepts, when given), a re-score sent back to the queue, the new
    results of a queued one (``new_spec(name)``'s predictions, scored), or a deletion while more than ``keep``
    are left. Returns which kind it made."""
    for sub in subs:
        sub.refresh_from_db()
    live = [s for s in subs if s.deleted_at is None]
    choices = {
        "publish": [s for s in live if s.status == "done" and not s.is_public],
        "unpublish": [s for s in live if s.is_public and (unpublish is None or unpublish(s))],
        "rescore": [s for s in live if s.status == "done"],
        "finish": [s for s in live if s.status == "queued"],  # a re-score's new results, from a new file
        "delete": live if len(live) > keep else [],
    }
    kind = rng.choice([k for k, v in choices.items() if v])
    sub = rng.choice(choices[kind])
    if kind in ("publish", "unpublish"):
        services.submission_set_public(submission=sub, public=kind == "publish")
    elif kind == "rescore":
        services.submission_rescore(submission=sub, enqueue=False)
    elif kind == "finish":
        sub.file.save("p.jsonl", ContentFile(jsonl(prediction_lines(new_spec(sub.model_name)))))
        pipeline.submission_process_sync(submission=sub)
    else:
        services.submission_delete(submission=sub)
    return kind
