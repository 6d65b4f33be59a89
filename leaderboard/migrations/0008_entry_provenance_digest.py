"""Provenance and row digests on the board (spec runs.md, "The verified tier"): ``provenance`` ("run" or
"file"), ``run_info`` (the public part of a hosted run's record), ``digest`` and ``digest_dev``.

As in 0007: the per-sample vectors are removed and re-added after the new columns, so they stay last
(see 0003); board entries are derived, so they are deleted with the boards' build marks and rebuilt by
the next reader or task (rows scored before digests existed show "not available" until a re-score).
"""

from django.db import migrations, models


def drop_entries(apps, schema_editor):  # noqa: ANN001, ANN201
    apps.get_model("leaderboard", "BoardEntry").objects.all().delete()
    apps.get_model("leaderboard", "BoardState").objects.all().delete()


VECTORS = ("correct", "invoked", "costs", "token_counts", "domain_table", "built_at")


class Migration(migrations.Migration):

    dependencies = [
        ("leaderboard", "0007_entry_answered"),
        ("evaluation", "0012_submission_digests"),
    ]

    operations = [
        migrations.RunPython(drop_entries, migrations.RunPython.noop),
        migrations.AddField(model_name="boardentry", name="provenance",
                            field=models.CharField(default="file", max_length=4)),
        migrations.AddField(model_name="boardentry", name="run_info", field=models.JSONField(default=dict)),
        migrations.AddField(model_name="boardentry", name="digest", field=models.CharField(blank=True, max_length=64)),
        migrations.AddField(model_name="boardentry", name="digest_dev",
                            field=models.CharField(blank=True, max_length=64)),
        *[migrations.RemoveField(model_name="boardentry", name=name) for name in VECTORS],
        migrations.AddField(model_name="boardentry", name="correct", field=models.JSONField(default=dict)),
        migrations.AddField(model_name="boardentry", name="invoked", field=models.TextField(blank=True)),
        migrations.AddField(model_name="boardentry", name="costs", field=models.JSONField(default=dict)),
        migrations.AddField(model_name="boardentry", name="token_counts", field=models.JSONField(default=dict)),
        migrations.AddField(model_name="boardentry", name="domain_table", field=models.JSONField(default=dict)),
        migrations.AddField(model_name="boardentry", name="built_at", field=models.DateTimeField(auto_now=True)),
    ]
