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
