"""The toolchain runner, recovery transforms and oracle images.

A chain is the `toolchain` list of formats.md: `{"tool": name, "args": {...}, "input": "img0",
"output": "img1"}`. `img0` is the original; an omitted input is the previous call's output, an
omitted output the next new reference (`img<n>`, one above the highest number in use). The
runner keeps every image and measurement and stops at the first failing call, with an error
naming the step (1-based) and the argument.
"""

from __future__ import annotations

import json
import math
import re
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import asdict, dataclass, field
from collections.abc import Iterable
from typing import Any

import cv2
import numpy as np

from annotation.imagetools.context import Limits, ToolContext, ToolOutput
from annotation.imagetools.errors import ChainError, ToolError
from annotation.imagetools.images import ensure_image
from annotation.imagetools.registry import REGISTRY, Tool, fold_name, resolve_tool_name, unknown_tool_message

ORIGINAL = "img0"
_REF = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,63}$")  # also a safe file name
_NUMBERED = re.compile(r"^img(\d+)$")


@dataclass
class StepResult:
    index: int  # 1-based
    tool: str  # canonical name (as given when unknown)
    input: str
    output: str
    args: dict  # with defaults filled in
    measurements: dict = field(default_factory=dict)
    error: str | None = None
    elapsed_ms: float = 0.0
    # Why the step was not run (a benchmark's declared tool, or an input only such a step
    # makes); None when it ran. A skipped step is not an error: the chain goes on.
    skipped: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class ChainResult:
    steps: list[StepResult] = field(default_factory=list)
    images: dict[str, np.ndarray] = field(default_factory=dict)  # img0, extras, every output
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def final(self) -> str:
        """The reference of the last image produced (img0 when nothing ran)."""
        done = [s for s in self.steps if s.error is None and s.skipped is None]
        return done[-1].output if done else ORIGINAL

    def to_dict(self) -> dict:
        """JSON-ready: the steps and the error, not the images."""
        return {"ok": self.ok, "error": self.error, "final": self.final,
                "steps": [s.to_dict() for s in self.steps]}


def run_chain(image: np.ndarray, chain: list[dict], *, limits: Limits | None = None,
              extra_images: dict[str, np.ndarray] | None = None,
              declared: Iterable[str] = ()) -> ChainResult:
    """Runs the chain on `image` (img0). Problems with the chain or the images come back in
    `ChainResult.error` (and the failing step's `error`); nothing is raised for them.

    `declared` names tools a benchmark declares but the registry does not run (compared like
    registry names, and before them): their calls are skipped ("declared, not run here"), so
    are the calls that read an image only a skipped call would have made, and the rest runs."""
    return _Run(limits or Limits(), label="step", declared=declared).execute(image, chain, extra_images or {})


