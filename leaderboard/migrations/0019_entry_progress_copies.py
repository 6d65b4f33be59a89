"""The board entry's copies for the Progress tab's months, and their index.

``progress_store.month_summary`` counts a changed month's entries and finds its best per kind of weights; it read
the first-scored time and weights through each entry's submission (``first_finished_at`` is stored after the large
``results`` column on SQLite, so every submission of the month was read through its overflow pages: 0.39 s of CPU
for a month of 100,000 entries) and computed the headline accuracy from the mode. Each entry now keeps them
(``services.entry_copies``, ``entry_fields``): ``first_at``, its month ``first_month`` (YYYYMM, UTC), ``weights``,
``headline_acc``; the index ``board_entry_month_idx`` makes a month's count per kind of weights a range and its best
the first row of that range. The columns are added nullable (SQLite then adds them in place; a default or NOT NULL
makes Django copy the table) and filled here for the existing rows; then the index is built."""

from django.db import migrations, models
from django.db.models import Case, F, FloatField, OuterRef, Subquery, When
from django.db.models.functions import Coalesce, ExtractMonth, ExtractYear


def fill(apps, schema_editor) -> None:  # noqa: ANN001
    BoardEntry = apps.get_model("leaderboard", "BoardEntry")
    submission = apps.get_model("evaluation", "Submission").objects.filter(pk=OuterRef("submission_id"))
    first = Coalesce(Subquery(submission.values("first_finished_at")[:1]), F("finished_at"))
    BoardEntry.objects.update(  # one UPDATE: SQLite writes each (wide) row again, overflow pages and all
        first_at=first, first_month=ExtractYear(first) * 100 + ExtractMonth(first),
        weights=Subquery(submission.values("weights")[:1]),
        headline_acc=Case(*(When(headline_mode=mode, then=F(f"{mode}_acc")) for mode in ("text", "adaptive", "oracle")),
                          default=None, output_field=FloatField()))


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0018_proposal_decisions_on_history'),
        ('evaluation', '0021_results_change'),
        ('leaderboard', '0018_rank_shifts'),
    ]

    operations = [
        migrations.AddField(
            model_name='boardentry',
            name='first_at',
            field=models.DateTimeField(null=True),
        ),
        migrations.AddField(
            model_name='boardentry',
            name='first_month',
            field=models.PositiveIntegerField(null=True),
        ),
        migrations.AddField(
            model_name='boardentry',
            name='headline_acc',
            field=models.FloatField(null=True),
        ),
        migrations.AddField(
            model_name='boardentry',
            name='weights',
            field=models.CharField(blank=True, max_length=6, null=True),
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
        migrations.AddIndex(
            model_name='boardentry',
            index=models.Index(fields=['benchmark', 'first_month', 'weights', '-headline_acc', 'first_at', 'finished_at', 'submission'], name='board_entry_month_idx'),
        ),
    ]
