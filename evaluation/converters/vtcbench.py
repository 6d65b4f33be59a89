"""VTC-Bench agent results (``results_<timestamp>.jsonl``) -> our predictions (mode ``adaptive``).

One JSON object per line: ``item_id`` (the sample's uid, VTC-Bench's ``id``), ``category``,
``ground_truth`` (ignored: the benchmark holds the answer), ``agent_answer`` (the text between
the first ``<answer>`` tags) -> ``answer``, ``full_response`` -> ``response``, ``conversation``
(the messages) -> ``steps``. Every assistant message is one reasoning turn: its text is the
thought of its first tool call (or a step of its own when it calls nothing), each tool call is
a step with a ``tool`` (the name through the registry's aliases, the arguments decoded from
their JSON string). A tool message answering a call whose text starts with "error" marks that
call's ``error``. Accepted call shapes: OpenAI ``tool_calls`` (``function.name``,
``function.arguments``), the older ``function_call``, and content blocks of type ``tool_use``
(``name``, ``input``).

Their harness keeps the tool calls out of ``conversation`` (it records the system prompt, the
question and the final reply) and writes each item's whole message list beside the results as
``response_list_<item_id>.json`` (``{"timestamp", "response_list": [[message, ...]]}``, qwen-agent's
messages: an assistant ``function_call``, a ``function`` message with the result). A zip holding
``results_*.jsonl`` and those files is read as one upload: an item with a response list takes its
steps from it, the others from ``conversation``. In qwen-agent's shape a reply that thinks and then
calls is two messages (the text, then the call with no text): they are one turn, the text the
call's thought.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any

import orjson

from .common import Loc, Sink, WrongKind, json_objects, text_of

RESPONSE_LIST = re.compile(r"(?:^|/)response_list_(.+)\.json$")
RESULTS = re.compile(r"(?:^|/)results_[^/]*\.jsonl$")
RESPONSE_LIST_MAX_BYTES = 64 << 20  # one item's message list, unpacked


def convert(stream: IO[bytes], sink: Sink, *, filename: str, kind: str) -> None:
    if kind != "vtcbench_zip":
        _convert_lines(stream, sink, {})
        return
    with _zip_parts(stream) as (results, response_lists):
        _convert_lines(results, sink, response_lists)


@contextmanager
def _zip_parts(stream: IO[bytes]) -> Iterator[tuple[IO[bytes], dict[str, Any]]]:
    """The results file of a zip and a reader of each item's response list, by item id."""
    try:
        archive = zipfile.ZipFile(stream)
    except zipfile.BadZipFile as exc:
        raise WrongKind(f"The zip could not be read ({exc}).") from exc
    with archive:
        names = [i.filename for i in archive.infolist() if not i.is_dir()]
        results = [n for n in names if RESULTS.search(n)]
        if len(results) != 1:
            found = "none" if not results else ", ".join(results[:3])
            raise WrongKind(f"A VTC-Bench zip holds one results_*.jsonl beside its response_list_<id>.json files "
                            f"(results files found: {found}).")
        lists = {m.group(1): (archive, n) for n in names if (m := RESPONSE_LIST.search(n))}
        with archive.open(results[0]) as handle:
            yield handle, lists


def _response_list(entry: tuple[zipfile.ZipFile, str], loc: Loc, sink: Sink) -> list[Any] | None:
    """The messages of one item's response_list_<id>.json (its rounds, one after the other)."""
    archive, name = entry
    if archive.getinfo(name).file_size > RESPONSE_LIST_MAX_BYTES:
        sink.error(loc, name, f"over {RESPONSE_LIST_MAX_BYTES >> 20} MB unpacked; too large to read")
        return None
    try:
        data = orjson.loads(archive.read(name))
    except (orjson.JSONDecodeError, zipfile.BadZipFile, OSError) as exc:
        sink.error(loc, name, f"not readable JSON ({exc})")
        return None
    rounds = data.get("response_list") if isinstance(data, dict) else data
    if not isinstance(rounds, list):
        sink.error(loc, name, f"expected {{\"response_list\": [[messages]]}}, got {_shown(data)}")
        return None
    messages: list[Any] = []
    for item in rounds:
        messages += item if isinstance(item, list) else [item]
    return messages


def _convert_lines(stream: IO[bytes], sink: Sink, response_lists: dict[str, Any]) -> None:
    # VTC-Bench reads its results into a dict by item id, so a repeated item's last line is the one it
    # scores (at the place of its first line): the same here, with a warning, instead of refusing the file.
    kept: dict[str, tuple[Loc, dict[str, Any]]] = {}
    for loc, pred in _read_lines(stream, sink, response_lists):
        earlier = kept.get(pred["sample_id"])
        if earlier is not None:
            sink.report.warnings.append(f"{loc.where}: item {pred['sample_id']!r} is also on {earlier[0].where}; "
                                        "the last line is kept, as VTC-Bench's evaluation keeps it")
        kept[pred["sample_id"]] = (loc, pred)
    for loc, pred in kept.values():
        sink.emit(loc, pred)


def _read_lines(stream: IO[bytes], sink: Sink, response_lists: dict[str, Any]) -> Iterator[tuple[Loc, dict[str, Any]]]:
    for loc, obj in json_objects(stream, sink):
        sid = sink.sample_id(loc, [("item_id", obj.get("item_id"))])
        if sid is None:
            continue
        conversation = obj.get("conversation")
        listed = response_lists.get(str(obj.get("item_id")).strip()) if response_lists else None
        if listed is not None:
            conversation = _response_list(listed, loc, sink)
            if conversation is None:
                continue
        if conversation is None:
            conversation = []
        if not isinstance(conversation, list):
            sink.error(loc, "conversation", f"expected a list of messages, got {_shown(conversation)}")
            continue
        steps, turns = _steps(conversation, loc, sink)
        if steps is None:
            continue
        pred: dict[str, Any] = {"sample_id": sid, "mode": "adaptive", "answer": text_of(obj.get("agent_answer")),
                                "steps": steps, "turns": turns}
        response = obj.get("full_response")
        if isinstance(response, str) and response:
            pred["response"] = response
        usage = _usage(obj.get("usage"))
        if usage:
            pred["usage"] = usage
        yield loc, pred


