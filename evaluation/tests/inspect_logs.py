"""Inspect AI ``.eval`` logs written for the tests, in the layout of ``log/_recorders/eval.py`` (read from
inspect_ai's source, 2026-08; our own code, no Inspect installed): a zip of ``header.json``,
``samples/<id>_epoch_<n>.json``, ``summaries.json`` and ``reductions.json``.

Two generations: ``old`` (deflate entries, model inputs written whole in each ``ModelEvent``) and
``new`` (zstd entries, the compression method 93 that Python reads only from 3.14, so the zip is
assembled here by hand; model inputs pooled in ``events_data.messages`` and named by ``input_refs``).
Both move images to ``attachments`` (``attachment://<hash>``), as Inspect's ``condense_sample`` does.

``log_of_lines`` turns our harness's prediction lines into such a log: the user message with the
sample's media, each turn's assistant message with its ``tool_calls`` (the image reference in the
``image`` argument), a ``ToolEvent`` per call whose result holds the call's output image, the
following inputs of the model (so the images it was sent), usage and cost per model (a grader's
beside them), the score with its extracted answer, limits and errors.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import struct
import time
import zipfile
import zlib
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

GRADER = "openai/grader-model"


def data_uri(data: bytes, media_type: str = "image/png") -> str:
    return f"data:{media_type};base64,{base64.b64encode(data).decode()}"


class _Attachments:
    """Long strings moved out of a sample, as Inspect's condense_sample does (images always)."""

    def __init__(self) -> None:
        self.store: dict[str, str] = {}

    def ref(self, text: str) -> str:
        key = hashlib.md5(text.encode()).hexdigest()  # noqa: S324  # Inspect keys attachments by mm3; any hash will do
        self.store[key] = text
        return f"attachment://{key}"

    def image(self, data: bytes) -> dict[str, Any]:
        return {"type": "image", "image": self.ref(data_uri(data)), "detail": "auto"}


