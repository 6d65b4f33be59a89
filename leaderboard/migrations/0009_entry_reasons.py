"""Why a board figure is not available (metrics.md section 14: no tool calls, steps or usage in the file):
``reasons``. As in 0008: the per-sample vectors are removed and re-added after the new column, so they stay
last (see 0003), and the derived entries are deleted with the boards' build marks and rebuilt.
"""

from django.db import migrations, models


def drop_entries(apps, schema_editor):  # noqa: ANN001, ANN201
    apps.get_model("leaderboard", "BoardEntry").objects.all().delete()
    apps.get_model("leaderboard", "BoardState").objects.all().delete()


VECTORS = ("correct", "invoked", "costs", "token_counts", "domain_table", "built_at")


class Migration(migrations.Migration):

    dependencies = [
        ("leaderboard", "0008_entry_provenance_digest"),
    ]

    operations = [
        migrations.RunPython(drop_entries, migrations.RunPython.noop),
        migrations.AddField(model_name="boardentry", name="reasons", field=models.JSONField(default=dict)),
        *[migrations.RemoveField(model_name="boardentry", name=name) for name in VECTORS],
        migrations.AddField(model_name="boardentry", name="correct", field=models.JSONField(default=dict)),
        migrations.AddField(model_name="boardentry", name="invoked", field=models.TextField(blank=True)),
        migrations.AddField(model_name="boardentry", name="costs", field=models.JSONField(default=dict)),
        migrations.AddField(model_name="boardentry", name="token_counts", field=models.JSONField(default=dict)),
        migrations.AddField(model_name="boardentry", name="domain_table", field=models.JSONField(default=dict)),
        migrations.AddField(model_name="boardentry", name="built_at", field=models.DateTimeField(auto_now=True)),
    ]
