"""One set of generated predictions, written in our format and in each author's output shape.

The shapes follow ../shared/spec/releases.md (our own small rows, nothing copied from the
releases). A generated prediction is plain data: sample id, answer, the steps as (thought,
tool display name, canonical name, args), token usage. ``ours_*`` writes what the converter
should produce; the ``*_file`` writers write the author's shape of the same predictions.
"""

from __future__ import annotations

import csv
import io
import json
import random
from dataclasses import dataclass, field

from openpyxl import Workbook

# (display name as the authors write it, our registry's canonical name, args)
TOOLS = (("Rotate", "rotate", {"angle": 90}), ("Zoom in", "zoom_in", {"bbox": [10, 10, 60, 40]}),
         ("Histogram Eq", "histogram_eq", {}), ("OCR", "OCR", {}))


@dataclass
class Generated:
    uid: str
    answer: str
    steps: list[tuple[str, str | None, str | None, dict]] = field(default_factory=list)
    usage: tuple[int, int] = (1000, 100)


def generate(uids: tuple[str, ...], answers: dict[str, str], *, seed: int = 7, tools: bool = True) -> list[Generated]:
    rng = random.Random(seed)
    out = []
    for uid in uids:
        answer = answers[uid] if rng.random() < 0.6 else str(rng.randint(50, 99))
        steps = []
        if tools:
            for k in range(rng.randint(0, 3)):
                display, name, args = rng.choice(TOOLS)
                steps.append((f"Step {k} on {uid}.", display, name, dict(args)))
            steps.append(("So the answer follows.", None, None, {}))
        out.append(Generated(uid, answer, steps, (rng.randint(500, 3000), rng.randint(50, 400))))
    return out


def _jsonl(objs: list[dict]) -> bytes:
    return "".join(json.dumps(o, ensure_ascii=False) + "\n" for o in objs).encode()


# ---------------------------------------------------------------------------------- VLMEvalKit

def ours_text(preds: list[Generated]) -> bytes:
    return _jsonl([{"sample_id": p.uid, "mode": "text", "answer": p.answer} for p in preds])


def _vlm_rows(preds: list[Generated], id_column: str = "index") -> tuple[list[str], list[list]]:
    header = ["index", "question", "answer", "A", "B", "category", "prediction", "extract", "score"]
    if id_column != "index":
        header.insert(1, id_column)
    rows = []
    for n, p in enumerate(preds):
        index = p.uid if id_column == "index" else 1000 + n
        row = [int(index) if str(index).isdigit() else index, f"Question {p.uid}?", "gold", "", "", "counting",
               p.answer, p.answer, 0]
        if id_column != "index":
            row.insert(1, p.uid)
        rows.append(row)
    return header, rows


def vlmevalkit_xlsx(preds: list[Generated], id_column: str = "index", numeric_answers: bool = False) -> bytes:
    header, rows = _vlm_rows(preds, id_column)
    book = Workbook()
    sheet = book.active
    sheet.append(header)
    for row in rows:
        if numeric_answers:  # a spreadsheet keeps "3" as the number 3
            i = header.index("prediction")
            row[i] = float(row[i]) if row[i].isdigit() else row[i]
        sheet.append(row)
    buf = io.BytesIO()
    book.save(buf)
    return buf.getvalue()