def sample_of_line(line: dict[str, Any], *, media: Sequence[bytes], tool_images: Mapping[str, bytes],
                   model: str, question: str = "Question?", pooled: bool, mode_in_metadata: bool = False,
                   epoch: int = 1) -> dict[str, Any]:
    """One ``EvalSample`` (as JSON) of one of our prediction lines."""
    att = _Attachments()
    user = {"id": "u0", "role": "user", "source": "input",
            "content": [*(att.image(m) for m in media), {"type": "text", "text": question}]}
    messages: list[dict[str, Any]] = [{"id": "s0", "role": "system", "content": "You may call tools."}, user]
    events: list[dict[str, Any]] = []
    inputs: list[list[dict[str, Any]]] = []  # each model call's input
    sent_after: dict[int, list[bytes]] = {}
    steps = line.get("steps") or []
    turns: list[tuple[str, list[dict[str, Any]]]] = []
    for step in steps:
        if step.get("tool") is not None and turns and not step.get("thought") and turns[-1][1]:
            turns[-1][1].append(step["tool"])
        else:
            turns.append((step.get("thought") or "", [step["tool"]] if step.get("tool") else []))
    model_ids = line.get("run", {}).get("model_ids") or [model]
    response_ids = iter(line.get("run", {}).get("response_ids") or [])
    answered_by = model_ids[0]
    for t, (thought, calls) in enumerate(turns):
        inputs.append(list(messages))
        tool_calls = []
        for c, call in enumerate(calls):
            arguments = dict(call.get("args") or {})
            if call.get("input"):
                arguments["image"] = call["input"]
            tool_calls.append({"id": f"call_{t}_{c}", "function": call["name"], "arguments": arguments,
                               "type": "function"})
        assistant: dict[str, Any] = {"id": f"a{t}", "role": "assistant", "model": answered_by,
                                     "content": [{"type": "text", "text": thought}] if thought else ""}
        if tool_calls:
            assistant["tool_calls"] = tool_calls
        messages.append(assistant)
        events.append({"event": "model", "model": answered_by, "role": None, "input": inputs[-1], "tools": [],
                       "tool_choice": "auto", "config": {}, "call": _call(next(response_ids, None)),
                       "output": {"model": answered_by, "choices": [{"message": assistant, "stop_reason":
                                                                     "tool_calls" if tool_calls else "stop"}]}})
        new_images: list[bytes] = []
        for tc, call in zip(tool_calls, calls, strict=True):
            image = tool_images.get(call.get("output") or "") if not call.get("error") else None
            result: list[dict[str, Any]] = [{"type": "text", "text": f"{call['name']} made {call.get('output')}"}]
            if image is not None:
                result.append(att.image(image))
                new_images.append(image)
            error = {"type": "parsing", "message": call["error"]} if call.get("error") else None
            events.append({"event": "tool", "type": "function", "id": tc["id"], "function": tc["function"],
                           "arguments": tc["arguments"], "result": "" if error else result, "error": error})
            messages.append({"id": f"t{tc['id']}", "role": "tool", "tool_call_id": tc["id"], "function": tc["function"],
                             "content": "" if error else result[0]["text"], "error": error})
        if new_images:
            messages.append({"id": f"img{t}", "role": "user",
                             "content": [{"type": "text", "text": "The images the tools made:"},
                                         *(att.image(i) for i in new_images)]})
        sent_after[t] = new_images
    response = line.get("response") or ""
    if line.get("failure") is None and (not turns or turns[-1][1]):
        # The final answer's own turn (the harness's last thought is the response itself).
        inputs.append(list(messages))
        final = {"id": "final", "role": "assistant", "model": answered_by, "content": response}
        messages.append(final)
        events.append({"event": "model", "model": answered_by, "role": None, "input": inputs[-1], "tools": [],
                       "tool_choice": "auto", "config": {}, "call": _call(next(response_ids, None)),
                       "output": {"model": answered_by, "choices": [{"message": final, "stop_reason": "stop"}]}})
    # A grader's call: its model and usage must not count as the answering model's.
    events.append({"event": "model", "model": GRADER, "role": "grader", "input": [user], "tools": [],
                   "tool_choice": "none", "config": {}, "output": {"model": GRADER, "choices": []}})
    usage = line.get("usage") or {}
    sample: dict[str, Any] = {
        "id": line["sample_id"], "epoch": epoch, "input": [user], "target": "", "messages": messages,
        "output": {"model": answered_by, "completion": response,
                   "choices": [{"message": messages[-1], "stop_reason":
                                "content_filter" if line.get("failure") == "content_filter" else "stop"}]},
        "scores": {"match": {"value": "C", "answer": line.get("answer") or ""}},
        "metadata": {"mode": line["mode"]} if mode_in_metadata else {},
        "events": events,
        "model_usage": {
            answered_by: {"input_tokens": usage.get("input_tokens", 0), "output_tokens": usage.get("output_tokens", 0),
                          "total_tokens": usage.get("input_tokens", 0) + usage.get("output_tokens", 0),
                          **({"total_cost": line["cost_usd"]} if line.get("cost_usd") is not None else {})},
            GRADER: {"input_tokens": 999, "output_tokens": 99, "total_tokens": 1098, "total_cost": 9.0}},
        "total_time": line["latency_ms"] / 1000 if line.get("latency_ms") is not None else None,
        "attachments": {},
    }
    failure = line.get("failure")
    if failure == "max_turns":
        sample["limit"] = {"type": "message", "limit": 16}
    elif failure == "timeout":
        sample["limit"] = {"type": "time", "limit": 60}
    elif failure in ("provider_error", "tool_error"):
        sample["error"] = {"message": line.get("failure_detail") or "failed", "traceback": "", "traceback_ansi": ""}
    sample["attachments"] = att.store
    if pooled:
        _pool(sample)
    return sample


def _call(response_id: str | None) -> dict[str, Any] | None:
    """The raw API call Inspect keeps on a model event (``ModelCall``): here only the response's id."""
    return {"request": {}, "response": {"id": response_id}} if response_id else None


def _pool(sample: dict[str, Any]) -> None:
    """Model inputs as ranges of a message pool (``events_data``), as Inspect writes them since 0.3.186."""
    pool: list[dict[str, Any]] = []
    index: dict[str, int] = {}
    for event in sample["events"]:
        if event["event"] != "model":
            continue
        refs: list[list[int]] = []
        for message in event["input"]:
            key = json.dumps(message, sort_keys=True)
            if key not in index:
                index[key] = len(pool)
                pool.append(message)
            i = index[key]
            if refs and refs[-1][1] == i:
                refs[-1][1] = i + 1
            else:
                refs.append([i, i + 1])
        event["input"] = []
        event["input_refs"] = refs
    sample["events_data"] = {"messages": pool, "calls": []}


