"""What kind of file is this? Recognised by content (magic bytes, first line, columns), then name.

A benchmark file of the wrong kind gets one message naming what it looks like, never fifty
"not valid JSON" lines. Plain Python: no Django import.
"""

from __future__ import annotations

import csv
import io
import json
import zipfile
from dataclasses import dataclass
from pathlib import Path

from annotation.releases.base import ReleaseError

HEAD_BYTES = 64 * 1024
JSON_DOCUMENT_MAX_BYTES = 512 * 1024**2  # a whole-file JSON (Agent-X's data.json) is parsed to tell its shape
VTC_TSV_NAMES = ("VTC-Bench.tsv", "VTC-Bench_GTToolChain.tsv")
MEDIA_SUFFIXES = {".png", ".jpg", ".jpeg", ".webp", ".gif", ".bmp", ".tif", ".tiff", ".mp4", ".avi", ".mov", ".mkv", ".webm"}


@dataclass(frozen=True, slots=True)
class Kind:
    name: str  # jsonl, parquet, tsv, csv, zip, xlsx, pdf, image, video, json-object, json-array, ...
    label: str  # "a TSV file"
    hint: str = ""  # what to do with it
    format: str | None = None  # the release format that reads it, when one does
    columns: tuple[str, ...] = ()

    def message(self, path: Path) -> str:
        return f"{path.name}: this is {self.label}" + (f"; {self.hint}" if self.hint else "")


def magic_kind(head: bytes) -> Kind | None:
    """Binary kinds told by their first bytes (images also by `media.image_kind`)."""
    if head.startswith(b"PAR1"):
        return Kind("parquet", "a parquet file", "import it with --format adaptmmbench", "adaptmmbench")
    if head.startswith(b"%PDF"):
        return Kind("pdf", "a PDF document",
                    "a benchmark is a .jsonl file, a release's .parquet/.tsv files or Agent-X's data.json")
    if head.startswith((b"\x89PNG", b"\xff\xd8\xff", b"GIF8", b"BM", b"II*\x00", b"MM\x00*")) or (
        head[:4] == b"RIFF" and head[8:12] == b"WEBP"
    ):
        return Kind("image", "an image", "import the benchmark file that refers to it (--images DIR names their folder)")
    if head[4:8] == b"ftyp" or (head[:4] == b"RIFF" and head[8:11] == b"AVI") or head.startswith(b"\x1aE\xdf\xa3"):
        return Kind("video", "a video", "import the benchmark file that refers to it")
    if head.startswith(b"\x1f\x8b"):
        return Kind("gzip", "a gzip archive", "unpack it first, or zip the folder")
    if head.startswith(b"7z\xbc\xaf"):
        return Kind("7z", "a 7-Zip archive", "unpack it first, or zip the folder")
    if len(head) > 262 and head[257:262] == b"ustar":
        return Kind("tar", "a tar archive", "unpack it first, or zip the folder")
    return None


UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def text_encoding(path: Path) -> str:
    """How a text file is read: UTF-16 when it starts with its byte-order mark (Excel's "Unicode Text"),
    else UTF-8 (a UTF-8 byte-order mark skipped)."""
    with path.open("rb") as handle:
        return "utf-16" if handle.read(2) in UTF16_BOMS else "utf-8-sig"


