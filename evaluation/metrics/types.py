"""Plain data in, typed results out: the scoring library's inputs and results.

Inputs are frozen, slotted dataclasses so the scorer can precompute per-sample data once and
share it safely. Every aggregate carries its denominator ``n`` so a reader sees what it stands
on; a value is ``None`` (never NaN) when its denominator is zero.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from operator import attrgetter
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

# blind: the question without the image (MMReason's guessability filter; metrics.md).
MODES: tuple[str, ...] = ("text", "adaptive", "oracle", "blind")
N_MODES = len(MODES)
# The modes the board shows as columns (blind has its own tab), and the order a headline mode is chosen in.
BOARD_MODES: tuple[str, ...] = MODES[:3]
HEADLINE_ORDER: tuple[str, ...] = ("adaptive", "text", "oracle")
ANSWER_TYPES: frozenset[str] = frozenset({"choice", "number", "text"})
# Why an attempt ended without an answer (spec runs.md): a line carrying one is scored wrong, never
# dropped, and is not answered. The order is the one results and pages list them in.
FAILURE_CLASSES: tuple[str, ...] = ("provider_error", "timeout", "content_filter", "tool_error", "max_turns")


class PredictionFormatError(ValueError):
    """A decoded prediction object does not follow formats.md; names the field."""

    def __init__(self, field_name: str, expected: str, got: Any = None) -> None:
        self.field = field_name
        self.expected = expected
        shown = repr(got)
        if len(shown) > 80:
            shown = shown[:77] + "..."
        super().__init__(f"field '{field_name}': expected {expected}, got {shown}")


@dataclass(frozen=True, slots=True)
class RefCall:
    """One call of a sample's reference toolchain."""

    tool: str
    args: Mapping[str, Any] = field(default_factory=dict)
    input: str | None = None
    output: str | None = None


@dataclass(frozen=True, slots=True)
class Sample:
    uid: str
    domain: str = ""
    category: str = ""
    answer: str = ""
    answer_type: str = "text"
    options: Mapping[str, str] | None = None
    tolerance: float | None = None
    aux_line: bool = False
    transform: tuple[Mapping[str, Any], ...] = ()
    regions: tuple[tuple[float, float, float, float], ...] = ()
    key_steps: tuple[str, ...] = ()
    toolchain: tuple[RefCall, ...] = ()
    question: str = ""
    # A sample with several media (formats.md `images`): how many, and the medium each region is
    # on (parallel to `regions`; empty when every region is on img0).
    n_images: int = 1
    region_images: tuple[str, ...] = ()

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> Sample:
        """Build a sample from the benchmark-file shape (formats.md)."""
        chain = tuple(
            RefCall(
                tool=str(c.get("tool", "")),
                args=dict(c.get("args") or {}),
                input=c.get("input"),
                output=c.get("output"),
            )
            for c in (data.get("toolchain") or ())
        )
        tol = data.get("tolerance")
        # A region is a box on img0, or {"box": [...], "image": "img<k>"} (formats.md).
        located = [(r.get("image") or "img0", r.get("box") or ()) if isinstance(r, Mapping) else ("img0", r)
                   for r in (data.get("regions") or ())]
        images = data.get("images")
        n_images = len(images) if isinstance(images, (list, tuple)) and images else int(data.get("n_images") or 1)
        return cls(
            uid=str(data["uid"]),
            domain=str(data.get("domain") or ""),
            category=str(data.get("category") or ""),
            answer=str(data.get("answer") if data.get("answer") is not None else ""),
            answer_type=str(data.get("answer_type") or ("choice" if data.get("options") else "text")),
            options=dict(data["options"]) if data.get("options") else None,
            tolerance=float(tol) if tol is not None else None,
            aux_line=bool(data.get("aux_line", False)),
            transform=tuple(dict(t) for t in (data.get("transform") or ())),
            regions=tuple(tuple(float(v) for v in box) for _, box in located),  # type: ignore[misc]  # 4 floats a box: the import validated them
            key_steps=tuple(str(k) for k in (data.get("key_steps") or ())),
            toolchain=chain,
            question=str(data.get("question") or ""),
            n_images=n_images,
            region_images=tuple(ref for ref, _ in located) if any(ref != "img0" for ref, _ in located) else (),
        )

    @property
    def has_recovery(self) -> bool:
        """True when the annotation asks for a recovery transform (not in `w/o enh.`)."""
        return bool(self.transform)


