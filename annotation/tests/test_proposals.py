"""annotation/proposals.py: a model's reply read part by part, each part by the benchmark file's rules."""

from __future__ import annotations

import json

from annotation.proposals import load_proposal_prompt, parse_proposal, prompt_texts


def _reply(**parts: object) -> str:
    return "Sure.\n```json\n" + json.dumps(parts) + "\n```"


def test_boxes_come_back_in_the_originals_frame_after_the_proposed_transform() -> None:
    # An 80 x 120 image sent at half size, rotated 90 degrees: the frame is 120 x 80 original pixels.
    text = _reply(regions=[{"box": [5, 5, 50, 30], "label": "sign"}], transform=[{"op": "rotate", "angle": 90}],
                  key_steps=["Rotate it.", "Read the sign."], toolchain=[{"tool": "zoom_in", "args": {"bbox": [1, 1, 9, 9]}}],
                  confidence=0.7)
    parsed = parse_proposal(text, width=80, height=120, scale=2.0)
    assert parsed.errors == {}
    assert parsed.regions == [{"box": [10, 10, 100, 60], "label": "sign"}]
    assert parsed.transform == [{"op": "rotate", "angle": 90}] and parsed.confidence == 0.7
    assert parsed.toolchain == [{"tool": "zoom_in", "args": {"bbox": [1, 1, 9, 9]}, "input": "img0", "output": "img1"}]
    # Without the rotation the same box lies outside the 80 x 120 frame.
    outside = parse_proposal(_reply(regions=[[5, 5, 50, 30]]), width=80, height=120, scale=2.0)
    assert outside.regions is None and "outside" in outside.errors["regions"]


def test_each_invalid_part_has_its_own_error_and_the_valid_parts_are_kept() -> None:
    text = _reply(regions=[[30, 10, 20, 40]], transform=[{"op": "zoom_in", "bbox": [0, 0, 4, 4]}],
                  key_steps=["Count.", 7], toolchain=[{"tool": "magic_wand", "args": {}}], confidence=3)
    parsed = parse_proposal(text, width=80, height=120)
    assert set(parsed.errors) == {"regions", "transform", "key_steps", "toolchain"}
    assert "inverted" in parsed.errors["regions"] and "cannot be a recovery transform" in parsed.errors["transform"]
    assert "magic_wand" in parsed.errors["toolchain"] and parsed.confidence is None
    assert parse_proposal("no idea", width=8, height=8).errors == {"reply": "the reply holds no JSON object"}
    empty = parse_proposal(_reply(), width=8, height=8)
    assert empty.errors == {} and empty.parts() == {"regions": [], "transform": [], "key_steps": [], "toolchain": []}


def test_the_prompt_is_versioned_and_names_the_registrys_transforms_and_tools() -> None:
    assert load_proposal_prompt().version == "proposals_v1"
    system, user = prompt_texts(question_block="Question: What is it?", width=40, height=30, tools=["zoom_in", "rotate"])
    assert "rotate(angle: number" in system and "contrast(" in system and "from these tools: zoom_in, rotate" in system
    assert user == "Question: What is it?\n\nThe image (img0) is 40 x 30 pixels."
