"""What kind of file is this? A look at its first bytes and its name, for one clear message.

A prediction file of the wrong kind for the chosen format (an Excel table sent as JSON Lines,
Agent-X outputs sent as VTC-Bench results, a benchmark TSV sent as predictions) gets one
message saying what the file looks like and which format would read it, instead of a page
of per-line errors.
"""

from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass
from typing import IO

import orjson

HEAD_BYTES = 64 * 1024
TABLE_SUFFIXES = (".xlsx", ".tsv", ".csv", ".json")  # a VLMEvalKit result table, in a zip

LABELS = {
    "jsonl": "a prediction file in our format (JSON Lines with sample_id and mode)",
    "vlmevalkit": "a VLMEvalKit result file (.xlsx, .tsv, .csv or .json with index and prediction)",
    "vtcbench": "a VTC-Bench agent results file (results_*.jsonl with item_id and agent_answer)",
    "agentx": "an Agent-X output list (a JSON list of {\"<id>\": {reasoning_steps, final_answer}})",
    "tirbench": "a TIR-Bench response file (a JSON object {\"0\": response, ...})",
    "vstar": "V* Bench's eval_result.json ({\"direct_attributes\": [{image, option_chosen, ...}], ...})",
    "inspect": "an Inspect AI log (.eval: a zip of header.json and samples/<id>_epoch_<n>.json)",
    "lmms-eval": "lmms-eval samples (<date>_samples_<task>.jsonl with doc_id and filtered_resps)",
}
LMMS = "lmms-eval samples (JSON Lines with doc_id and filtered_resps)"
_TIR_KEY = re.compile(r'^\{\s*"\d+"\s*:')


@dataclass(frozen=True, slots=True)
class Kind:
    name: str
    description: str
    format: str | None = None  # the submission format that reads it, if any


def _key(text: str, key: str) -> bool:
    return f'"{key}"' in text


def sniff(head: bytes, filename: str = "") -> Kind:
    name = filename.lower()
    if not head.strip():
        return Kind("empty", "an empty file")
    if head.startswith(b"PK\x03\x04"):
        if name.endswith((".xlsx", ".xlsm")) or b"xl/" in head[:4096]:
            return Kind("xlsx", "an Excel workbook (.xlsx)", "vlmevalkit")
        return Kind("zip", "a zip archive")
    if head.startswith(b"PAR1"):
        return Kind("parquet", "a Parquet file (a benchmark release such as AdaptMMBench's, not predictions)")
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return Kind("utf16", "a UTF-16 text file (save it as UTF-8)")
    if head.startswith(b"%PDF"):
        return Kind("pdf", "a PDF document")
    if head.startswith((b"\x89PNG", b"\xff\xd8\xff", b"GIF8")) or head[8:12] == b"WEBP":
        return Kind("image", "an image")
    if head.startswith(b"\xd0\xcf\x11\xe0"):
        return Kind("xls", "an old Excel workbook (.xls); save it as .xlsx")
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff")
    stripped = text.lstrip()
    if stripped.startswith("["):
        return _json_document(stripped, "list")
    if stripped.startswith("{"):
        return _json_object(stripped)
    return _table(text, name)


def _json_document(text: str, container: str) -> Kind:
    """A JSON list, or a pretty-printed object (its first line is not a whole object): by its keys."""
    if container == "object" and (_key(text, "file_path") or _key(text, "tool_metadata") or _key(text, "query_type")):
        return Kind("agentx_data", "Agent-X's benchmark (data.json: query, file_path, tool_metadata): import it "
                                   "with import_benchmark --format agentx; it is not model outputs")
    if container == "object" and _key(text, "option_chosen"):
        return Kind("vstar", "V* Bench's eval_result.json (option_chosen)", "vstar")
    if container == "object" and _TIR_KEY.match(text) and not (_key(text, "prediction") and _key(text, "index")):
        if _key(text, "image_1") and not _key(text, "model_response"):
            return Kind("tirbench_data", "TIR-Bench's tasks (prompt, answer, image_1): import them with "
                                         "import_benchmark; they hold no model responses")
        return Kind("tirbench", "a TIR-Bench response file ({\"0\": response, ...})", "tirbench")
    if _key(text, "reasoning_steps") or _key(text, "final_answer"):
        return Kind("agentx", "an Agent-X output list (reasoning_steps, final_answer)", "agentx")
    if _key(text, "prediction") and _key(text, "index"):
        return Kind("vlmevalkit_json", "a VLMEvalKit result table saved as JSON (index, prediction)", "vlmevalkit")
    if _key(text, "sample_id"):
        return Kind(f"json_{container}", f"a JSON {container} of predictions in our format; write one prediction "
                                         "per line (JSON Lines) instead")
    return Kind("json", f"a JSON {container} with none of the fields a prediction file has")


