"""Agent-X as released on Hugging Face: `data.json`, `toolmeta.json` and the media (releases.md).

`data.json` is an object keyed by task id, each value a list holding one task: `query`,
`file_path` (one path, or several separated by commas; videos among them), `query_type`,
`tool_metadata`, `reasoning_steps` (`step`, `task`, `tool`, `input`, `output`, `thought`;
sometimes wrapped in one more list) and `final_answer` (`value`, `justification`).
`toolmeta.json` declares the tools (`name`, `description`, `inputs`, `outputs`); they go into the
manifest's `tools`, where they are declared, not run. The reference chain is the steps' tools: a
step whose `input` is an object keeps it as the call's arguments, otherwise the call is name-only
(the raw steps stay in `meta`). Categories are the `query_type`s, one level (`--domain-of` groups).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from annotation.releases.base import Release, ReleaseError, ReleaseLine
from annotation.releases.common import json_safe, text
from annotation.releases.media import find_media
from annotation.releases.sniff import MEDIA_SUFFIXES, is_agentx_data, release_files
from annotation.taxonomy import ONE_LEVEL_DOMAIN

DATA, TOOLMETA = "data.json", "toolmeta.json"
MEDIA_HINT = ("Agent-X keeps its media (about 2 GB) in the Hugging Face dataset's files/ folder, beside data.json: "
              "download it and pass that folder with --images DIR")
NO_TOOL = {"", "none", "null", "n/a", "no tool", "-"}


def read(paths: list[Path], *, workdir: Path, images_dir: Path | None = None) -> Release:
    files = release_files(paths)
    data_file = next((f for f in files if f.name == DATA), None) or next(
        (f for f in files if f.suffix == ".json" and f.name != TOOLMETA and _is_data(f)), None
    )
    if data_file is None:
        raise ReleaseError(f"{', '.join(p.name for p in paths)}: no Agent-X {DATA} (an object of task id -> [task])")
    toolmeta = next((f for f in files if f.name == TOOLMETA), None) or (
        data_file.parent / TOOLMETA if (data_file.parent / TOOLMETA).is_file() else None
    )
    tasks = _load(data_file)
    if not isinstance(tasks, dict):
        raise ReleaseError(f"{data_file.name}: expected an object of task id -> [task], got a {type(tasks).__name__}")
    bases = [b for b in (images_dir, data_file.parent, data_file.parent / "files") if b is not None]
    root = _media_root(tasks, bases)
    lines = [_line(data_file.name, number, str(key), value, root) for number, (key, value) in enumerate(tasks.items(), start=1)]
    manifest: dict[str, Any] = {"name": "Agent-X", "figures": ["agentx"]}  # its Table 3 gets a tab
    warnings = []
    source = "the release"
    if toolmeta is not None:
        manifest["tools"] = _declared_tools(toolmeta)
        source = toolmeta.name  # the manifest's only checked part
    else:
        warnings.append(f"no {TOOLMETA} beside {data_file.name}: its tools are not declared, so calls to them cannot be checked")
    return Release(format="agentx", name=data_file.name, lines=lines, root=root, manifest=manifest,
                   manifest_source=source, warnings=warnings, media_hint=MEDIA_HINT)  # fmt: skip


def _is_data(path: Path) -> bool:
    try:
        value = _load(path)
    except ReleaseError:
        return False
    return isinstance(value, dict) and is_agentx_data(value)


def _load(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ReleaseError(f"{path.name} is not valid JSON ({exc})") from None


def _declared_tools(path: Path) -> list[dict]:
    """toolmeta.json as the manifest's declared tools: a list, {"tools": [...]}, or name -> entry."""
    value = _load(path)
    if isinstance(value, dict) and isinstance(value.get("tools"), list):
        value = value["tools"]
    if isinstance(value, dict):
        value = [{"name": name, **entry} if isinstance(entry, dict) else entry for name, entry in value.items()]
    if not isinstance(value, list):
        raise ReleaseError(f"{path.name}: expected a list of tools (name, description, inputs, outputs)")
    return value


def _paths(task: dict) -> list[str]:
    value = task.get("file_path")
    if isinstance(value, list):
        return [str(v).strip() for v in value if str(v).strip()]
    return [p.strip() for p in str(value or "").split(",") if p.strip()]