class _Run:
    def __init__(self, limits: Limits, label: str, declared: Iterable[str] = ()) -> None:
        self.limits = limits
        self.label = label
        self.declared = {fold_name(name): name for name in declared}
        self.unrun: dict[str, tuple[int, str]] = {}  # output of a skipped step -> (step, tool)

    def execute(self, image: np.ndarray, chain: Any, extras: dict[str, np.ndarray]) -> ChainResult:
        result = ChainResult()
        start = time.perf_counter()
        try:
            result.images = self._initial_images(image, extras)
        except ToolError as error:
            result.error = str(error)
            return result
        if not isinstance(chain, list):
            result.error = f"the toolchain must be a list of calls, got {type(chain).__name__}"
            return result
        if len(chain) > self.limits.max_chain_length:
            result.error = (f"the toolchain has {len(chain)} steps, more than the limit of "
                            f"{self.limits.max_chain_length}")
            return result
        protected = {ORIGINAL, *extras}
        previous = ORIGINAL
        # Each call runs in a worker thread so that the time limit holds even inside one long
        # OpenCV call (which releases the GIL but cannot be interrupted). Not a `with` block:
        # its exit would wait for a call that overran.
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="toolchain")
        try:
            for index, call in enumerate(chain, start=1):
                step = self._step(index, call, previous, result.images, protected, start, pool)
                result.steps.append(step)
                if step.error:
                    result.error = step.error
                    break
                if step.skipped is None:
                    self.unrun.pop(step.output, None)  # a real image replaces a skipped one
                previous = step.output
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
        return result

    def _initial_images(self, image: np.ndarray, extras: dict[str, np.ndarray]) -> dict:
        images = {ORIGINAL: self._checked(ensure_image(image, name=ORIGINAL), ORIGINAL)}
        for name, extra in extras.items():
            if name == ORIGINAL or not isinstance(name, str) or not _REF.match(name):
                raise ToolError(f'"{name}" cannot name an extra image (img0 is the original; '
                                "names are letters, digits, _ . - up to 64)")
            images[name] = self._checked(ensure_image(extra, name=name), name)
        return images

    def _checked(self, image: np.ndarray, name: str) -> np.ndarray:
        pixels = image.shape[0] * image.shape[1]
        if pixels > self.limits.max_pixels:
            raise ToolError(f"{name} has {pixels:,} pixels, above the limit of "
                            f"{self.limits.max_pixels:,}")
        return image

    def _step(self, index: int, call: Any, previous: str, images: dict[str, np.ndarray],
              protected: set[str], start: float, pool: ThreadPoolExecutor) -> StepResult:
        if isinstance(call, dict) and isinstance(call.get("tool"), dict):
            call = call["tool"]  # a prediction step: {"thought": ..., "tool": {"name": ...}}
        if not isinstance(call, dict):
            return self._failed(index, "?", previous, "", {},
                                f'expected an object with "tool" and "args", got {_kind(call)}',
                                named=False)
        given = call.get("tool", call.get("name"))
        if given is None:
            return self._failed(index, "?", previous, "", {},
                                'the call names no tool (expected "tool": name)', named=False)
        source = call.get("input") or previous
        output = call.get("output") or _next_ref([*images, *self.unrun])
        if self.declared or self.unrun:
            skipped = self._skipped(index, given, source, output)
            if skipped is not None:
                return skipped
        name = resolve_tool_name(given)
        shown = name or (given if isinstance(given, str) else "?")
        if name is None:
            return self._failed(index, shown, source, output, {}, unknown_tool_message(given),
                                named=False)
        tool = REGISTRY[name]
        raw = call.get("args", call.get("arguments"))
        args, problem = _parse_args(raw)
        if problem is None:
            problem = _reference_problem(source, output, images, protected)
        if problem is None:
            filled, errors = tool.problems(args)
            if errors:
                problem = "; ".join(str(e) for e in errors)
            else:
                args = filled
        if problem is not None:
            return self._failed(index, name, source, output, args, problem)
        return self._run(index, tool, source, output, args, images, start, pool)

    def _skipped(self, index: int, given: Any, source: Any, output: Any) -> StepResult | None:
        declared = self.declared.get(fold_name(given)) if isinstance(given, str) else None
        if declared is not None:
            reason = "declared, not run here"
        elif isinstance(source, str) and source in self.unrun:
            step, tool = self.unrun[source]
            reason = f"not run: its input {source} comes from step {step} ({tool}), which is not run here"
        else:
            return None
        tool_name = declared or resolve_tool_name(given) or (given if isinstance(given, str) else "?")
        if isinstance(output, str):
            self.unrun[output] = (index, tool_name)
        return StepResult(index=index, tool=tool_name, input=str(source), output=str(output), args={},
                          skipped=reason)

    def _run(self, index: int, tool: Tool, source: str, output: str, args: dict,
             images: dict[str, np.ndarray], start: float, pool: ThreadPoolExecutor) -> StepResult:
        remaining = self.limits.time_limit_s - (time.perf_counter() - start)
        if remaining <= 0:
            return self._failed(index, tool.name, source, output, args,
                                f"the time limit of {self.limits.time_limit_s:g} s was reached "
                                "before this step")
        ctx = ToolContext(limits=self.limits, images=images)
        began = time.perf_counter()
        future = pool.submit(tool.func, images[source], args, ctx)
        try:
            produced: ToolOutput = future.result(timeout=remaining)
            image = self._checked(ensure_image(produced.image, name=output), output)
            self._check_total(images, output, image)
        except FutureTimeout:
            # The OpenCV call cannot be interrupted; its thread finishes alone and is discarded.
            problem = f"the time limit of {self.limits.time_limit_s:g} s was exceeded"
            return self._failed(index, tool.name, source, output, args, problem)
        except ToolError as error:
            return self._failed(index, tool.name, source, output, args, str(error))
        except cv2.error as error:
            detail = str(error).strip().splitlines()[-1] if str(error).strip() else "error"
            return self._failed(index, tool.name, source, output, args, f"OpenCV failed: {detail}")
        except MemoryError:
            return self._failed(index, tool.name, source, output, args, "out of memory")
        except Exception as error:  # noqa: BLE001 - a model's call must never crash the scorer
            return self._failed(index, tool.name, source, output, args,
                                f"internal error ({type(error).__name__}: {error})")
        images[output] = image
        return StepResult(index=index, tool=tool.name, input=source, output=output, args=args,
                          measurements=_plain(produced.measurements),
                          elapsed_ms=round((time.perf_counter() - began) * 1000, 3))

    def _check_total(self, images: dict[str, np.ndarray], output: str, image: np.ndarray) -> None:
        total = sum(i.shape[0] * i.shape[1] for name, i in images.items() if name != output)
        total += image.shape[0] * image.shape[1]
        if total > self.limits.max_total_pixels:
            raise ToolError(f"the chain's images would hold {total:,} pixels, above the limit of "
                            f"{self.limits.max_total_pixels:,}")

    def _failed(self, index: int, tool: str, source: str, output: str, args: Any, problem: str,
                *, named: bool = True) -> StepResult:
        where = f"{self.label} {index} ({tool})" if named else f"{self.label} {index}"
        return StepResult(index=index, tool=tool, input=source, output=output,
                          args=args if isinstance(args, dict) else {},
                          error=f"{where}: {problem}")