def kind_of_file(path: Path) -> Kind:
    with path.open("rb") as handle:
        head = handle.read(HEAD_BYTES)
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return _zip_kind(path)
    kind = magic_kind(head)
    if kind is not None:
        return kind
    utf16 = head.startswith(UTF16_BOMS)
    if b"\x00" in head and not utf16:
        return Kind("binary", "a binary file of unknown kind")
    text = (head[: len(head) // 2 * 2].decode("utf-16", errors="replace") if utf16
            else head.decode("utf-8", errors="replace")).lstrip("\ufeff")
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    if not first:
        return Kind("empty", "an empty file")
    if utf16 and "\t" not in first:  # only a table is read in UTF-16 (Excel saves tables so)
        return Kind("utf16", "UTF-16 text", "save it as UTF-8")
    if first.startswith("{"):
        if _is_vtcbench_results(first):
            return Kind("predictions", "VTC-Bench agent results (results_*.jsonl: item_id, agent_answer), a prediction "
                        "file, not a benchmark", f"submit it with `manage.py submit SLUG {path.name} --format vtcbench "
                        "--model NAME --user USER`")
        try:
            value = json.loads(first)
        except json.JSONDecodeError:
            value = None
        if isinstance(value, dict):
            if path.stat().st_size <= len(first.encode()) + 2:  # the whole file on one line (minified JSON)
                kind = _agentx_kind(value) or _thinking_kind(value, path)
                if kind is not None:
                    return kind
            if "sample_id" in value and "uid" not in value:
                return Kind("predictions", "a prediction file in our format (JSON Lines with sample_id), not a benchmark",
                            f"submit it with `manage.py submit SLUG {path.name} --model NAME --user USER`")
            return Kind("jsonl", "JSON Lines", format="jsonl")
    if first.startswith(("{", "[")):
        return _json_document_kind(path)
    if "\t" in first:
        return _tsv_kind(path, first)
    if "," in first:
        return Kind("csv", "a CSV file",
                    "a VLMEvalKit dataset is a TSV: save it tab-separated and import it with --format vlmevalkit")
    return Kind("text", "a text file that is not JSON Lines", "each line of a benchmark file is one JSON object")


def _zip_kind(path: Path) -> Kind:
    try:
        with zipfile.ZipFile(path) as zf:
            names = zf.namelist()
    except zipfile.BadZipFile:
        return Kind("zip", "a zip archive")  # unpacking names what is wrong with it
    if any(n.startswith("xl/") for n in names):
        return Kind(
            "xlsx", "an Excel workbook (.xlsx)",
            f"a VLMEvalKit result table is a prediction file: submit it with `manage.py submit SLUG {path.name} --format "
            "vlmevalkit --model NAME --user USER`; a benchmark is imported from its .tsv",
        )  # fmt: skip
    if any(n.startswith("word/") for n in names):
        return Kind("docx", "a Word document")
    return Kind("zip", "a zip archive")


def _json_document_kind(path: Path) -> Kind:
    if path.stat().st_size > JSON_DOCUMENT_MAX_BYTES:
        return Kind("json", "a large JSON document", "our format is JSON Lines: one sample object per line")
    try:
        value = json.loads(path.read_text(encoding="utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        return Kind("json-broken", f"a file that starts like JSON but does not parse ({exc})")
    if isinstance(value, dict):
        kind = _agentx_kind(value) or _thinking_kind(value, path)
        if kind is not None:
            return kind
        return Kind("json-object", "a JSON object spread over several lines",
                    "our format is JSON Lines: one sample object per line")
    if isinstance(value, list):
        kind = _thinking_kind(value, path)
        if kind is not None:
            return kind
        if value and is_agentx_toolmeta({"tools": value}):
            return Kind("agentx-toolmeta", "Agent-X's toolmeta.json (the tools, no tasks)",
                        "import data.json, or the folder holding both, with --format agentx")
        if value and all(isinstance(v, dict) and len(v) == 1 for v in value[:20]):
            return Kind("agentx-output", "an Agent-X output list (predictions), not a benchmark",
                        f"submit it with `manage.py submit SLUG {path.name} --format agentx --model NAME --user USER`")
        return Kind("json-array", "a JSON array", "our format is JSON Lines: one sample object per line, not a list")
    return Kind("json", "a JSON value that is not an object", "our format is JSON Lines: one sample object per line")


def is_vstar_annotation(value: dict) -> bool:
    """A V* Bench annotation (one per image): question, options, target_object, bbox."""
    return {"question", "options", "target_object", "bbox"} <= set(value) and isinstance(value.get("options"), list)


def _tir_tasks(value: object) -> list:
    if isinstance(value, list):
        return value[:50]
    if isinstance(value, dict) and value and all(str(k).isdigit() for k in list(value)[:50]):
        return list(value.values())[:50]
    return []


def _is_tir_task(task: object) -> bool:
    return isinstance(task, dict) and {"prompt", "answer", "image_1"} <= set(task) and ("task" in task or "category" in task)


def is_tirbench_data(value: object) -> bool:
    """TIR-Bench's tasks: a list (or an object keyed "0", "1", ...) of task, prompt, answer, image_1, and no
    model_response (which makes it their response file: predictions)."""
    tasks = _tir_tasks(value)
    return bool(tasks) and all(_is_tir_task(t) and "model_response" not in t for t in tasks)


def is_tirbench_responses(value: object) -> bool:
    """TIR-Bench's response file: {"0": text, ...}, or its tasks with model_response."""
    if not isinstance(value, dict) or not value or not all(str(k).isdigit() for k in list(value)[:50]):
        return False
    items = list(value.values())[:50]
    return all(isinstance(t, str) for t in items) or all(isinstance(t, dict) and "model_response" in t for t in items)


def _thinking_kind(value: object, path: Path) -> Kind | None:
    """V* Bench's annotation and TIR-Bench's JSON, and TIR-Bench's response file (predictions)."""
    if isinstance(value, dict) and is_vstar_annotation(value):
        return Kind("vstar-annotation", "a V* Bench annotation", format="vstar")
    if is_tirbench_data(value):
        return Kind("tirbench-data", "TIR-Bench's JSON", format="tirbench")
    if is_tirbench_responses(value):
        return Kind("predictions", "a TIR-Bench response file ({\"0\": response, ...}), a prediction file, not a "
                    "benchmark", f"submit it with `manage.py submit SLUG {path.name} --format tirbench --model NAME "
                    "--user USER`")
    return None


def is_agentx_data(value: dict) -> bool:
    """Task id -> [task]: most values are one-task lists with a `query` (a bad task is the reader's to name)."""
    tasks = list(value.values())[:50]
    shaped = [t for t in tasks if isinstance(t, list) and t and isinstance(t[0], dict) and "query" in t[0]]
    return bool(shaped) and len(shaped) * 2 >= len(tasks)


def _agentx_kind(value: dict) -> Kind | None:
    if is_agentx_data(value):
        return Kind("agentx-data", "Agent-X's data.json", format="agentx")
    if _is_gta_dataset(value):
        return Kind("agentx-gta", "Agent-X's dataset.json (the OpenCompass GTA shape)",
                    "import data.json, or the folder holding it, with --format agentx")
    if is_agentx_toolmeta(value):
        return Kind("agentx-toolmeta", "Agent-X's toolmeta.json (the tools, no tasks)",
                    "import data.json, or the folder holding both, with --format agentx")
    return None


def _is_gta_dataset(value: dict) -> bool:
    tasks = list(value.values())[:20]
    return bool(tasks) and all(isinstance(t, dict) and "dialogs" in t and "files" in t for t in tasks)


def is_agentx_toolmeta(value: dict) -> bool:
    if isinstance(value.get("tools"), list):
        tools = value["tools"]
        return bool(tools) and all(isinstance(t, dict) and "name" in t and "inputs" in t for t in tools)
    tools = list(value.values())[:20]  # name -> entry
    return bool(tools) and all(isinstance(t, dict) and "inputs" in t for t in tools)


def _is_vtcbench_results(first: str) -> bool:
    """A VTC-Bench results line (its first line may run past the part read: a long response)."""
    return '"item_id"' in first and ('"agent_answer"' in first or '"conversation"' in first) and '"uid"' not in first


def _tsv_kind(path: Path, first: str) -> Kind:
    columns = tuple(next(csv.reader(io.StringIO(first), delimiter="\t")))
    lowered = {c.strip().lower() for c in columns}
    if "prediction" in lowered:
        return Kind("predictions", "a VLMEvalKit result table (index, prediction), a prediction file, not a benchmark",
                    f"submit it with `manage.py submit SLUG {path.name} --format vlmevalkit --model NAME --user USER`")
    if path.name in VTC_TSV_NAMES or "model_tools_gt" in lowered:
        return Kind("tsv", "VTC-Bench's TSV", format="vtcbench", columns=columns)
    if "question" in lowered and ("index" in lowered or "image" in lowered or "image_path" in lowered):
        if {"id", "category", "image"} <= lowered and path.name.lower().startswith("vtc"):
            return Kind("tsv", "VTC-Bench's TSV", format="vtcbench", columns=columns)
        return Kind("tsv", "a VLMEvalKit TSV", format="vlmevalkit", columns=columns)
    return Kind("tsv", "a TSV file", "import it with --format vlmevalkit or vtcbench", columns=columns)


def release_files(paths: list[Path]) -> list[Path]:
    """The files to look at: the paths themselves, and the files in the folders (media left out)."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files += sorted(
                (p for p in path.rglob("*")
                 if p.is_file() and p.suffix.lower() not in MEDIA_SUFFIXES and not p.name.startswith(".")),
                key=lambda p: (len(p.parts), str(p)),
            )
        else:
            files.append(path)
    return files


def detect_format(paths: list[Path]) -> str:
    """The release format of `paths` (one file, several, or folders), or ReleaseError naming what they are."""
    if len(paths) == 1 and paths[0].is_file():
        kind = kind_of_file(paths[0])
        if kind.format is None:
            raise ReleaseError(kind.message(paths[0]))
        return kind.format
    files = release_files(paths)
    kinds = [(f, kind_of_file(f)) for f in files if f.suffix.lower() in {".jsonl", ".parquet", ".tsv", ".json"}]
    formats = [k.format for _, k in kinds if k.format is not None]
    for fmt in ("jsonl", "vtcbench", "agentx", "tirbench", "vstar", "adaptmmbench", "vlmevalkit"):
        if fmt in formats:
            return fmt
    where = ", ".join(p.name for p in paths)
    if kinds:
        return_kind = kinds[0]
        raise ReleaseError(return_kind[1].message(return_kind[0]))
    raise ReleaseError(f"{where}: holds no benchmark file (a .jsonl, AdaptMMBench's .parquet, a .tsv, or Agent-X's data.json)")
