"""One (sample, mode) of a run: the conversation, the tool loop, and the prediction line it makes.

What each mode sends (spec/runs.md): ``text`` the question and the image(s); ``adaptive`` the same
with the tools offered, each call executed by the registry and its output image sent back in the
next message; ``oracle`` the oracle image I_E in place of the media; ``blind`` no image. The final
answer is the last ``<answer>...</answer>`` of the last message, else that whole message.

The line records, beside formats.md's fields: the steps (the assistant's text as ``thought``, each
call with its arguments, input, output and error), ``usage``, ``latency_ms``, ``turns``, and
``run``: the model ids and response ids the endpoint returned, the prompt and harness versions, the
sampling settings, the protocol, how the answer was found, and the SHA-256 and size of every image sent
at each turn (``images_sent``, ``images_sent_sizes``).

Full resolution (docs/runs.md, "Full resolution"): an image over ``max_image_pixels`` is sent as a view
scaled down to fit it (a JPEG decoded at a reduced scale, so an 8K photo is never held whole for it), while
the tools work on the original: a zoom crops the full-resolution image, and its output is sent whole when
it fits, else as a view of it too. An attempt that ends without an answer has ``failure`` (its class) and ``failure_detail``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import mimetypes
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from annotation.imagetools import Limits, ToolError, encode_jpeg, encode_png, load_image, oracle_image
from evaluation.harness import HARNESS_VERSION
from evaluation.harness.client import Endpoint, Failure
from evaluation.harness.items import Medium, RunItem
from evaluation.harness.prompts import fill, load_prompt, question_block
from evaluation.harness.tools import (Call, execute, function_schemas, parse_arguments, strip_tagged,
                                      tagged_calls, tagged_protocol)

_ANSWER = re.compile(r"<answer>(.*?)</answer>", re.S | re.I)
PROTOCOLS = ("function_calling", "tagged_text")
# The largest image a run sends as it is (2048 x 2048 pixels); 0 sends every image as stored.
DEFAULT_MAX_IMAGE_PIXELS = 2048 * 2048
# The decoded originals the pairs of one process may hold at once, in pixels (RUNS_DECODED_PIXELS_MAX): a pair holds
# its sample's originals, decoded for the tools, from its first tool call to its last line; at 16 pairs in flight on
# 8K images that was ~2.5 GB. Two 8K images (~200 MB as 8-bit BGR) by default (docs/performance.md).
DEFAULT_DECODED_PIXELS_MAX = 2 * 7680 * 4320


class DecodedBudget:
    """Pixels of decoded originals held at once in this process. A pair waits for room before it decodes (it holds
    nothing while it waits); one larger than the whole budget goes alone. ``peak``: the most held at once."""

    def __init__(self, limit: int = DEFAULT_DECODED_PIXELS_MAX) -> None:
        self.limit = limit
        self.held = 0
        self.peak = 0
        self._room = threading.Condition()

    def acquire(self, pixels: int) -> int:
        want = max(1, min(pixels, self.limit))
        with self._room:
            while self.held and self.held + want > self.limit:
                self._room.wait()
            self.held += want
            self.peak = max(self.peak, self.held)
        return want

    def release(self, pixels: int) -> None:
        with self._room:
            self.held -= pixels
            self._room.notify_all()


DECODED = DecodedBudget()  # run_inputs.run_benchmark sets its limit from settings
_REDUCED = ((8, cv2.IMREAD_REDUCED_COLOR_8), (4, cv2.IMREAD_REDUCED_COLOR_4), (2, cv2.IMREAD_REDUCED_COLOR_2))


@dataclass(frozen=True)
class Protocol:
    """How a run talks to the model: the same for every (sample, mode) of the run."""

    family: str = "generic"
    tools: tuple[str, ...] = ()  # the registry tools offered in adaptive mode
    protocol: str = "function_calling"
    max_turns: int = 8
    limits: Limits = field(default_factory=Limits)
    max_pixels: int = 64_000_000
    # The largest image sent to the model as it is; a larger one is sent as a scaled-down view (the tools
    # still work on the original). 0: every image as stored.
    max_image_pixels: int = DEFAULT_MAX_IMAGE_PIXELS
    # False: a call's image is made and recorded (``run.tool_outputs``) but not sent to the model, only its text
    # result, as through a gateway that drops images after the first turn (litellm#20403); the line's
    # ``images_sent`` then shows it, and so does "tool outputs shown" (docs/metrics.md section 15).
    tool_images: bool = True
    # The benchmark's protocol version this run follows and the page stating it (evaluation/run_protocol.py,
    # protocol_stamp), written into each line's record; "": the run departs from it or states none.
    protocol_version: str = ""
    protocol_page: str = ""


@dataclass
class _Picture:
    ref: str
    data: bytes
    media_type: str
    sha256: str
    size: tuple[int, int] = (0, 0)  # width, height of what is sent (0, 0: not known)
    scaled: bool = False  # a view scaled down to max_image_pixels

    @classmethod
    def of(cls, ref: str, data: bytes, media_type: str, size: tuple[int, int] = (0, 0),
           scaled: bool = False) -> _Picture:
        return cls(ref=ref, data=data, media_type=media_type, sha256=hashlib.sha256(data).hexdigest(), size=size,
                   scaled=scaled)

    def part(self) -> dict[str, Any]:
        url = f"data:{self.media_type};base64,{base64.b64encode(self.data).decode()}"
        return {"type": "image_url", "image_url": {"url": url}}


def final_answer(text: str) -> tuple[str, str]:
    """(the answer, how it was found): the last <answer>...</answer>, else the whole message."""
    found = _ANSWER.findall(text or "")
    if found:
        return found[-1].strip(), "answer_tag"
    return (text or "").strip(), "whole_message"


def _media_type(path: str) -> str:
    guessed = mimetypes.guess_type(path)[0]
    return guessed if guessed and guessed.startswith("image/") else "image/png"


def oracle_png(item: RunItem, protocol: Protocol) -> bytes:
    """The oracle image I_E the model is sent in oracle mode: img0 with the recovery transform applied,
    then cut to the regions, as PNG."""
    image = load_image(item.media[0].path, max_pixels=protocol.max_pixels)
    return encode_png(oracle_image(image, item.transform or [], item.regions or [], limits=protocol.limits))


def _pictures(item: RunItem, mode: str, protocol: Protocol) -> list[_Picture]:
    if mode == "blind":
        return []
    if mode == "oracle":
        png = oracle_png(item, protocol)
        return [_Picture.of("img0", png, "image/png", _png_size(png))]
    return [_medium_view(m.ref, m.path, m.width or 0, m.height or 0, protocol.max_image_pixels, protocol.max_pixels)
            for m in item.media]


def _png_size(png: bytes) -> tuple[int, int]:
    return (int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")) if png[:4] == b"\x89PNG" else (0, 0)


def _fit(width: int, height: int, cap: int) -> tuple[int, int]:
    """The largest size of the same shape with at most ``cap`` pixels."""
    scale = (cap / (width * height)) ** 0.5
    return max(1, int(width * scale)), max(1, int(height * scale))


def _medium_view(ref: str, path: str, width: int, height: int, cap: int, max_pixels: int) -> _Picture:
    """A medium as sent: the file as stored when it fits ``cap`` (or its size is unknown), else a view
    scaled down to fit. A JPEG is decoded at 1/2, 1/4 or 1/8 scale (libjpeg's own scaling) when that still
    leaves at least ``cap`` pixels, so the full image is never decoded for the view."""
    media_type = _media_type(path)
    if not cap or not width or not height or width * height <= cap:
        return _Picture.of(ref, Path(path).read_bytes(), media_type, (width, height))
    image = None
    if media_type == "image/jpeg":
        flag = next((f for k, f in _REDUCED if (width // k) * (height // k) >= cap), None)
        if flag is not None:
            image = cv2.imread(path, flag)
    if image is None:
        image = load_image(path, max_pixels=max_pixels)
    return _array_view(ref, image, cap, jpeg=media_type == "image/jpeg")


def medium_part(medium: Medium, cap: int, max_pixels: int) -> tuple[dict[str, Any], tuple[int, int]]:
    """A medium as a request's image part, and its size as sent (scaled down to ``cap`` pixels as a run's
    views are): what a proposal request sends (evaluation/proposal_runs.py)."""
    picture = _medium_view(medium.ref, medium.path, medium.width or 0, medium.height or 0, cap, max_pixels)
    return picture.part(), picture.size


def _array_view(ref: str, image: np.ndarray, cap: int, *, jpeg: bool = False) -> _Picture:
    """An image as sent: PNG, whole when it fits ``cap``, else scaled down (INTER_AREA) to fit; a photo's
    view as JPEG (quality 90), as it came."""
    height, width = image.shape[:2]
    if not cap or width * height <= cap:
        return _Picture.of(ref, encode_png(image), "image/png", (width, height))
    size = _fit(width, height, cap)
    small = cv2.resize(image, size, interpolation=cv2.INTER_AREA)
    data = encode_jpeg(small) if jpeg else encode_png(small)
    return _Picture.of(ref, data, "image/jpeg" if jpeg else "image/png", size, scaled=True)


def run_one(item: RunItem, mode: str, endpoint: Endpoint, protocol: Protocol) -> dict[str, Any]:
    """The prediction line of ``item`` in ``mode``. Raises BudgetExceeded (the run stops; nothing is
    written for this pair); every other way of ending is a line."""
    started = time.monotonic()
    prompt = load_prompt(protocol.family, mode)
    adaptive = mode == "adaptive"
    schemas = function_schemas(protocol.tools) if adaptive else []
    tagged = adaptive and protocol.protocol == "tagged_text"
    # Decoding for the view (scaled down) or the oracle image takes room in DECODED too, until it is encoded.
    decoding = sum((m.width or 0) * (m.height or 0) for m in item.media if mode != "blind" and (
        mode == "oracle" or (protocol.max_image_pixels and (m.width or 0) * (m.height or 0) > protocol.max_image_pixels)))
    room = DECODED.acquire(decoding) if decoding else 0
    try:
        pictures = _pictures(item, mode, protocol)
    finally:
        if room:
            DECODED.release(room)
    sizes = ", ".join(f"{m.ref} is {m.width} x {m.height} pixels" for m in item.media if m.width)
    values = {"question_block": question_block(item),
              "image_list": ", ".join(p.ref for p in pictures) or "none",
              "image_sizes": sizes or "size unknown",
              "tool_protocol": tagged_protocol(schemas) if tagged else ""}
    messages: list[dict[str, Any]] = []
    if prompt.system:
        messages.append({"role": "system", "content": fill(prompt.system, values)})
    messages.append({"role": "user", "content": [*(p.part() for p in pictures),
                                                 {"type": "text", "text": fill(prompt.user, values)}]})
    offered_schemas = schemas if adaptive and not tagged else None

    line: dict[str, Any] = {"sample_id": item.uid, "mode": mode}
    steps: list[dict[str, Any]] = []
    record: dict[str, Any] = {
        "model_ids": [], "response_ids": [], "prompt_version": prompt.name, "harness_version": HARNESS_VERSION,
        "sampling": endpoint.settings.sampling(), "protocol": protocol.protocol if adaptive else "none",
        "images_sent": [[p.sha256 for p in pictures]], "images_sent_sizes": [[list(p.size) for p in pictures]],
        "cached_turns": 0,
        "tool_outputs": {},  # each image a call made: its ref -> SHA-256 (compared with images_sent)
    }
    usage = {"input_tokens": 0, "output_tokens": 0}
    model_ids: set[str] = set()
    images: dict[str, np.ndarray] = {}
    held = 0  # pixels of DECODED this pair holds (its decoded originals)
    latest = pictures[-1].ref if pictures else "img0"
    next_number = len(item.media)
    last_text = ""
    turns = 0
    failure: Failure | None = None
    try:
        for turn in range(1, protocol.max_turns + 1):
            answer, cached = endpoint.complete(messages, offered_schemas)
            turns = turn
            record["cached_turns"] += int(cached)
            if answer.get("model"):
                model_ids.add(str(answer["model"]))
            if answer.get("id"):
                record["response_ids"].append(str(answer["id"]))
            reported = answer.get("usage") or {}
            usage["input_tokens"] += int(reported.get("prompt_tokens") or 0)
            usage["output_tokens"] += int(reported.get("completion_tokens") or 0)
            message = answer.get("message") or {}
            content = message.get("content") or ""
            last_text = content
            if answer.get("finish_reason") == "content_filter":
                raise Failure("content_filter", "the endpoint stopped the answer by its content filter")
            calls = _calls(message, tagged) if adaptive else []
            thought = strip_tagged(content) if tagged else content.strip()
            if not calls:
                if thought:
                    steps.append({"thought": thought})
                break
            if turn == protocol.max_turns:
                if thought:
                    steps.append({"thought": thought})
                raise Failure("max_turns", f"the model was still calling tools after {protocol.max_turns} turns")
            assistant: dict[str, Any] = {"role": "assistant", "content": content}
            if not tagged:
                assistant["tool_calls"] = message.get("tool_calls")
            messages.append(assistant)
            if not images:
                if not held:
                    held = DECODED.acquire(sum((m.width or 0) * (m.height or 0) for m in item.media))
                try:
                    images = _decoded(item, protocol)
                except ToolError as exc:  # over the registry's pixel cap, or unreadable: a message, not a crash
                    raise Failure("tool_error", f"the original image cannot be given to the tools: {exc}") from None
            new_parts: list[dict[str, Any]] = []
            sent: list[str] = []
            sent_sizes: list[list[int]] = []
            for index, call in enumerate(calls):
                output = f"img{next_number}"
                next_number += 1
                done = execute(call, images, latest, output, offered=protocol.tools, limits=protocol.limits)
                step_tool = _step_tool(done, output)
                steps.append({"thought": thought if index == 0 else "", "tool": step_tool})
                if done.registry_fault is not None:
                    raise Failure("tool_error", f"{done.name}: {done.registry_fault}")
                picture = None
                if done.error is not None:
                    reply = f"Error from {done.name}: {done.error}. No image was made; correct the call or answer."
                else:
                    assert done.image is not None
                    images[output] = done.image
                    latest = output
                    picture = _array_view(output, done.image, protocol.max_image_pixels)
                    record["tool_outputs"][output] = picture.sha256
                    reply = f"{done.name} made {output} ({done.image.shape[1]} x {done.image.shape[0]} pixels)."
                    if picture.scaled:
                        reply = (reply[:-1] + f"; it is sent to you as a {picture.size[0]} x {picture.size[1]} view, and "
                                 f"coordinates stay in {output}'s own pixels.")
                    if protocol.tool_images:
                        sent.append(picture.sha256)
                        sent_sizes.append(list(picture.size))
                    else:
                        picture = None
                    if done.measurements:
                        reply += " Measurements: " + json.dumps(done.measurements, ensure_ascii=False)[:4000]
                if tagged:
                    new_parts.append({"type": "text", "text": f"<tool_response>{reply}</tool_response>"})
                else:
                    messages.append({"role": "tool", "tool_call_id": call.call_id, "content": reply})
                if picture is not None:
                    new_parts.append(picture.part())
            # Images cannot go in a tool message: they follow in one user message, after the results.
            if tagged:
                messages.append({"role": "user", "content": new_parts})
            elif new_parts:
                messages.append({"role": "user", "content": [
                    {"type": "text", "text": "The images the tools made, in order:"}, *new_parts]})
            record["images_sent"].append(sent)
            record["images_sent_sizes"].append(sent_sizes)
    except Failure as exc:
        failure = exc
    finally:
        images.clear()  # the arrays go with the last reference, before the room is given back
        if held:
            DECODED.release(held)
    record["model_ids"] = sorted(model_ids)
    line["steps"] = steps
    if failure is not None:
        line["answer"] = None
        line["failure"] = failure.klass
        line["failure_detail"] = failure.detail
        record["retriable"] = failure.retriable  # the endpoint was unavailable: the run asks again (runner.py)
    else:
        answer_text, how = final_answer(last_text)
        line["answer"] = answer_text
        line["response"] = last_text
        record["answer_extraction"] = how
        produced = [s["tool"]["output"] for s in steps if "tool" in s and not s["tool"]["error"]]
        if produced:
            line["answer_image"] = produced[-1]
    line["usage"] = usage
    line["turns"] = turns
    line["latency_ms"] = round((time.monotonic() - started) * 1000)
    if protocol.protocol_version:
        record["protocol_version"] = protocol.protocol_version
        record["protocol_page"] = protocol.protocol_page
    line["run"] = record
    return line


ARGS_KEPT = 2000  # characters of a call's arguments a line keeps when they are not a JSON object, or too long


def _step_tool(done: Any, output: str) -> dict[str, Any]:
    """The step's tool as the prediction format holds it, whatever the model sent (issue 40: a reply with
    truncated JSON arguments, or 2 MB of them, made the platform's own file fail validation): ``args`` is
    the object, or None with the call's error and the start of what was sent (``raw_arguments``)."""
    args, error = done.args, done.error
    tool: dict[str, Any] = {"name": done.name or "?", "args": args, "input": done.input, "output": output,
                            "error": error}
    raw = args if isinstance(args, str) else None
    if args is not None and not isinstance(args, dict):
        raw = raw if raw is not None else json.dumps(args, ensure_ascii=False, default=str)
    elif isinstance(args, dict):
        text = json.dumps(args, ensure_ascii=False, default=str)
        if len(text) > ARGS_KEPT:
            raw = text
            tool["error"] = error or f"the arguments are {len(text):,} characters long"
    if raw is not None:
        tool["args"] = None
        tool["raw_arguments"] = raw[:ARGS_KEPT]
        tool["error"] = tool["error"] or "the arguments must be a JSON object"
    return tool


def _calls(message: dict[str, Any], tagged: bool) -> list[Call]:
    if tagged:
        return tagged_calls(message.get("content") or "")
    calls = []
    for raw in message.get("tool_calls") or []:
        function = raw.get("function") or {}
        args, problem = parse_arguments(function.get("arguments"))
        calls.append(Call(name=function.get("name"), arguments=args, call_id=str(raw.get("id") or ""),
                          problem=problem))
    return calls


def _decoded(item: RunItem, protocol: Protocol) -> dict[str, np.ndarray]:
    return {m.ref: load_image(m.path, max_pixels=protocol.max_pixels) for m in item.media}
