import pytest

from evaluation.judges import (
    PROMPT_VERSIONS,
    InMemoryVerdictCache,
    Judge,
    OfflineJudge,
    VerdictCache,
    input_hash,
    load_prompt,
)
from evaluation.metrics import Sample, Step, ToolCall
from evaluation.metrics.questions import (
    AnswerQuestion,
    KeyStepQuestion,
    StepScoreQuestion,
    ToolCallQuestion,
)

SAMPLE = Sample(uid="s", answer="New York City", regions=((100, 100, 200, 200),),
                transform=({"op": "rotate", "angle": 90},),
                key_steps=("Rotate the image upright", "Read the street sign"))


def _call(name: str, **args: object) -> ToolCallQuestion:
    return ToolCallQuestion(SAMPLE, ToolCall(name, args), "")


def test_offline_judge_satisfies_the_protocol() -> None:
    assert isinstance(OfflineJudge(), Judge)
    assert isinstance(InMemoryVerdictCache(), VerdictCache)


def test_every_prompt_version_has_its_file() -> None:
    for kind in PROMPT_VERSIONS:
        assert "JSON" in load_prompt(kind)


@pytest.mark.parametrize("args,valid", [
    ({"bbox": [100, 100, 200, 200]}, True),
    ({"bbox": [150, 100, 260, 210]}, True),    # covers exactly half of the region
    ({"bbox": [160, 100, 260, 210]}, False),   # 40 %
    ({"bbox": [0, 0, 50, 50]}, False),
    ({"x": 90, "y": 90, "width": 120, "height": 120}, True),
    ({"scale": 2}, True),                      # no box to check
])
def test_zoom_must_cover_half_of_an_annotated_region(args: dict, valid: bool) -> None:
    assert OfflineJudge().tool_call_validity([_call("zoom_in", **args)]) == [valid]


@pytest.mark.parametrize("angle,valid", [(90, True), (94.9, True), (85, True), (-270, True),
                                         (96, False), (270, False), (0, False)])
def test_rotation_must_undo_the_annotated_one_within_5_degrees(angle: float, valid: bool) -> None:
    assert OfflineJudge().tool_call_validity([_call("rotate", angle=angle)]) == [valid]


def test_calls_the_annotation_cannot_check_are_valid() -> None:
    plain = Sample(uid="p")
    q = ToolCallQuestion(plain, ToolCall("rotate", {"angle": 33}), "")
    assert OfflineJudge().tool_call_validity([q, _call("blur", ksize=3)]) == [True, True]


def test_offline_key_steps_and_step_scores() -> None:
    steps = (Step("First rotate the image so it is upright", ToolCall("rotate", {"angle": 90})),
             Step("Something unrelated"), Step("Zoom", ToolCall("zoom_in", {})))
    judge = OfflineJudge()
    assert judge.key_step_matching([KeyStepQuestion(SAMPLE, steps)]) == [(True, False)]
    assert judge.key_step_matching([KeyStepQuestion(Sample(uid="e"), steps)]) == [()]
    scores = judge.step_scores([StepScoreQuestion(SAMPLE, steps, (True, None, False))])
    assert scores == [(1.0, 0.5, 0.0)]


def test_offline_answer_equivalence_is_order_insensitive_only() -> None:
    judge = OfflineJudge()
    got = judge.answer_equivalence([AnswerQuestion(SAMPLE, "city new york"),
                                    AnswerQuestion(SAMPLE, "New York"),
                                    AnswerQuestion(Sample(uid="x", answer=""), "")])
    assert got == [True, False, False]


def test_input_hash_is_canonical() -> None:
    assert input_hash({"a": 1, "b": [1, 2]}) == input_hash({"b": [1, 2], "a": 1})
    assert input_hash({"a": 1}) != input_hash({"a": 2})


def test_in_memory_cache_keys_on_judge_and_prompt_version() -> None:
    cache = InMemoryVerdictCache()
    cache.set_many("j", "answer_equivalence.v1", {"h1": {"equivalent": True}})
    cache.set_many("j", "answer_equivalence.v1", {"h1": {"equivalent": False}})  # first wins
    assert cache.get_many("j", "answer_equivalence.v1", ["h1", "h2"]) == {"h1": {"equivalent": True}}
    assert cache.get_many("j", "answer_equivalence.v2", ["h1"]) == {}
    assert cache.get_many("other", "answer_equivalence.v1", ["h1"]) == {}
