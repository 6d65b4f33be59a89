"""The board's entries store an undecided row (metrics.md section 13) as ``?`` in their correctness strings and
count it apart in their per-domain cells ([right, n, undecided]); entries built before counted it wrong. They are
deleted with the boards' build marks, so each board is rebuilt (by the sweeper's re-send of a build behind its
version, or the next change), as 0009 did. The Guessability tab's build (evaluation's derived kind
"guessability") goes too: its accuracy rows now say when rows need an LLM judge. No schema change.
"""

from django.db import migrations


def drop_entries(apps, schema_editor):  # noqa: ANN001, ANN201
    apps.get_model("leaderboard", "BoardEntry").objects.all().delete()
    apps.get_model("leaderboard", "EntryRank").objects.all().delete()
    apps.get_model("evaluation", "DerivedState").objects.filter(kind__in=("board", "guessability")).delete()


class Migration(migrations.Migration):

    dependencies = [
        ("leaderboard", "0010_derived_state"),
        ("evaluation", "0013_derived_state"),
    ]

    operations = [
        migrations.RunPython(drop_entries, migrations.RunPython.noop),
    ]