def vlmevalkit_table(preds: list[Generated], delimiter: str = "\t") -> bytes:
    header, rows = _vlm_rows(preds)
    buf = io.StringIO()
    writer = csv.writer(buf, delimiter=delimiter, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buf.getvalue().encode()


def vlmevalkit_json(preds: list[Generated], orient: str = "records") -> bytes:
    header, rows = _vlm_rows(preds)
    records = [dict(zip(header, r)) for r in rows]
    if orient == "records":
        return json.dumps(records).encode()
    return json.dumps({c: {str(i): r[c] for i, r in enumerate(records)} for c in header}).encode()


# ---------------------------------------------------------------------------------- VTC-Bench

def _ours_steps(p: Generated, with_args: bool = True) -> list[dict]:
    steps = []
    for thought, _display, name, args in p.steps:
        step: dict = {"thought": thought}
        if name:
            step["tool"] = {"name": name, "args": args if with_args else {}}
        steps.append(step)
    return steps


def ours_adaptive(preds: list[Generated], *, usage: bool = True, with_args: bool = True) -> bytes:
    out = []
    for p in preds:
        obj = {"sample_id": p.uid, "mode": "adaptive", "answer": p.answer, "steps": _ours_steps(p, with_args),
               "turns": len(p.steps)}
        if usage:
            obj["usage"] = {"input_tokens": p.usage[0], "output_tokens": p.usage[1]}
        out.append(obj)
    return _jsonl(out)


def vtcbench_results(preds: list[Generated]) -> bytes:
    lines = []
    for p in preds:
        conversation: list[dict] = [{"role": "system", "content": "You are a visual agent."},
                                    {"role": "user", "content": [{"type": "text", "text": f"Question {p.uid}?"},
                                                                 {"type": "image_url",
                                                                  "image_url": {"url": "data:image/png;base64,AAAA"}}]}]
        for k, (thought, display, _name, args) in enumerate(p.steps):
            msg: dict = {"role": "assistant", "content": thought}
            if display:
                call_id = f"call_{p.uid}_{k}"
                msg["tool_calls"] = [{"id": call_id, "type": "function",
                                      "function": {"name": display, "arguments": json.dumps(args)}}]
                conversation.append(msg)
                conversation.append({"role": "tool", "tool_call_id": call_id, "content": "done: new image img1"})
            else:
                msg["content"] = f"{thought} <answer>{p.answer}</answer>"
                conversation.append(msg)
        lines.append({"item_id": p.uid, "category": "counting", "ground_truth": "gold", "agent_answer": p.answer,
                      "full_response": f"... <answer>{p.answer}</answer>", "conversation": conversation,
                      "usage": {"prompt_tokens": p.usage[0], "completion_tokens": p.usage[1]}})
    return _jsonl(lines)


def ours_vtcbench(preds: list[Generated]) -> bytes:
    """The same predictions as ours: the last thought carries the answer tag, as the agent wrote it."""
    out = []
    for p in preds:
        steps = _ours_steps(p)
        if steps and "tool" not in steps[-1]:
            steps[-1]["thought"] += f" <answer>{p.answer}</answer>"
        out.append({"sample_id": p.uid, "mode": "adaptive", "answer": p.answer, "steps": steps,
                    "turns": len(p.steps), "usage": {"input_tokens": p.usage[0], "output_tokens": p.usage[1]}})
    return _jsonl(out)


# ---------------------------------------------------------------------------------- Agent-X

def agentx_outputs(preds: list[Generated], unparseable: tuple[str, ...] = ()) -> bytes:
    items = []
    for p in preds:
        if p.uid in unparseable:
            steps: list | str = ""
        else:
            steps = []
            for k, (thought, display, _name, args) in enumerate(p.steps, start=1):
                step = {"step": k, "task": f"task {k}", "tool_used": display or "None", "tool_output": "some text",
                        "thought": thought}
                if args:
                    step["input"] = args
                steps.append(step)
        items.append({p.uid: {"query": f"Question {p.uid}?", "filename": f"{p.uid}.jpg", "reasoning_steps": steps,
                              "final_answer": {"value": p.answer, "justification": "Because it is so."}}})
    return json.dumps(items, indent=2).encode()


def ours_agentx(preds: list[Generated], unparseable: tuple[str, ...] = ()) -> bytes:
    out = []
    for p in preds:
        steps = [] if p.uid in unparseable else _ours_steps(p)
        out.append({"sample_id": p.uid, "mode": "adaptive", "answer": p.answer, "steps": steps,
                    "turns": len(steps)})
    return _jsonl(out)
