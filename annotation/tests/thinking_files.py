"""Small files in the layouts of V* Bench, HR-Bench, TreeBench and TIR-Bench (annotation/releases/vstar.py,
tirbench.py, vlmevalkit.py), generated here with the authors' field names and encodings: no row of a real
release is copied. Shared by the reader tests and the scoring tests."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

from annotation.tests.release_files import b64_image, image_bytes, write_tsv

# --- V* Bench: subtask folders, an image and a same-named JSON annotation, the correct option first ----

VSTAR = {
    "direct_attributes": [
        ("sa_101", "What is the colour of the umbrella?", ["red", "blue", "green", "white"], [[10, 12, 20, 16]]),
        ("sa_102", "What is the material of the bench?", ["wood", "metal", "stone", "plastic"], [[40, 30, 10, 8]]),
    ],
    "relative_position": [
        ("sa_201", "Is the cup on the left or right side of the plate?", ["left", "right"], [[5, 5, 8, 8], [60, 5, 9, 9]]),
    ],
}


def write_vstar(root: Path) -> Path:
    for subtask, items in VSTAR.items():
        folder = root / "vstar_bench" / subtask
        folder.mkdir(parents=True, exist_ok=True)
        for stem, question, options, boxes in items:
            (folder / f"{stem}.jpg").write_bytes(image_bytes("JPEG", size=(96, 64), shade=len(stem) * 7))
            (folder / f"{stem}.json").write_text(json.dumps(
                {"target_object": [f"object {i}" for i in range(len(boxes))], "bbox": boxes,
                 "question": question, "options": options}, indent=2))
    return root / "vstar_bench"


def vstar_eval_result(chosen: dict[str, int]) -> bytes:
    """Their eval_result.json: option_chosen per image (index into their options; 0 is right)."""
    out: dict[str, list] = {}
    for subtask, items in VSTAR.items():
        out[subtask] = [{"question": q, "options": opts, "image": f"{stem}.jpg", "prediction_freeform": "I think so.",
                         "missing_objects": ["cup"], "search_result": [{"bbox": [1, 2, 3, 4], "name": "cup"}],
                         "option_chosen": chosen[stem], "correct": int(chosen[stem] == 0)}
                        for stem, q, opts, _ in items]
    return json.dumps(out, indent=4).encode()


# --- HR-Bench: VLMEvalKit TSV with category and cycle_category --------------------------------------

HR_COLUMNS = ["index", "question", "answer", "category", "cycle_category", "image", "A", "B", "C", "D"]


def hr_rows() -> list[dict]:
    """Ten rows: cycle 1 has four (two single, two cross), cycle 2 four, cycle 3 two single only."""
    plan = [("cycle1", "single"), ("cycle1", "single"), ("cycle1", "cross"), ("cycle1", "cross"),
            ("cycle2", "single"), ("cycle2", "cross"), ("cycle2", "cross"), ("cycle2", "cross"),
            ("cycle3", "single"), ("cycle3", "single")]
    rows = []
    for i, (cycle, category) in enumerate(plan):
        rows.append({"index": i, "question": f"What is written on sign {i}?", "answer": "ABCD"[i % 4],
                     "category": category, "cycle_category": cycle, "image": b64_image(shade=i),
                     "A": "stop", "B": "go", "C": "wait", "D": "turn"})
    return rows


def write_hrbench(root: Path, name: str = "hr_bench_4k.tsv") -> Path:
    return write_tsv(root / name, HR_COLUMNS, hr_rows())


# --- TreeBench: VLMEvalKit TSV with target_instances and "Task/Subtask" categories -----------------

TREE_COLUMNS = ["index", "image", "question", "answer", "category", "target_instances", "A", "B", "C", "D"]
TREE_TARGETS = {0: [[10, 10, 30, 30]], 1: [[0, 0, 20, 20], [40, 40, 60, 60]], 2: []}


def tree_rows() -> list[dict]:
    cats = {0: "Perception/Attributes", 1: "Reasoning/Ordering", 2: "Perception/OCR"}
    return [{"index": i, "image": b64_image(size=(80, 80), shade=i), "question": f"Which object is {i}?",
             "answer": "ABC"[i], "category": cats[i], "target_instances": str(TREE_TARGETS[i]),
             "A": "a cat", "B": "a dog", "C": "a bird", "D": "a fish"} for i in range(3)]


def write_treebench(root: Path) -> Path:
    return write_tsv(root / "TreeBench.tsv", TREE_COLUMNS, tree_rows())


# --- TIR-Bench: one JSON list, the images in a zip archive beside it ----------------------------

TIR_TASKS = [
    {"task": "refcoco", "answer": "B", "prompt": "Which value is closest to the share of the image taken by the chair?"
     "\nA: 15%\nB: 25%\nC: 35%", "image_1": "data/refcoco/p1.jpg", "id": 1},
    {"task": "jigsaw", "meta_data": {"difficulty": 2}, "answer": "[3, 1, 4, 2]",
     "prompt": "Restore the 2x2 puzzle: give the pieces' order.", "image_1": "data/jigsaw/p2.jpg", "id": 1},
    {"task": "spot_difference", "answer": "2, 5, 7", "prompt": "Output the list of patch indices that differ.",
     "image_1": "data/spot_difference/3_left.png", "image_2": "data/spot_difference/3_right.png", "id": 1},
    {"category": "ocr", "answer": "garden", "prompt": "What is written in the image?",
     "image_1": "data/ocr/5.jpg", "id": 2},
    {"task": "symbolic", "answer": "7", "prompt": "How many edges does the polygon have?",
     "image_1": "data/symbolic/9.png", "id": 3},
    {"task": "ocr", "answer": "mob", "prompt": "What is written in the image?", "image_1": "data/ocr/60.jpg", "id": 4},
]


def write_tirbench(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "TIR-Bench.json").write_text(json.dumps(TIR_TASKS, indent=2))
    with zipfile.ZipFile(root / "TIR-Bench-images.zip", "w") as z:
        for i, task in enumerate(TIR_TASKS):
            for field in ("image_1", "image_2"):
                if field in task:
                    fmt = "PNG" if task[field].endswith(".png") else "JPEG"
                    z.writestr(f"TIR-Bench/{task[field]}", image_bytes(fmt, size=(64, 48), shade=i * 30))
    return root / "TIR-Bench.json"
