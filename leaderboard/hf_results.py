"""A row's headline figures as Hugging Face ``.eval_results/*.yaml`` entries (spec interop.md, "Out: Hugging Face").

One file per figure kind, as the community names them: ``<bench>.yaml`` for text mode (no tools, no
``notes``) and ``<bench>_with_tools.yaml`` for adaptive mode (``notes: "With tools"``). Each holds a list of
one entry: ``dataset.id`` (the benchmark's Hub dataset, ``Benchmark.hf_dataset``), ``dataset.task_id``,
``value`` (the accuracy in percent, as the board shows it), ``date`` (when the row was made) and ``source``
linking back to the row. Hugging Face marks an entry "verified" only when its own jobs made it: these
are "source" entries, and say so by their link.
"""

from __future__ import annotations

import io
import zipfile
from typing import Any

import yaml
from django.conf import settings

from evaluation.models import Submission
from leaderboard.eee import row_url

FILES = {"text": "{bench}.yaml", "adaptive": "{bench}_with_tools.yaml"}
NOTES = {"adaptive": "With tools"}


class NotOnTheHub(Exception):
    """The benchmark names no Hub dataset: there is nothing an entry could point at."""


def entries(submission: Submission) -> dict[str, list[dict[str, Any]]]:
    """File name -> its entries, for the modes the row has an accuracy in."""
    benchmark = submission.benchmark
    if not benchmark.hf_dataset:
        raise NotOnTheHub(f"The benchmark {benchmark.name} names no Hugging Face dataset (its manifest's hf_dataset), "
                          "so its figures cannot be entries of a model's .eval_results.")
    out: dict[str, list[dict[str, Any]]] = {}
    modes = (submission.results or {}).get("modes") or {}
    for mode, pattern in FILES.items():
        overall = ((modes.get(mode) or {}).get("accuracy") or {}).get("overall") or {}
        if overall.get("percent") is None:
            continue  # no such figure on this row: no file, never a 0
        entry: dict[str, Any] = {
            "dataset": {"id": benchmark.hf_dataset, "task_id": benchmark.slug},
            "value": round(float(overall["percent"]), 2),
            "date": submission.created_at.date().isoformat(),
            "source": {"url": row_url(submission), "name": f"{benchmark.name} leaderboard ({settings.SITE_URL})"},
        }
        if mode in NOTES:
            entry["notes"] = NOTES[mode]
        out[pattern.format(bench=benchmark.slug)] = [entry]
    return out


def zip_bytes(submission: Submission) -> bytes:
    """``.eval_results/`` as a zip: unpack it at the root of the model's Hub repository."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, items in entries(submission).items():
            archive.writestr(f".eval_results/{name}", yaml.safe_dump(items, sort_keys=False, allow_unicode=True))
    return buffer.getvalue()