@dataclass(frozen=True, slots=True)
class ToolCall:
    name: str
    args: Mapping[str, Any]
    input: str | None = None
    output: str | None = None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class Step:
    thought: str = ""
    tool: ToolCall | None = None


@dataclass(frozen=True, slots=True)
class Prediction:
    sample_id: str
    mode: str
    answer: str = ""
    response: str = ""
    steps: tuple[Step, ...] = ()
    answer_image: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    turns: int | None = None
    latency_ms: float | None = None
    cost_usd: float | None = None
    failure: str | None = None  # one of FAILURE_CLASSES: the attempt ended without an answer
    # (tool outputs shown, successful calls) from the line's ``run`` record (tool_effect.outputs_shown); None
    # when the line does not record the images sent
    outputs_shown: tuple[int, int] | None = None

    @property
    def calls(self) -> tuple[ToolCall, ...]:
        return tuple(s.tool for s in self.steps if s.tool is not None)


T = TypeVar("T", bound="DataclassInstance")


def fast_constructor(cls: type[T]) -> Callable[..., T]:
    """A positional constructor for a frozen, slotted dataclass that fills the slots directly.

    Same instance as ``cls(*fields)`` (equality, hash, immutability afterwards), without the
    frozen ``__init__``'s ``object.__setattr__`` per field: the scorer builds steps, tool calls
    and judge questions by the hundred thousand. It runs no ``__post_init__``, so it is only
    for classes without one.
    """
    names = [f.name for f in fields(cls)]
    if getattr(cls, "__post_init__", None) is not None:
        raise TypeError(f"{cls.__name__} has a __post_init__")
    env: dict[str, Any] = {"_new": object.__new__, "_cls": cls}
    body = []
    for i, name in enumerate(names):
        env[f"_set{i}"] = cls.__dict__[name].__set__  # the slot's member descriptor
        body.append(f"    _set{i}(o, a{i})\n")
    args = ", ".join(f"a{i}" for i in range(len(names)))
    exec(f"def make({args}):\n    o = _new(_cls)\n{''.join(body)}    return o\n", env)
    make: Callable[..., T] = env["make"]
    make.__name__ = make.__qualname__ = f"make_{cls.__name__}"
    return make


def fast_replace(cls: type[T]) -> Callable[..., T]:
    """``dataclasses.replace`` for a frozen, slotted dataclass without a ``__post_init__``: the fields read by one
    ``attrgetter`` call and the copy made by ``fast_constructor``, where ``replace`` calls ``fields()`` and the
    frozen ``__init__`` each time (the overview copies its 50 rows of 45 fields a few times a page). An unknown
    field name is a KeyError."""
    names = [f.name for f in fields(cls)]
    get = attrgetter(*names)
    index = {name: i for i, name in enumerate(names)}
    make = fast_constructor(cls)

    def replace(obj: T, /, **changes: Any) -> T:
        values = list(get(obj)) if len(names) > 1 else [get(obj)]
        for name, value in changes.items():
            values[index[name]] = value
        return make(*values)

    return replace


