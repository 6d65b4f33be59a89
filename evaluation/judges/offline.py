"""The offline judge: deterministic, no network, the default.

What it decides, per question kind (also in docs/metrics.md):
- answer equivalence: equal when the normalised answers (metrics.answers.normalize_text) hold
  the same words in any order; it adds order-insensitivity to the rules and nothing else.
- key-step matching: a key step is matched when one prediction step (its thought plus its tool
  name) contains at least half of the key step's content words.
- tool-call validity: a zoom/crop must cover at least half of an annotated region's area
  (intersection / region area); a rotation must undo the annotated rotation within 5 degrees.
  A call the annotation cannot check (no regions, no annotated rotation, another tool, no box
  in the arguments) is valid: the rule checks (tool set, schema, execution error) ran before.
- step scores: 0 for a step whose tool call was found invalid; 1 when the step shares at least
  half of the smaller word set with some key step (overlap coefficient >= 0.5); otherwise 0.5,
  "unverifiable": word overlap can confirm a step but never refute it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from evaluation.metrics.answers import normalize_text
from evaluation.metrics.process import angle_gap, box_from_args, coverage, net_rotation
from evaluation.metrics.questions import (
    AnswerQuestion,
    KeyStepQuestion,
    StepScoreQuestion,
    ToolCallQuestion,
)
from evaluation.metrics.types import Sample, Step

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    "a an the of to in on at by for with and or is are was were be it its this that then "
    "from as into than so we i".split()
)
ROTATION_TOLERANCE_DEG = 5.0
MIN_REGION_COVERAGE = 0.5
KEY_STEP_MATCH = 0.5
_MEMO_LIMIT = 500_000


def _content_words(text: str) -> frozenset[str]:
    """The distinct [a-z0-9]+ runs of the lower-cased text, stop words removed."""
    low = text.lower()
    # Plain ASCII words and single spaces (the common case): split instead of the regex; the
    # runs are the same.
    if low.isascii() and low.replace(" ", "").isalnum():
        return frozenset(low.split()) - _STOP
    return frozenset(_WORD.findall(low)) - _STOP


class OfflineJudge:
    name = "offline"
    version = "v1"

    def __init__(self) -> None:
        # Memos of pure functions, per judge instance (so per submission in the pipeline).
        self._words: dict[str, frozenset[str]] = {}
        self._step_words: dict[tuple[str, str], frozenset[str]] = {}
        # Keyed by the key-step texts themselves, so one judge can serve several benchmarks:
        # each key step's content words with the overlap it needs.
        self._key_words: dict[tuple[str, ...], tuple[tuple[frozenset[str], float], ...]] = {}
        self._gold_words: dict[str, list[str]] = {}
        self._answers: dict[tuple[str, str], bool] = {}
        self._rotation: dict[int, tuple[object, float | None]] = {}

    def _tokens(self, text: str) -> frozenset[str]:
        memo = self._words
        got = memo.get(text)
        if got is None:
            if len(memo) > _MEMO_LIMIT:
                memo.clear()
            got = memo[text] = _content_words(text)
        return got

    def _step_tokens(self, step: Step) -> frozenset[str]:
        tool = step.tool
        if tool is None:
            return self._tokens(step.thought)
        key = (step.thought, tool.name)
        memo = self._step_words
        got = memo.get(key)
        if got is None:
            if len(memo) > _MEMO_LIMIT:
                memo.clear()
            got = memo[key] = self._tokens(step.thought) | self._tokens(tool.name.replace("_", " "))
        return got

    def _keys(self, key_steps: tuple[str, ...]) -> tuple[tuple[frozenset[str], float], ...]:
        got = self._key_words.get(key_steps)
        if got is None:
            words = [_content_words(k) for k in key_steps]
            got = self._key_words[key_steps] = tuple((w, KEY_STEP_MATCH * len(w)) for w in words)
        return got

    def answer_equivalence(self, questions: Sequence[AnswerQuestion]) -> list[bool]:
        golds = self._gold_words
        memo = self._answers
        out = []
        for q in questions:
            gold_text = q.sample.answer
            key = (gold_text, q.extracted)
            same = memo.get(key)
            if same is None:
                gold = golds.get(gold_text)
                if gold is None:
                    gold = golds[gold_text] = sorted(normalize_text(gold_text).split())
                same = memo[key] = bool(gold) and sorted(normalize_text(q.extracted).split()) == gold
            out.append(same)
        return out

    def key_step_matching(self, questions: Sequence[KeyStepQuestion]) -> list[tuple[bool, ...]]:
        out = []
        step_tokens = self._step_tokens
        keys_of = self._keys
        for q in questions:
            steps = [step_tokens(s) for s in q.steps]
            verdicts = []
            for key, need in keys_of(q.sample.key_steps):
                hit = False
                if key:
                    for words in steps:
                        if len(key & words) >= need:
                            hit = True
                            break
                verdicts.append(hit)
            out.append(tuple(verdicts))
        return out

    def tool_call_validity(self, questions: Sequence[ToolCallQuestion]) -> list[bool]:
        return [self._call_valid(q) for q in questions]

    def _wanted_rotation(self, sample: Sample) -> float | None:
        got = self._rotation.get(id(sample))
        if got is None or got[0] is not sample:  # the sample is kept in the entry: ids stay unique
            got = self._rotation[id(sample)] = (sample, net_rotation(sample.transform))
        return got[1]  # type: ignore[return-value]

    def _call_valid(self, q: ToolCallQuestion) -> bool:
        name = q.call.name.lower()
        sample = q.sample
        if ("zoom" in name or "crop" in name) and sample.regions:
            box = box_from_args(q.call.args)
            if box is None:
                return True
            return any(coverage(box, r) >= MIN_REGION_COVERAGE for r in sample.regions)
        if "rotat" in name:
            args = q.call.args
            angle = args.get("angle", args.get("degrees"))
            if isinstance(angle, bool) or not isinstance(angle, (int, float)):
                return True
            wanted = self._wanted_rotation(sample)
            if wanted is None:
                return True
            return angle_gap(float(angle), wanted) <= ROTATION_TOLERANCE_DEG
        return True

    def step_scores(self, questions: Sequence[StepScoreQuestion]) -> list[tuple[float, ...]]:
        out = []
        step_tokens = self._step_tokens
        keys_of = self._keys
        for q in questions:
            keys = keys_of(q.sample.key_steps)
            scores = []
            for step, valid in zip(q.steps, q.call_valid):
                if valid is False:
                    scores.append(0.0)
                    continue
                words = step_tokens(step)
                confirmed = False
                if words:
                    n_words = len(words)
                    for key, _ in keys:
                        if key and len(key & words) >= KEY_STEP_MATCH * min(len(key), n_words):
                            confirmed = True
                            break
                scores.append(1.0 if confirmed else 0.5)
            out.append(tuple(scores))
        return out