def _parse_args(raw: Any) -> tuple[Any, str | None]:
    if raw is None:
        return {}, None
    if isinstance(raw, str):  # function-calling APIs send the arguments as a JSON string
        try:
            raw = json.loads(raw) if raw.strip() else {}
        except json.JSONDecodeError as error:
            return {}, f"the arguments are not valid JSON ({error.msg})"
    if not isinstance(raw, dict):
        return raw, f"arguments must be a JSON object, got {_kind(raw)}"
    return raw, None


def _reference_problem(source: Any, output: Any, images: dict, protected: set[str]) -> str | None:
    if not isinstance(source, str) or source not in images:
        return f'input "{source}" is not a known image (known: {", ".join(images)})'
    if not isinstance(output, str) or not _REF.match(output):
        return (f'output "{output}" is not a valid image name (a letter, then letters, digits, '
                "_ . -; up to 64)")
    if output in protected:
        return f'output "{output}" would overwrite an input image'
    return None


def may_produce(chain: Any, ref: str, *, initial: Iterable[str] = (ORIGINAL,)) -> bool:
    """Could a run of ``chain`` hold an image named ``ref``? Answered without running anything.

    True for the initial images, a call's explicit output, and an automatic name (``img<k>``, the
    highest number so far plus one) within reach of the calls that name no output; a run holds fewer (a step
    that fails or is skipped produces nothing). Lets a server refuse an unknown name before paying
    for a run.
    """
    names = set(initial)
    if ref in names:
        return True
    calls = chain if isinstance(chain, list) else []
    outputs = []
    for call in calls:
        if isinstance(call, dict) and isinstance(call.get("tool"), dict):
            call = call["tool"]
        outputs.append(call.get("output") if isinstance(call, dict) else None)
    if ref in outputs:
        return True
    numbered = _NUMBERED.match(ref)
    if numbered is None or ref != f"img{int(numbered.group(1))}":  # automatic names have no leading zeros
        return False
    named = [n for n in (*names, *outputs) if isinstance(n, str)]
    highest = max((int(m.group(1)) for m in map(_NUMBERED.match, named) if m), default=0)
    unnamed = sum(1 for o in outputs if not o)  # only these take an automatic name
    return 1 <= int(numbered.group(1)) <= highest + unnamed


