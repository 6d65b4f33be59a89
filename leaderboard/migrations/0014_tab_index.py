"""The wide tabs' index as rows the database orders (leaderboard.wide_tabs, ``TabIndexRow``), in place of each
submission's stored tab rows (``EntryTabRows``) and the board build's payload key "tables". Nothing is filled
here: a build without the index (its payload has no "tab_index") is followed by the full build at the board's next
refresh, and until then a wide tab's page computes its whole table, as before the index existed.
"""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0018_proposal_decisions_on_history'),
        ('evaluation', '0020_submission_format_inspect_lmms_eval'),
        ('leaderboard', '0013_entry_tab_rows'),
    ]

    operations = [
        migrations.CreateModel(
            name='TabIndexRow',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('order', models.CharField(max_length=32)),
                ('key', models.CharField(max_length=16)),
                ('mode', models.CharField(max_length=20)),
                ('sort_key', models.FloatField()),
                ('tie', models.FloatField()),
                ('reported', models.BooleanField()),
                ('finished_at', models.DateTimeField(null=True)),
                ('source_pos', models.BigIntegerField()),
                ('mode_pos', models.SmallIntegerField()),
                ('values', models.JSONField(null=True)),
                ('benchmark', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='annotation.benchmark')),
                ('submission', models.ForeignKey(null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='evaluation.submission')),
            ],
        ),
        migrations.DeleteModel(
            name='EntryTabRows',
        ),
        migrations.AddIndex(
            model_name='tabindexrow',
            index=models.Index(fields=['benchmark', 'order', 'sort_key', 'tie', 'reported', 'finished_at', 'source_pos', 'mode_pos', 'key', 'mode'], name='tab_index_order_idx'),
        ),
    ]
