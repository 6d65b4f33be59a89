"""Sample images and media (and a video's frames) move from MEDIA_ROOT to private storage
(docs/security.md); names stay (content hashes)."""

from django.db import migrations, models

import config.storages


def move_media(apps, schema_editor) -> None:  # noqa: ANN001
    config.storages.move_to_private(apps.get_model("annotation", "Sample"), "image")
    media = apps.get_model("annotation", "SampleMedia")
    config.storages.move_to_private(media, "file")
    frames = {f["name"] for row in media.objects.exclude(frames=[]).only("frames") for f in row.frames
              if isinstance(f, dict) and f.get("name")}
    config.storages.move_names_to_private(sorted(frames))


class Migration(migrations.Migration):

    dependencies = [
        ("annotation", "0004_sample_media"),
    ]

    operations = [
        migrations.AlterField(
            model_name="sample",
            name="image",
            field=models.FileField(max_length=255, storage=config.storages.private_storage, upload_to="benchmarks/"),
        ),
        migrations.RunPython(move_media, migrations.RunPython.noop),
    ]
