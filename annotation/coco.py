"""COCO JSON of a benchmark's approved key regions (object-detection format, one category per
region label; unlabelled regions are "key_region").

Regions are boxes in the frame after the sample's recovery transform, so each COCO image entry
gives that frame's size and records the transform; `file_name` is the exported image's path
(benchmark_export writes images/<uid>.<ext>), which is the image before the transform.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from annotation import benchmark_fields as bf
from annotation.media import media_of
from annotation.models import Benchmark, Sample
from annotation.selectors import approved_annotations_for_export

DEFAULT_LABEL = "key_region"


def coco_from_benchmark(benchmark: Benchmark, splits: Collection[str] | None = None) -> dict:
    """The approved regions as COCO JSON; only the samples of ``splits`` when given."""
    approved = approved_annotations_for_export(benchmark, splits)
    images, annotations, categories = [], [], {}
    for sample in Sample.objects.filter(pk__in=approved).prefetch_related("media").order_by("position", "uid"):
        annotation = approved[sample.pk]
        width, height = bf.frame_size(sample.width, sample.height, annotation.transform)
        image_ids = {"img0": len(images) + 1}
        images.append({"id": image_ids["img0"], "file_name": f"images/{sample.uid}{Path(sample.image.name).suffix}",
                       "width": width, "height": height, "uid": sample.uid, "transform": annotation.transform})
        # Regions on a sample's other media (formats.md `images`): one image entry per such
        # medium, named as benchmark_export names its file, in its own pixels (no transform).
        on_other = {r.image_ref for r in annotation.regions.all()} - {"img0"}
        for medium in media_of(sample)[1:]:
            if medium.ref in on_other:
                image_ids[medium.ref] = len(images) + 1
                images.append({"id": image_ids[medium.ref], "width": medium.width, "height": medium.height,
                               "file_name": f"images/{sample.uid}-{medium.position}{Path(medium.file.name).suffix}",
                               "uid": sample.uid, "image": medium.ref, "transform": []})
        for region in annotation.regions.all():
            image_id = image_ids.get(region.image_ref)
            if image_id is None:
                continue
            label = region.label or DEFAULT_LABEL
            category_id = categories.setdefault(label, len(categories) + 1)
            w, h = region.x2 - region.x1, region.y2 - region.y1
            annotations.append({"id": len(annotations) + 1, "image_id": image_id, "category_id": category_id,
                                "bbox": [region.x1, region.y1, w, h], "area": w * h, "iscrowd": 0})
    return {
        "info": {"description": f"{benchmark.name} key regions (approved)", "version": benchmark.version},
        "licenses": [{"id": 1, "name": benchmark.license}] if benchmark.license else [],
        "images": images,
        "annotations": annotations,
        "categories": [{"id": i, "name": name, "supercategory": "region"} for name, i in categories.items()],
    }
