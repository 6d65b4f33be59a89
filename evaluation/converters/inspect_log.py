"""Inspect AI ``.eval`` logs (log format version 2) -> our predictions (spec interop.md, "In: Inspect").

A log is a zip: ``header.json`` (the run without its samples: ``eval.task_args``, ``eval.model``,
``status``), one ``samples/<id>_epoch_<n>.json`` per sample and epoch, ``summaries.json``,
``reductions.json`` and, while a run is going, ``_journal/``. The zip is read here, not with
Inspect's own reader: that reader needs ``inspect_ai`` and its ~80 packages in the worker
(docs/interop.md gives the measurement); the layout read is the one of ``log/_recorders/eval.py``.
What changed across versions and is read here:

- zstd entries (since 0.3.206; ``zipread``), deflate before;
- long strings and images moved to the sample's ``attachments`` and named ``attachment://<hash>``:
  every string that is such a reference is replaced by the attachment;
- pooled model inputs (since 0.3.186): a ``ModelEvent``'s ``input`` is empty and ``input_refs``
  lists ranges ``[start, end)`` of ``events_data.messages``.

One sample becomes one line: ``id`` -> ``sample_id`` (epoch 1; later epochs are left out with a
warning), ``output.completion`` -> ``response``, the first score's ``answer`` -> ``answer`` (else
the completion), ``messages``' assistant text and reasoning -> thoughts, their ``tool_calls`` ->
steps (the ``image`` argument is the call's ``input``; the output numbered after the sample's media,
as our harness numbers them), the matching ``ToolEvent``'s ``error`` -> the call's ``error`` and its
image result -> ``run.tool_outputs`` (SHA-256 by reference); the images of each ``ModelEvent``'s
input new since the one before -> ``run.images_sent``. Usage and cost are the answering model's
(``model_usage`` of the models the run's own model events name, never a grader's). Errors and
limits -> failure classes. Inspect's own verdicts -> ``run.external_verdict``.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import io
import re
import zipfile
from collections.abc import Iterator
from typing import IO, Any

import orjson

from .common import FILE, Loc, Sink, WrongKind, text_of
from .zipread import EntryError, open_zip, read_entry

HEADER = "header.json"
SAMPLE = re.compile(r"^samples/(.+)_epoch_(\d+)\.json$")
SAMPLE_MAX_BYTES = 256 << 20  # one sample, unpacked (its images included)
HEADER_MAX_BYTES = 64 << 20
LOG_MAX_BYTES = 1 << 30  # one log inside a zip of logs, unpacked (the upload itself is capped far lower)
ATTACHMENT = "attachment://"
MODES = ("text", "adaptive", "oracle", "blind")
GRADER_ROLES = frozenset({"grader", "scorer", "judge"})
# Inspect's limit types (log/_log.py::EvalSampleLimitType) that are ours: the others (token, context, cost,
# operator, custom) end a sample for reasons our classes do not name; they stay in failure_detail.
LIMIT_FAILURES = {"message": "max_turns", "turn": "max_turns", "time": "timeout", "working": "timeout"}


def convert(stream: IO[bytes], sink: Sink, *, filename: str, kind: str) -> None:
    if kind == "inspect_zip":
        _convert_logs(stream, sink)
        return
    _convert_log(stream, sink, prefix="")


def _convert_logs(stream: IO[bytes], sink: Sink) -> None:
    """A zip of logs, one per mode (Inspect runs a task per mode): each read in turn, its places prefixed."""
    with open_zip(stream) as bundle:
        for name in sorted(i.filename for i in bundle.infolist() if not i.is_dir()):
            try:
                data = read_entry(bundle, name, max_bytes=LOG_MAX_BYTES)
            except EntryError as exc:
                sink.error(Loc(None, name), "", str(exc))
                continue
            try:
                _convert_log(io.BytesIO(data), sink, prefix=f"{name}: ")
            except WrongKind as exc:
                sink.error(Loc(None, name), "", exc.message)


def _convert_log(stream: IO[bytes], sink: Sink, *, prefix: str) -> None:
    with open_zip(stream, "The Inspect log") as archive:
        header = _json_entry(archive, HEADER, HEADER_MAX_BYTES, sink)
        if not isinstance(header, dict):
            raise WrongKind("The Inspect log has no readable header.json (the run's description).")
        spec = header.get("eval") if isinstance(header.get("eval"), dict) else {}
        task_args = spec.get("task_args") if isinstance(spec.get("task_args"), dict) else {}
        log_mode = task_args.get("mode")
        if log_mode is not None and log_mode not in MODES:
            sink.error(Loc(None, prefix + HEADER), "eval.task_args.mode", f"expected one of {', '.join(MODES)}, got {log_mode!r}")
        model = spec.get("model") if isinstance(spec.get("model"), str) else None
        later: list[str] = []
        for name, epoch in _sample_entries(archive):
            if epoch != 1:
                later.append(prefix + name)
                continue
            loc = Loc(None, prefix + name)
            sink.item()
            data = _json_entry(archive, name, SAMPLE_MAX_BYTES, sink, loc)
            if data is None:
                continue
            if not isinstance(data, dict):
                sink.error(loc, "", f"expected a sample object, got {type(data).__name__}")
                continue
            pred = _prediction(data, loc, sink, log_mode=log_mode, model=model)
            if pred is not None:
                sink.emit(loc, pred)
        if later:
            sink.report.warnings.append(
                f"{len(later)} sample file(s) of later epochs were left out (the first: {later[0]}); "
                "a row scores one answer per sample: epoch 1")
        if header.get("status") not in (None, "success"):
            sink.report.warnings.append(f"{prefix}the Inspect run's status is {header.get('status')!r}, not 'success': "
                                        "the samples it finished are read")


def _sample_entries(archive: zipfile.ZipFile) -> Iterator[tuple[str, int]]:
    found = []
    for info in archive.infolist():
        match = SAMPLE.match(info.filename)
        if match:
            found.append((info.filename, int(match.group(2))))
    if not found:
        raise WrongKind("The Inspect log holds no samples (no samples/<id>_epoch_<n>.json): was it written with "
                        "samples, and has the run finished at least one?")
    yield from found


def _json_entry(archive: zipfile.ZipFile, name: str, limit: int, sink: Sink, loc: Loc = FILE) -> Any:
    try:
        return orjson.loads(read_entry(archive, name, max_bytes=limit))
    except EntryError as exc:
        if name == HEADER:
            return None
        sink.error(loc, "", str(exc))
    except orjson.JSONDecodeError as exc:
        if name == HEADER:
            return None
        sink.error(loc, "", f"not valid JSON ({exc})")
    return None


def resolve_attachments(value: Any, attachments: dict[str, Any]) -> Any:
    """``value`` with every ``attachment://<hash>`` string replaced by the attachment (as Inspect's
    ``resolve_attachments`` does); an unknown hash stays as written."""
    if isinstance(value, str):
        if value.startswith(ATTACHMENT):
            return attachments.get(value[len(ATTACHMENT):], value)
        return value
    if isinstance(value, list):
        return [resolve_attachments(v, attachments) for v in value]
    if isinstance(value, dict):
        return {k: resolve_attachments(v, attachments) for k, v in value.items()}
    return value


def _pooled_inputs(events: list[Any], pool: list[Any]) -> None:
    """Each model event's ``input`` rebuilt from ``input_refs`` (ranges into the message pool), in place."""
    for event in events:
        if isinstance(event, dict) and event.get("event") == "model" and isinstance(event.get("input_refs"), list):
            rebuilt: list[Any] = []
            for ref in event["input_refs"]:
                if isinstance(ref, list) and len(ref) == 2 and all(isinstance(i, int) for i in ref):
                    rebuilt.extend(pool[ref[0]:ref[1]])
            event["input"] = rebuilt


