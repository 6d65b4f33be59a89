"""TIR-Bench response files -> our predictions (mode ``text``).

Their scripts read one JSON object keyed by the task's position, ``{"0": ..., "1": ...}`` (README:
"response file should follow structure below"). A value is the model's reply as text, or the task as
their ``extract_answer.py`` leaves it: ``model_response`` (a list: its first item) and
``extracted_answer`` (their LLM's extraction), maybe ``true_false``, which is not read (we score).
The key is the sample's uid (the TIR-Bench reader numbers the tasks so). ``model_response`` ->
``response``; ``extracted_answer`` -> ``answer`` (absent: the answer is empty, and the ``tirbench``
profile leaves the row to a judge, except ``ocr``, which reads the reply). Mode ``text``: the file holds
no trace of tool calls.
"""

from __future__ import annotations

from typing import IO, Any

import orjson

from .common import Loc, Sink, WrongKind, text_of


def convert(stream: IO[bytes], sink: Sink, *, filename: str, kind: str) -> None:
    try:
        data = orjson.loads(stream.read())
    except orjson.JSONDecodeError as exc:
        raise WrongKind(f"The file is not valid JSON ({exc}); a TIR-Bench response file is one JSON object.") from exc
    if not isinstance(data, dict):
        raise WrongKind("The JSON is not an object keyed \"0\", \"1\", ...: a TIR-Bench response file is one.")
    for n, (key, value) in enumerate(data.items(), start=1):
        loc = Loc.of("item", n)
        sink.item()
        sid = sink.sample_id(loc, [("(key)", key)])
        if sid is None:
            continue
        pred: dict[str, Any] = {"sample_id": sid, "mode": "text"}
        if isinstance(value, str):
            pred["answer"], pred["response"] = "", value
        elif isinstance(value, dict):
            response = value.get("model_response")
            if isinstance(response, list):
                response = response[0] if response else ""
            pred["response"] = text_of(response)
            pred["answer"] = text_of(value.get("extracted_answer"))
        else:
            sink.error(loc, str(key), f"expected the reply as text or the task with model_response, got "
                                      f"{type(value).__name__}")
            continue
        sink.emit(loc, pred)