def _shown(value: Any) -> str:
    s = repr(value)
    return s if len(s) <= 60 else s[:57] + "..."


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content.strip()
    if isinstance(content, list):  # content parts; images and the like carry no thought
        return "\n".join(p["text"].strip() for p in content
                         if isinstance(p, dict) and p.get("type") in ("text", None) and isinstance(p.get("text"), str)
                         ).strip()
    return ""


def _calls(msg: dict[str, Any]) -> list[tuple[str | None, Any, Any]]:
    """(call id, name, arguments) of every tool call in an assistant message."""
    out: list[tuple[str | None, Any, Any]] = []
    for call in msg.get("tool_calls") or ():
        if not isinstance(call, dict):
            out.append((None, None, None))
            continue
        fn = call.get("function") if isinstance(call.get("function"), dict) else call
        out.append((call.get("id"), fn.get("name"), fn.get("arguments", fn.get("args"))))
    legacy = msg.get("function_call")
    if isinstance(legacy, dict):
        out.append((None, legacy.get("name"), legacy.get("arguments")))
    if isinstance(msg.get("content"), list):
        for part in msg["content"]:
            if isinstance(part, dict) and part.get("type") == "tool_use":
                out.append((part.get("id"), part.get("name"), part.get("input")))
    return out


def _steps(conversation: list[Any], loc: Loc, sink: Sink) -> tuple[list[dict] | None, int]:
    steps: list[dict] = []
    by_id: dict[str, dict] = {}
    unanswered: list[dict] = []
    turns = 0
    for m, msg in enumerate(conversation):
        where = f"conversation[{m}]"
        if not isinstance(msg, dict):
            sink.error(loc, where, f"expected a message object, got {_shown(msg)}")
            return None, 0
        role = msg.get("role")
        if role == "assistant":
            thought = _text(msg.get("content"))
            calls = _calls(msg)
            if not thought and not calls and _is_reasoning_record(msg):
                # A thinking model's separate reasoning (their harness appends it as a message of its own,
                # `reasoning_content` only): not a turn, not a step (metrics.md section 14).
                continue
            if calls and not thought and steps and _merges(conversation, m):
                # qwen-agent: the text of this reply came as the message before, without a call.
                thought = steps.pop()["thought"]
            else:
                turns += 1
            if not calls and thought:
                steps.append({"thought": thought})
            for c, (call_id, name, args) in enumerate(calls):
                if not isinstance(name, str) or not name.strip():
                    sink.error(loc, f"{where}.tool_calls[{c}].function.name",
                               f"expected the tool's name, got {_shown(name)}")
                    return None, 0
                tool: dict[str, Any] = {"name": sink.tool_name(name), "args": {}}
                if isinstance(args, str) and args.strip():
                    try:
                        args = orjson.loads(args)
                    except orjson.JSONDecodeError:
                        tool["error"] = f"the arguments are not valid JSON: {args[:200]}"
                        args = {}
                if isinstance(args, dict):
                    tool["args"] = args
                elif args not in (None, ""):
                    tool["error"] = f"the arguments are not an object: {_shown(args)}"
                steps.append({"thought": thought if c == 0 else "", "tool": tool})
                if isinstance(call_id, str):
                    by_id[call_id] = tool
                unanswered.append(tool)
        elif role in ("tool", "function"):
            call_id = msg.get("tool_call_id")
            if isinstance(call_id, str):
                tool = by_id.get(call_id)
            else:  # qwen-agent's `function` message names the tool: the oldest call of it without a result
                name = sink.tool_name(str(msg.get("name") or ""))
                tool = next((t for t in unanswered if t["name"] == name), None)
            if tool is not None and tool in unanswered:
                unanswered.remove(tool)
            result = _text(msg.get("content"))
            if tool is not None and "error" not in tool and result.lower().startswith("error"):
                tool["error"] = result[:500]
    return steps, turns


def _merges(conversation: list[Any], m: int) -> bool:
    """The message before ``m`` is an assistant's text with no call (the first half of the same reply)."""
    before = conversation[m - 1] if m else None
    return isinstance(before, dict) and before.get("role") == "assistant" and not _calls(before) and bool(
        _text(before.get("content")))


REASONING_KEYS = ("reasoning_content", "reasoning", "thinking")


def _is_reasoning_record(msg: dict[str, Any]) -> bool:
    """A message holding only a model's hidden reasoning: a reasoning field, or content parts that are all
    of type reasoning/thinking."""
    if any(msg.get(k) for k in REASONING_KEYS):
        return True
    content = msg.get("content")
    return isinstance(content, list) and bool(content) and all(
        isinstance(p, dict) and p.get("type") in REASONING_KEYS for p in content)


def _usage(usage: Any) -> dict[str, int] | None:
    if not isinstance(usage, dict):
        return None
    tin = usage.get("input_tokens", usage.get("prompt_tokens"))
    tout = usage.get("output_tokens", usage.get("completion_tokens"))
    ok = [isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0 for v in (tin, tout)]
    if not all(ok):
        return None
    return {"input_tokens": int(tin), "output_tokens": int(tout)}
