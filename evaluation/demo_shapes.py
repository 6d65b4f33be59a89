"""Simulated predictions written in the authors' output shapes, for the release-shaped demo benchmarks.

``evaluation.simulator`` writes our prediction lines; these functions write the same predictions
as each author's tooling would (releases.md), so ``load_demo`` submits them through the
converters (``submit --format vlmevalkit|vtcbench|agentx``) exactly as a user would:

- ``vtcbench_results``: VTC-Bench's agent log ``results_<timestamp>.jsonl``: ``item_id``,
  ``agent_answer``, ``full_response`` and the ``conversation``, whose assistant messages call
  tools by their display names ("Zoom in", "Color Filter") with JSON-string arguments;
- ``vlmevalkit_table``: VLMEvalKit's ``<model>_<dataset>.xlsx`` (or ``.tsv``): the dataset's
  columns minus ``image``, plus ``prediction``;
- ``agentx_outputs``: Agent-X's output list ``[{task id: {query, filename, reasoning_steps:
  [{step, task, tool_used, tool_output, thought, input}], final_answer}}]``; every ``unparseable``-th
  task has ``reasoning_steps: ""`` as an unparseable reply does.

Nothing here is a real model's output.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from openpyxl import Workbook

from annotation.imagetools import REGISTRY

ANSWER = re.compile(r"<answer>(.*?)</answer>", re.S)
DISPLAY = {"zoom_in": "Zoom in", "histogram_eq": "Histogram Eq"}  # the rest: Title Case of the name
# Arguments the simulated agent passes: the registry's example, or one that fits every demo image.
ARGS = {"zoom_in": {"bbox": [20, 20, 150, 120]}}


def _answer(line: Mapping[str, Any]) -> str:
    found = ANSWER.search(line["answer"])
    return found.group(1) if found else line["answer"]


def _display(name: str) -> str:
    return DISPLAY.get(name, name.replace("_", " ").title())


def _args(tool: Mapping[str, Any]) -> dict:
    if tool.get("args"):
        return dict(tool["args"])
    name = tool["name"]
    return dict(ARGS.get(name) or (REGISTRY[name].example if name in REGISTRY else {}) or {})


def vtcbench_results(lines: Iterable[Mapping[str, Any]], samples: Mapping[str, Mapping[str, Any]]) -> bytes:
    out = []
    for line in lines:
        sample = samples[line["sample_id"]]
        answer = _answer(line)
        conversation: list[dict] = [
            {"role": "system", "content": "You are a visual agent. Use the tools, then give <answer>...</answer>."},
            {"role": "user", "content": [{"type": "text", "text": sample["question"]},
                                         {"type": "image_url", "image_url": {"url": "images/..."}}]},
        ]
        calls = 0
        for step in line["steps"]:
            tool = step.get("tool")
            if tool is None:
                continue
            calls += 1
            call_id = f"call_{line['sample_id']}_{calls}"
            conversation.append({"role": "assistant", "content": step.get("thought", ""), "tool_calls": [
                {"id": call_id, "type": "function",
                 "function": {"name": _display(tool["name"]), "arguments": json.dumps(_args(tool))}}]})
            conversation.append({"role": "tool", "tool_call_id": call_id, "content": f"ok: new image img{calls}"})
        final = f"{line['steps'][-1].get('thought', '')} <answer>{answer}</answer>".strip()
        conversation.append({"role": "assistant", "content": final})
        out.append({"item_id": line["sample_id"], "category": sample["category"], "ground_truth": sample["answer"],
                    "agent_answer": answer, "full_response": final, "conversation": conversation,
                    "usage": {"prompt_tokens": line["usage"]["input_tokens"],
                              "completion_tokens": line["usage"]["output_tokens"]}})
    return "".join(json.dumps(o, ensure_ascii=False) + "\n" for o in out).encode()


def vlmevalkit_table(lines: Iterable[Mapping[str, Any]], samples: Mapping[str, Mapping[str, Any]], *,
                     xlsx: bool) -> bytes:
    header = ["index", "question", "answer", "A", "B", "C", "D", "category", "prediction"]
    rows = []
    for line in lines:
        s = samples[line["sample_id"]]
        options = s.get("options") or {}
        rows.append([int(s["uid"]) if s["uid"].isdigit() else s["uid"], s["question"], s["answer"],
                     *(options.get(k, "") for k in "ABCD"), s["category"], _answer(line)])
    if xlsx:
        book = Workbook()
        sheet = book.active
        sheet.append(header)
        for row in rows:
            sheet.append(row)
        buffer = io.BytesIO()
        book.save(buffer)
        return buffer.getvalue()
    text = io.StringIO()
    writer = csv.writer(text, delimiter="\t", lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return text.getvalue().encode()


def agentx_outputs(lines: Iterable[Mapping[str, Any]], samples: Mapping[str, Mapping[str, Any]], *,
                   unparseable: int = 0) -> bytes:
    items = []
    for n, line in enumerate(lines, start=1):
        sample = samples[line["sample_id"]]
        steps: list[dict] | str = []
        for k, step in enumerate(line["steps"], start=1):
            tool = step.get("tool")
            entry = {"step": k, "task": step.get("thought", ""), "tool_used": tool["name"] if tool else "None",
                     "tool_output": "(simulated output)" if tool else "", "thought": step.get("thought", "")}
            if tool and tool.get("args"):
                entry["input"] = dict(tool["args"])
            steps.append(entry)
        if unparseable and n % unparseable == 0:
            steps = ""  # how Agent-X records a reply it could not parse
        items.append({line["sample_id"]: {"query": sample["question"], "filename": f"task{line['sample_id']}",
                                          "reasoning_steps": steps,
                                          "final_answer": {"value": _answer(line),
                                                           "justification": "(simulated justification)"}}})
    return json.dumps(items, indent=2, ensure_ascii=False).encode()
