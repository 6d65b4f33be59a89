"""Move BoardEntry's per-sample vectors behind every column the overview reads.

SQLite stores a row's columns in table order and spills a large value into overflow pages; reading
any column declared after such a value walks those pages. The vectors (a few KB per entry) sat
before ``submission_id``, ``benchmark_id``, ``finished_at`` and ``heartbeat_at`` (appended by
earlier migrations), so sorting 1,000 entries or checking them for staleness read every overflow
page. Removing and re-adding the vector fields appends them at the end of the table (the schema
editor remakes the table in the model state's field order). Board entries are derived: they are
deleted first, and ``services.entries_sync`` rebuilds them on the next read.
"""

from django.db import migrations, models


def drop_entries(apps, schema_editor):  # noqa: ANN001, ANN201
    apps.get_model("leaderboard", "BoardEntry").objects.all().delete()


VECTORS = ("correct", "invoked", "costs", "token_counts", "domain_table", "built_at")


class Migration(migrations.Migration):

    dependencies = [
        ("leaderboard", "0002_entry_heartbeat"),
    ]

    operations = [
        migrations.RunPython(drop_entries, migrations.RunPython.noop),
        *[migrations.RemoveField(model_name="boardentry", name=name) for name in VECTORS],
        migrations.AddField(model_name="boardentry", name="correct", field=models.JSONField(default=dict)),
        migrations.AddField(model_name="boardentry", name="invoked", field=models.TextField(blank=True)),
        migrations.AddField(model_name="boardentry", name="costs", field=models.JSONField(default=dict)),
        migrations.AddField(model_name="boardentry", name="token_counts", field=models.JSONField(default=dict)),
        migrations.AddField(model_name="boardentry", name="domain_table", field=models.JSONField(default=dict)),
        migrations.AddField(model_name="boardentry", name="built_at", field=models.DateTimeField(auto_now=True)),
    ]
