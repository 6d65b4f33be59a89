"""Files of the wrong kind, the error cap, and unsafe zips: one clear message each, nothing written."""

from __future__ import annotations

import io
import json
import struct
import zipfile
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.test import override_settings
from openpyxl import Workbook
from PIL import Image

from annotation.models import Benchmark, Sample
from annotation.tests.benchmark_files import sample_line, write_benchmark

pytestmark = pytest.mark.django_db


def import_errors(*paths: Path, **kwargs: object) -> str:
    with pytest.raises(CommandError) as excinfo:
        call_command(
            "import_benchmark", *map(str, paths), slug="bad", no_progress=True, stdout=StringIO(), stderr=StringIO(), **kwargs
        )
    assert Benchmark.objects.count() == 0 and Sample.objects.count() == 0
    return str(excinfo.value)


def png_bytes() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (4, 4)).save(buffer, "PNG")
    return buffer.getvalue()


def write_xlsx(path: Path) -> None:
    book = Workbook()
    book.active.append(["index", "question", "prediction"])
    book.save(path)


KINDS = {
    "tsv": ("data.tsv", "a\tb\tc\n1\t2\t3\n", "data.tsv: this is a TSV file; import it with --format vlmevalkit or vtcbench"),
    "csv": ("data.csv", "index,question\n1,What?\n", "data.csv: this is a CSV file"),
    "json-object": ("x.jsonl", '{\n  "uid": "a"\n}\n', "x.jsonl: this is a JSON object spread over several lines"),
    "json-array": ("x.json", '[{"uid": "a"}, [1]]', "x.json: this is a JSON array; our format is JSON Lines"),
    "pdf": ("paper.pdf", b"%PDF-1.7\n%...", "paper.pdf: this is a PDF document"),
    "image": ("cover.jsonl", "png", "cover.jsonl: this is an image"),
    "text": ("notes.txt", "hello\nworld\n", "notes.txt: this is a text file that is not JSON Lines"),
    "empty": ("empty.jsonl", "\n\n", "empty.jsonl: this is an empty file"),
    "predictions": ("preds.jsonl", '{"sample_id": "a", "mode": "text", "answer": "1"}\n', "this is a prediction file"),
    "gzip": ("bench.jsonl.gz", b"\x1f\x8b\x08\x00rest", "bench.jsonl.gz: this is a gzip archive"),
}


@pytest.mark.parametrize("kind", sorted(KINDS) + ["xlsx"])
def test_a_file_of_another_kind_gets_one_message_naming_it(tmp_path: Path, kind: str) -> None:
    if kind == "xlsx":
        path, expected = tmp_path / "model_MMReason.xlsx", "model_MMReason.xlsx: this is an Excel workbook (.xlsx)"
        write_xlsx(path)
    else:
        name, content, expected = KINDS[kind]
        path = tmp_path / name
        content = png_bytes() if content == "png" else content
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
    message = import_errors(path)
    assert expected in message
    assert "1 error(s)" in message and "not valid JSON" not in message


def test_forcing_jsonl_on_a_tsv_still_names_what_it_is(tmp_path: Path) -> None:
    path = tmp_path / "MMReason.tsv"
    path.write_text("".join(f"{i}\tq{i}\tA\n" for i in range(80)))
    message = import_errors(path, format="jsonl")
    assert "MMReason.tsv: this is a TSV file" in message and message.count("\n") == 1


def test_a_zip_without_a_benchmark_file_says_so(tmp_path: Path) -> None:
    archive = tmp_path / "photos.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("holiday/a.png", png_bytes())
        zf.writestr("holiday/notes.md", "# notes")
    assert "photos.zip: holds no benchmark file" in import_errors(archive)


def test_a_video_is_named(tmp_path: Path) -> None:
    path = tmp_path / "clip.jsonl"
    path.write_bytes(b"\x00\x00\x00\x18ftypmp42" + bytes(40))
    assert "clip.jsonl: this is a video" in import_errors(path)


def test_a_folder_without_a_benchmark_file_says_so(tmp_path: Path) -> None:
    (tmp_path / "images").mkdir()
    (tmp_path / "images" / "a.png").write_bytes(png_bytes())
    assert "holds no benchmark file" in import_errors(tmp_path)


# --- more than 50 bad lines of each kind: listed up to the cap, never a crash ----------------


def without(uid: str, key: str) -> dict:
    line = sample_line(uid)
    del line[key]
    return line


