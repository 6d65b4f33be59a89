"""Agent-X model outputs -> our predictions (mode ``adaptive``).

The file is one JSON list of one-key objects ``{"<task id>": {query, filename, reasoning_steps,
final_answer}}``. The task id is the sample's uid. Each of ``reasoning_steps`` (``step``,
``task``, ``tool_used`` or ``tool``, ``tool_output``, ``thought``) is one turn: ``thought``
(else ``task``) is the step's thought; a tool named in ``tool_used`` (through the registry's
aliases; "none", "" and null mean no tool; several names separated by commas are several calls)
becomes the step's ``tool`` with the step's ``input``/``tool_input`` object as arguments when
there is one (Agent-X outputs usually carry none). ``task`` and ``tool_output`` ride along on
the step (kept in the stored file, unused by the scorer). ``final_answer.value`` -> ``answer``,
``final_answer.justification`` -> ``response``. An unparseable reply has ``reasoning_steps: ""``:
no steps, and it still counts with its answer. A top-level object keyed by task id is read the
same way.
"""

from __future__ import annotations

from typing import IO, Any

import orjson

from .common import Loc, Sink, WrongKind, text_of

KEEP_CHARS = 2000
NO_TOOL = frozenset({"", "none", "null", "n/a", "no tool", "-"})


def convert(stream: IO[bytes], sink: Sink, *, filename: str, kind: str) -> None:
    try:
        data = orjson.loads(stream.read())
    except orjson.JSONDecodeError as exc:
        raise WrongKind(f"The file is not valid JSON ({exc}); Agent-X outputs are one JSON list.") from exc
    if isinstance(data, dict):
        items: list[Any] = [{k: v} for k, v in data.items()]
    elif isinstance(data, list):
        items = data
    else:
        raise WrongKind("The JSON is neither a list of outputs nor an object keyed by task id.")
    for n, item in enumerate(items, start=1):
        loc = Loc.of("item", n)
        sink.item()
        if not isinstance(item, dict) or len(item) != 1:
            got = f"an object with {len(item)} keys" if isinstance(item, dict) else type(item).__name__
            sink.error(loc, "", f"expected an object with one key, the task id, got {got}")
            continue
        task_id, out = next(iter(item.items()))
        if not isinstance(out, dict):
            sink.error(loc, str(task_id), f"expected the task's output object, got {type(out).__name__}")
            continue
        sid = sink.sample_id(loc, [("(task id)", task_id)])
        if sid is None:
            continue
        prefix = f"{task_id}."
        steps = _steps(out.get("reasoning_steps"), loc, prefix, sink)
        if steps is None:
            continue
        pred: dict[str, Any] = {"sample_id": sid, "mode": "adaptive", "steps": steps[0], "turns": steps[1]}
        final = out.get("final_answer")
        if isinstance(final, dict):
            pred["answer"] = text_of(final.get("value"))
            if isinstance(final.get("justification"), str) and final["justification"]:
                pred["response"] = final["justification"]
        elif final is None or isinstance(final, (str, int, float)):
            pred["answer"] = text_of(final)
        else:
            sink.error(loc, prefix + "final_answer", f"expected an object with value and justification, got "
                                                     f"{type(final).__name__}")
            continue
        sink.emit(loc, pred)


def _clipped(value: Any) -> Any:
    """Kept for people reading the trace, not scored: a long tool output is cut, not carried whole."""
    text = value if isinstance(value, str) else text_of(value)
    return text if len(text) <= KEEP_CHARS else text[:KEEP_CHARS] + " [...]"


def _tool_names(value: Any) -> list[str] | None:
    if value is None:
        return []
    if isinstance(value, str):
        return [n.strip() for n in value.split(",") if n.strip().lower() not in NO_TOOL]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return [v.strip() for v in value if v.strip().lower() not in NO_TOOL]
    return None


def _steps(raw: Any, loc: Loc, prefix: str, sink: Sink) -> tuple[list[dict], int] | None:
    if raw is None or raw == "":
        return [], 0  # Agent-X writes "" when the reply could not be parsed
    if isinstance(raw, list) and len(raw) == 1 and isinstance(raw[0], list):
        raw = raw[0]  # sometimes wrapped in one more list
    if not isinstance(raw, list):
        sink.error(loc, prefix + "reasoning_steps", f"expected a list of steps or \"\", got {type(raw).__name__}")
        return None
    steps: list[dict] = []
    for i, st in enumerate(raw):
        where = f"{prefix}reasoning_steps[{i}]"
        if not isinstance(st, dict):
            sink.error(loc, where, f"expected a step object, got {type(st).__name__}")
            return None
        field_name = "tool_used" if "tool_used" in st else "tool"
        names = _tool_names(st.get(field_name))
        if names is None:
            sink.error(loc, f"{where}.{field_name}", "expected a tool name (or names separated by commas)")
            return None
        thought = st.get("thought") or st.get("task") or ""
        if not isinstance(thought, str):
            thought = text_of(thought)
        args = st.get("input", st.get("tool_input"))
        extra = {k: _clipped(st[k]) for k in ("task", "tool_output") if st.get(k) not in (None, "")}
        if not names:
            steps.append({"thought": thought, **extra})
        for c, name in enumerate(names):
            tool = {"name": sink.tool_name(name), "args": args if isinstance(args, dict) else {}}
            steps.append({"thought": thought if c == 0 else "", "tool": tool, **(extra if c == 0 else {})})
    return steps, len(raw)
