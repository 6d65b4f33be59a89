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
from evaluation.metrics.types import Step

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    "a an the of to in on at by for with and or is are was were be it its this that then "
    "from as into than so we i".split()
)
ROTATION_TOLERANCE_DEG = 5.0
MIN_REGION_COVERAGE = 0.5
KEY_STEP_MATCH = 0.5
_MEMO_LIMIT = 500_000


class OfflineJudge:
    name = "offline"
    version = "v1"

    def __init__(self) -> None:
        self._words: dict[str, frozenset[str]] = {}
        # Keyed by the key-step texts themselves, so one judge can serve several benchmarks.
        self._key_words: dict[tuple[str, ...], tuple[frozenset[str], ...]] = {}

    def _tokens(self, text: str) -> frozenset[str]:
        memo = self._words
        got = memo.get(text)
        if got is None:
            if len(memo) > _MEMO_LIMIT:
                memo.clear()
            got = memo[text] = frozenset(_WORD.findall(text.lower())) - _STOP
        return got

    def _step_tokens(self, step: Step) -> frozenset[str]:
        words = self._tokens(step.thought)
        if step.tool is not None:
            words = words | self._tokens(step.tool.name.replace("_", " "))
        return words

    def _keys(self, key_steps: tuple[str, ...]) -> tuple[frozenset[str], ...]:
        got = self._key_words.get(key_steps)
        if got is None:
            got = self._key_words[key_steps] = tuple(self._tokens(k) for k in key_steps)
        return got

    def answer_equivalence(self, questions: Sequence[AnswerQuestion]) -> list[bool]:
        golds: dict[str, list[str]] = {}
        out = []
        for q in questions:
            gold = golds.get(q.sample.answer)
            if gold is None:
                gold = golds[q.sample.answer] = sorted(normalize_text(q.sample.answer).split())
            out.append(bool(gold) and sorted(normalize_text(q.extracted).split()) == gold)
        return out

    def key_step_matching(self, questions: Sequence[KeyStepQuestion]) -> list[tuple[bool, ...]]:
        out = []
        for q in questions:
            steps = [self._step_tokens(s) for s in q.steps]
            verdicts = []
            for key in self._keys(q.sample.key_steps):
                need = KEY_STEP_MATCH * len(key)
                verdicts.append(bool(key) and any(len(key & s) >= need for s in steps))
            out.append(tuple(verdicts))
        return out

    def tool_call_validity(self, questions: Sequence[ToolCallQuestion]) -> list[bool]:
        return [self._call_valid(q) for q in questions]

    def _call_valid(self, q: ToolCallQuestion) -> bool:
        name = q.call.name.lower()
        sample = q.sample
        if ("zoom" in name or "crop" in name) and sample.regions:
            box = box_from_args(q.call.args)
            if box is None:
                return True
            return any(coverage(box, r) >= MIN_REGION_COVERAGE for r in sample.regions)
        if "rotat" in name:
            wanted = net_rotation(sample.transform)
            args = q.call.args
            angle = args.get("angle", args.get("degrees"))
            if wanted is None or isinstance(angle, bool) or not isinstance(angle, (int, float)):
                return True
            return angle_gap(float(angle), wanted) <= ROTATION_TOLERANCE_DEG
        return True

    def step_scores(self, questions: Sequence[StepScoreQuestion]) -> list[tuple[float, ...]]:
        out = []
        for q in questions:
            keys = self._keys(q.sample.key_steps)
            scores = []
            for step, valid in zip(q.steps, q.call_valid):
                if valid is False:
                    scores.append(0.0)
                    continue
                words = self._step_tokens(step)
                confirmed = bool(words) and any(
                    k and len(k & words) >= KEY_STEP_MATCH * min(len(k), len(words)) for k in keys
                )
                scores.append(1.0 if confirmed else 0.5)
            out.append(tuple(scores))
        return out
