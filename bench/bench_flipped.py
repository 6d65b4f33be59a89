""""What flipped" on the compare page at VL-RouterBench's size: two submissions of 30,540 samples each.

Builds a scratch SQLite database under VAR_DIR (a fresh temporary folder unless given; or the database
of DATABASE_URL): one benchmark of --samples samples (default 30,540; 20 % dev, 80 % test; five domains),
two public done submissions with a PredictionResult row per sample and mode (text, adaptive, oracle; seeded
so they disagree on about a fifth of the samples), and their board entries built by the real refresh
(``leaderboard.services.entries_sync``), as the worker does after a submission finishes. Then it measures,
--repeat times each, the median and the worst:

1. ``leaderboard.flipped.flipped`` alone (the discordant cells of the adaptive mode, the first page);
2. GET /b/<slug>/compare/?a=..&b=.. through Django's handler (test client): the paired tests, the per-domain
   chart and the flipped list, for an anonymous visitor (dev split) and for staff (every split);
3. the same with a domain filter and the second page.

    .venv/bin/python bench/bench_flipped.py [--samples 30540] [--repeat 7]
    VAR_DIR=/tmp/flip-bench .venv/bin/python bench/bench_flipped.py   # keep (and reuse) the scratch data

Not part of the test suite. The figure is recorded in docs/performance.md ("What flipped").
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("VAR_DIR", tempfile.mkdtemp(prefix="bench-flipped-"))
os.environ.setdefault("DATABASE_URL", f"sqlite:///{Path(os.environ['VAR_DIR']).resolve() / 'db.sqlite3'}")
os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.base"
os.environ.setdefault("ALLOWED_HOSTS", "testserver,localhost")
SLUG = "flip-size"
MODES = ("text", "adaptive", "oracle")


def generate(n: int) -> tuple[int, int]:
    """The scratch benchmark and two scored submissions, written in bulk; returns their ids."""
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.utils import timezone

    call_command("migrate", verbosity=0)
    from annotation.models import Benchmark, Category, Domain, Sample
    from evaluation.models import PredictionResult, Submission
    from leaderboard.services import entries_sync

    subs = list(Submission.objects.filter(benchmark__slug=SLUG).order_by("pk").values_list("pk", flat=True))
    if Sample.objects.filter(benchmark__slug=SLUG).count() == n and len(subs) == 2:
        print(f"reusing the {n:,} samples under {os.environ['VAR_DIR']}", flush=True)
        return subs[0], subs[1]
    Submission.objects.filter(benchmark__slug=SLUG).delete()
    Benchmark.objects.filter(slug=SLUG).delete()
    started = time.perf_counter()
    benchmark = Benchmark.objects.create(slug=SLUG, name="RouterBench-sized", version="1.0")
    categories = []
    for d in range(5):
        domain = Domain.objects.create(benchmark=benchmark, slug=f"d{d}", name=f"Domain {d}", position=d)
        categories += [Category.objects.create(domain=domain, slug=f"d{d}c{c}", name=f"Category {c}", position=c)
                       for c in range(4)]
    Sample.objects.bulk_create([
        Sample(benchmark=benchmark, category=categories[i % len(categories)], uid=f"rb-{i:06d}",
               image=f"benchmarks/{SLUG}/none.png", image_sha256=f"{i:064x}", width=8, height=8,
               question=f"Question {i}?", answer=str(i), answer_type="number",
               split="dev" if i % 5 == 0 else "test", position=i, source="bench")
        for i in range(n)], batch_size=2000)
    sample_ids = list(Sample.objects.filter(benchmark=benchmark).order_by("pk").values_list("pk", flat=True))
    owner, _ = get_user_model().objects.get_or_create(username="bench-flipped", defaults={"is_staff": True})
    rng = random.Random(26)
    now = timezone.now()
    ids = []
    for name, skill in (("Model A", 0.62), ("Model B", 0.55)):
        right = {m: [rng.random() < skill for _ in sample_ids] for m in MODES}
        results = {"modes": {m: {"accuracy": {"overall": {"value": sum(r) / n, "count": sum(r), "n": n}}}
                             for m, r in right.items()}}
        sub = Submission.objects.create(benchmark=benchmark, owner=owner, model_name=name, is_public=True,
                                        status="done", results=results, file="bench/none.jsonl",
                                        finished_at=now, scored_at=now, heartbeat_at=now)
        PredictionResult.objects.bulk_create([
            PredictionResult(submission=sub, sample_id=pk, mode=m, correct=right[m][i], decided_by="rule")
            for m in MODES for i, pk in enumerate(sample_ids)], batch_size=5000)
        ids.append(sub.pk)
    entries_sync(benchmark, ids)
    print(f"generated {n:,} samples and 2 x {n * len(MODES):,} results in {time.perf_counter() - started:.0f} s "
          f"under {os.environ['VAR_DIR']}", flush=True)
    return ids[0], ids[1]


def timed(call, repeat: int) -> tuple[float, float]:  # noqa: ANN001
    """(median, worst) wall time in ms over ``repeat`` calls."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times), max(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=30_540)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.cache import cache
    from django.test import Client

    from annotation.models import Benchmark
    from evaluation.models import Submission
    from leaderboard import flipped

    a_id, b_id = generate(args.samples)
    benchmark = Benchmark.objects.get(slug=SLUG)
    a, b = Submission.objects.get(pk=a_id), Submission.objects.get(pk=b_id)
    found = flipped.flipped(benchmark, a, b, every_split=True)
    assert found is not None, "the board entries are missing"
    print(f"adaptive mode: {found.counts['a']:,} samples only A right, {found.counts['b']:,} only B right "
          f"(every split)", flush=True)
    staff = Client()
    staff.force_login(get_user_model().objects.get(username="bench-flipped"))
    anonymous = Client()
    url = f"/b/{SLUG}/compare/?a={a_id}&b={b_id}"

    def get(client: Client, query: str = "") -> None:
        cache.clear()  # the compare page is not cached; the benchmark's page lookup is, so clear it too
        response = client.get(url + query)
        assert response.status_code == 200 and b'id="flipped-table"' in response.content, response.status_code

    rows = [
        ("flipped() alone, every split", lambda: flipped.flipped(benchmark, a, b, every_split=True)),
        ("GET compare, anonymous (dev split)", lambda: get(anonymous)),
        ("GET compare, staff (every split)", lambda: get(staff)),
        ("GET compare, staff, domain filter, page 2", lambda: get(staff, "&domain=d1&page=2")),
    ]
    get(staff)  # warm up: imports, templates
    print(f"\n{args.samples:,} samples per submission, {args.repeat} runs each (ms)")
    print(f"{'':44} {'median':>8} {'worst':>8}")
    for label, call in rows:
        median, worst = timed(call, args.repeat)
        print(f"{label:44} {median:8.0f} {worst:8.0f}", flush=True)


if __name__ == "__main__":
    main()