def _prediction(data: dict[str, Any], loc: Loc, sink: Sink, *, log_mode: Any, model: str | None) -> dict | None:
    attachments = data.get("attachments") if isinstance(data.get("attachments"), dict) else {}
    sid = sink.sample_id(loc, [("id", data.get("id"))])
    if sid is None:
        return None
    metadata = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
    mode = log_mode if log_mode in MODES else metadata.get("mode", sink.mode)
    if mode not in MODES:
        got = f"got {mode!r}" if mode is not None else "the log names none"
        sink.error(loc, "metadata.mode", f"the mode is one of {', '.join(MODES)} ({got}): run the task with "
                                         "-T mode=<mode>, or put it in each sample's metadata")
        return None
    events = resolve_attachments(data.get("events") or [], attachments)
    pooled = data.get("events_data") if isinstance(data.get("events_data"), dict) else {}
    if isinstance(events, list) and isinstance(pooled.get("messages"), list):
        _pooled_inputs(events, resolve_attachments(pooled["messages"], attachments))
    messages = resolve_attachments(data.get("messages") or [], attachments)
    output = data.get("output") if isinstance(data.get("output"), dict) else {}
    events = [e for e in events if isinstance(e, dict)] if isinstance(events, list) else []
    model_events = [e for e in events if e.get("event") == "model" and e.get("role") not in GRADER_ROLES]
    tool_events = {str(e.get("id")): e for e in events if e.get("event") == "tool"}

    pred: dict[str, Any] = {"sample_id": sid, "mode": mode}
    record: dict[str, Any] = {"source": "inspect_ai", "tool_outputs": {}}
    steps, turns, produced = _steps(messages if isinstance(messages, list) else [], tool_events, sink,
                                    first_output=sink.context.media_count(sid), record=record)
    pred["steps"] = steps
    completion = output.get("completion")
    answer = _scored_answer(data.get("scores"))
    pred["answer"] = answer if answer is not None else text_of(completion)
    if isinstance(completion, str) and completion:
        pred["response"] = completion
    if produced:
        pred["answer_image"] = produced[-1]

    model_ids = {str(e["model"]) for e in model_events if e.get("model")}
    if output.get("model"):
        model_ids.add(str(output["model"]))
    usage, cost = _usage(data.get("model_usage"), model_ids | ({model} if model else set()))
    if usage is not None:
        pred["usage"] = usage
    if cost is not None:
        pred["cost_usd"] = cost
    pred["turns"] = turns
    if isinstance(data.get("total_time"), (int, float)) and not isinstance(data.get("total_time"), bool):
        pred["latency_ms"] = round(data["total_time"] * 1000)
    sent = _images_sent(model_events)
    if sent and len(record["tool_outputs"]) == len(produced):
        record["images_sent"] = sent
    else:
        # "Tool outputs shown" needs the image of every successful call and the images of every input;
        # a log that lacks either (a tool answering in text) does not record them: not available, never 0.
        del record["tool_outputs"]
    record["model_ids"] = sorted(model_ids)
    # The provider's id of each answer, from the raw call Inspect keeps beside each model event.
    response_ids = [str(e["call"]["response"]["id"]) for e in model_events if isinstance(e.get("call"), dict)
                    and isinstance(e["call"].get("response"), dict) and e["call"]["response"].get("id")]
    if response_ids:
        record["response_ids"] = response_ids
    verdicts = {name: score.get("value") for name, score in (data.get("scores") or {}).items()
                if isinstance(score, dict)} if isinstance(data.get("scores"), dict) else {}
    if verdicts:
        record["external_verdict"] = verdicts
    _failure(pred, data, output, record)
    pred["run"] = record
    return pred


