"""Files in the shapes of VLMEvalKit's agent mode and lmms-eval's ``--log_samples``, written for the tests
from our own predictions (layouts read from their source, 2026-08: ``vlmeval/api/arm_thinker.py``,
``vlmeval/inference.py``; ``lmms_eval/evaluator.py``). Our code, our rows."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import zipfile
from collections.abc import Mapping, Sequence
from typing import Any

STAMP = "20260801120000"


def agent_conversation(line: dict[str, Any], *, media: int = 1, tagged: bool = False) -> tuple[list[dict], dict[str, bytes]]:
    """The OpenAI-style conversation VLMEvalKit's agent keeps for one of our adaptive lines, with its images
    saved as VLMEvalKit saves them (``<stamp>_<uid>/img_NNNN.png``); returns (conversation, files)."""
    uid = line["sample_id"]
    folder = f"{STAMP}_{hashlib.sha256(uid.encode()).hexdigest()[:6]}"
    files: dict[str, bytes] = {}

    def image(data: bytes) -> dict[str, Any]:
        name = f"{folder}/img_{len(files):04d}.png"
        files[name] = data
        return {"type": "image_url", "image_url": {"url": name}}

    conversation: list[dict[str, Any]] = [
        {"role": "system", "content": "You can call tools."},
        {"role": "user", "content": [*(image(f"{uid}-medium-{k}".encode()) for k in range(media)),
                                     {"type": "text", "text": "Question?"}]}]
    steps = line.get("steps") or []
    for n, step in enumerate(steps):
        tool = step.get("tool")
        if tool is None:
            conversation.append({"role": "assistant", "content": step.get("thought", "")})
            continue
        arguments = dict(tool.get("args") or {})
        if tool.get("input"):
            arguments["image"] = tool["input"]
        if tagged:
            call = json.dumps({"name": tool["name"], "arguments": arguments})
            conversation.append({"role": "assistant", "content": f"{step.get('thought', '')}\n<tool_call>{call}</tool_call>"})
        else:
            conversation.append({"role": "assistant", "content": step.get("thought", ""),
                                 "tool_calls": [{"id": f"c{n}", "type": "function", "function": {
                                     "name": tool["name"], "arguments": json.dumps(arguments)}}]})
        made = f"{uid}-{line['mode']}-{tool.get('output')}".encode()
        conversation.append({"role": "tool", "tool_call_id": f"c{n}",
                             "content": [{"type": "text", "text": f"{tool['name']} made an image"}, image(made)]})
    return conversation, files


def agent_table(lines: Sequence[dict[str, Any]], *, fmt: str = "tsv", tagged: bool = False) -> tuple[bytes, dict[str, bytes]]:
    """A result table with ``extra_records`` (a TSV: pandas writes the dict as its Python repr; a JSON: as
    JSON) and the image files its conversations name."""
    rows = []
    files: dict[str, bytes] = {}
    for index, line in enumerate(lines):
        conversation, saved = agent_conversation(line, tagged=tagged)
        files.update(saved)
        calls = sum(1 for s in line.get("steps") or [] if s.get("tool"))
        rows.append({"index": line["sample_id"], "question": "Question?", "prediction": line["answer"],
                     "extra_records": {"tool_call_count": calls, "conversation": conversation}, "n": index})
    if fmt == "json":
        return json.dumps(rows).encode(), files
    out = io.StringIO()
    writer = csv.writer(out, delimiter="\t")
    writer.writerow(["index", "question", "prediction", "extra_records"])
    for row in rows:
        writer.writerow([row["index"], row["question"], row["prediction"], repr(row["extra_records"])])
    return out.getvalue().encode(), files


def agent_zip(table: bytes, files: Mapping[str, bytes], *, table_name: str = "M_Bench.tsv",
              dataset: str = "Bench", model: str = "M") -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(f"outputs/{model}/{table_name}", table)
        for name, data in files.items():
            archive.writestr(f"temp/{dataset}/{model}/{name}", data)
    return buffer.getvalue()


def lmms_samples(lines: Sequence[dict[str, Any]], order: Sequence[str], gold: Mapping[str, str], *,
                 agentic: bool = False, same_resps: bool = False) -> bytes:
    """``<date>_samples_<task>.jsonl``: one line per document, ``doc_id`` its position in the split."""
    position = {uid: i for i, uid in enumerate(order)}
    out = []
    for line in lines:
        uid = line["sample_id"]
        raw = line.get("response") or f"The answer is {line['answer']}."
        if agentic:
            calls = sum(1 for s in line.get("steps") or [] if s.get("tool"))
            raw = json.dumps({"answer": raw, "agentic_trace_mode": "full",
                              "agentic_rounds": [{"round": k, "tool_calls": 1} for k in range(calls)]})
        usage = line.get("usage") or {}
        obj: dict[str, Any] = {
            "doc_id": position[uid], "doc": {"question": "Question?"}, "target": gold[uid],
            "arguments": ["Question?"], "filtered_resps": [line["answer"] if not same_resps else raw],
            "token_counts": [{"input_tokens": usage.get("input_tokens"), "output_tokens": usage.get("output_tokens"),
                              "reasoning_tokens": 3}],
            "doc_hash": hashlib.sha256(uid.encode()).hexdigest(), "input_media": [f"{uid}.png"],
            "exact_match": 1.0 if line["answer"] == gold[uid] else 0.0}
        if not same_resps:
            obj["resps"] = [[raw]]
        out.append(obj)
    return "".join(json.dumps(o) + "\n" for o in out).encode()
