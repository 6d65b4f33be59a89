"""Key-step coverage's 95 % interval on the board (``kcov_lo``, ``kcov_hi``).

The per-sample vectors stay behind every column the overview reads (see 0003): they are removed
and re-added after the new columns, so the schema editor remakes the table with them last. Board
entries are derived: they are deleted first, and ``services.entries_sync`` rebuilds them on the
next read (from the stored results; results scored before the interval existed have none until
``rescore_all --stale-only``).
"""

from django.db import migrations, models


def drop_entries(apps, schema_editor):  # noqa: ANN001, ANN201
    apps.get_model("leaderboard", "BoardEntry").objects.all().delete()


VECTORS = ("correct", "invoked", "costs", "token_counts", "domain_table", "built_at")


class Migration(migrations.Migration):

    dependencies = [
        ("leaderboard", "0003_entry_vectors_last"),
    ]

    operations = [
        migrations.RunPython(drop_entries, migrations.RunPython.noop),
        migrations.AddField(model_name="boardentry", name="kcov_lo", field=models.FloatField(null=True)),
        migrations.AddField(model_name="boardentry", name="kcov_hi", field=models.FloatField(null=True)),
        *[migrations.RemoveField(model_name="boardentry", name=name) for name in VECTORS],
        migrations.AddField(model_name="boardentry", name="correct", field=models.JSONField(default=dict)),
        migrations.AddField(model_name="boardentry", name="invoked", field=models.TextField(blank=True)),
        migrations.AddField(model_name="boardentry", name="costs", field=models.JSONField(default=dict)),
        migrations.AddField(model_name="boardentry", name="token_counts", field=models.JSONField(default=dict)),
        migrations.AddField(model_name="boardentry", name="domain_table", field=models.JSONField(default=dict)),
        migrations.AddField(model_name="boardentry", name="built_at", field=models.DateTimeField(auto_now=True)),
    ]
