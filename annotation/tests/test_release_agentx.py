"""Agent-X's data.json + toolmeta.json + media: whole tasks (several images, videos), declared
tools, the steps' quirks, bad tasks named by id."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from annotation.models import Benchmark, Sample
from annotation.services import annotation_payload_from_db
from annotation.tests import release_files
from annotation.tests.media_files import write_video
from annotation.tests.release_files import image_bytes

pytestmark = pytest.mark.django_db

TOOLMETA = [
    {"name": "OCR", "description": "Reads the text in an image.",
     "inputs": [{"type": "image", "name": "image", "description": "the image", "optional": False}],
     "outputs": [{"type": "text", "name": "text", "description": "the text"}]},
    {"name": "Calculator", "description": "Evaluates an arithmetic expression.",
     "inputs": [{"type": "text", "name": "expression", "description": "e.g. 2+3", "optional": False}],
     "outputs": [{"type": "text", "name": "result", "description": "the value"}]},
    {"name": "SceneDescriber", "description": "Describes a scene.",
     "inputs": [{"type": "image", "name": "image", "description": "the image", "optional": False}],
     "outputs": [{"type": "text", "name": "description", "description": "what it shows"}]},
]  # fmt: skip


def step(n: int, tool: str, task: str, tool_input: object = "image.jpg") -> dict:
    return {"step": n, "task": task, "tool": tool, "input": tool_input, "output": f"out {n}", "thought": f"Thinking {n}."}


def task(query: str, file_path: str, steps: object, value: str = "5", query_type: str = "Objective") -> list[dict]:
    return [{
        "query": query, "file_path": file_path, "query_type": query_type, "tool_metadata": ["OCR", "Calculator"],
        "reasoning_steps": steps, "final_answer": {"value": value, "justification": "Because the sign says so."},
    }]  # fmt: skip


def write_release(folder: Path, tasks: dict, *, toolmeta: object = TOOLMETA) -> Path:
    files = folder / "files"
    files.mkdir(parents=True, exist_ok=True)
    (files / "sign.jpg").write_bytes(image_bytes("JPEG"))
    (files / "left.jpg").write_bytes(image_bytes("WEBP", shade=1))  # a .jpg that is a WebP
    (files / "right.png").write_bytes(image_bytes("PNG", shade=2))
    write_video(files / "clip.mp4", frames=12)
    (folder / "data.json").write_text(json.dumps(tasks, indent=2), encoding="utf-8")
    if toolmeta is not None:
        (folder / "toolmeta.json").write_text(json.dumps(toolmeta, indent=2), encoding="utf-8")
    return folder


def run_import(*paths: Path, **kwargs: object) -> tuple[str, str]:
    return release_files.run_import(*paths, slug="agentx", **kwargs)


def import_errors(*paths: Path, **kwargs: object) -> str:
    return release_files.import_errors(*paths, slug="agentx", **kwargs)


def good_tasks() -> dict:
    return {
        "0": task("What is the sum of the two prices?", "sign.jpg",
                  [step(1, "OCR", "Read the prices."), step(2, "Calculator", "Add them.", {"expression": "2+3"})]),
        "1": task("Which picture is brighter?", "left.jpg, right.png", [step(1, "SceneDescriber", "Describe both.")],
                  value="the right one", query_type="Subjective"),
        "2": task("What happens in the clip?", "clip.mp4", [[step(1, "SceneDescriber", "Describe the clip."),
                  step(2, "none", "Conclude.")]], value="a colour fade"),
    }  # fmt: skip


def test_a_release_folder_imports_whole_tasks_with_declared_tools(tmp_path: Path) -> None:
    out, _ = run_import(write_release(tmp_path / "agentx", good_tasks()))
    assert "3 created" in out
    assert "All: 3\n    Objective: 2\n    Subjective: 1" in out
    benchmark = Benchmark.objects.get(slug="agentx")
    assert [t["name"] for t in benchmark.declared_tools] == ["OCR", "Calculator", "SceneDescriber"]
    assert benchmark.declared_tools[1]["args_schema"]["required"] == ["expression"]

    first = Sample.objects.get(uid="0")
    assert (first.question, first.answer, first.answer_type, first.split, first.source) == (
        "What is the sum of the two prices?", "5", "number", "test", "Agent-X",
    )
    assert first.meta["justification"] == "Because the sign says so." and first.meta["tool_metadata"] == ["OCR", "Calculator"]
    assert first.meta["reasoning_steps"][0]["output"] == "out 1"  # the raw steps are kept
    payload = annotation_payload_from_db(first.annotations.get())
    assert [s[0] for s in payload["key_steps"]] == ["Read the prices.", "Add them."]
    chain = payload["toolchain"]
    assert [c["tool"] for c in chain] == ["OCR", "Calculator"]
    assert all("args" not in c for c in chain)  # one step's input is a string: the chain is names only

    pair = Sample.objects.get(uid="1")
    assert [m.kind for m in pair.media.all()] == ["image", "image"]
    assert pair.media.all()[0].file.name.endswith(".webp")
    clip = Sample.objects.get(uid="2")
    assert [m.kind for m in clip.media.all()] == ["video"]
    clip_payload = annotation_payload_from_db(clip.annotations.get())
    assert [s[0] for s in clip_payload["key_steps"]] == ["Describe the clip.", "Conclude."]  # unwrapped
    assert [c["tool"] for c in clip_payload["toolchain"]] == ["SceneDescriber"]  # "none" is no call


def test_data_json_alone_finds_its_toolmeta_and_media(tmp_path: Path) -> None:
    folder = write_release(tmp_path / "agentx", good_tasks())
    out, _ = run_import(folder / "data.json")
    assert "3 created" in out


def test_without_toolmeta_the_undeclared_tools_are_named(tmp_path: Path) -> None:
    folder = write_release(tmp_path / "agentx", good_tasks(), toolmeta=None)
    message = import_errors(folder / "data.json")
    assert "task '0' of data.json, field 'toolchain[1]" in message and "unknown tool 'OCR'" in message


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param({"query": "not a list"},
                     "task '1' of data.json, field 'file_path': missing (required)", id="object-not-list"),
        pytest.param([task("q", "sign.jpg", [])[0], task("q", "sign.jpg", [])[0]],
                     "task '1' of data.json: expected a list holding one task object", id="two-tasks"),
        pytest.param(task("q", "", []), "task '1' of data.json, field 'file_path': missing (required)", id="no-file"),
        pytest.param(task("q", "gone.jpg", []),
                     "task '1' of data.json, field 'image': image file 'gone.jpg' not found", id="missing-file"),
        pytest.param(task("q", "sign.jpg", "first OCR"),
                     "task '1' of data.json, field 'reasoning_steps': expected a list of step objects", id="steps"),
        pytest.param(task("q", "sign.jpg", [step(1, "Calculator", "Add.", {"expr": 1})]),
                     "task '1' of data.json, field 'toolchain[1]", id="bad-args"),
        pytest.param(task("", "sign.jpg", []), "task '1' of data.json, field 'question': missing (required)", id="no-query"),
    ],
)
def test_bad_tasks_are_named_by_id_and_field(tmp_path: Path, value: object, expected: str) -> None:
    tasks = {"0": good_tasks()["0"], "1": value}
    assert expected in import_errors(write_release(tmp_path / "agentx", tasks))


def test_a_chain_whose_inputs_are_all_objects_keeps_its_arguments(tmp_path: Path) -> None:
    tasks = {"0": task("Sum?", "sign.jpg", [step(1, "Calculator", "Add.", {"expression": "2+3"})])}
    run_import(write_release(tmp_path / "agentx", tasks))
    chain = annotation_payload_from_db(Sample.objects.get(uid="0").annotations.get())["toolchain"]
    assert [(c["tool"], c["args"]) for c in chain] == [("Calculator", {"expression": "2+3"})]


def test_more_than_fifty_bad_tasks_are_capped(tmp_path: Path) -> None:
    tasks = {str(i): task("q", "", []) for i in range(30)} | {str(100 + i): task("q", "sign.jpg", "x") for i in range(30)}
    message = import_errors(write_release(tmp_path / "agentx", tasks))
    assert message.count("field 'file_path'") == 30 and message.count("field 'reasoning_steps'") == 20
    assert "more errors were not listed" in message


def test_toolmeta_alone_is_named(tmp_path: Path) -> None:
    folder = write_release(tmp_path / "agentx", good_tasks())
    assert "toolmeta.json: this is Agent-X's toolmeta.json (the tools, no tasks)" in import_errors(folder / "toolmeta.json")


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        pytest.param("data.json", '{"0": [{"query": "q",',
                     "data.json: this is a file that starts like JSON but does not parse", id="broken"),
        pytest.param("dataset.json", json.dumps({"0": {"tools": [], "files": [], "dialogs": []}}, indent=1),
                     "dataset.json: this is Agent-X's dataset.json (the OpenCompass GTA shape); import data.json", id="gta"),
        pytest.param("data.json", json.dumps({"0": [{"query": "q"}]}),
                     "task '0' of data.json, field 'file_path': missing", id="one-line-json"),
    ],
)
def test_agentx_files_of_the_wrong_shape_are_named(tmp_path: Path, name: str, content: str, expected: str) -> None:
    (tmp_path / name).write_text(content, encoding="utf-8")
    assert expected in import_errors(tmp_path / name)


def test_a_bad_toolmeta_entry_is_named_in_toolmeta(tmp_path: Path) -> None:
    toolmeta = [*TOOLMETA, {"name": "Broken", "description": "no inputs list", "inputs": "image"}]
    message = import_errors(write_release(tmp_path / "agentx", good_tasks(), toolmeta=toolmeta))
    assert "toolmeta.json, field 'tools[4].inputs'" in message