def fast_state(cls: type[T]) -> type[T]:
    """Give a frozen, slotted dataclass a ``__getstate__`` of one ``attrgetter`` call and a ``__setstate__`` through
    its slots' setters, in place of those ``dataclass`` generates (``fields()`` and a ``getattr`` per field, per
    object): pickling, as the cache stores a page's rows, and ``copy``. The state is the fields' values in order,
    as before, so a value pickled by either reads back with the other."""
    names = [f.name for f in fields(cls)]
    get = attrgetter(*names)
    setters = [cls.__dict__[name].__set__ for name in names]  # the slots' member descriptors

    def __getstate__(self: T) -> Any:
        return get(self) if len(names) > 1 else (get(self),)

    def __setstate__(self: T, state: Any) -> None:
        for set_, value in zip(setters, state):
            set_(self, value)

    setattr(cls, "__getstate__", __getstate__)  # noqa: B010 - replacing the generated methods on the class
    setattr(cls, "__setstate__", __setstate__)  # noqa: B010
    return cls


make_step = fast_constructor(Step)
make_tool_call = fast_constructor(ToolCall)
make_prediction = fast_constructor(Prediction)


# ---------------------------------------------------------------- results


@dataclass(frozen=True, slots=True)
class Interval:
    low: float
    high: float
    level: float = 0.95
    resamples: int = 1000
    seed: int = 0


@dataclass(frozen=True, slots=True)
class Rate:
    """A share (value in [0, 1]) of ``n``; ``count`` is the numerator."""

    count: int
    n: int
    interval: Interval | None = None
    # Why there is no value, when nothing in the file carries what the figure needs (metrics.md
    # section 14): "no tool calls in this file". None otherwise.
    reason: str | None = None
    # Rows of ``n`` no rule decided and only an LLM judge may (metrics.md section 13): counted neither
    # right nor wrong, and while there are any the share is not available (``reason`` says how many).
    undecided: int = 0

    @property
    def value(self) -> float | None:
        return self.count / self.n if self.n and not self.undecided else None

    @property
    def percent(self) -> float | None:
        return 100.0 * self.count / self.n if self.n and not self.undecided else None

    @property
    def decided_value(self) -> float | None:
        """The share right among the decided rows (beside a figure some rows of which need a judge)."""
        decided = self.n - self.undecided
        return self.count / decided if decided else None


@dataclass(frozen=True, slots=True)
class Mean:
    """A mean over ``n`` items; ``value`` is None when n == 0. ``interval``: the 95 % bootstrap
    interval, for the means the report gives one (see ``aggregate.mode_report``)."""

    value: float | None
    n: int
    interval: Interval | None = None
    reason: str | None = None  # why value is None: nothing in the file carries what it needs (section 14)


@dataclass(frozen=True, slots=True)
class Confusion:
    tp: int
    fp: int
    tn: int
    fn: int
    mcc: float | None  # None when undefined: an empty row or column of the matrix (``reason`` says which)
    interval: Interval | None = None
    reason: str | None = None

    @property
    def n(self) -> int:
        return self.tp + self.fp + self.tn + self.fn


class CallResult(NamedTuple):
    """Validity of one tool call, and who decided it.

    Records are built by the hundred thousand, so result records are immutable named tuples
    (cheap to build) rather than frozen dataclasses; attributes and defaults are the same.
    """

    name: str
    valid: bool | None
    decided_by: str
    errors: tuple[str, ...] = ()


class PredictionResult(NamedTuple):
    """Everything the scorer decided about one prediction; stored beside it for audits.

    An immutable named tuple (see CallResult): read it by attribute, field order may grow.
    """

    sample_id: str
    mode: str
    extracted: str
    correct: bool
    decided_by: str
    n_steps: int
    n_calls: int
    calls: tuple[CallResult, ...]
    l_total: int
    l_eff: int
    l_gt: int
    effective: tuple[int, ...]
    toolset_prf: tuple[float, float, float] | None  # None when the sample has no reference chain
    edit_distance: float | None
    key_steps: tuple[bool, ...] | None
    kcov: float | None
    kcov_any: float | None
    step_scores: tuple[float, ...] | None
    step_score: float | None
    iou: float | None
    tokens: int | None
    cost_usd: float | None
    latency_ms: float | None
    answer_verdict: bool | None = None  # the judge's yes/no, when the rules said wrong
    failure: str | None = None  # the line's failure class (FAILURE_CLASSES): wrong, not answered


