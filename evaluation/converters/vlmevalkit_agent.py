"""VLMEvalKit's agent mode: the ``extra_records`` cell of a result row -> the row's steps (mode ``adaptive``).

An API model run with ``mode="agent"`` (``vlmeval/api/arm_thinker.py``) returns
``{"prediction", "extra_records": {"tool_call_count", "conversation"}}`` and ``vlmeval/inference.py``
writes ``extra_records`` as a column of the result table. ``conversation`` holds OpenAI-style
messages; its images are saved as files under ``temp/<dataset>/<model>/`` and each ``image_url.url``
is replaced by the file's path relative to that folder: ``<stamp>_<uid>/img_NNNN.<ext>``. In a
``.tsv`` or ``.csv`` pandas writes the cell as Python's ``repr`` of the dict (single quotes), in a
``.json`` as JSON: both are read (a Python literal only, never code).

- every assistant message is a turn: its text the thought of its first call (``<tool_call>`` blocks
  taken out), or a step of its own when it calls nothing;
- its calls: OpenAI ``tool_calls`` (``function.name``, ``function.arguments`` a JSON string) or
  ``<tool_call>{"name", "arguments"}</tool_call>`` blocks in its text; an ``image`` argument is the
  call's input; the outputs are numbered after the sample's media, as our harness numbers them;
- the first image of the tool (or user) message that answers a call is its output image: with the
  image files uploaded in a zip beside the table, its SHA-256 goes to ``run.tool_outputs`` and the
  images of the messages before each turn to ``run.images_sent``.
"""

from __future__ import annotations

import ast
import hashlib
import re
from collections.abc import Callable
from typing import Any

import orjson

from .common import Loc, Sink

TOOL_CALL = re.compile(r"<tool_call>(.*?)</tool_call>", re.S)
# The bytes of an image file by its relative path, or None when the upload does not hold it.
ImageBytes = Callable[[str], "bytes | None"]


def parse_cell(value: Any) -> tuple[dict[str, Any] | None, str | None]:
    """The extra_records dict of a cell (JSON, or the Python literal pandas writes), else (None, problem)."""
    if isinstance(value, dict):
        return value, None
    if value is None or (isinstance(value, str) and not value.strip()) or value != value:  # NaN: an empty cell
        return None, None
    if not isinstance(value, str):
        return None, f"expected an object with tool_call_count and conversation, got {type(value).__name__}"
    try:
        parsed = orjson.loads(value)
    except orjson.JSONDecodeError:
        try:
            parsed = ast.literal_eval(value)  # literals only: no name, call or attribute is evaluated
        except (ValueError, SyntaxError, MemoryError, RecursionError) as exc:
            return None, f"neither JSON nor a Python literal ({type(exc).__name__})"
    if not isinstance(parsed, dict):
        return None, f"expected an object with tool_call_count and conversation, got {type(parsed).__name__}"
    return parsed, None


def _text_and_images(content: Any) -> tuple[str, list[str]]:
    if isinstance(content, str):
        return content, []
    texts: list[str] = []
    images: list[str] = []
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif part.get("type") == "image_url":
            url = (part.get("image_url") or {}).get("url") if isinstance(part.get("image_url"), dict) else None
            if isinstance(url, str):
                images.append(url)
    return "\n".join(texts), images


def _calls(message: dict[str, Any], text: str) -> tuple[list[tuple[Any, Any]], str]:
    """(name, arguments) of each call, and the text without its <tool_call> blocks."""
    calls: list[tuple[Any, Any]] = []
    for call in message.get("tool_calls") or ():
        fn = call.get("function") if isinstance(call, dict) and isinstance(call.get("function"), dict) else {}
        calls.append((fn.get("name"), fn.get("arguments")))
    for block in TOOL_CALL.findall(text):
        try:
            obj = orjson.loads(block.strip())
        except orjson.JSONDecodeError:
            calls.append((None, block.strip()))
            continue
        calls.append((obj.get("name"), obj.get("arguments")) if isinstance(obj, dict) else (None, block))
    return calls, TOOL_CALL.sub("", text).strip()


def _arguments(raw: Any) -> tuple[dict[str, Any] | None, str | None]:
    if isinstance(raw, dict):
        return dict(raw), None
    if isinstance(raw, str):
        try:
            value = orjson.loads(raw or "{}")
        except orjson.JSONDecodeError as exc:
            return None, f"the arguments are not JSON ({exc})"
        if isinstance(value, dict):
            return value, None
    return None, "the arguments must be a JSON object"


def agent_fields(records: dict[str, Any], loc: Loc, sink: Sink, *, sid: str,
                 image_bytes: ImageBytes | None) -> dict[str, Any] | None:
    """``steps``, ``turns``, ``answer_image`` and ``run`` of a row from its extra_records (None: an error)."""
    conversation = records.get("conversation")
    if not isinstance(conversation, list):
        sink.error(loc, "extra_records.conversation", "expected a list of messages, got "
                                                      f"{type(conversation).__name__}")
        return None
    digest_of: dict[str, str | None] = {}

    def digest(path: str) -> str | None:
        if path not in digest_of:
            data = image_bytes(path) if image_bytes is not None else None
            digest_of[path] = hashlib.sha256(data).hexdigest() if data is not None else None
        return digest_of[path]

    steps: list[dict[str, Any]] = []
    produced: list[str] = []
    tool_outputs: dict[str, str] = {}
    sent: list[list[str]] = []
    pending_images: list[str] = []
    awaiting: list[str] = []  # outputs of calls whose answer has not come yet, oldest first
    missing = False
    number = sink.context.media_count(sid)
    turns = 0
    for m, message in enumerate(conversation):
        if not isinstance(message, dict):
            sink.error(loc, f"extra_records.conversation[{m}]", "expected a message object")
            return None
        text, images = _text_and_images(message.get("content"))
        if message.get("role") != "assistant":
            pending_images += images
            if images and awaiting:
                found = digest(images[0])
                if found is None:
                    missing = True
                else:
                    tool_outputs[awaiting[0]] = found
                awaiting.pop(0)
            elif message.get("role") == "tool" and awaiting:
                awaiting.pop(0)  # a text-only answer: this call made no image we can see
            continue
        turns += 1
        digests = [digest(p) for p in pending_images]
        missing = missing or any(d is None for d in digests)
        sent.append([d for d in digests if d is not None])
        pending_images = []
        calls, thought = _calls(message, text)
        if not calls:
            if thought:
                steps.append({"thought": thought})
            continue
        for index, (name, raw) in enumerate(calls):
            args, problem = _arguments(raw)
            source = args.pop("image", None) if args is not None else None
            output = f"img{number}"
            number += 1
            tool = {"name": sink.tool_name(str(name or "?")), "args": args,
                    "input": source if isinstance(source, str) else None, "output": output, "error": problem}
            if problem is None:
                produced.append(output)
                awaiting.append(output)
            steps.append({"thought": thought if index == 0 else "", "tool": tool})
    run: dict[str, Any] = {"source": "vlmevalkit_agent"}
    counted = sum(1 for s in steps if "tool" in s)
    if isinstance(records.get("tool_call_count"), int) and records["tool_call_count"] != counted:
        sink.report.warnings.append(f"{loc.where}: extra_records.tool_call_count says {records['tool_call_count']} "
                                    f"calls; the conversation holds {counted}, which are read")
    if not missing and sent and len(tool_outputs) == len(produced):
        run["images_sent"] = sent
        run["tool_outputs"] = tool_outputs
    out: dict[str, Any] = {"steps": steps, "turns": turns, "run": run}
    if produced:
        out["answer_image"] = produced[-1]
    return out