def _next_ref(images: Iterable[str]) -> str:
    numbers = [int(m.group(1)) for m in map(_NUMBERED.match, images) if m]
    return f"img{max(numbers, default=0) + 1}"


def _kind(value: Any) -> str:
    return {list: "a list", str: "a string", int: "a number", float: "a number", bool: "a boolean",
            type(None): "null"}.get(type(value), type(value).__name__)


def _plain(value: Any) -> Any:
    """Measurements as plain JSON values (a tool may hand back NumPy numbers)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return _plain(value.tolist())
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        value = float(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


# --- transforms and oracle images ---------------------------------------------------------

def apply_transform(image: np.ndarray, ops: list[dict], *, limits: Limits | None = None,
                    ) -> np.ndarray:
    """The image after a formats.md `transform`: a list of {"op": tool name, **arguments}.
    Raises ChainError naming the operation (1-based) and the argument."""
    if not isinstance(ops, list):
        raise ChainError(f"the transform must be a list of operations, got {_kind(ops)}")
    chain = []
    for index, op in enumerate(ops, start=1):
        if not isinstance(op, dict) or not isinstance(op.get("op"), str):
            raise ChainError(f'transform {index}: expected {{"op": name, ...arguments}}, got '
                             f"{json.dumps(op)[:80] if _jsonable(op) else _kind(op)}", step=index)
        args = {k: v for k, v in op.items() if k != "op"}
        if set(args) == {"args"} and isinstance(args["args"], dict):
            args = args["args"]
        chain.append({"tool": op["op"], "args": args})
    result = _Run(limits or Limits(), label="transform").execute(image, chain, {})
    if not result.ok:
        failed = result.steps[-1] if result.steps else None
        raise ChainError(result.error or "the transform failed",
                         step=failed.index if failed else None,
                         tool=failed.tool if failed else None)
    return result.images[result.final]


def oracle_image(image: np.ndarray, transform: list[dict], regions: list[list[float]], *,
                 limits: Limits | None = None) -> np.ndarray:
    """The oracle-visual image I_E: `transform` applied, then cut to the regions.

    Several regions give one image: the smallest box holding all of them (their union's
    bounding box), so the evidence keeps its layout and the context between the parts. Regions
    are in pixels of the transformed image; parts outside it are clipped away. No regions: the
    whole transformed image.
    """
    out = apply_transform(image, transform, limits=limits) if transform else ensure_image(image)
    if not regions:
        return out
    height, width = out.shape[:2]
    boxes = []
    for index, region in enumerate(regions, start=1):
        if not (isinstance(region, (list, tuple)) and len(region) == 4
                and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in region)):
            raise ChainError(f"region {index}: expected [x1, y1, x2, y2], got {region!r}")
        x1, y1, x2, y2 = region
        if x2 <= x1 or y2 <= y1:
            raise ChainError(f"region {index}: x2 and y2 must be greater than x1 and y1, got "
                             f"{list(region)}")
        boxes.append(region)
    x1 = max(0, math.floor(min(b[0] for b in boxes)))
    y1 = max(0, math.floor(min(b[1] for b in boxes)))
    x2 = min(width, math.ceil(max(b[2] for b in boxes)))
    y2 = min(height, math.ceil(max(b[3] for b in boxes)))
    if x2 <= x1 or y2 <= y1:
        raise ChainError(f"the regions lie outside the image ({width}x{height})")
    return np.ascontiguousarray(out[y1:y2, x1:x2])


def _jsonable(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True
