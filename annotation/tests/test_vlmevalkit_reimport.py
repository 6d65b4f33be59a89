"""Re-importing a VLMEvalKit TSV (annotation/releases/vlmevalkit.py's row digests, Sample.source_digest): an
unchanged row is recognised from its text and its image is not decoded again; a changed row, a stored copy gone
missing, a damaged image are handled as on a first import."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from annotation.models import Sample
from annotation.releases import media as release_media
from annotation.tests import release_files
from annotation.tests.media_files import truncated
from annotation.tests.release_files import b64_image, image_bytes, write_tsv

pytestmark = pytest.mark.django_db

COLUMNS = ["index", "image", "question", "A", "B", "answer", "category"]


def row(index: int, **overrides: object) -> dict:
    base = {"index": index, "image": b64_image(shade=index), "question": f"Which is larger in picture {index}?",
            "A": "circle", "B": "square", "answer": "A", "category": "shapes"}
    base.update(overrides)
    return base


def run_import(path: Path, **kwargs: object) -> str:
    return release_files.run_import(path, slug="vlm", **kwargs)[0]


@pytest.fixture
def decoded(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The byte size of every base64 image the import decodes."""
    sizes: list[int] = []
    real = release_media.decode_base64

    def spy(text: str) -> bytes:
        data = real(text)
        sizes.append(len(data))
        return data

    monkeypatch.setattr(release_media, "decode_base64", spy)
    return sizes


def test_an_unchanged_reimport_decodes_no_image_and_changes_nothing(tmp_path: Path, decoded: list[int]) -> None:
    path = write_tsv(tmp_path / "ds.tsv", COLUMNS, [row(1), row(2), row(3, image="1")])  # row 3 shares row 1's image
    assert "3 created" in run_import(path)
    assert len(decoded) == 2
    before = {s.uid: (s.image.name, s.updated_at) for s in Sample.objects.all()}
    out = run_import(path)
    assert "0 created, 0 updated, 3 unchanged" in out
    assert len(decoded) == 2  # nothing decoded the second time
    assert {s.uid: (s.image.name, s.updated_at) for s in Sample.objects.all()} == before
    # The samples left out of a re-import are still named, digests or not.
    out, err = release_files.run_import(write_tsv(tmp_path / "ds.tsv", COLUMNS, [row(1), row(3, image="1")]), slug="vlm")
    assert "1 updated, 1 unchanged" in out  # row 3 moved up a line: its position is updated, as before digests
    assert "1 sample(s) of the benchmark are not in this file and were kept: 2" in out + err


def test_a_changed_row_in_an_unchanged_file_is_imported_with_its_new_content(tmp_path: Path, decoded: list[int]) -> None:
    run_import(write_tsv(tmp_path / "ds.tsv", COLUMNS, [row(1), row(2), row(3)]))
    decoded.clear()
    out = run_import(write_tsv(tmp_path / "ds.tsv", COLUMNS, [
        row(1), row(2, image=b64_image(shade=120), question="Which is smaller?"), row(3)]))
    assert "0 created, 1 updated, 2 unchanged" in out
    assert decoded == [len(image_bytes(shade=120))]  # only the changed row's image (of the old one's length)
    changed = Sample.objects.get(uid="2")
    assert changed.question == "Which is smaller?"
    with changed.image.open("rb") as handle:
        assert handle.read() == image_bytes(shade=120)
    # A change outside the image only (the answer) is read too, though the image is the same bytes.
    out = run_import(write_tsv(tmp_path / "ds.tsv", COLUMNS, [
        row(1, answer="B"), row(2, image=b64_image(shade=120), question="Which is smaller?"), row(3)]))
    assert "1 updated, 2 unchanged" in out and Sample.objects.get(uid="1").answer == "B"


def test_a_stored_image_gone_missing_is_stored_again_by_an_unchanged_reimport(tmp_path: Path) -> None:
    path = write_tsv(tmp_path / "ds.tsv", COLUMNS, [row(1), row(2)])
    run_import(path)
    stored = Path(Sample.objects.get(uid="2").image.path)
    stored.unlink()
    assert "2 unchanged" in run_import(path)
    assert stored.read_bytes() == image_bytes(shade=2)


def test_a_truncated_jpeg_is_named_by_its_row_on_import_and_on_reimport(tmp_path: Path) -> None:
    cut = base64.b64encode(truncated("JPEG")).decode()
    message = release_files.import_errors(write_tsv(tmp_path / "ds.tsv", COLUMNS, [row(1), row(2, image=cut)]),
                                          slug="vlm")
    assert "row 2 of ds.tsv, field 'image': '" in message and ".jpg' is damaged and cannot be decoded" in message
    run_import(write_tsv(tmp_path / "ds.tsv", COLUMNS, [row(1), row(2)]))
    with pytest.raises(Exception, match=r"row 2 of ds.tsv, field 'image': '\w+\.jpg' is damaged and cannot be decoded"):
        run_import(write_tsv(tmp_path / "ds.tsv", COLUMNS, [row(1), row(2, image=cut)]))


def test_samples_imported_before_digests_were_kept_get_theirs_on_the_next_reimport(tmp_path: Path,
                                                                                   decoded: list[int]) -> None:
    path = write_tsv(tmp_path / "ds.tsv", COLUMNS, [row(1), row(2)])
    run_import(path)
    Sample.objects.update(source_digest="")  # as a benchmark imported before migration 0013 holds them
    before = {s.uid: s.updated_at for s in Sample.objects.all()}
    decoded.clear()
    assert "0 updated, 2 unchanged" in run_import(path)  # the digest is bookkeeping, not a change
    assert len(decoded) == 2 and {s.uid: s.updated_at for s in Sample.objects.all()} == before
    assert "0 updated, 2 unchanged" in run_import(path)
    assert len(decoded) == 2  # the second re-import recognised both rows
