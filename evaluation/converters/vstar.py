"""V* Bench's evaluation output -> our predictions (mode ``adaptive``).

Their ``vstar_bench_eval.py`` writes ``eval_result.json``: ``{"direct_attributes": [...],
"relative_position": [...]}``, one object per image: ``image`` (the file name), ``question``,
``options`` (the correct one first), ``prediction_freeform``, ``missing_objects``, ``search_result``
(the boxes their visual search found), ``option_chosen`` (the index of the option of lowest loss) and
``correct``, which is not read (we score). The sample is ``<subtask>:<image name without extension>``
(the V* reader's uid); ``option_chosen`` becomes the letter that option has in the order the reader shows
(``annotation.releases.vstar.option_order``); ``prediction_freeform`` is the response. Each object searched
for is a step (its name and the boxes found, as a thought: their search is not one of our tools).
Mode ``adaptive``: their model decides whether to search.
"""

from __future__ import annotations

import string
from typing import IO, Any

import orjson

from annotation.releases.vstar import option_order

from .common import Loc, Sink, WrongKind, text_of


def convert(stream: IO[bytes], sink: Sink, *, filename: str, kind: str) -> None:
    try:
        data = orjson.loads(stream.read())
    except orjson.JSONDecodeError as exc:
        raise WrongKind(f"The file is not valid JSON ({exc}); V*'s eval_result.json is one JSON object.") from exc
    if not isinstance(data, dict) or not all(isinstance(v, list) for v in data.values()):
        raise WrongKind("The JSON is not an object of subtask -> list of results, as V*'s eval_result.json is.")
    n = 0
    for subtask, results in data.items():
        for item in results:
            n += 1
            loc = Loc.of("item", n)
            sink.item()
            if not isinstance(item, dict):
                sink.error(loc, subtask, f"expected a result object, got {type(item).__name__}")
                continue
            image = str(item.get("image") or "")
            stem = image.rsplit(".", 1)[0] if "." in image else image
            sid = sink.sample_id(loc, [("image", f"{subtask}:{stem}" if stem else None)])
            if sid is None:
                continue
            options, chosen = item.get("options"), item.get("option_chosen")
            if not isinstance(options, list) or not isinstance(chosen, int) or not 0 <= chosen < len(options):
                sink.error(loc, f"{subtask}.option_chosen", "expected the index of one of the options")
                continue
            letter = string.ascii_uppercase[option_order(sid, len(options)).index(chosen)]
            steps = [{"thought": f"visual search for {r.get('name')}: {r.get('bbox')}"}
                     for r in item.get("search_result") or [] if isinstance(r, dict)]
            pred: dict[str, Any] = {"sample_id": sid, "mode": "adaptive", "answer": letter,
                                    "response": text_of(item.get("prediction_freeform")), "steps": steps}
            sink.emit(loc, pred)
