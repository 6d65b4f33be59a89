"""Writes of the annotation app: importing and exporting benchmarks."""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import FileSystemStorage
from django.db import transaction

from annotation.benchmark_format import (
    BenchmarkBundle,
    SampleRecord,
    open_benchmark_source,
    read_benchmark,
)
from annotation.models import (
    Annotation,
    AnnotationStatus,
    Benchmark,
    Category,
    Domain,
    MediaKind,
    KeyStep,
    ReferenceToolCall,
    Region,
    Revision,
    RevisionKind,
    Sample,
    SampleMedia,
    ScoringProfile,
    sample_media_storage,
)
from annotation.bundles import bundle_write
from annotation.downloads.services import downloads_request
from annotation.export_rows import (  # noqa: F401 - benchmark_manifest, sample_to_record: also read from here
    ExportSummary,
    benchmark_manifest,
    region_entries,
    sample_to_record,
)
from annotation.releases import KnownRows
from annotation.taxonomy import merge_key
from config.celery import task_by_name
from config.storages import AtomicFileSystemStorage

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ImportSummary:
    benchmark: Benchmark
    created: int
    updated: int
    unchanged: int
    # (domain name, samples, [(category name, samples)]) as the file had them
    taxonomy: list[tuple[str, int, list[tuple[str, int]]]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    removed: int = 0  # samples not in the file, deleted (--remove-missing)
    kept: int = 0  # approved annotations people made or edited that the file would have replaced, left (keep_edited)

    def __str__(self) -> str:
        removed = f", {self.removed} removed" if self.removed else ""
        kept = (f"; {self.kept} approved annotation(s) people edited or reviewed left as they are"
                if self.kept else "")
        return (
            f"{self.benchmark.slug}: {self.created} created, {self.updated} updated, "
            f"{self.unchanged} unchanged{removed} ({self.created + self.updated + self.unchanged} samples in the file)"
            f"{kept}"
        )

    def taxonomy_lines(self) -> list[str]:
        lines = []
        for domain, count, categories in self.taxonomy:
            lines.append(f"{domain}: {count}")
            lines += [f"  {category}: {n}" for category, n in categories]
        return lines


def benchmark_import(
    *,
    path: Path | list[Path],
    slug: str,
    name: str | None = None,
    images_dir: Path | None = None,
    format: str | None = None,
    domain_of: dict[str, str] | None = None,
    progress: Callable[[str, int, int], None] | None = None,
    scoring: str | None = None,
    remove_missing: bool = False,
    keep_edited: bool = False,
) -> ImportSummary:
    """Validate the whole file first, then write it in one transaction; updates samples by uid.

    `path` is our JSON Lines (file, folder, zip) or an author's release (one or several files, a
    folder, a zip); `format` forces the reader (annotation/releases), else it is recognised.
    `domain_of` maps categories to domains (the grouping a one-level release lacks).
    Raises BenchmarkFileError (nothing written) when any line is invalid.
    `progress(stage, done, total)` is called as lines are read and samples written.
    `scoring` overrides the scoring profile the manifest or the release's reader declares.
    Samples the benchmark has and the file does not are kept with a warning naming them, or deleted
    (with their results) when `remove_missing`.
    An approved annotation the file changes is replaced by the file's, and its history says so (an "import"
    revision); with `keep_edited` (load_demo) one that people made or edited (an annotator's, or one with a
    revision) is left as it is, with the sample's question and answer it approved, and counted (`kept`).
    """
    paths = [Path(p) for p in path] if isinstance(path, list) else Path(path)
    storage = sample_media_storage()
    known_images = _known_images(slug)
    with open_benchmark_source(
        paths, images_dir, format=format, max_unpacked_bytes=settings.BENCHMARK_IMPORT_MAX_UNPACKED_BYTES,
        known_rows=_known_rows(slug, known_images),
        # Decoded on the storage's file system, so storing a file is a link (_store_file), not a second copy.
        workdir_in=Path(storage.location) if isinstance(storage, FileSystemStorage) else None,
    ) as source:
        total = source.size
        read = 0

        def on_line(amount: int) -> None:
            nonlocal read
            read += amount
            if progress is not None:
                # Bytes of a JSONL file; a release's rows or tasks (its reader has read the files).
                progress("validate" if source.jsonl is not None else "validate-rows", read, total)

        bundle = read_benchmark(
            source,
            max_errors=settings.BENCHMARK_IMPORT_MAX_ERRORS,
            max_pixels=settings.IMAGE_MAX_PIXELS,
            domain_of=domain_of,
            progress=on_line,
            known_images=known_images,
        )
        # Media are stored under their content hash, so files written before a failed
        # transaction never replace a file that a committed row still points to.
        # A release's media were decoded (or copied) into the import's own work folder: stored by a link to it.
        # Never a link to the user's own files (a JSON Lines file's images): the stored copy would be theirs.
        ours = source.root if source.release is not None else None
        stored = {record.uid: _store_media(slug, record, link_from=ours) for record in bundle.samples}
        if scoring is not None:
            bundle.manifest.scoring = scoring
        summary = _write_bundle(bundle, slug=slug, name=name, stored=stored, progress=progress,
                                remove_missing=remove_missing, keep_edited=keep_edited)
    # The public downloads of the new state, built on commit (a re-import of the same file keeps the key).
    downloads_request(benchmark=summary.benchmark)
    return replace(summary, taxonomy=bundle.taxonomy, warnings=bundle.warnings)


def _known_images(slug: str) -> dict[str, tuple[int, int, str]]:
    """The images the benchmark already holds, checked when first imported (a re-import does not decode them)."""
    rows = SampleMedia.objects.filter(sample__benchmark__slug=slug, kind=MediaKind.IMAGE).values_list(
        "sha256", "width", "height", "file")
    return {sha: (w, h, Path(name).suffix) for sha, w, h, name in rows.iterator(chunk_size=5000)}


def _known_rows(slug: str, known_images: dict[str, tuple[int, int, str]]) -> KnownRows:
    """The benchmark's samples a release reader digested (Sample.source_digest): digest -> their images' sha256
    and stored size (-1: missing), so a reader skips decoding an unchanged row whose stored copies are whole.
    A sample with a video, or an image the benchmark does not list as known, is left out (read in full)."""
    storage = sample_media_storage()
    root = storage.location if isinstance(storage, FileSystemStorage) else None
    rows = (SampleMedia.objects.filter(sample__benchmark__slug=slug).exclude(sample__source_digest="")
            .order_by("sample_id", "position").values_list("sample__source_digest", "kind", "sha256", "file"))
    known: dict[str, list[tuple[str, int]]] = {}
    left_out: set[str] = set()
    for digest, kind, sha, name in rows.iterator(chunk_size=5000):
        if kind != MediaKind.IMAGE or sha not in known_images or root is None:
            left_out.add(digest)
            continue
        try:
            size = os.stat(os.path.join(root, name)).st_size  # names written by _store_file: no ".." in them
        except FileNotFoundError:
            size = -1
        known.setdefault(digest, []).append((sha, size))
    return {digest: media for digest, media in known.items() if digest not in left_out}


@dataclass(frozen=True, slots=True)
class StoredMedia:
    image: str  # Sample.image: the first medium's still
    media: list[tuple[str, list[dict]]]  # per medium: its file's name, and a video's frames


def _store_media(slug: str, record: SampleRecord, *, link_from: Path | None = None) -> StoredMedia:
    """Write each medium (and a video's sampled frames) to the storage of Sample.image."""
    media: list[tuple[str, list[dict]]] = []
    for medium in record.media:
        if medium.path is None:  # an unchanged row's image, whole in the storage (_known_rows)
            media.append((_media_name(slug, medium.sha256, medium.ext), []))
            continue
        name = _store_file(slug, medium.sha256, medium.ext, path=medium.path,
                           link=link_from is not None and medium.path.is_relative_to(link_from))
        frames = [
            {"name": _store_file(slug, hashlib.sha256(jpeg).hexdigest(), ".jpg", data=jpeg), "time": time}
            for jpeg, time in zip(medium.frames, medium.frame_times, strict=True)
        ]
        media.append((name, frames))
    first_name, first_frames = media[0]
    return StoredMedia(image=first_frames[0]["name"] if first_frames else first_name, media=media)


def _media_name(slug: str, sha256: str, ext: str) -> str:
    return f"benchmarks/{slug}/{sha256[:2]}/{sha256}{ext}"


def _store_file(slug: str, sha256: str, ext: str, *, path: Path | None = None, data: bytes | None = None,
                link: bool = False) -> str:
    """The file under its content-addressed name in the storage. ``link``: ``path`` is the import's own work
    file, which the storage may take by a hard link (AtomicFileSystemStorage.save_local) instead of a copy."""
    storage = sample_media_storage()
    name = _media_name(slug, sha256, ext)
    size = path.stat().st_size if path is not None else len(data or b"")
    if storage.exists(name) and storage.size(name) != size:
        # A stored copy of other length is damaged (the name is the content's hash): the
        # re-import the pages advise for an unreadable image replaces it with the file's bytes.
        storage.delete(name)
    if not storage.exists(name):
        if path is not None and link and isinstance(storage, AtomicFileSystemStorage):
            saved = storage.save_local(name, path)
        elif path is not None:
            with path.open("rb") as handle:
                saved = storage.save(name, handle)
        else:
            saved = storage.save(name, ContentFile(data or b""))
        assert saved == name, f"storage renamed {name} to {saved}"
    return name


@transaction.atomic
def _write_bundle(
    bundle: BenchmarkBundle,
    *,
    slug: str,
    name: str | None,
    stored: dict[str, StoredMedia],
    progress: Callable[[str, int, int], None] | None,
    remove_missing: bool = False,
    keep_edited: bool = False,
) -> ImportSummary:
    manifest = bundle.manifest
    benchmark, _ = Benchmark.objects.select_for_update().get_or_create(
        slug=slug, defaults={"name": name or manifest.name or slug}
    )
    benchmark.name = name or manifest.name or benchmark.name
    for attr in ("version", "description", "license", "citation", "tools", "declared_tools", "cost_min", "cost_max",
                 "figures", "hf_dataset"):
        setattr(benchmark, attr, getattr(manifest, attr))
    if manifest.scoring is not None:  # else a new benchmark is generic and a re-import keeps its own
        if benchmark.scoring != manifest.scoring and benchmark.results_version:
            bundle.warnings.append(f"the scoring profile changes from {benchmark.scoring} to {manifest.scoring}: "
                                   "its submissions are re-scored")
            pk = benchmark.pk
            transaction.on_commit(lambda: benchmark_scoring_changed_publish(benchmark_id=pk))
        benchmark.scoring = manifest.scoring
    benchmark.full_clean()
    benchmark.save()
    categories = _sync_taxonomy(benchmark, manifest.domains)

    existing = _existing_samples(benchmark)
    created = updated = unchanged = kept = 0
    total = len(bundle.samples)
    fresh: list[tuple[Sample, SampleRecord]] = []
    digested: list[Sample] = []  # unchanged samples whose source digest is new (imported before it was kept)
    for index, record in enumerate(bundle.samples):
        held = existing.get(record.uid)
        if held is None:
            sample = Sample(benchmark=benchmark, uid=record.uid)
            _fill_sample(sample, record, categories[(record.domain, record.category)], stored[record.uid].image, index)
            # Field checks only: the reader has validated every record, and the database holds the
            # constraints anyway (checking them, or the foreign keys, cost queries per sample).
            sample.clean_fields(exclude=["benchmark", "category"])
            fresh.append((sample, record))
            created += 1
        else:
            sample = held.sample
            before, digest_before = _sample_state(sample), sample.source_digest
            _fill_sample(sample, record, categories[(record.domain, record.category)], stored[record.uid].image, index)
            keep = keep_edited and held.edited
            if keep:  # the question and answer its review approved stay, not the file's
                _approved_answer_onto(sample, held.approved)
            sample_changed = _sample_state(sample) != before
            if sample_changed:
                sample.clean_fields(exclude=["benchmark", "category"])
                sample.save()
            elif sample.source_digest != digest_before:
                digested.append(sample)  # bookkeeping, not a change: updated_at stays
            if _replace_media(held, record, stored[record.uid]) and not sample_changed:
                sample.save(update_fields=["updated_at"])  # what the scorer's cache key watches
                sample_changed = True
            if keep:
                kept += held.payload != _annotation_payload(record)  # the file would have replaced it
                annotation_changed = False
            else:
                annotation_changed = _replace_imported_annotation(held, record)
            if sample_changed or annotation_changed:
                updated += 1
            else:
                unchanged += 1
        if len(fresh) >= BULK_ROWS:
            _create_samples(fresh, stored)
            fresh = []
        if progress is not None:
            progress("write", index + 1, total)
    _create_samples(fresh, stored)
    Sample.objects.bulk_update(digested, ["source_digest"], batch_size=BULK_ROWS)
    removed = _samples_left_out(benchmark, bundle, remove=remove_missing)
    return ImportSummary(benchmark=benchmark, created=created, updated=updated, unchanged=unchanged, removed=removed,
                         kept=kept)


LEFT_OUT_SHOWN = 20  # uids a warning lists
BULK_ROWS = 1000  # new samples written per batch (and their media, annotations, boxes, steps, calls)


@dataclass(slots=True)
class _Held:
    """A sample the benchmark holds, with what a re-import compares the file's line with."""

    sample: Sample
    media: list[tuple] = field(default_factory=list)  # _media_state of its media rows
    approved: Annotation | None = None
    payload: dict | None = None  # the approved annotation's, as annotation_payload_from_db gives it
    revised: bool = False  # the approved annotation has a revision: saved or reviewed in the workbench, or replaced

    @property
    def edited(self) -> bool:
        """The approved annotation is people's work: an annotator's, or one edited or reviewed since it came."""
        return self.approved is not None and (self.approved.annotator_id is not None or self.revised)


def _existing_samples(benchmark: Benchmark) -> dict[str, _Held]:
    """The benchmark's samples by uid, with their media and their approved annotation's boxes, steps and calls:
    a query per kind of row, grouped here (Django's prefetch built a queryset per sample and relation: 0.7 ms a
    sample, most of an unchanged re-import)."""
    held = {s.pk: _Held(s) for s in Sample.objects.filter(benchmark=benchmark).iterator(chunk_size=2000)}
    media = SampleMedia.objects.filter(sample__benchmark=benchmark).order_by("sample_id", "position").values_list(
        "sample_id", "position", "kind", "file", "sha256", "width", "height", "frames", "duration")
    for sample_id, *state in media.iterator(chunk_size=5000):
        held[sample_id].media.append(tuple(state))
    approved = {a.pk: a for a in Annotation.objects.filter(sample__benchmark=benchmark, status=AnnotationStatus.APPROVED)}
    parts: dict[str, dict[int, list]] = {"regions": {}, "key_steps": {}, "tool_calls": {}}
    for name, model in (("regions", Region), ("key_steps", KeyStep), ("tool_calls", ReferenceToolCall)):
        rows = model.objects.filter(annotation__sample__benchmark=benchmark, annotation__status=AnnotationStatus.APPROVED)
        for row in rows.order_by("annotation_id", "position").iterator(chunk_size=5000):
            parts[name].setdefault(row.annotation_id, []).append(row)
    # By a join, not a list of ids (tens of thousands of them would pass SQLite's limit on query parameters).
    revised = set(Revision.objects.filter(annotation__sample__benchmark=benchmark,
                                          annotation__status=AnnotationStatus.APPROVED)
                  .exclude(kind=RevisionKind.IMPORT).values_list("annotation_id", flat=True).distinct())
    for pk, annotation in approved.items():
        entry = held[annotation.sample_id]
        entry.approved = annotation
        entry.revised = pk in revised
        entry.payload = _payload(annotation.transform, parts["regions"].get(pk, []), parts["key_steps"].get(pk, []),
                                 parts["tool_calls"].get(pk, []))
    return {entry.sample.uid: entry for entry in held.values()}


def _create_samples(batch: list[tuple[Sample, SampleRecord]], stored: dict[str, StoredMedia]) -> None:
    """New samples in bulk, with their media rows and the file's approved annotation."""
    if not batch:
        return
    samples = Sample.objects.bulk_create([sample for sample, _ in batch])
    SampleMedia.objects.bulk_create([m for sample, record in zip(samples, (r for _, r in batch), strict=True)
                                     for m in _media_rows(sample, record, stored[record.uid])])
    annotations = Annotation.objects.bulk_create([
        Annotation(sample=sample, status=AnnotationStatus.APPROVED, transform=record.transform)
        for sample, (_, record) in zip(samples, batch, strict=True)])
    _annotation_rows(list(zip(annotations, (r for _, r in batch), strict=True)))


def _annotation_rows(pairs: list[tuple[Annotation, SampleRecord]]) -> None:
    """The boxes, key steps and reference calls of saved annotations, from their records."""
    Region.objects.bulk_create(
        Region(annotation=a, position=i, x1=box[0], y1=box[1], x2=box[2], y2=box[3], image_ref=ref)
        for a, record in pairs for i, (ref, box) in enumerate(map(_located, record.regions)))
    KeyStep.objects.bulk_create(
        KeyStep(annotation=a, position=i, text=s.text, origin=s.origin, verified=s.verified)
        for a, record in pairs for i, s in enumerate(record.key_steps))
    ReferenceToolCall.objects.bulk_create(c for a, record in pairs for c in ReferenceToolCall.rows_for(a, record.toolchain))


def _samples_left_out(benchmark: Benchmark, bundle: BenchmarkBundle, *, remove: bool) -> int:
    """The benchmark's samples the file does not have: deleted when `remove` (their predictions' results
    with them), else kept and named in a warning. Returns how many were deleted."""
    in_file = {r.uid for r in bundle.samples}
    rows = Sample.objects.filter(benchmark=benchmark).order_by("position", "uid").values_list("pk", "uid")
    left_out = [(pk, uid) for pk, uid in rows.iterator(chunk_size=5000) if uid not in in_file]
    if not left_out:
        return 0
    uids = [uid for _, uid in left_out]
    shown = ", ".join(uids[:LEFT_OUT_SHOWN]) + (f" and {len(uids) - LEFT_OUT_SHOWN} more" if len(uids) > LEFT_OUT_SHOWN else "")
    if remove:
        pks = [pk for pk, _ in left_out]
        for start in range(0, len(pks), 5000):
            Sample.objects.filter(pk__in=pks[start:start + 5000]).delete()
        bundle.warnings.append(f"{len(uids)} sample(s) of the benchmark not in this file were removed "
                               f"(--remove-missing): {shown}")
        if benchmark.results_version:  # its submissions were scored on the removed samples too: re-score them
            pk = benchmark.pk
            transaction.on_commit(lambda: benchmark_scoring_changed_publish(benchmark_id=pk))
        return len(uids)
    bundle.warnings.append(f"{len(uids)} sample(s) of the benchmark are not in this file and were kept: {shown}. "
                           "Re-import with --remove-missing to remove them.")
    return 0


def _sync_taxonomy(benchmark: Benchmark, domains: dict[str, dict]) -> dict[tuple[str, str], Category]:
    """Create or rename the file's domains and categories; a variant spelling (`realworld` for an
    existing `real_world`) lands on the existing row, so a re-import never doubles a domain."""
    existing_domains = {merge_key(d.slug): d.slug for d in benchmark.domains.all()}
    categories: dict[tuple[str, str], Category] = {}
    for d_pos, (d_slug, d_spec) in enumerate(domains.items()):
        domain, _ = Domain.objects.update_or_create(
            benchmark=benchmark,
            slug=existing_domains.get(merge_key(d_slug), d_slug),
            defaults={"name": d_spec["name"], "position": d_pos},
        )
        existing_categories = {merge_key(c.slug): c.slug for c in domain.categories.all()}
        for c_pos, (c_slug, c_name) in enumerate(d_spec["categories"].items()):
            category, _ = Category.objects.update_or_create(
                domain=domain,
                slug=existing_categories.get(merge_key(c_slug), c_slug),
                defaults={"name": c_name, "position": c_pos},
            )
            categories[(d_slug, c_slug)] = category
    return categories


_SAMPLE_FIELDS = (
    "category_id", "image", "image_sha256", "width", "height", "question", "options", "answer",
    "answer_type", "tolerance", "split", "aux_line", "source", "meta", "position",
)  # fmt: skip


def _sample_state(sample: Sample) -> tuple:
    return tuple(str(getattr(sample, f)) if f == "image" else getattr(sample, f) for f in _SAMPLE_FIELDS)


def _fill_sample(sample: Sample, record: SampleRecord, category: Category, image_name: str, position: int) -> None:
    sample.category = category
    sample.image.name = image_name
    sample.image_sha256 = record.image_sha256
    sample.width, sample.height = record.width, record.height
    sample.question = record.question
    sample.options = record.options
    sample.answer = record.answer
    sample.answer_type = record.answer_type
    sample.tolerance = record.tolerance
    sample.split = record.split
    sample.aux_line = record.aux_line
    sample.source = record.source
    sample.meta = record.meta
    sample.position = position
    sample.source_digest = record.source_digest


def _media_rows(sample: Sample, record: SampleRecord, stored: StoredMedia) -> list[SampleMedia]:
    return [
        SampleMedia(sample=sample, position=k, kind=m.kind, file=name, sha256=m.sha256, width=m.width,
                    height=m.height, frames=frames, duration=m.duration)
        for k, (m, (name, frames)) in enumerate(zip(record.media, stored.media, strict=True))
    ]  # fmt: skip


def _media_state(rows: list[SampleMedia]) -> list[tuple]:
    return [(m.position, m.kind, str(m.file), m.sha256, m.width, m.height, m.frames, m.duration) for m in rows]


def _replace_media(held: _Held, record: SampleRecord, stored: StoredMedia) -> bool:
    """Make the held sample's media rows the file's; True when they changed."""
    rows = _media_rows(held.sample, record, stored)
    if held.media == _media_state(rows):
        return False
    held.sample.media.all().delete()
    SampleMedia.objects.bulk_create(rows)
    return True


def _annotation_payload(record: SampleRecord) -> dict:
    return {
        "transform": record.transform,
        "regions": record.regions,
        "key_steps": [(s.text, s.origin, s.verified) for s in record.key_steps],
        "toolchain": record.toolchain,
    }


def _replace_imported_annotation(held: _Held, record: SampleRecord) -> bool:
    """Make the file's E, K and toolchain the held sample's approved annotation; True when it changed. A
    replacement is in the annotation's history: an "import" revision of the new state, after one of the state it
    replaced when the history had none."""
    annotation = held.approved
    if annotation is not None and held.payload == _annotation_payload(record):
        return False
    if annotation is None:
        annotation = Annotation.objects.create(sample=held.sample, status=AnnotationStatus.APPROVED,
                                               transform=record.transform)
        _annotation_rows([(annotation, record)])
        return True
    if not annotation.revisions.exists():
        _import_revision(annotation)
    annotation.transform = record.transform
    annotation.version += 1
    annotation.save(update_fields=["transform", "version", "updated_at"])
    annotation.regions.all().delete()
    annotation.key_steps.all().delete()
    annotation.tool_calls.all().delete()
    _annotation_rows([(annotation, record)])
    _import_revision(annotation)
    return True


def _import_revision(annotation: Annotation) -> None:
    from annotation.workbench.review import _payload_for  # the workbench imports this module

    Revision.objects.create(annotation=annotation, author=None, version=annotation.version, kind=RevisionKind.IMPORT,
                            snapshot=_payload_for(annotation))


def _approved_answer_onto(sample: Sample, approved: Annotation | None) -> None:
    """The question and answer an annotator's approved annotation gave the sample (the review copied them there),
    back onto it after the file's line was filled in."""
    if approved is None or approved.annotator_id is None or not approved.answer:
        return
    sample.question = approved.question or sample.question
    sample.options = approved.options
    sample.answer = approved.answer
    sample.answer_type = approved.answer_type or sample.answer_type


def _located(entry: list | dict) -> tuple[str, list]:
    return (entry["image"], entry["box"]) if isinstance(entry, dict) else ("img0", entry)


def annotation_payload_from_db(annotation: Annotation) -> dict:
    return _payload(annotation.transform, annotation.regions.all(), annotation.key_steps.all(),
                    annotation.tool_calls.all())


def _payload(transform: list[dict], regions: Iterable[Region], key_steps: Iterable[KeyStep],
             tool_calls: Iterable[ReferenceToolCall]) -> dict:
    """An annotation as its file line has it (the compare of a re-import)."""
    return {
        "transform": transform,
        "regions": region_entries(regions),
        "key_steps": [(s.text, s.origin, s.verified) for s in key_steps],
        "toolchain": [c.as_dict() for c in tool_calls],
    }


# ---------------------------------------------------------------------------------------------
# Export


def benchmark_export(*, benchmark: Benchmark, out: Path, splits: Collection[str] | None = None) -> ExportSummary:
    """Write the benchmark (approved annotations only) as a folder, or a zip when `out` ends in .zip;
    only the samples of ``splits`` when given. Streamed (annotation/bundles.py)."""
    return bundle_write(benchmark=benchmark, out=out, splits=splits, approved_only=True)


def benchmark_scoring_set(*, benchmark: Benchmark, scoring: str) -> bool:
    """Change the benchmark's scoring profile (metrics.md section 13); True when it changed. Its
    submissions are re-scored (the tasks of settings.SCORING_CHANGED_TASKS, sent on commit)."""
    if scoring not in ScoringProfile.values:
        raise ValueError(f"unknown scoring profile {scoring!r} (known: {', '.join(ScoringProfile.values)})")
    with transaction.atomic():
        changed = Benchmark.objects.filter(pk=benchmark.pk).exclude(scoring=scoring).update(scoring=scoring)
        benchmark.scoring = scoring
        if changed:
            pk = benchmark.pk
            transaction.on_commit(lambda: benchmark_scoring_changed_publish(benchmark_id=pk))
    return bool(changed)


def benchmark_scoring_changed_publish(*, benchmark_id: int) -> None:
    """Tell the apps that score (by task name: evaluation's ``benchmark_rescore``) that the rules changed."""
    for name in settings.SCORING_CHANGED_TASKS:
        try:
            task_by_name(name).apply_async(args=[benchmark_id], queue=settings.SUBMISSIONS_QUEUE)
        except Exception as exc:  # noqa: BLE001 - a broker that is down: `rescore_all --stale-only` catches up
            log.warning("benchmark %s: could not publish %s (%s); run rescore_all --benchmark ... --stale-only",
                        benchmark_id, name, exc)
