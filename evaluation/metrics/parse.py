"""Turn one decoded prediction object (formats.md) into a typed ``Prediction``.

The checks are strict about what the scorer reads and lenient about the rest: unknown fields
are ignored here (the submission pipeline keeps them in ``meta``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .tool_effect import outputs_shown
from .types import (
    FAILURE_CLASSES,
    MODES,
    Prediction,
    PredictionFormatError,
    Step,
    ToolCall,
    make_prediction,
    make_step,
    make_tool_call,
)

_MODES = frozenset(MODES)
_FAILURES = frozenset(FAILURE_CLASSES)
NO_ANSWER_WITH_FAILURE = "null or an empty string (a line with a failure class has no answer)"


def _failure(obj: Mapping[str, Any], answer: str) -> str | None:
    """The line's failure class (spec runs.md), checked; None for a line without one."""
    detail = obj.get("failure_detail")
    if detail is not None and type(detail) is not str:
        raise PredictionFormatError("failure_detail", "a string or null", detail)
    failure = obj.get("failure")
    if failure is None:
        return None
    if type(failure) is not str or failure not in _FAILURES:
        raise PredictionFormatError("failure", "null or one of " + ", ".join(FAILURE_CLASSES), failure)
    if answer.strip():
        raise PredictionFormatError("answer", NO_ANSWER_WITH_FAILURE, obj.get("answer"))
    return failure


def _ref(v: Any, where: str) -> str | None:
    if v is None or type(v) is str:
        return v
    raise PredictionFormatError(where, "a string or null", v)


# What one line may carry (docs/formats.md, "Numbers in range"): far above any real call, and far enough
# below what the database columns (a 64-bit integer, a double) and the sums over a whole file hold that
# a number past them is refused here, naming its line and field, not later as an internal error.
MAX_TOKENS = 10**12  # usage.input_tokens, usage.output_tokens
MAX_COST_USD = 10**9  # cost_usd
MAX_LATENCY_MS = 10**12  # latency_ms (about 30 years)
MAX_TURNS = 10**6  # turns


def _opt_num(obj: Mapping[str, Any], key: str, where: str, below: int) -> float | int | None:
    v = obj.get(key)
    if v is None:
        return None
    # bool is an int subclass; "true" tokens are not a count.
    if type(v) is bool or not isinstance(v, (int, float)) or v < 0:
        raise PredictionFormatError(where + key, "a non-negative number or null", v)
    if not v < below:  # NaN and infinity fail this too
        raise PredictionFormatError(where + key, f"a number below 10^{len(str(below)) - 1} on one line", v)
    return v


def _parse_tool(tool: Any, where: str) -> ToolCall:
    if type(tool) is not dict:
        raise PredictionFormatError(where, "an object", tool)
    name = tool.get("name")
    if type(name) is not str or not name:
        raise PredictionFormatError(where + ".name", "a non-empty string", name)
    args = tool.get("args")
    if args is None:
        args = {}
    elif type(args) is not dict:
        raise PredictionFormatError(where + ".args", "an object", args)
    err = tool.get("error")
    if err is not None and type(err) is not str:
        # Some harnesses log structured errors; their presence is what matters.
        err = str(err)
    return make_tool_call(  # ToolCall(name, args, input, output, error), built fast
        name,
        args,
        _ref(tool.get("input"), where + ".input"),
        _ref(tool.get("output"), where + ".output"),
        err or None,
    )


def parse_prediction(obj: Any) -> Prediction:
    """Validate one decoded JSON object and build the typed prediction.

    Raises PredictionFormatError naming the offending field (e.g. ``steps[2].tool.name``).
    """
    if type(obj) is not dict:
        raise PredictionFormatError("(line)", "a JSON object", obj)
    sid = obj.get("sample_id")
    if type(sid) is not str or not sid:
        raise PredictionFormatError("sample_id", "a non-empty string", sid)
    mode = obj.get("mode")
    if mode not in _MODES:
        raise PredictionFormatError("mode", "one of " + ", ".join(MODES), mode)
    answer = obj.get("answer")
    if answer is None:
        answer = ""
    elif type(answer) is not str:
        if isinstance(answer, (int, float)) and type(answer) is not bool:
            answer = str(answer)  # a bare number is a common, harmless slip
        else:
            raise PredictionFormatError("answer", "a string", answer)
    response = obj.get("response")
    if response is None:
        response = ""
    elif type(response) is not str:
        raise PredictionFormatError("response", "a string or null", response)

    raw_steps = obj.get("steps")
    steps: tuple[Step, ...] = ()
    if raw_steps is not None:
        if type(raw_steps) is not list:
            raise PredictionFormatError("steps", "a list", raw_steps)
        built = []
        for i, st in enumerate(raw_steps):
            if type(st) is not dict:
                raise PredictionFormatError(f"steps[{i}]", "an object", st)
            thought = st.get("thought")
            if thought is None:
                thought = ""
            elif type(thought) is not str:
                raise PredictionFormatError(f"steps[{i}].thought", "a string", thought)
            tool = st.get("tool")
            built.append(
                make_step(thought, None if tool is None else _parse_tool(tool, f"steps[{i}].tool"))
            )
        steps = tuple(built)

    usage = obj.get("usage")
    in_tok = out_tok = None
    if usage is not None:
        if type(usage) is not dict:
            raise PredictionFormatError("usage", "an object", usage)
        in_tok = _opt_num(usage, "input_tokens", "usage.", MAX_TOKENS)
        out_tok = _opt_num(usage, "output_tokens", "usage.", MAX_TOKENS)
    turns = _opt_num(obj, "turns", "", MAX_TURNS) if "turns" in obj else None
    failure = _failure(obj, answer) if "failure" in obj or "failure_detail" in obj else None
    return make_prediction(  # Prediction's fields in order, built fast
        sid,  # sample_id
        mode,
        answer,
        response,
        steps,
        _ref(obj.get("answer_image"), "answer_image"),
        int(in_tok) if in_tok is not None else None,  # input_tokens
        int(out_tok) if out_tok is not None else None,  # output_tokens
        int(turns) if turns is not None else None,  # turns
        _opt_num(obj, "latency_ms", "", MAX_LATENCY_MS) if "latency_ms" in obj else None,
        _opt_num(obj, "cost_usd", "", MAX_COST_USD) if "cost_usd" in obj else None,
        failure,
        _shown(obj) if "run" in obj else None,  # outputs_shown
    )


def _shown(obj: dict[str, Any]) -> tuple[int, int] | None:
    """(tool outputs shown, successful calls) of a line whose ``run`` records the images sent (metrics.md
    section 15); kept on the Prediction, since the scorer does not see the ``run`` of a parsed line."""
    found = outputs_shown(obj.get("steps"), obj.get("run"))
    return None if found is None else found[:2]
