"""The tools a run offers, and one call executed by the registry, bounded.

A benchmark's tools are offered as OpenAI function tools: the registry's JSON Schema as
``parameters``, plus an ``image`` argument naming the image the call works on (``img0`` the first
medium; by default the latest image). A model that cannot do function calling gets the same tools
described in its system prompt and calls them as tagged text:
``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``.

Execution goes through the registry's runner (``run_chain``): the time limit, the pixel caps and
the kernel and iteration limits of ``Limits`` hold, and a tool touches only the images it is given
(no file system, no network). A model's bad call (unknown tool, bad arguments, unknown image) goes
back to the model as an error; a failure of the registry itself (OpenCV, memory, time) is the run's
``tool_error``.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from annotation.imagetools import REGISTRY, Limits, resolve_tool_name, run_chain

# The registry's own tools by family (tools.md): VTC-Bench's 32 operations are its four modules;
# AdaptMMBench's are its zoom, rotation, flips, contrast, brightness, gamma and auxiliary lines.
VTC_MODULES = ("geometry", "enhancement", "feature_extraction", "drawing")
ADAPT_TOOLS = ("zoom_in", "rotate", "flip", "contrast", "brightness", "gamma", "draw_aux_line")
IMAGE_ARGUMENT = "image"
_TAGGED = re.compile(r"<tool_call>(.*?)</tool_call>", re.S)
# What a failure of the registry itself reads like (runner.py words them so); anything else is the model's call.
_REGISTRY_FAULTS = ("internal error (", "OpenCV failed", "out of memory", "the time limit of")


def family_tools(family: str) -> list[str]:
    if family == "vtcbench":
        return [name for name, tool in REGISTRY.items() if tool.module in VTC_MODULES]
    return [name for name in ADAPT_TOOLS if name in REGISTRY]


def offered_tools(names: Iterable[str]) -> list[str]:
    """Canonical registry names, in the registry's order, of the names given (aliases allowed)."""
    wanted = {resolve_tool_name(name) for name in names}
    unknown = [name for name in names if resolve_tool_name(name) is None]
    if unknown:
        raise ValueError(f"not tools of the registry: {', '.join(unknown)}")
    return [name for name in REGISTRY if name in wanted]


def function_schemas(names: Sequence[str]) -> list[dict[str, Any]]:
    """OpenAI ``tools``: each registry tool as a function, its schema plus the ``image`` argument."""
    out = []
    for name in names:
        tool = REGISTRY[name]
        schema = copy.deepcopy(tool.schema)
        schema.pop("$schema", None)
        schema.setdefault("properties", {})[IMAGE_ARGUMENT] = {
            "type": "string", "pattern": "^img[0-9]+$",
            "description": "the image to work on: img0 is the first given image, img1 ... the later "
                           "images and tool outputs; default: the latest image"}
        out.append({"type": "function", "function": {"name": name, "description": tool.description,
                                                      "parameters": schema}})
    return out


def tagged_protocol(schemas: list[dict[str, Any]]) -> str:
    """The system prompt's tool section for a model without function calling."""
    listed = json.dumps([s["function"] for s in schemas], ensure_ascii=False)
    return ("\nTo call a tool, write exactly one block\n<tool_call>{\"name\": \"tool name\", \"arguments\": "
            "{...}}</tool_call>\nand stop; the result comes back in the next message. The tools, with "
            f"their arguments as JSON Schema:\n{listed}")


@dataclass
class Call:
    """One tool call the model made, as given."""

    name: Any
    arguments: Any  # a dict, or the raw string when it is not valid JSON
    call_id: str = ""
    problem: str | None = None  # why it cannot even be read (bad JSON); sent back to the model


def parse_arguments(raw: Any) -> tuple[Any, str | None]:
    if raw is None or raw == "":
        return {}, None
    if isinstance(raw, dict):
        return raw, None
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            return raw, f"the arguments are not valid JSON ({exc.msg} at character {exc.pos})"
        if not isinstance(value, dict):
            return value, "the arguments must be a JSON object"
        return value, None
    return raw, "the arguments must be a JSON object"


def tagged_calls(text: str) -> list[Call]:
    """The ``<tool_call>`` blocks of an assistant message, in order."""
    calls = []
    for index, block in enumerate(_TAGGED.findall(text or "")):
        try:
            data = json.loads(block.strip())
        except json.JSONDecodeError as exc:
            calls.append(Call(name=None, arguments=block.strip(), call_id=f"tagged-{index}",
                              problem=f"the <tool_call> block is not valid JSON ({exc.msg})"))
            continue
        if not isinstance(data, dict) or not isinstance(data.get("name"), str):
            calls.append(Call(name=None, arguments=data, call_id=f"tagged-{index}",
                              problem='a <tool_call> block is {"name": ..., "arguments": {...}}'))
            continue
        args, problem = parse_arguments(data.get("arguments", data.get("args")))
        calls.append(Call(name=data["name"], arguments=args, call_id=f"tagged-{index}", problem=problem))
    return calls


def strip_tagged(text: str) -> str:
    return _TAGGED.sub("", text or "").strip()


@dataclass
class Executed:
    name: str  # canonical when known, else as given
    args: Any
    input: str
    output: str
    image: np.ndarray | None = None
    measurements: dict | None = None
    error: str | None = None  # the model's mistake, sent back to it
    registry_fault: str | None = None  # the registry failed: the run's tool_error


def execute(call: Call, images: dict[str, np.ndarray], latest: str, output: str, *, offered: Sequence[str],
            limits: Limits) -> Executed:
    """Runs one call on the named image; the output is ``output`` when it succeeds."""
    args = call.arguments if isinstance(call.arguments, dict) else {}
    source = args.get(IMAGE_ARGUMENT, latest) if isinstance(args, dict) else latest
    tool_args = {k: v for k, v in args.items() if k != IMAGE_ARGUMENT}
    canonical = resolve_tool_name(call.name) if isinstance(call.name, str) else None
    shown = canonical or (call.name if isinstance(call.name, str) else "?")
    done = Executed(name=shown, args=tool_args if call.problem is None else call.arguments, input=str(source),
                    output=output)
    if call.problem is not None:
        done.error = call.problem
    elif canonical is None or canonical not in offered:
        done.error = (f'unknown tool "{call.name}"; the tools offered are: {", ".join(offered)}'
                      if isinstance(call.name, str) else "the call names no tool")
    elif not isinstance(source, str) or source not in images:
        done.error = f'"{IMAGE_ARGUMENT}": "{source}" is not a known image (known: {", ".join(images)})'
    if done.error is not None:
        return done
    others = {ref: image for ref, image in images.items() if ref != "img0"}
    result = run_chain(images["img0"], [{"tool": canonical, "args": tool_args, "input": source, "output": output}],
                       limits=limits, extra_images=others)
    step = result.steps[-1] if result.steps else None
    if result.ok and step is not None:
        done.image = result.images[output]
        done.measurements = step.measurements
        done.args = step.args
        return done
    message = result.error or "the tool produced nothing"
    detail = message.split(": ", 1)[1] if message.startswith("step ") and ": " in message else message
    if detail.startswith(_REGISTRY_FAULTS):
        done.registry_fault = detail
    else:
        done.error = detail
    return done