def _scored_answer(scores: Any) -> str | None:
    if not isinstance(scores, dict):
        return None
    for score in scores.values():
        if isinstance(score, dict) and isinstance(score.get("answer"), str):
            return score["answer"]
    return None


def _parts(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [p for p in content if isinstance(p, dict)]
    if isinstance(content, dict):
        return [content]
    return []


def _thought(content: Any) -> str:
    """Reasoning, then text: a thought (reasoning is not a step of its own)."""
    parts = _parts(content)
    said = [p["reasoning"] for p in parts if p.get("type") == "reasoning" and isinstance(p.get("reasoning"), str)]
    said += [p["text"] for p in parts if p.get("type") == "text" and isinstance(p.get("text"), str)]
    return "\n\n".join(s.strip() for s in said if s.strip())


def image_digest(content: Any) -> str | None:
    """The SHA-256 of the first image in a result or message content (a data URI's bytes), else None."""
    for part in _parts(content):
        url = part.get("image") if part.get("type") == "image" else None
        if url is None and part.get("type") == "image_url":
            url = (part.get("image_url") or {}).get("url")
        if isinstance(url, str) and url.startswith("data:") and "," in url:
            try:
                return hashlib.sha256(base64.b64decode(url.split(",", 1)[1], validate=False)).hexdigest()
            except (binascii.Error, ValueError):
                return None
    return None


def _steps(messages: list[Any], tool_events: dict[str, dict], sink: Sink, *, first_output: int,
           record: dict[str, Any]) -> tuple[list[dict], int, list[str]]:
    steps: list[dict] = []
    produced: list[str] = []
    tool_messages = {str(m.get("tool_call_id")): m for m in messages
                     if isinstance(m, dict) and m.get("role") == "tool"}
    turns = 0
    number = first_output
    for msg in messages:
        if not isinstance(msg, dict) or msg.get("role") != "assistant":
            continue
        turns += 1
        thought = _thought(msg.get("content"))
        calls = [c for c in msg.get("tool_calls") or () if isinstance(c, dict)]
        if not calls:
            if thought:
                steps.append({"thought": thought})
            continue
        for index, call in enumerate(calls):
            args = call.get("arguments") if isinstance(call.get("arguments"), dict) else {}
            args = dict(args)
            source = args.pop("image", None)
            output = f"img{number}"
            number += 1
            event = tool_events.get(str(call.get("id")), {})
            reply = tool_messages.get(str(call.get("id")), {})
            error = event.get("error") or reply.get("error")
            tool: dict[str, Any] = {"name": sink.tool_name(str(call.get("function") or "?")), "args": args,
                                    "input": source if isinstance(source, str) else None, "output": output,
                                    "error": _error_text(error)}
            if not isinstance(call.get("arguments"), dict):
                tool["error"] = tool["error"] or f"the arguments are not an object ({call.get('parse_error') or 'none'})"
            digest = image_digest(event.get("result")) or image_digest(reply.get("content"))
            if digest and tool["error"] is None:
                record["tool_outputs"][output] = digest
            if tool["error"] is None:
                produced.append(output)
            steps.append({"thought": thought if index == 0 else "", "tool": tool})
    return steps, turns, produced


def _error_text(error: Any) -> str | None:
    if isinstance(error, dict):
        message = error.get("message")
        kind = error.get("type")
        return f"{kind}: {message}" if kind and message else str(message or kind or "error")
    return str(error) if error else None


def _usage(model_usage: Any, models: set[str]) -> tuple[dict[str, int] | None, float | None]:
    if not isinstance(model_usage, dict):
        return None, None
    rows = [u for name, u in model_usage.items() if name in models and isinstance(u, dict)]
    if not rows:
        return None, None
    # Inspect counts cached input apart (input_tokens excludes it); ours is all the input the model read.
    read = sum(int(u.get("input_tokens") or 0) + int(u.get("input_tokens_cache_read") or 0)
               + int(u.get("input_tokens_cache_write") or 0) for u in rows)
    written = sum(int(u.get("output_tokens") or 0) for u in rows)
    costs = [u["total_cost"] for u in rows if isinstance(u.get("total_cost"), (int, float))]
    return {"input_tokens": read, "output_tokens": written}, (float(sum(costs)) if costs else None)


def _images_sent(model_events: list[dict[str, Any]]) -> list[list[str]]:
    """Per model call, the SHA-256 of the images of its input not in the previous call's input."""
    sent: list[list[str]] = []
    before = 0
    for event in model_events:
        messages = event.get("input") if isinstance(event.get("input"), list) else []
        new = messages[before:] if len(messages) >= before else messages
        before = len(messages) + 1  # the next input also holds this call's answer
        turn = []
        for message in new:
            if isinstance(message, dict) and message.get("role") != "assistant":
                for part in _parts(message.get("content")):
                    digest = image_digest([part])
                    if digest:
                        turn.append(digest)
        sent.append(turn)
    return sent if any(sent) else []


def _failure(pred: dict[str, Any], data: dict[str, Any], output: dict[str, Any], record: dict[str, Any]) -> None:
    klass = detail = None
    error = data.get("error")
    limit = data.get("limit") if isinstance(data.get("limit"), dict) else None
    choices = output.get("choices") if isinstance(output.get("choices"), list) else []
    stop = choices[0].get("stop_reason") if choices and isinstance(choices[0], dict) else None
    if error:
        klass, detail = "provider_error", _error_text(error)
    elif limit is not None:
        klass = LIMIT_FAILURES.get(str(limit.get("type")))
        detail = f"Inspect's {limit.get('type')} limit ({limit.get('limit')}) ended the sample"
        record["inspect_limit"] = limit
    elif stop == "content_filter":
        klass, detail = "content_filter", "the model's provider stopped the answer by its content filter"
    if klass is None:
        if detail:
            pred["failure_detail"] = detail
        return
    pred["answer"] = None
    pred.pop("answer_image", None)
    pred["failure"] = klass
    pred["failure_detail"] = detail
