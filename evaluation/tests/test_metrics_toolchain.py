import pytest

from evaluation.metrics import ToolCall, effective_chain, normalized_edit_distance, toolset_prf
from evaluation.metrics.toolchain import edit_distance, resolve_refs


def _c(name: str, src: str | None = None, dst: str | None = None) -> ToolCall:
    return ToolCall(name=name, args={}, input=src, output=dst)


def test_no_calls_gives_empty_chain() -> None:
    assert effective_chain([], None) == ()


def test_unused_call_is_not_effective() -> None:
    calls = [_c("rotate", "img0", "img1"), _c("blur", "img0", "img2"),
             _c("zoom_in", "img1", "img3")]
    assert effective_chain(calls, "img3") == (0, 2)


def test_branches_only_the_answer_branch_counts() -> None:
    calls = [_c("rotate", "img0", "img1"), _c("zoom_in", "img1", "img2"),
             _c("crop", "img1", "img3"), _c("contrast", "img3", "img4")]
    assert effective_chain(calls, "img2") == (0, 1)
    assert effective_chain(calls, "img4") == (0, 2, 3)
    assert effective_chain(calls) == (0, 2, 3)  # default: the last image produced


def test_reused_reference_links_to_the_latest_writer_before_the_reader() -> None:
    calls = [_c("rotate", "img0", "img1"), _c("zoom_in", "img1", "img2"),
             _c("blur", "img0", "img1"),  # overwrites img1 after zoom read it
             _c("crop", "img1", "img3")]
    assert effective_chain(calls, "img2") == (0, 1)
    assert effective_chain(calls, "img3") == (2, 3)


def test_missing_references_follow_the_format_defaults() -> None:
    calls = [_c("rotate"), _c("zoom_in"), _c("crop", "img0")]
    refs = resolve_refs(calls)
    assert refs[0][0] == "img0" and refs[1][0] == refs[0][1] and refs[2][0] == "img0"
    assert len({r[1] for r in refs}) == 3  # each call makes a new reference
    assert effective_chain(calls) == (2,)  # the last call read img0 directly
    assert effective_chain(calls[:2]) == (0, 1)


def test_answer_from_original_or_unknown_image_has_empty_chain() -> None:
    calls = [_c("rotate", "img0", "img1")]
    assert effective_chain(calls, "img0") == ()
    assert effective_chain(calls, "img9") == ()


def test_edit_distance_is_order_aware_and_normalised() -> None:
    assert edit_distance(["a", "b"], ["b", "a"]) == 2
    assert normalized_edit_distance(["rotate", "zoom_in"], ["rotate", "zoom_in"]) == 0.0
    assert normalized_edit_distance(["rotate"], ["rotate", "zoom_in", "crop"]) == pytest.approx(2 / 3)
    assert normalized_edit_distance([], []) == 0.0
    assert normalized_edit_distance([], ["crop"]) == 1.0


def test_toolset_precision_recall_f1() -> None:
    p, r, f = toolset_prf(["zoom_in", "zoom_in", "blur"], ["zoom_in", "rotate"])
    assert (p, r) == (0.5, 0.5) and f == pytest.approx(0.5)
    assert toolset_prf([], ["crop"]) == (0.0, 0.0, 0.0)
    assert toolset_prf([], []) == (1.0, 1.0, 1.0)


def test_omitted_outputs_are_named_as_the_tool_runner_names_them() -> None:
    # annotation/imagetools/runner.py: a missing output is img<highest number in use + 1>.
    calls = [_c("rotate"), _c("zoom_in"), _c("crop", "img1")]
    assert [dst for _, dst in resolve_refs(calls)] == ["img1", "img2", "img3"]
    assert effective_chain(calls, "img2") == (0, 1)  # the second call's image, read from img1
    assert effective_chain(calls, "img1") == (0,)
    assert effective_chain(calls) == (0, 2)  # the last image, img3, was cropped from img1
    # Numbering continues above the highest explicit reference; other names do not count.
    mixed = [_c("rotate", None, "img5"), _c("zoom_in"), _c("blur", None, "sharp"), _c("crop")]
    assert [dst for _, dst in resolve_refs(mixed)] == ["img5", "img6", "sharp", "img7"]
    assert effective_chain(mixed, "img6") == (0, 1)
    assert effective_chain(mixed, "img7") == (0, 1, 2, 3)


def test_answer_image_img2_picks_the_runner_chain_in_the_scorer() -> None:
    from evaluation.judges import OfflineJudge
    from evaluation.metrics import score_submission

    sample = {"uid": "s1", "answer": "A", "answer_type": "choice", "options": {"A": "x", "B": "y"},
              "toolchain": [{"tool": "rotate", "args": {}}, {"tool": "zoom_in", "args": {}}]}
    steps = [{"thought": "", "tool": {"name": "rotate", "args": {}}},
             {"thought": "", "tool": {"name": "zoom_in", "args": {}}},
             {"thought": "", "tool": {"name": "blur", "args": {}, "input": "img0"}}]
    pred = {"sample_id": "s1", "mode": "adaptive", "answer": "A", "answer_image": "img2", "steps": steps}
    rec = score_submission([sample], [pred], judge=OfflineJudge()).records[0]
    # img2 is the zoom_in output (the runner's name); the blur from img0 wrote img3.
    assert rec.effective == (0, 1) and rec.l_eff == 2 and rec.edit_distance == 0.0
    pred["answer_image"] = None
    assert score_submission([sample], [pred], judge=OfflineJudge()).records[0].effective == (2,)