@dataclass(frozen=True, slots=True)
class AccuracyTable:
    overall: Rate
    by_domain: Mapping[str, Rate]
    by_category: Mapping[str, Rate]
    wo_enh: Rate
    all: Rate
    aux_line: Rate
    missing: int


@dataclass(frozen=True, slots=True)
class ProcessReport:
    kcov: Mean
    kcov_any: Mean
    tool_eff: Rate
    tool_eff_per_sample: Mean
    mean_steps: Mean
    mean_calls: Mean
    mean_tokens: Mean
    mean_latency_ms: Mean
    grounding_iou: Mean
    grounding_hit: Rate
    step_score: Mean


@dataclass(frozen=True, slots=True)
class ToolchainReport:
    tcr: Rate
    mae_total: Mean
    mae_eff: Mean
    efficiency: Mean
    toolset_precision: Mean
    toolset_recall: Mean
    toolset_f1: Mean
    edit_distance: Mean


@dataclass(frozen=True, slots=True)
class CostReport:
    mean_cost_usd: Mean

    @property
    def per_10k_usd(self) -> float | None:
        v = self.mean_cost_usd.value
        return None if v is None else v * 10_000


@dataclass(frozen=True, slots=True)
class ModeReport:
    mode: str
    n_predictions: int
    accuracy: AccuracyTable
    process: ProcessReport
    toolchain: ToolchainReport
    cost: CostReport
    # Samples answered (a line with an answer and no failure class) over accuracy's denominator.
    answered: Rate = Rate(0, 0)
    # Lines with a failure class, per class (every class, in FAILURE_CLASSES order; non-aux
    # samples, like ``accuracy.missing``). A missing line is not a failure: it is ``missing``.
    failures: Mapping[str, int] = field(default_factory=dict)


# What the tools changed (metrics.md section 15; computed by tool_effect.py).
NO_IMAGES_SENT = "the file does not record the images sent"


@dataclass(frozen=True, slots=True)
class ToolEffectGroup:
    """The figures over ``n`` samples (the benchmark's, a domain's or a category's)."""

    n: int
    text_correct: int
    adaptive_correct: int
    solved: int  # solved by tools
    broken: int  # broken by tools
    unchanged: int  # tools called, nothing changed
    kept_right: int  # of those, right in both modes (the rest: wrong in both)
    drift_up: int  # right in adaptive, wrong in text, no valid call
    drift_down: int  # right in text, wrong in adaptive, no valid call
    contribution: Mean  # (solved - broken) / n, a share in [-1, 1]
    drift: Mean  # (drift_up - drift_down) / n
    difference: Mean  # adaptive accuracy - text accuracy = contribution + drift
    tool_only: Rate  # of the solved by tools, those wrong in blind mode (or all of them without blind lines)
    oracle_headroom: Rate  # right in oracle, wrong in adaptive, of n
    p_value: float  # exact McNemar on (solved, broken)
    significant: bool


@dataclass(frozen=True, slots=True)
class ToolEffect:
    """Section 15 for one submission; ``reason`` is set (and the groups empty) when it is not available."""

    overall: ToolEffectGroup | None
    by_domain: Mapping[str, ToolEffectGroup] = field(default_factory=dict)
    by_category: Mapping[str, ToolEffectGroup] = field(default_factory=dict)
    shown: Rate = Rate(0, 0, reason=NO_IMAGES_SENT)  # successful calls whose output image was sent later
    has_blind: bool = False
    has_oracle: bool = False
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class SubmissionReport:
    judge: str
    n_samples: int
    n_predictions: int
    modes: Mapping[str, ModeReport]
    mode_selection: Confusion | None
    records: tuple[PredictionResult, ...]
    scoring: str = "generic"  # the scoring profile that decided the answers (metrics.md section 13)
    tool_effect: ToolEffect | None = None  # what the tools changed, text -> adaptive (metrics.md section 15)
    # The authors' own figures under the hrbench, treebench and tirbench profiles (author_figures.py)
    author_figures: Mapping[str, Any] | None = None