def _media_root(tasks: dict, bases: list[Path]) -> Path:
    """The first folder under which the first task's first file is found."""
    for value in tasks.values():
        task = value[0] if isinstance(value, list) and value and isinstance(value[0], dict) else None
        first = _paths(task)[:1] if task else []
        if first:
            for base in bases:
                if find_media(first[0], [base]) is not None or (base / first[0]).is_dir():
                    return base
            break
    return bases[0]


def _line(file_name: str, number: int, key: str, value: Any, root: Path) -> ReleaseLine:
    where = f"task {key!r} of {file_name}"
    if isinstance(value, dict):
        task = value
    elif isinstance(value, list) and len(value) == 1 and isinstance(value[0], dict):
        task = value[0]
    else:
        return ReleaseLine(number, where, None, [("", "expected a list holding one task object")])
    errors: list[tuple[str, str]] = []
    paths = _folders_expanded(_paths(task), root, errors)
    if not paths and not errors:
        errors.append(("file_path", "missing (required): the task's image(s) or video"))
    steps = task.get("reasoning_steps")
    if isinstance(steps, list) and len(steps) == 1 and isinstance(steps[0], list):
        steps = steps[0]  # sometimes wrapped in one more list
    if steps in (None, ""):
        steps = []
    if not isinstance(steps, list) or not all(isinstance(s, dict) for s in steps):
        errors.append(("reasoning_steps", "expected a list of step objects (step, task, tool, input, output, thought)"))
        steps = []
    final = task.get("final_answer")
    if isinstance(final, dict):
        answer, justification = text(final.get("value")), final.get("justification")
    else:
        answer, justification = text(final), None
    meta = {
        k: json_safe(v) for k, v in task.items() if k not in ("query", "file_path", "query_type", "final_answer")
    }  # tool_metadata and the raw reasoning_steps among them
    if justification:
        meta["justification"] = justification
    data = {
        "uid": key,
        "image": paths[0] if paths else None,
        "question": text(task.get("query")),
        "answer": answer,
        "domain": ONE_LEVEL_DOMAIN,
        "category": text(task.get("query_type")) or "Agent-X",
        "key_steps": [s for s in (_step_text(st) for st in steps) if s],
        "toolchain": _chain(steps),
        "split": "test",
        "source": "Agent-X",
        "meta": meta,
    }
    if len(paths) > 1 or (paths and Path(paths[0]).suffix.lower() in {".mp4", ".avi", ".mov", ".mkv", ".webm"}):
        data["images"] = paths
        data.pop("image")
    return ReleaseLine(number, where, data, errors)


def _folders_expanded(paths: list[str], root: Path, errors: list[tuple[str, str]]) -> list[str]:
    """A `file_path` naming a folder (a task's frames or pages) stands for the media in it, in natural
    order (`2.jpg` before `10.jpg`)."""
    out: list[str] = []
    for value in paths:
        folder = root / value
        if not folder.is_dir():
            out.append(value)
            continue
        found = sorted((p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in MEDIA_SUFFIXES
                        and not p.name.startswith(".")), key=lambda p: _natural(p.name))
        if not found:
            errors.append(("file_path", f"{value!r} is a folder with no image or video in it"))
        out += [str(p.relative_to(root)) for p in found]
    return out


def _natural(name: str) -> list:
    return [(0, int(part), "") if part.isdigit() else (1, 0, part.lower()) for part in re.split(r"(\d+)", name) if part]


def _step_text(step: dict) -> str | None:
    for key in ("task", "thought"):
        value = step.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def _chain(steps: list[dict]) -> list[dict]:
    """The steps' tools as the reference chain: with their arguments when every call's input is an
    object, else names only for the whole chain (a chain is all calls or all names; the inputs stay
    in meta.reasoning_steps)."""
    calls = [call for st in steps for call in _calls(st)]
    if all("args" in call for call in calls):
        return calls
    return [{"tool": call["tool"]} for call in calls]


def _calls(step: dict) -> list[dict]:
    """A step's tool(s) as reference calls: arguments when its input is an object, else the name only."""
    names = step.get("tool")
    if isinstance(names, str):
        names = [n.strip() for n in names.split(",")]
    if not isinstance(names, list):
        return []
    args = step.get("input")
    calls = []
    for name in names:
        if not isinstance(name, str) or name.strip().lower() in NO_TOOL:
            continue
        calls.append({"tool": name.strip(), "args": args} if isinstance(args, dict) and args else {"tool": name.strip()})
    return calls