def _json_object(text: str) -> Kind:
    first = text.split("\n", 1)[0]
    try:
        obj = orjson.loads(first)
    except orjson.JSONDecodeError:
        obj = None
    if obj is None and "\n" not in text and len(first) > 1:
        # The first line goes on past the part read (a long response, base64 images in a
        # conversation): one object per line all the same, known by its keys.
        if _key(first, "sample_id") and _key(first, "mode"):
            return Kind("ours", "JSON Lines in our prediction format", "jsonl")
        if _key(first, "item_id") or _key(first, "agent_answer"):
            return Kind("vtcbench", "VTC-Bench agent results (JSON Lines with item_id, agent_answer)", "vtcbench")
        if _key(first, "doc_id") and (_key(first, "filtered_resps") or _key(first, "resps")):
            return Kind("lmms_eval", LMMS, "lmms-eval")
    if isinstance(obj, dict):
        if "doc_id" in obj and ("filtered_resps" in obj or "resps" in obj):
            return Kind("lmms_eval", LMMS, "lmms-eval")
        if "sample_id" in obj:
            return Kind("ours", "JSON Lines in our prediction format", "jsonl")
        if "item_id" in obj or "agent_answer" in obj:
            return Kind("vtcbench", "VTC-Bench agent results (JSON Lines with item_id, agent_answer)", "vtcbench")
        if "prediction" in obj and "index" in obj and all(isinstance(v, dict) for v in obj.values()):
            return Kind("vlmevalkit_json", "a VLMEvalKit result table saved as JSON (index, prediction)", "vlmevalkit")
        if "uid" in obj and "question" in obj:
            return Kind("benchmark_jsonl", "a benchmark file in our format (uid, question): import it with "
                                           "import_benchmark; it is not a prediction file")
        if len(obj) == 1 and isinstance(next(iter(obj.values())), dict) and (
                "reasoning_steps" in next(iter(obj.values())) or "final_answer" in next(iter(obj.values()))):
            return Kind("agentx_line", "Agent-X outputs written one object per line; Agent-X's output is one "
                                       "JSON list of them")
        if obj and all(str(k).isdigit() for k in obj):
            return _json_document(text, "object")  # TIR-Bench's response file, minified
        if "option_chosen" in first:
            return _json_document(text, "object")
        fields = ", ".join(list(obj)[:6])
        return Kind("jsonl_other", f"JSON Lines whose first line has the fields {fields}")
    return _json_document(text, "object")


def _table(text: str, name: str) -> Kind:
    header = text.split("\n", 1)[0].rstrip("\r")
    sep = "\t" if "\t" in header else "," if "," in header else None
    if sep is None:
        return Kind("text", "plain text that is neither JSON nor a table")
    columns = {c.strip().strip('"').lower() for c in header.split(sep)}
    kind = "TSV" if sep == "\t" else "CSV"
    if "prediction" in columns:
        return Kind("vlmevalkit_table", f"a VLMEvalKit result table ({kind} with index and prediction)", "vlmevalkit")
    if "question" in columns and ("image" in columns or "image_path" in columns or "answer" in columns):
        return Kind("benchmark_table", f"a benchmark table ({kind} with question and answer columns, as VLMEvalKit "
                                       "and VTC-Bench release them): import it with import_benchmark; it has no "
                                       "'prediction' column, so it holds no predictions")
    shown = ", ".join(sorted(columns)[:6])
    return Kind("table", f"a {kind} table with the columns {shown}")


def zip_names(stream: IO[bytes]) -> list[str]:
    """The file names a zip holds (its central directory); empty when it is not a readable zip."""
    try:
        with zipfile.ZipFile(stream) as archive:
            return [i.filename for i in archive.infolist() if not i.is_dir()]
    except (zipfile.BadZipFile, OSError, ValueError):
        return []


def sniff_zip(names: list[str]) -> Kind:
    """A zip by what it holds: an Inspect log, VTC-Bench's results with their response lists, else a plain zip."""
    if "header.json" in names and any(n.startswith("samples/") for n in names):
        return Kind("inspect", "an Inspect AI log (.eval)", "inspect")
    if names and all(n.endswith(".eval") for n in names):
        return Kind("inspect_zip", f"a zip of {len(names)} Inspect AI log(s) (.eval)", "inspect")
    base = [n.rsplit("/", 1)[-1] for n in names]
    if any(b.startswith("results_") and b.endswith(".jsonl") for b in base):
        lists = sum(b.startswith("response_list_") and b.endswith(".json") for b in base)
        return Kind("vtcbench_zip", f"a zip of VTC-Bench agent results (results_*.jsonl and {lists} "
                                    "response_list_<id>.json files)", "vtcbench")
    tables = [b for b in base if b.endswith(TABLE_SUFFIXES)]
    if len(tables) == 1 and any(b.startswith("img_") for b in base):
        return Kind("vlmevalkit_zip", "a zip of a VLMEvalKit agent-mode result table and its tool images",
                    "vlmevalkit")
    if tables:
        return Kind("zip", "a zip archive (unzip it and submit the result file inside)")
    return Kind("zip", "a zip archive")


def wrong_kind_message(kind: Kind, chosen: str) -> str | None:
    """None when the file fits ``chosen``; else the one message for the person."""
    if kind.format == chosen:
        return None
    msg = f"This file does not look like {LABELS[chosen]}: it looks like {kind.description}."
    if kind.format == "jsonl":
        msg += " Submit it with the format 'jsonl' (our format, the default)."
    elif kind.format:
        msg += f" Submit it with the format '{kind.format}'."
    return re.sub(r"\.\.$", ".", msg)