def header(*, model: str, task_args: Mapping[str, Any], status: str = "success") -> dict[str, Any]:
    return {"version": 2, "status": status,
            "eval": {"eval_id": "e1", "run_id": "r1", "created": "2026-08-01T00:00:00+00:00", "task": "adaptmm",
                     "task_args": dict(task_args), "model": model, "model_generate_config": {"temperature": 0.0}, "config": {},
                     "dataset": {"name": "adaptmm-demo", "samples": 0}, "packages": {"inspect_ai": "0.3.285"}},
            "plan": {"name": "plan", "steps": []}, "results": {"total_samples": 0, "completed_samples": 0},
            "stats": {"started_at": "", "completed_at": "", "model_usage": {}}}


def eval_zip(head: dict[str, Any], samples: Sequence[dict[str, Any]], *, zstd: bool) -> bytes:
    """The log's zip: deflate entries through ``zipfile``, or zstd entries (method 93) assembled by hand."""
    entries = {"header.json": json.dumps(head).encode()}
    for s in samples:
        entries[f"samples/{s['id']}_epoch_{s['epoch']}.json"] = json.dumps(s).encode()
    entries["summaries.json"] = json.dumps([{"id": s["id"], "epoch": s["epoch"]} for s in samples]).encode()
    entries["reductions.json"] = b"[]"
    if not zstd:
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for name, data in entries.items():
                archive.writestr(name, data)
        return buffer.getvalue()
    return zstd_zip(entries)


def zstd_zip(entries: Mapping[str, bytes], *, frame_bytes: int = 1 << 16) -> bytes:
    """A zip whose entries are zstd-compressed (method 93), each in frames of ``frame_bytes`` input, as
    Inspect caps its frames."""
    codec = pa.Codec("zstd")
    out = io.BytesIO()
    central = []
    stamp = time.localtime(0)
    dos_time = (stamp.tm_hour << 11) | (stamp.tm_min << 5) | (stamp.tm_sec // 2)
    dos_date = ((max(stamp.tm_year, 1980) - 1980) << 9) | (stamp.tm_mon << 5) | stamp.tm_mday
    for name, data in entries.items():
        packed = b"".join(codec.compress(data[i:i + frame_bytes], asbytes=True)
                          for i in range(0, max(len(data), 1), frame_bytes))
        crc = zlib.crc32(data)
        raw_name = name.encode()
        offset = out.tell()
        out.write(struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 63, 0, 93, dos_time, dos_date, crc, len(packed),
                              len(data), len(raw_name), 0) + raw_name + packed)
        central.append(struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 63, 63, 0, 93, dos_time, dos_date, crc,
                                   len(packed), len(data), len(raw_name), 0, 0, 0, 0, 0, offset) + raw_name)
    start = out.tell()
    for record in central:
        out.write(record)
    size = out.tell() - start
    out.write(struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, len(central), len(central), size, start, 0))
    return out.getvalue()


def log_of_lines(lines: Sequence[dict[str, Any]], *, media: Mapping[str, Sequence[bytes]],
                 tool_images: Mapping[tuple[str, str, str], bytes], model: str = "openai/sim-model",
                 zstd: bool, pooled: bool, mode_in: str = "task_args") -> bytes:
    """One log per mode (as Inspect runs one task per mode): the lines must share their mode."""
    modes = {line["mode"] for line in lines}
    assert len(modes) == 1, modes
    mode = modes.pop()
    samples = [sample_of_line(line, media=media[line["sample_id"]], pooled=pooled, model=model,
                              tool_images={ref: data for (uid, m, ref), data in tool_images.items()
                                           if uid == line["sample_id"] and m == mode},
                              mode_in_metadata=mode_in == "metadata") for line in lines]
    task_args = {"mode": mode} if mode_in == "task_args" else {}
    return eval_zip(header(model=model, task_args=task_args), samples, zstd=zstd)
