"""The share of samples answered on the board (``answered``: headline mode, percent; spec runs.md).

The per-sample vectors stay behind every column the overview reads (see 0003): they are removed
and re-added after the new column, so the schema editor remakes the table with them last. Board
entries are derived: they are deleted first with the boards' build marks (``BoardState``), and
``services.board_refresh`` rebuilds them on the next read (results scored before the share existed have none: the board shows "not available"
until ``rescore_all --stale-only``).
"""

from django.db import migrations, models


def drop_entries(apps, schema_editor):  # noqa: ANN001, ANN201
    apps.get_model("leaderboard", "BoardEntry").objects.all().delete()
    # and the build marks, so the first reader (board_ensure) or the task rebuilds entries and ranks
    apps.get_model("leaderboard", "BoardState").objects.all().delete()


VECTORS = ("correct", "invoked", "costs", "token_counts", "domain_table", "built_at")


class Migration(migrations.Migration):

    dependencies = [
        ("leaderboard", "0006_entry_overview_indexes"),
    ]

    operations = [
        migrations.RunPython(drop_entries, migrations.RunPython.noop),
        migrations.AddField(model_name="boardentry", name="answered", field=models.FloatField(null=True)),
        *[migrations.RemoveField(model_name="boardentry", name=name) for name in VECTORS],
        migrations.AddField(model_name="boardentry", name="correct", field=models.JSONField(default=dict)),
        migrations.AddField(model_name="boardentry", name="invoked", field=models.TextField(blank=True)),
        migrations.AddField(model_name="boardentry", name="costs", field=models.JSONField(default=dict)),
        migrations.AddField(model_name="boardentry", name="token_counts", field=models.JSONField(default=dict)),
        migrations.AddField(model_name="boardentry", name="domain_table", field=models.JSONField(default=dict)),
        migrations.AddField(model_name="boardentry", name="built_at", field=models.DateTimeField(auto_now=True)),
    ]