BAD_LINES = {
    "missing-uid": (lambda i: without(f"s{i}", "uid"), "field 'uid': missing (required)"),
    "missing-question": (lambda i: without(f"s{i}", "question"), "field 'question': missing (required)"),
    "missing-image": (lambda i: without(f"s{i}", "image"), "field 'image': missing (required)"),
    "broken-json": (lambda i: '{"uid": "x",', ": not valid JSON"),
    "not-an-object": (lambda i: "[1, 2]", ": expected a JSON object, got a list"),
    "bad-value": (lambda i: sample_line(f"s{i}", split="train"), "field 'split': expected 'dev' or 'test'"),
    "duplicate-uid": (lambda i: sample_line("dup"), "field 'uid': duplicate uid 'dup'"),
    "long-domain": (lambda i: sample_line(f"s{i}", domain="d" * 101), "field 'domain': 101 characters long"),
}


@pytest.mark.parametrize("kind", sorted(BAD_LINES))
def test_more_than_fifty_bad_lines_are_capped_without_a_crash(tmp_path: Path, kind: str) -> None:
    make, expected = BAD_LINES[kind]
    lines = [sample_line("first")] + [make(i) for i in range(70)]
    message = import_errors(write_benchmark(tmp_path, lines))
    assert message.count(expected) == 50
    assert "more errors were not listed" in message


# --- zips: a bomb and a lying size are refused before they fill the disk ---------------------


def benchmark_zip(tmp_path: Path) -> Path:
    folder = tmp_path / "bundle"
    write_benchmark(folder, [sample_line("a")])
    archive = tmp_path / "bench.zip"
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for path in folder.rglob("*"):
            zf.write(path, path.relative_to(folder))
    return archive


def test_a_zip_bomb_of_one_gib_is_refused_at_the_default_limit(tmp_path: Path) -> None:
    archive = benchmark_zip(tmp_path)
    with (zipfile.ZipFile(archive, "a", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as zf,
          zf.open("images/zeros.png", "w", force_zip64=True) as entry):
        zeros = bytes(1 << 24)
        for _ in range(64):
            entry.write(zeros)
    assert archive.stat().st_size < 10 * 1024**2
    message = import_errors(archive)
    assert "bench.zip unpacks to 1073" in message
    assert "over the limit of 536870912 bytes (BENCHMARK_IMPORT_MAX_UNPACKED_BYTES)" in message


def test_the_unpacked_size_limit_is_a_setting(tmp_path: Path) -> None:
    archive = benchmark_zip(tmp_path)
    with override_settings(BENCHMARK_IMPORT_MAX_UNPACKED_BYTES=100):
        assert "over the limit of 100 bytes" in import_errors(archive)


def lie_about_size(archive: Path, entry: str, claimed: int) -> None:
    """Rewrite the sizes of `entry` in the central directory and its local header."""
    data = bytearray(archive.read_bytes())
    with zipfile.ZipFile(archive) as zf:
        info = zf.getinfo(entry)
    # Local header: uncompressed size at offset 22; central directory entry: at offset 24.
    struct.pack_into("<I", data, info.header_offset + 22, claimed)
    start = 0
    while (central := data.find(b"PK\x01\x02", start)) != -1:
        name_len = struct.unpack_from("<H", data, central + 28)[0]
        if data[central + 46 : central + 46 + name_len].decode() == entry:
            struct.pack_into("<I", data, central + 24, claimed)
        start = central + 4
    archive.write_bytes(bytes(data))


@pytest.mark.parametrize("claimed", [10, 5_000_000], ids=["smaller", "larger"])
def test_a_zip_entry_with_a_lying_size_is_refused(tmp_path: Path, claimed: int) -> None:
    archive = benchmark_zip(tmp_path)
    lie_about_size(archive, "benchmark.jsonl", claimed)
    message = import_errors(archive)
    expected = "bench.zip is a damaged zip" if claimed < 100 else "the zip entry 'benchmark.jsonl' claims 5000000 bytes but holds"
    assert expected in message


def test_a_zip_entry_escaping_its_folder_is_refused(tmp_path: Path) -> None:
    archive = benchmark_zip(tmp_path)
    with zipfile.ZipFile(archive, "a") as zf:
        zf.writestr("../evil.txt", "x")
    assert "the zip entry '../evil.txt' escapes its folder" in import_errors(archive)


def test_several_paths_of_our_format_are_refused_with_a_message(tmp_path: Path) -> None:
    a = write_benchmark(tmp_path / "a", [sample_line("a")])
    b = write_benchmark(tmp_path / "b", [sample_line("b")])
    assert "one .jsonl file" in import_errors(a, b, format="jsonl")


def test_the_json_object_kind_is_not_mistaken_for_agentx(tmp_path: Path) -> None:
    path = tmp_path / "data.json"
    path.write_text(json.dumps({"0": {"query": "not a list"}}, indent=1))
    assert "a JSON object spread over several lines" in import_errors(path)
