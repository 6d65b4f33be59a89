"""Small files in the shapes of the authors' releases (docs/formats.md, "Releases"), generated
here: no row of a real release is copied."""

from __future__ import annotations

import base64
import io
import json
from io import StringIO
from pathlib import Path

from PIL import Image


def image_bytes(fmt: str = "PNG", size: tuple[int, int] = (80, 60), shade: int = 0) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, (shade % 255, 120, 200)).save(buffer, fmt)
    return buffer.getvalue()


# --- AdaptMMBench: parquet with the Hugging Face image struct ---------------------------------

ADAPT_COLUMNS = ("uid", "image", "question", "options", "answer", "domain", "category", "type_label", "bbox",
                 "transform", "textproblem", "textoptions", "key_step")  # fmt: skip


def adapt_row(uid: str, **overrides: object) -> dict:
    row = {
        "uid": uid,
        "image": {"bytes": image_bytes(shade=len(uid)), "path": f"{uid}.png"},
        "question": f"What colour is the box in {uid}?",
        "options": json.dumps({"A": "red", "B": "blue"}),
        "answer": "B",
        "domain": "ocr",
        "category": "chart",
        "type_label": "1",
        "bbox": "[5, 5, 40, 30]",
        "transform": "",
        "textproblem": f"Text-only variant of {uid}",
        "textoptions": "A. red B. blue",
        "key_step": json.dumps(["Find the box.", "Name its colour."]),
    }
    row.update(overrides)
    return row


def write_adapt_parquet(path: Path, rows: list[dict]) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    image_type = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    columns = list(dict.fromkeys(k for row in rows for k in row))
    fields = [pa.field(c, image_type if c == "image" else pa.string()) for c in columns]
    table = pa.Table.from_pylist([{c: row.get(c) for c in columns} for row in rows], schema=pa.schema(fields))
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)
    return path


# --- VLMEvalKit TSV ---------------------------------------------------------------------------


def b64_image(**kwargs: object) -> str:
    return base64.b64encode(image_bytes(**kwargs)).decode()  # type: ignore[arg-type]


def write_tsv(path: Path, columns: list[str], rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ["\t".join(columns)]
    for row in rows:
        lines.append("\t".join(str(row.get(c, "")) for c in columns))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# --- running the import ----------------------------------------------------------------------


def run_import(*paths: Path, slug: str, **kwargs: object) -> tuple[str, str]:
    """import_benchmark PATH... --slug SLUG; (stdout, stderr)."""
    from django.core.management import call_command

    out, err = StringIO(), StringIO()
    call_command("import_benchmark", *map(str, paths), slug=slug, no_progress=True, stdout=out, stderr=err, **kwargs)
    return out.getvalue(), err.getvalue()


def import_errors(*paths: Path, slug: str, **kwargs: object) -> str:
    """The message of an import that must fail, after checking that it wrote no sample."""
    import pytest
    from django.core.management import CommandError

    from annotation.models import Sample

    with pytest.raises(CommandError) as excinfo:
        run_import(*paths, slug=slug, **kwargs)
    assert Sample.objects.count() == 0
    return str(excinfo.value)
