"""Each submission's rows in the wide tabs, stored so that a refresh assembles the tabs' index from them
(leaderboard.wide_tabs.tables_update). Nothing is filled here: a board's next refresh computes the rows of every
submission that has none (once, the cost of the full build it replaced) and stores them.
"""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0018_proposal_decisions_on_history'),
        ('evaluation', '0020_submission_format_inspect_lmms_eval'),
        ('leaderboard', '0012_entry_rank_own_interval'),
    ]

    operations = [
        migrations.CreateModel(
            name='EntryTabRows',
            fields=[
                ('submission', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='tab_rows', serialize=False, to='evaluation.submission')),
                ('rows', models.JSONField()),
                ('benchmark', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='annotation.benchmark')),
            ],
        ),
    ]
