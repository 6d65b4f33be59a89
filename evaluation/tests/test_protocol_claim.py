"""A row uploaded from a `run_model` file links to the protocol it ran under (issue 35, "every harness-made row
links to the protocol it ran under"): run_model writes the protocol version and page on every line
(evaluation/run_protocol.py, protocol_stamp; harness/loop.py), the scorer keeps the version when every line
names the same one (metrics/run_lines.py), and the board's row, the model page and leaderboard.json show it
as the file's claim, not verified (evaluation/provenance.py, file_claim)."""

from __future__ import annotations

import json
import re
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.urls import reverse

from evaluation.models import Submission
from evaluation.harness.prompts import FAMILIES
from evaluation.run_inputs import benchmark_family, write_simulated_key
from evaluation.run_protocol import protocol_facts, protocol_version
from evaluation.tests.harness_fixtures import simulated_model
from evaluation.tests.submission_helpers import make_benchmark

pytestmark = pytest.mark.django_db


def _row(html: str, pk: int) -> str:
    found = re.search(rf'<tr [^>]*data-key="s{pk}">(.*?)</tr>', html, re.S)
    assert found, pk
    return found.group(1)


def test_a_run_model_file_uploaded_links_to_its_protocol_as_the_files_claim(client, tmp_path: Path) -> None:
    get_user_model().objects.create_user("runner", "runner@example.org", "pw")
    benchmark = make_benchmark(tmp_path / "tiny")
    key = write_simulated_key(benchmark, tmp_path / "key.jsonl")
    out = tmp_path / "p.jsonl"
    with simulated_model(key, tmp_path / "log.jsonl") as url:
        call_command("run_model", benchmark.slug, "--endpoint", url, "--model", "sim", "--modes", "text",
                     "--out", str(out), "--cache", str(tmp_path / "c.sqlite3"), "--no-progress", stdout=StringIO())
    version = protocol_version(protocol_facts(benchmark))
    page = f"/b/{benchmark.slug}/protocol/"
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert {(x["run"]["protocol_version"], x["run"]["protocol_page"]) for x in lines} == {(version, page)}
    # The same file, one line without the version (edited, or merged from elsewhere): no claim.
    partial = tmp_path / "partial.jsonl"
    del lines[0]["run"]["protocol_version"]
    partial.write_text("".join(json.dumps(x) + "\n" for x in lines))
    for path, name in ((out, "Claimer"), (partial, "Mixed")):
        call_command("submit", benchmark.slug, str(path), "--model", name, "--user", "runner", "--public", "--sync",
                     stdout=StringIO())
    claimer, mixed = Submission.objects.get(model_name="Claimer"), Submission.objects.get(model_name="Mixed")
    assert claimer.provenance == "file" and claimer.results["protocol_claimed"] == version
    assert mixed.results["protocol_claimed"] is None

    html = client.get(f"/b/{benchmark.slug}/").content.decode()
    row = _row(html, claimer.pk)
    assert f'href="{page}"' in row and f"protocol <code>{version}</code>" in row
    assert "the file&#x27;s claim, not verified" in row and 'data-provenance="file"' in row
    assert "protocol-link" not in _row(html, mixed.pk)
    model_page = client.get(reverse("leaderboard:model", args=[benchmark.slug, claimer.pk])).content.decode()
    prov = re.search(r'<dd id="model-provenance" data-provenance="file">(.*?)</dd>', model_page, re.S).group(1)
    assert f"protocol <code>{version}</code>" in prov and "not verified" in prov

    rows = {r["model"]: r for r in json.loads(client.get(f"/b/{benchmark.slug}/leaderboard.json").content)["rows"]}
    assert rows["Claimer"]["protocol"] == {"version": version, "page": page,
                                           "source": "the uploaded file's claim, not verified"}
    assert rows["Mixed"]["protocol"] is None


def test_a_run_on_another_prompt_family_claims_no_protocol(tmp_path: Path) -> None:
    benchmark = make_benchmark(tmp_path / "tiny")
    key = write_simulated_key(benchmark, tmp_path / "key.jsonl")
    out = tmp_path / "p.jsonl"
    family = next(f for f in FAMILIES if f != benchmark_family(benchmark))
    with simulated_model(key, tmp_path / "log.jsonl") as url:
        call_command("run_model", benchmark.slug, "--endpoint", url, "--model", "sim", "--modes", "text",
                     "--family", family, "--out", str(out), "--cache", str(tmp_path / "c.sqlite3"), "--no-progress",
                     stdout=StringIO())
    assert all("protocol_version" not in json.loads(x)["run"] for x in out.read_text().splitlines())
