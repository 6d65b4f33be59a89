"""Rank intervals are now counted from each entry's own bootstrap interval of its statistic (docs/metrics.md,
"Honest ranks"), stored here as ``stat_low``/``stat_high``. The ranks built before are dropped with the boards'
build marks, so each board's ranks are rebuilt (by the sweeper's re-send of a build behind its version, or the
next change); the entries stay (nothing in them changed).
"""

from django.db import migrations, models


def drop_ranks(apps, schema_editor):  # noqa: ANN001, ANN201
    apps.get_model("leaderboard", "EntryRank").objects.all().delete()
    apps.get_model("evaluation", "DerivedState").objects.filter(kind="board").delete()


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0018_proposal_decisions_on_history'),
        ('evaluation', '0020_submission_format_inspect_lmms_eval'),
        ('leaderboard', '0011_undecided_rows_rebuilt'),
    ]

    operations = [
        migrations.RunPython(drop_ranks, migrations.RunPython.noop),
        migrations.AddField(
            model_name='entryrank',
            name='stat_high',
            field=models.FloatField(null=True),
        ),
        migrations.AddField(
            model_name='entryrank',
            name='stat_low',
            field=models.FloatField(null=True),
        ),
        migrations.AddIndex(
            model_name='entryrank',
            index=models.Index(fields=['benchmark', 'metric', 'position'], name='entry_rank_position_idx'),
        ),
        migrations.AddIndex(
            model_name='entryrank',
            index=models.Index(fields=['benchmark', 'metric', 'stat_low'], name='entry_rank_stat_low_idx'),
        ),
        migrations.AddIndex(
            model_name='entryrank',
            index=models.Index(fields=['benchmark', 'metric', 'stat_high'], name='entry_rank_stat_high_idx'),
        ),
    ]
