"""Loads the results a benchmark's authors reported (leaderboard/data/*.json) into ReportedResult rows.

The benchmark entry is created with the paper's taxonomy and no samples; its rows are badged
"reported by the authors" wherever they appear and never used as routing baselines.
"""

from __future__ import annotations

import json
from pathlib import Path

from django.db import transaction

from annotation.models import Benchmark, Category, Domain
from annotation.taxonomy import ADAPTMMBENCH_DOMAINS
from evaluation.services import benchmark_results_bump
from leaderboard.models import ReportedResult

DATA = Path(__file__).resolve().parent / "data" / "adaptmmbench_reported.json"
# Agent-X's ten figures (its Tables 4 and 7, GPT-4o judge), shown on the Agent-X tab (figures "agentx").
AGENTX_DATA = Path(__file__).resolve().parent / "data" / "agentx_reported.json"
FIGURE_KEYS = ("accuracy", "mode_selection", "process", "aux_line", "agentx", "judge", "table")


def reported_results_load(*, path: Path = DATA) -> tuple[Benchmark, int]:
    """Create or update the benchmark entry and one row per model; safe to run twice."""
    data = json.loads(path.read_text(encoding="utf-8"))
    meta = data["benchmark"]
    with transaction.atomic():
        benchmark, _ = Benchmark.objects.update_or_create(slug=meta["slug"], defaults={
            "name": meta["name"], "version": meta["version"], "description": meta["description"],
            "citation": meta["citation"], "figures": meta.get("figures", [])})
        # AdaptMMBench's taxonomy unless the file says otherwise (Agent-X's reported entry has none).
        domains = ADAPTMMBENCH_DOMAINS if meta.get("taxonomy", "adaptmmbench") == "adaptmmbench" else {}
        for position, (slug, spec) in enumerate(domains.items()):
            domain, _ = Domain.objects.update_or_create(benchmark=benchmark, slug=slug,
                                                        defaults={"name": spec["name"], "position": position})
            for cpos, (cslug, cname) in enumerate(spec["categories"].items()):
                Category.objects.update_or_create(domain=domain, slug=cslug, defaults={"name": cname, "position": cpos})
        for position, model in enumerate(data["models"]):
            figures = {k: model[k] for k in FIGURE_KEYS if k in model}
            figures["supports_enhancement"] = model.get("supports_enhancement", False)
            ReportedResult.objects.update_or_create(benchmark=benchmark, model_name=model["name"], defaults={
                "organisation": model.get("organisation", ""), "weights": model.get("weights", ""),
                "position": position, "figures": figures, "citation": meta["citation"], "source": data["source"]})
        benchmark_results_bump(benchmark_id=benchmark.pk, submission_ids=())  # no submission changed
    return benchmark, len(data["models"])
