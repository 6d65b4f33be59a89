"""The offline judge: deterministic, no network, the default.

What it decides, per question kind (also in docs/metrics.md):
- answer equivalence: for a text answer, equal when the normalised answers
  (metrics.answers.normalize_text, which keeps a number's sign and decimal point) hold the
  same words in any order; it adds order-insensitivity to the rules and nothing else. It never
  overrides a number or choice rule: a number sample's answer is compared as parsed numbers
  (which is the rule), a choice sample's only by the rule.
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
from sys import intern as _intern
from collections.abc import Sequence, Set as AbstractSet

from evaluation.metrics.answers import compile_gold, normalize_text
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


def _content_words(text: str) -> AbstractSet[str]:
    """The distinct [a-z0-9]+ runs of the lower-cased text, stop words removed (a set that
    callers only read)."""
    low = text.lower()
    # Plain ASCII words and spaces (the common case): split instead of the regex; the runs
    # are the same.
    words = set(low.split() if low.isascii() and low.replace(" ", "").isalnum()
                else _WORD.findall(low))
    words -= _STOP
    return words


# The content words of a benchmark's key steps, per process and shared by every judge: like
# ``PreparedBenchmark``, a benchmark's gold side is digested once, not once per submission.
# Keyed by the key-step texts themselves (a pure function of them); bounded.
_KEY_WORDS: dict[tuple[str, ...], tuple[tuple[tuple[str, ...], float, int], ...]] = {}
_KEY_WORDS_LIMIT = 1_000_000


def key_step_words(key_steps: tuple[str, ...]) -> tuple[tuple[tuple[str, ...], float, int], ...]:
    """Each key step's content words, the overlap that matches it, and its size."""
    got = _KEY_WORDS.get(key_steps)
    if got is None:
        if len(_KEY_WORDS) > _KEY_WORDS_LIMIT:
            _KEY_WORDS.clear()
        # Kept compact, as a benchmark's worth stays for the process: a tuple of interned
        # words (the same count of overlaps as the set: its words are distinct) takes a
        # fraction of a set's memory, and the vocabulary is shared across key steps.
        words = [tuple(map(_intern, _content_words(k))) for k in key_steps]
        got = _KEY_WORDS[key_steps] = tuple((w, KEY_STEP_MATCH * len(w), len(w)) for w in words)
    return got


class OfflineJudge:
    name = "offline"
    version = "v1"

    def __init__(self) -> None:
        # Memos of pure functions, per judge instance (so per submission in the pipeline).
        self._tool_name_words: dict[str, AbstractSet[str]] = {}
        self._gold_words: dict[str, list[str]] = {}
        self._answers: dict[tuple[str, str, str], bool] = {}
        self._kinds: dict[int, tuple[Sample, str]] = {}
        self._rotation: dict[int, tuple[object, float | None]] = {}
        self._profiles: dict[int, tuple[tuple[Step, ...], tuple, list[bool]]] = {}

    def _tool_words(self, name: str) -> AbstractSet[str]:
        got = self._tool_name_words.get(name)
        if got is None:
            got = self._tool_name_words[name] = _content_words(name.replace("_", " "))
        return got

    def answer_equivalence(self, questions: Sequence[AnswerQuestion]) -> list[bool]:
        golds = self._gold_words
        memo = self._answers
        out = []
        for q in questions:
            gold_text = q.sample.answer
            kind = self._kind(q.sample)
            key = (gold_text, kind, q.extracted)
            same = memo.get(key)
            if same is None and kind != "text":
                # The rule (parsed numbers within the tolerance; the option letter or text)
                # already said wrong, and word overlap has nothing to add to it.
                same = memo[key] = False
            if same is None:
                gold = golds.get(gold_text)
                if gold is None:
                    gold = golds[gold_text] = sorted(normalize_text(gold_text).split())
                same = memo[key] = bool(gold) and sorted(normalize_text(q.extracted).split()) == gold
            out.append(same)
        return out

    def _kind(self, sample: Sample) -> str:
        """The rule the sample's answer is matched by (a choice without options, or a number
        whose gold does not parse, is matched as text)."""
        got = self._kinds.get(id(sample))
        if got is None or got[0] is not sample:  # the sample is kept in the entry: ids stay unique
            got = self._kinds[id(sample)] = (sample, compile_gold(sample).kind)
        return got[1]

    def key_step_matching(self, questions: Sequence[KeyStepQuestion]) -> list[tuple[bool, ...]]:
        out = []
        tool_words = self._tool_words
        profiles = self._profiles
        for q in questions:
            keys = key_step_words(q.sample.key_steps)
            steps = q.steps
            hits = [False] * len(keys)
            confirmed = []
            for step in steps:
                tool = step.tool
                words = _content_words(step.thought)
                if tool is not None:
                    words = words | tool_words(tool.name)
                n_words = len(words)
                conf = False
                for j, (key, need, size) in enumerate(keys):
                    if size:
                        overlap = len(words.intersection(key))
                        if overlap >= need:
                            hits[j] = True
                        # step score: overlap coefficient against this key step
                        if n_words and not conf and overlap >= KEY_STEP_MATCH * min(size, n_words):
                            conf = True
                confirmed.append(conf)
            out.append(tuple(hits))
            # The step scores of these steps need the same overlaps: keep what they decide,
            # by the steps tuple (held in the entry, so its id stays unique) and the keys.
            if len(profiles) > _MEMO_LIMIT:
                profiles.clear()
            profiles[id(steps)] = (steps, keys, confirmed)
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
        profiles = self._profiles
        for q in questions:
            steps = q.steps
            keys = key_step_words(q.sample.key_steps)
            # Taken out of the memo once used (a steps tuple is scored once), so a streamed
            # submission does not keep every prediction's steps alive until its end.
            entry = profiles.pop(id(steps), None)
            if entry is None or entry[0] is not steps or entry[1] is not keys:
                self.key_step_matching([KeyStepQuestion(q.sample, steps)])
                entry = profiles.pop(id(steps))
            out.append(tuple([0.0 if valid is False else 1.0 if conf else 0.5
                              for valid, conf in zip(q.call_valid, entry[2])]))
        return out
