"""Prediction files (and uploads in another format) move from MEDIA_ROOT to private storage under
random names (docs/security.md)."""

from django.db import migrations, models

import config.storages
import evaluation.models


def move_files(apps, schema_editor) -> None:  # noqa: ANN001
    submission = apps.get_model("evaluation", "Submission")
    for field in ("file", "source_file"):
        config.storages.move_to_private(submission, field,
                                        rename=lambda row, old: evaluation.models.prediction_file_name(row, old))


class Migration(migrations.Migration):

    dependencies = [
        ("evaluation", "0006_submission_tool_notes"),
    ]

    operations = [
        migrations.AlterField(
            model_name="submission",
            name="file",
            field=models.FileField(max_length=255, storage=config.storages.private_storage,
                                   upload_to=evaluation.models.prediction_file_name),
        ),
        migrations.AlterField(
            model_name="submission",
            name="source_file",
            field=models.FileField(blank=True, max_length=255, storage=config.storages.private_storage,
                                   upload_to=evaluation.models.prediction_file_name),
        ),
        migrations.RunPython(move_files, migrations.RunPython.noop),
    ]
