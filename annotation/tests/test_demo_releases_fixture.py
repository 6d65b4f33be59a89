"""The release-shaped demo files (fixtures/releases) are deterministic and carry the quirks they
claim; load_demo's own test (leaderboard/tests/test_load_demo.py) imports them."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from fixtures.releases.generate import write_all


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_two_runs_write_byte_identical_files(tmp_path: Path) -> None:
    first = write_all(tmp_path / "a")
    write_all(tmp_path / "b")
    assert [r.slug for r in first] == ["vtc-bench-demo", "mmreason-demo", "agent-x-demo"]
    a, b = _tree(tmp_path / "a"), _tree(tmp_path / "b")
    assert a == b  # a video, JPEGs, base64 PNGs and TSV/JSON text: nothing depends on the clock or hash seed
    assert sum(len(v) for v in a.values()) < 1_000_000  # small enough that load_demo stays fast


def test_the_files_carry_the_release_quirks(tmp_path: Path) -> None:
    vtc, mmreason, agentx = write_all(tmp_path)
    with vtc.path.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    assert len({r["index"] for r in rows}) == len(rows) == 27
    assert [int(r["index"]) for r in rows] != sorted(int(r["index"]) for r in rows)  # not the row order
    assert all(json.loads(r["model_tools_gt"]) for r in rows)  # name-only chains
    assert set(vtc.domain_of) == {r["category"] for r in rows}
    with mmreason.path.open(encoding="utf-8") as handle:
        mm = list(csv.DictReader(handle, delimiter="\t"))
    assert [r["image"] for r in mm if len(r["image"]) <= 64] == ["1"]  # one row names another row's image
    assert sum(r["split"] == "dev" for r in mm) == 9  # a public dev split to browse
    tasks = json.loads((agentx.path / "data.json").read_text(encoding="utf-8"))
    paths = [t[0]["file_path"] for t in tasks.values()]
    assert sum("," in p for p in paths) == 3 and sum(p.endswith(".mp4") for p in paths) == 2
    assert (agentx.path / "files" / "task03.jpg").read_bytes().startswith(b"\x89PNG")  # a PNG named .jpg
